// The statistics of one metric's values, which every file that reports
// a metric uses.

package summary

import (
	"math"
	"slices"
)

// Stats are the statistics of one metric. Values are in Unit.
type Stats struct {
	Unit  string  `json:"unit"`
	Avg   float64 `json:"avg"`
	Min   float64 `json:"min"`
	Max   float64 `json:"max"`
	Sum   float64 `json:"sum"`
	P1    float64 `json:"p1"`
	P5    float64 `json:"p5"`
	P10   float64 `json:"p10"`
	P25   float64 `json:"p25"`
	P50   float64 `json:"p50"`
	P75   float64 `json:"p75"`
	P90   float64 `json:"p90"`
	P95   float64 `json:"p95"`
	P99   float64 `json:"p99"`
	Std   float64 `json:"std"`
	Count int     `json:"count"`
	// Approximate reports that the percentiles come from a quantile sketch
	// (the metric had more than [ExactValues] values); each is then within
	// RelativeError of the exact one (see [SketchRelativeAccuracy]). Both
	// are omitted from JSON when the percentiles are exact.
	Approximate   bool    `json:"approximate,omitempty"`
	RelativeError float64 `json:"relative_error,omitempty"`
}

// Compute returns the statistics of vals (which it sorts in place). Unit
// is left empty.
func Compute(vals []float64) Stats {
	n := len(vals)
	if n == 0 {
		return Stats{}
	}
	slices.Sort(vals)
	var sum float64
	for _, v := range vals {
		sum += v
	}
	mean := sum / float64(n)
	var ss float64
	for _, v := range vals {
		d := v - mean
		ss += d * d
	}
	return Stats{
		Avg: mean, Min: vals[0], Max: vals[n-1], Sum: sum,
		P1: Percentile(vals, 1), P5: Percentile(vals, 5), P10: Percentile(vals, 10),
		P25: Percentile(vals, 25), P50: Percentile(vals, 50), P75: Percentile(vals, 75),
		P90: Percentile(vals, 90), P95: Percentile(vals, 95), P99: Percentile(vals, 99),
		Std: math.Sqrt(ss / float64(n)), Count: n,
	}
}

// Percentile returns the p-th percentile of sorted values with numpy's
// default linear interpolation: r = (n−1)·p/100, then interpolate between
// the neighbours of r.
func Percentile(sorted []float64, p float64) float64 {
	n := len(sorted)
	if n == 0 {
		return math.NaN()
	}
	r := float64(n-1) * p / 100
	lo := int(math.Floor(r))
	hi := int(math.Ceil(r))
	if hi >= n {
		hi = n - 1
	}
	return sorted[lo] + (sorted[hi]-sorted[lo])*(r-float64(lo))
}
