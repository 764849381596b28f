package summary

import (
	"math"
	"slices"

	"github.com/DataDog/sketches-go/ddsketch"
)

// ExactValues is how many values of one metric an [Accumulator] keeps
// exactly. Up to this many, the metric's percentiles are exact (numpy's
// linear interpolation over the sorted values, as [Compute]); beyond it the
// values move into a quantile sketch and the percentiles are approximate,
// within [SketchRelativeAccuracy]. 2^17 values cost 1 MiB per metric (a
// little more while the slice grows), about 25 MiB for every metric at once.
const ExactValues = 1 << 17

// SketchRelativeAccuracy is the relative-error bound α of an approximate
// percentile. With r = (n−1)·p/100, the reported p-th percentile v is
// within α of one of the order statistics x₍⌊r⌋₎, x₍⌈r⌉₎ that bracket the
// exact (interpolated) percentile: |v − x| ≤ α·|x|. Min, max, sum, avg,
// std and count stay exact.
//
// The sketch is DDSketch (github.com/DataDog/sketches-go) with a
// logarithmic index mapping: a bucket spans a factor γ = (1+α)/(1−α) of
// magnitude, and every value of a bucket is within α of its midpoint.
const SketchRelativeAccuracy = 0.005

// sketchMaxBins bounds a sketch store (one for positive values, one for
// negative): 8,192 bins of 8 bytes. At α = 0.5 %, ln γ ≈ 0.01, so 8,192
// bins span magnitudes over a ratio of e^81 ≈ 10^35, far more than any
// metric here can (ns-resolution times up to 2^63 ns span 10^19): the
// store never collapses bins, so the bound holds at every percentile.
const sketchMaxBins = 8192

// series is the values of one metric: exact while there are at most limit
// of them, then a sketch plus exact streaming moments. The zero value is
// an empty exact series.
type series struct {
	vals []float64          // the values in arrival order, while exact
	sk   *ddsketch.DDSketch // non-nil once the values spilled

	n        int
	min, max float64
	sum, c   float64 // Neumaier-compensated sum: sum + c
	mean, m2 float64 // Welford's running mean and Σ(x − mean)²
}

// add adds v, a finite value. Past limit values, it allocates only when v
// falls outside the sketch's bucket range so far.
func (s *series) add(v float64, limit int) {
	if s.sk == nil {
		if len(s.vals) < limit {
			s.vals = append(s.vals, v)
			return
		}
		s.spill()
	}
	s.stream(v)
}

// spill moves the exact values into a new sketch and frees them.
func (s *series) spill() {
	sk, err := ddsketch.LogCollapsingLowestDenseDDSketch(SketchRelativeAccuracy, sketchMaxBins)
	if err != nil {
		panic("BUG: summary: sketch: " + err.Error())
	}
	s.sk = sk
	vals := s.vals
	s.vals = nil
	for _, v := range vals {
		s.stream(v)
	}
}

func (s *series) stream(v float64) {
	// Finite values between ±MaxIndexableValue (≈ 10^308) are always
	// accepted.
	_ = s.sk.Add(v)
	if s.n == 0 || v < s.min {
		s.min = v
	}
	if s.n == 0 || v > s.max {
		s.max = v
	}
	s.n++
	t := s.sum + v
	if math.Abs(s.sum) >= math.Abs(v) {
		s.c += (s.sum - t) + v
	} else {
		s.c += (v - t) + s.sum
	}
	s.sum = t
	d := v - s.mean
	s.mean += d / float64(s.n)
	s.m2 += d * (v - s.mean)
}

func (s *series) count() int {
	if s.sk == nil {
		return len(s.vals)
	}
	return s.n
}

// stats returns the statistics of the series. It does not change it. Unit
// is left empty.
func (s *series) stats() Stats {
	if s.sk == nil {
		return Compute(slices.Clone(s.vals))
	}
	q := func(p float64) float64 {
		v, err := s.sk.GetValueAtQuantile(p / 100)
		if err != nil {
			panic("BUG: summary: quantile of a non-empty sketch: " + err.Error())
		}
		// The exact extremes are known: clamping only moves v closer to
		// the true percentile.
		return min(max(v, s.min), s.max)
	}
	sum := s.sum + s.c
	return Stats{
		Avg: sum / float64(s.n), Min: s.min, Max: s.max, Sum: sum,
		P1: q(1), P5: q(5), P10: q(10), P25: q(25), P50: q(50), P75: q(75), P90: q(90), P95: q(95), P99: q(99),
		Std: math.Sqrt(s.m2 / float64(s.n)), Count: s.n,
		Approximate: true, RelativeError: SketchRelativeAccuracy,
	}
}
