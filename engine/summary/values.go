package summary

import "math"

// Values collects the values of one metric outside a run's summary (a
// report's per-time-bucket percentiles) and gives their [Stats] exactly as
// the summary computes a metric's: exact up to a bound, then from the same
// quantile sketch ([SketchRelativeAccuracy]). The zero value is not
// usable: make one with [NewValues]. It is not safe for concurrent use.
type Values struct {
	s     series
	exact int
}

// NewValues returns an empty Values that keeps up to exact values exactly
// (exact ≤ 0 takes [ExactValues]) before it moves them into a sketch, so
// that its memory stays bounded.
func NewValues(exact int) *Values {
	if exact <= 0 {
		exact = ExactValues
	}
	return &Values{exact: exact}
}

// Add adds v; values that are not finite are ignored.
func (v *Values) Add(x float64) {
	if math.IsNaN(x) || math.IsInf(x, 0) {
		return
	}
	v.s.add(x, v.exact)
}

// Count is the number of values added.
func (v *Values) Count() int { return v.s.count() }

// Stats returns the statistics of the values (the zero Stats without
// any). It does not change v. Unit is left empty.
func (v *Values) Stats() Stats {
	if v.s.count() == 0 {
		return Stats{}
	}
	return v.s.stats()
}
