package summary

import (
	"math"
	"math/rand/v2"
	"slices"
	"testing"

	"github.com/google/go-cmp/cmp"
)

// TestValues checks that Values gives Compute's statistics while it is
// exact, and the summary's sketch bound past its exact limit.
func TestValues(t *testing.T) {
	rng := rand.New(rand.NewPCG(1, 2))
	vals := make([]float64, 500)
	for i := range vals {
		vals[i] = 10 + rng.ExpFloat64()*40
	}
	exact := NewValues(0)
	sketch := NewValues(100)
	for _, v := range vals {
		exact.Add(v)
		sketch.Add(v)
	}
	exact.Add(math.NaN())
	exact.Add(math.Inf(1))
	want := Compute(slices.Clone(vals))
	if diff := cmp.Diff(want, exact.Stats()); diff != "" {
		t.Errorf("exact Values differ from Compute (-want +got):\n%s", diff)
	}
	if exact.Count() != len(vals) {
		t.Errorf("Count %d, want %d (NaN and Inf ignored)", exact.Count(), len(vals))
	}
	got := sketch.Stats()
	if !got.Approximate || got.Count != len(vals) || got.Max != want.Max || got.Min != want.Min {
		t.Errorf("sketched Values: %+v", got)
	}
	sorted := slices.Sorted(slices.Values(vals))
	for _, p := range []struct {
		name     string
		got, pct float64
	}{{"p50", got.P50, 50}, {"p90", got.P90, 90}, {"p99", got.P99, 99}} {
		r := float64(len(sorted)-1) * p.pct / 100
		lo, hi := sorted[int(math.Floor(r))], sorted[int(math.Ceil(r))]
		if p.got < lo*(1-SketchRelativeAccuracy) || p.got > hi*(1+SketchRelativeAccuracy) {
			t.Errorf("%s = %v, want within %v of [%v, %v]", p.name, p.got, SketchRelativeAccuracy, lo, hi)
		}
	}
	if s := NewValues(0).Stats(); s != (Stats{}) {
		t.Errorf("empty Values: %+v, want zero Stats", s)
	}
}
