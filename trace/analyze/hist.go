package analyze

import (
	"cmp"
	"math"
	"slices"
	"time"
)

// hist is an exact histogram of int64 values: it gives the same mean, std
// and percentiles as keeping every value, with memory proportional to the
// number of distinct values.
//
// Values that are a non-negative multiple of scale below scale·maxDense are
// counted in a paged array (two loads and an increment, no hashing); pages
// of histPage counters are allocated when first touched, so a histogram
// costs memory only where values fall. Other values go to a map, through
// one pending value and count: the reuse times of rows that arrive together
// often repeat, and are then counted without hashing. scale lets times
// recorded in nanoseconds but quantised to milliseconds by the trace use
// the array.
type hist struct {
	scale    int64
	maxDense int64
	pages    []*[histPage]uint32 // a pointer each: the table stays small
	sparse   map[int64]uint64    // complete after flush
	pendV    int64               // a value for sparse, pendN times
	pendN    uint64
	n        uint64
}

const (
	histPageBits = 8
	histPage     = 1 << histPageBits
	// msScale is the scale of times quantised to milliseconds.
	msScale = int64(time.Millisecond)
)

func newHist(scale int64, maxDense int) *hist {
	return &hist{scale: scale, maxDense: int64(maxDense)}
}

// add counts one value.
func (h *hist) add(v int64) { h.addN(v, 1) }

// addN counts value v n times.
func (h *hist) addN(v int64, n uint64) {
	if n == 0 {
		return
	}
	h.n += n
	// i is v's index in the array, -1 when v is not a non-negative
	// multiple of scale (one division at most, none for counts).
	i := int64(-1)
	if v >= 0 {
		switch h.scale {
		case 1:
			i = v
		case msScale: // a division by a constant is a multiplication
			if q := v / msScale; q*msScale == v {
				i = q
			}
		default:
			if q := v / h.scale; q*h.scale == v {
				i = q
			}
		}
	}
	if i >= 0 && i < h.maxDense {
		p := i >> histPageBits
		if p >= int64(len(h.pages)) {
			h.pages = append(h.pages, make([]*[histPage]uint32, p+1-int64(len(h.pages)))...)
		}
		pg := h.pages[p]
		if pg == nil {
			pg = new([histPage]uint32)
			h.pages[p] = pg
		}
		c := &pg[i&(histPage-1)]
		if uint64(*c)+n <= 1<<32-1 {
			*c += uint32(n)
			return
		}
	}
	if h.pendN > 0 && v == h.pendV {
		h.pendN += n
		return
	}
	h.flush()
	h.pendV, h.pendN = v, n
}

// flush adds the pending value to sparse.
func (h *hist) flush() {
	if h.pendN == 0 {
		return
	}
	if h.sparse == nil {
		h.sparse = make(map[int64]uint64)
	}
	h.sparse[h.pendV] += h.pendN
	h.pendN = 0
}

// remove uncounts one value previously added.
func (h *hist) remove(v int64) {
	h.n--
	h.flush()
	if c, ok := h.sparse[v]; ok {
		if c == 1 {
			delete(h.sparse, v)
		} else {
			h.sparse[v] = c - 1
		}
		return
	}
	i := v / h.scale
	h.pages[i>>histPageBits][i&(histPage-1)]--
}

// sorted returns the distinct values in ascending order with their counts.
func (h *hist) sorted() sorted {
	h.flush()
	out := make([]bin, 0, len(h.sparse)+64)
	for p, pg := range h.pages {
		if pg == nil {
			continue
		}
		for j, c := range pg {
			if c != 0 {
				out = append(out, bin{float64((int64(p)<<histPageBits + int64(j)) * h.scale), uint64(c)})
			}
		}
	}
	dense := len(out) // out[:dense] is ascending
	for v, c := range h.sparse {
		// A value whose array counter saturated continues in the map.
		if i, ok := slices.BinarySearchFunc(out[:dense], float64(v), func(b bin, v float64) int { return cmp.Compare(b.v, v) }); ok {
			out[i].n += c
			continue
		}
		out = append(out, bin{float64(v), c})
	}
	return newSorted(out)
}

// ratioHist is an exact histogram of the ratios m/k of two small
// non-negative integers, 0 ≤ m ≤ k, k > 0 (per-request hit rates). It
// counts the pair (m, k), at index k(k+1)/2 + m of a [hist] (an array
// increment, no hashing), and turns pairs into float64 m/k only in sorted,
// where pairs of equal ratio (1/2, 2/4) merge.
type ratioHist struct {
	pairs *hist
}

func newRatioHist() ratioHist { return ratioHist{pairs: newHist(1, 1<<22)} }

// add counts m/k.
func (h ratioHist) add(m, k int) {
	h.pairs.add(int64(k)*int64(k+1)/2 + int64(m))
}

// sorted returns the distinct ratios, each the float64 division m/k.
func (h ratioHist) sorted() sorted {
	ps := h.pairs.sorted()
	out := make([]bin, 0, len(ps.bins))
	for _, b := range ps.bins {
		m, k := unpair(int64(b.v))
		out = append(out, bin{float64(m) / float64(k), b.n})
	}
	slices.SortFunc(out, func(x, y bin) int { return cmp.Compare(x.v, y.v) })
	merged := out[:0]
	for _, b := range out {
		if n := len(merged); n > 0 && merged[n-1].v == b.v {
			merged[n-1].n += b.n
			continue
		}
		merged = append(merged, b)
	}
	return newSorted(merged)
}

// unpair inverts i = k(k+1)/2 + m with 0 ≤ m ≤ k.
func unpair(i int64) (m, k int64) {
	k = int64((math.Sqrt(8*float64(i)+1) - 1) / 2)
	for k*(k+1)/2 > i { // float rounding, either way
		k--
	}
	for (k+1)*(k+2)/2 <= i {
		k++
	}
	return i - k*(k+1)/2, k
}

// bin is one distinct value and how many times it occurred.
type bin struct {
	v float64
	n uint64
}

// Stats summarises a distribution. Percentiles use numpy's default linear
// interpolation between closest ranks; Std is the population standard
// deviation (ddof 0). All fields are 0 when Count is 0.
type Stats struct {
	Count int64   `json:"count"`
	Mean  float64 `json:"mean"`
	Std   float64 `json:"std"`
	Min   float64 `json:"min"`
	P25   float64 `json:"p25"`
	P50   float64 `json:"p50"`
	P75   float64 `json:"p75"`
	P80   float64 `json:"p80"`
	P90   float64 `json:"p90"`
	P99   float64 `json:"p99"`
	Max   float64 `json:"max"`
}

// sorted is a histogram's distinct values in ascending order with
// cumulative counts, for quantiles.
type sorted struct {
	bins []bin
	cum  []uint64 // cum[i] = number of values <= bins[i].v
	n    uint64
}

func newSorted(b []bin) sorted {
	slices.SortFunc(b, func(x, y bin) int { return cmp.Compare(x.v, y.v) })
	cum := make([]uint64, len(b))
	var c uint64
	for i := range b {
		c += b[i].n
		cum[i] = c
	}
	return sorted{bins: b, cum: cum, n: c}
}

// at returns the value of 0-based rank i in the expanded sorted sequence.
func (s sorted) at(i uint64) float64 {
	j, _ := slices.BinarySearch(s.cum, i+1)
	return s.bins[j].v
}

// quantile is numpy.percentile(x, p) with the default linear method:
// r = (n-1)·p/100, x[⌊r⌋] + (x[⌈r⌉]-x[⌊r⌋])·(r-⌊r⌋).
func (s sorted) quantile(p float64) float64 {
	if s.n == 0 {
		return 0
	}
	r := p / 100 * float64(s.n-1)
	lo := math.Floor(r)
	frac := r - lo
	a := s.at(uint64(lo))
	if frac == 0 {
		return a
	}
	b := s.at(uint64(lo) + 1)
	return a + (b-a)*frac
}

// countLE returns how many values are <= v.
func (s sorted) countLE(v float64) uint64 {
	j, found := slices.BinarySearchFunc(s.bins, v, func(b bin, v float64) int { return cmp.Compare(b.v, v) })
	if found {
		return s.cum[j]
	}
	if j == 0 {
		return 0
	}
	return s.cum[j-1]
}

// stats summarises the histogram, dividing every value by unit (1 for
// counts, 1e9 to turn nanoseconds into seconds).
func (s sorted) stats(unit float64) Stats {
	if s.n == 0 {
		return Stats{}
	}
	var sum float64
	for _, b := range s.bins {
		sum += b.v * float64(b.n)
	}
	mean := sum / float64(s.n)
	var ss float64
	for _, b := range s.bins {
		d := b.v - mean
		ss += d * d * float64(b.n)
	}
	return Stats{
		Count: int64(s.n),
		Mean:  mean / unit,
		Std:   math.Sqrt(ss/float64(s.n)) / unit,
		Min:   s.bins[0].v / unit,
		P25:   s.quantile(25) / unit,
		P50:   s.quantile(50) / unit,
		P75:   s.quantile(75) / unit,
		P80:   s.quantile(80) / unit,
		P90:   s.quantile(90) / unit,
		P99:   s.quantile(99) / unit,
		Max:   s.bins[len(s.bins)-1].v / unit,
	}
}
