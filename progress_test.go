package reprise

import (
	"math"
	"testing"
)

// TestHistQuantile checks the live histogram against exact quantiles: the
// reported bucket bound is within the 32-sub-bucket resolution (≈3 %).
func TestHistQuantile(t *testing.T) {
	var h hist
	var vals []int64
	for i := int64(1); i <= 10000; i++ {
		v := i * i * 37 // spread over many powers of two
		vals = append(vals, v)
		h.add(v)
	}
	h.add(math.MaxInt64) // the largest value must not overflow the buckets
	h.add(-5)            // negatives clamp to 0
	for _, q := range []float64{0.5, 0.9, 0.99} {
		exact := vals[int(q*float64(len(vals)+1))-1]
		got := h.quantile(q)
		if d := math.Abs(float64(got-exact)) / float64(exact); d > 0.04 {
			t.Errorf("q%.2f = %d, exact %d (%.1f%% off)", q, got, exact, 100*d)
		}
	}
	for v := uint64(0); v < 1<<20; v = v*3 + 1 {
		if lo := histLow(histIndex(v)); lo > v || histIndex(lo) != histIndex(v) {
			t.Fatalf("value %d: bucket low %d", v, lo)
		}
	}
}
