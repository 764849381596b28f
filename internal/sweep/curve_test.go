package sweep

import (
	"encoding/json"
	"math"
	"os"
	"path/filepath"
	"testing"
)

// TestFitCurve checks the curve recipes' line against known points: an
// exact line is found with the slope error its points' errors give;
// points that scatter about their line by more than their errors widen
// the slope's error; a flat deterministic server read with timer noise
// does not fall; the disturbed decode curve of a busy machine (issue 40:
// 23.84 ms mean, −0.96 ms per token) falls, so the recipe says it cannot
// tell.
func TestFitCurve(t *testing.T) {
	line := []curvePoint{{4, 4, 0.1}, {10, 7, 0.1}, {16, 10, 0.1}}
	f := fitCurve(line)
	// Σw(x − x̄)² = 100·(36 + 0 + 36) = 7200.
	if math.Abs(f.slope-0.5) > 1e-12 || math.Abs(f.intercept-2) > 1e-12 || math.Abs(f.se-1/math.Sqrt(7200)) > 1e-12 {
		t.Errorf("exact line: %+v, want slope 0.5, intercept 2, se %.6g", f, 1/math.Sqrt(7200))
	}
	if f.falls() {
		t.Error("a rising line falls")
	}
	// The middle point 1 (ten errors) off the line: χ²/(n − 2) =
	// (2/3·10)² + 2·(1/3·10)² ≈ 66.7, so the error grows √66.7 ≈ 8.2 times.
	bent := []curvePoint{{4, 4, 0.1}, {10, 8, 0.1}, {16, 10, 0.1}}
	g := fitCurve(bent)
	if ratio := g.se / f.se; math.Abs(ratio-math.Sqrt(200.0/3)) > 1e-9 {
		t.Errorf("scattered points: slope error %.4g times the exact line's, want %.4g", ratio, math.Sqrt(200.0/3))
	}
	flat := []curvePoint{{4, 20.1, 0.201}, {10, 20.0, 0.2}, {16, 19.9, 0.199}}
	if h := fitCurve(flat); h.falls() || h.slope >= 0 {
		t.Errorf("flat with timer noise: %+v, falls %v (want a small negative slope that does not fall)", h, h.falls())
	}
	disturbed := []curvePoint{{4, 29.6, 0.9}, {10, 23.8, 0.5}, {16, 18.1, 0.4}}
	if h := fitCurve(disturbed); !h.falls() || math.Abs(h.slope+0.96) > 0.05 {
		t.Errorf("disturbed decode curve: %+v, falls %v (want about −0.96 ms per token, falling)", h, h.falls())
	}
	if h := fitCurve(line[:1]); h.slope != 0 || h.intercept != 4 || h.falls() {
		t.Errorf("one point: %+v, want slope 0 and its value", h)
	}
	if h := fitCurve([]curvePoint{{8, 3, 0.1}, {8, 5, 0.1}}); h.slope != 0 || h.intercept != 4 {
		t.Errorf("one length twice: %+v, want slope 0 and the mean", h)
	}
}

// TestFitCurveRealServer refits the curve recipes' probes as
// llm-d-inference-sim answered them (testdata/real: its settings, the
// command and the machine's load are in each file): its prefill costs
// 0.5 ms per prompt token, which the line finds within two standard
// errors, and its decode a constant 10 ms per token, whose line does not
// fall, even from probes taken beside two busy loops.
func TestFitCurveRealServer(t *testing.T) {
	for _, tt := range []struct {
		file  string
		slope float64
	}{{"sim-prefill-ttft-curve.json", 0.5}, {"sim-decode-itl-curve-busy.json", 0}} {
		b, err := os.ReadFile(filepath.Join("testdata", "real", tt.file))
		if err != nil {
			t.Fatal(err)
		}
		var rec struct {
			Probes []struct {
				X     float64 `json:"x"`
				Valid bool    `json:"valid"`
				Avg   float64 `json:"avg_ms"`
				Std   float64 `json:"std_ms"`
				Count int     `json:"count"`
			} `json:"probes"`
		}
		if err := json.Unmarshal(b, &rec); err != nil {
			t.Fatal(err)
		}
		var pts []curvePoint
		for _, p := range rec.Probes {
			if p.Valid {
				pts = append(pts, curvePoint{x: p.X, y: p.Avg, se: max(p.Std/math.Sqrt(float64(p.Count)), seFloor*p.Avg)})
			}
		}
		f := fitCurve(pts)
		t.Logf("%s: %.4g ms + %.4g ± %.2g ms per token over %d probes", tt.file, f.intercept, f.slope, 2*f.se, len(pts))
		if math.Abs(f.slope-tt.slope) > 2*f.se || f.falls() {
			t.Errorf("%s: slope %.4g ± %.2g, the server's %.4g; falls %v", tt.file, f.slope, 2*f.se, tt.slope, f.falls())
		}
	}
}
