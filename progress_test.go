package reprise

import (
	"math"
	"strings"
	"testing"
	"time"

	"github.com/reprise-bench/reprise/engine/summary"
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

// TestProgressLine: while requests are being sent the line has an ETA;
// once all are sent it says what is still in flight, not "99% ETA 0s".
func TestProgressLine(t *testing.T) {
	p := &progress{planned: 100}
	p.sent.Store(60)
	p.done.Store(50)
	p.inflight.Store(10)
	if got := p.lineAt(10 * time.Second); !strings.Contains(got, "  50%  ETA 10s  elapsed 10s") {
		t.Errorf("sending: %q", got)
	}
	p.sent.Store(100)
	p.done.Store(99)
	p.inflight.Store(1)
	got := p.lineAt(20 * time.Second)
	if !strings.Contains(got, "  99%  sending done, 1 in flight  elapsed 20s") || strings.Contains(got, "ETA") {
		t.Errorf("sent all: %q, want what is in flight instead of an ETA", got)
	}
}

// TestCalibrationManifest: the manifest names the calibration a run
// applied, when it was made and how old it was at the run's start.
func TestCalibrationManifest(t *testing.T) {
	created := time.Date(2027, 1, 15, 8, 0, 0, 0, time.UTC)
	got := calibrationManifest(&summary.Calibration{File: "/home/u/.cache/reprise/calibration-h.json", Created: created},
		created.Add(26*time.Hour))
	m, ok := got.(map[string]any)
	if !ok || m["file"] != "/home/u/.cache/reprise/calibration-h.json" || m["created"] != created || m["age_s"] != float64(26*3600) {
		t.Errorf("manifest calibration %v", got)
	}
	if calibrationManifest(nil, created) != nil {
		t.Error("no calibration is not null")
	}
}
