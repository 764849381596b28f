package search

import (
	"math"
	"testing"
)

// FuzzParseDimension: any text either fails or gives a dimension with
// lo < hi and a known kind that reads back the same through String.
func FuzzParseDimension(f *testing.F) {
	for _, s := range []string{"concurrency:1,256", "request-rate:0.5,8:float", "isl:1,2:int", "x:3,1", "::", "a:1e308,1e309"} {
		f.Add(s)
	}
	f.Fuzz(func(t *testing.T, s string) {
		d, err := ParseDimension(s)
		if err != nil {
			return
		}
		if !(d.Lo < d.Hi) || (d.Kind != KindInt && d.Kind != KindFloat) || math.IsInf(d.Hi-d.Lo, 0) && d.Kind == KindInt {
			t.Fatalf("%q gave %+v", s, d)
		}
		again, err := ParseDimension(d.String())
		if err != nil || again != d {
			t.Fatalf("%q → %+v → %q → %+v, %v", s, d, d.String(), again, err)
		}
	})
}

// FuzzParseConstraint: any text either fails or gives a constraint with
// a known operator and a finite threshold.
func FuzzParseConstraint(f *testing.F) {
	for _, s := range []string{"time_to_first_token:p99:<=:500", "error_rate:avg:lt:0.01", "a:b:c:d", "::::"} {
		f.Add(s)
	}
	f.Fuzz(func(t *testing.T, s string) {
		c, err := ParseConstraint(s)
		if err != nil {
			return
		}
		switch c.Op {
		case "<", "<=", ">", ">=":
		default:
			t.Fatalf("%q gave operator %q", s, c.Op)
		}
		if math.IsNaN(c.Threshold) || math.IsInf(c.Threshold, 0) {
			t.Fatalf("%q gave threshold %v", s, c.Threshold)
		}
	})
}
