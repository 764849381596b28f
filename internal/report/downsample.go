package report

import (
	"math"

	"github.com/reprise-bench/reprise/internal/telemetry"
)

// The bounds that keep a report's size independent of the run's.
const (
	// DefaultMaxPoints is the default of [Options.MaxPoints].
	DefaultMaxPoints = 20000
	// MaxBuckets bounds the buckets of a time series: the bucket is 1 s,
	// or wider when a run is longer than MaxBuckets seconds.
	MaxBuckets = 3600
	// CDFPoints is the number of latencies each CDF is evaluated at.
	CDFPoints = 240
)

// roleOf is telemetry.Role: what a server metric family tells.
func roleOf(metric string) (string, int) { return telemetry.Role(metric) }

// logGrid returns n points spaced evenly on a log scale from lo to hi
// (both > 0), ending exactly at both; one point when lo == hi.
func logGrid(lo, hi float64, n int) []float64 {
	if lo <= 0 || hi < lo || n < 1 {
		return nil
	}
	if lo == hi || n == 1 {
		return []float64{lo}
	}
	out := make([]float64, n)
	llo, lhi := math.Log(lo), math.Log(hi)
	for i := range out {
		out[i] = math.Exp(llo + (lhi-llo)*float64(i)/float64(n-1))
	}
	out[0], out[n-1] = lo, hi
	return out
}

// buckets divides [0, span] seconds into buckets of 1 s; a run shorter
// than MinBuckets seconds gets the widest of 0.5, 0.2, 0.1, 0.05, 0.02 and 0.01 s
// that gives it at least MinBuckets, and a run longer than MaxBuckets
// seconds the whole seconds that keep it under MaxBuckets.
type buckets struct {
	width   float64 // seconds
	widthNS int64
	n       int
}

// MinBuckets is the number of buckets a run shorter than MinBuckets
// seconds gets at least (down to 10 ms buckets).
const MinBuckets = 30

func newBuckets(span float64) buckets {
	w := 1.0
	switch {
	case span/w > MaxBuckets:
		w = math.Ceil(span / MaxBuckets)
	case span < MinBuckets:
		for _, f := range []float64{0.5, 0.2, 0.1, 0.05, 0.02, 0.01} {
			w = f
			if span/f >= MinBuckets {
				break
			}
		}
	}
	return buckets{width: w, widthNS: int64(math.Round(w * 1e9)), n: max(1, int(math.Floor(span/w))+1)}
}

// at returns the bucket of Unix ns time ns in a run that starts at t0,
// -1 when ns is 0 (did not happen) or outside. It counts in integer
// nanoseconds, so a time on a bucket's edge falls in the later bucket.
func (b buckets) at(t0, ns int64) int {
	if ns == 0 || ns < t0 {
		return -1
	}
	k := (ns - t0) / b.widthNS
	if k >= int64(b.n) {
		return -1
	}
	return int(k)
}

// of returns the bucket of t seconds, -1 when t is NaN or outside.
func (b buckets) of(t float64) int {
	if math.IsNaN(t) || t < 0 {
		return -1
	}
	i := int(t / b.width)
	if i >= b.n {
		return -1
	}
	return i
}

// starts returns the x of each bucket: its start time in seconds.
func (b buckets) starts() Values {
	out := make(Values, b.n)
	for i := range out {
		out[i] = float64(i) * b.width
	}
	return out
}

// spread adds amount, spread evenly over [from, to] seconds, to the
// buckets it overlaps (all of it to from's bucket when from == to).
func (b buckets) spread(sums []float64, from, to, amount float64) {
	if math.IsNaN(from) || math.IsNaN(to) || to < from {
		return
	}
	i, j := b.of(from), b.of(to)
	if i < 0 || j < 0 {
		return
	}
	if i == j {
		sums[i] += amount
		return
	}
	rate := amount / (to - from)
	sums[i] += rate * (float64(i+1)*b.width - from)
	sums[j] += rate * (to - float64(j)*b.width)
	for k := i + 1; k < j; k++ {
		sums[k] += rate * b.width
	}
}
