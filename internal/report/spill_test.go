package report

import (
	"math"
	"os"
	"testing"
)

// TestSpill: views come back as they were put, in order, and the spill
// file is gone from the temporary directory from the start (a report
// killed midway leaves nothing behind).
func TestSpill(t *testing.T) {
	dir := t.TempDir()
	t.Setenv("TMPDIR", dir)
	s, err := newSpill()
	if err != nil {
		t.Fatal(err)
	}
	if ents, err := os.ReadDir(dir); err != nil || len(ents) != 0 {
		t.Errorf("the temporary directory holds %v (%v), want nothing", ents, err)
	}
	in := []reqView{
		{intended: -1, sent: 2, first: 3, last: math.MaxInt64, end: math.MinInt64, ttft: 1.5, ttfo: float32(math.NaN()),
			itl: 0.25, e2e: 9, lateness: -0.5, readLag: 7, cacheErr: float32(math.Inf(-1)), isl: math.MaxInt32, osl: -3, kind: 255, warm: true},
		{intended: 10, sent: 11, ttft: 2, isl: 100, osl: 20, kind: 1},
	}
	for i := range in {
		if err := s.put(&in[i]); err != nil {
			t.Fatal(err)
		}
	}
	var out []reqView
	if err := s.each(func(v *reqView) { out = append(out, *v) }); err != nil {
		t.Fatal(err)
	}
	if len(out) != len(in) {
		t.Fatalf("%d views back, want %d", len(out), len(in))
	}
	for i := range in {
		a, b := in[i], out[i]
		if math.IsNaN(float64(a.ttfo)) && math.IsNaN(float64(b.ttfo)) {
			a.ttfo, b.ttfo = 0, 0
		}
		if a != b {
			t.Errorf("view %d: got %+v, want %+v", i, b, a)
		}
	}
	if err := s.close(); err != nil {
		t.Fatal(err)
	}
}
