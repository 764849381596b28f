package sweep

import (
	"encoding/json"
	"errors"
	"math"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/reprise-bench/reprise/internal/exitcode"
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

// TestCurveReprobes drives the curve recipe with scripted probes (a
// decode line at OSL 4, 10, 16): a first pass that falls is re-probed,
// neighbour by neighbour; when the re-probes are flat the answer is their
// line, and when they fall again the recipe cannot tell and exits 4.
func TestCurveReprobes(t *testing.T) {
	for _, tt := range []struct {
		name    string
		reprobe map[float64]float64
		probes  int
		cannot  bool
	}{
		{"flat on re-probing", map[float64]float64{4: 20, 10: 20, 16: 20}, 6, false},
		{"falls again", map[float64]float64{4: 30, 10: 22, 16: 18}, 6, true},
	} {
		t.Run(tt.name, func(t *testing.T) {
			first := map[float64]float64{4: 30, 10: 22, 16: 18}
			r := NewRecipeConfig(RecipeDecodeITL)
			r.OSLMin, r.OSLMax, r.OSLSteps, r.Stat = 4, 16, 3, "avg"
			res := &SearchResult{Kind: r.Name}
			itl := r.key("inter_token_latency")
			run := func(_ []string, v []float64, why string) (*SearchProbe, error) {
				y := first[v[0]]
				if why == "reprobe" {
					y = tt.reprobe[v[0]]
				}
				pr := &SearchProbe{Why: why, Validity: Validity{Valid: true}, Metrics: map[string]float64{itl: y}}
				res.Probes = append(res.Probes, *pr)
				return pr, nil
			}
			if err := (&sweeper{}).curve(r, res, run, r.key("time_to_first_token"), itl); err != nil {
				t.Fatal(err)
			}
			t.Log(res.Text)
			if len(res.Probes) != tt.probes || len(res.Violations) == 0 {
				t.Errorf("%d probes, violations %q; want %d probes and the fall reported", len(res.Probes), res.Violations, tt.probes)
			}
			err := res.Verdict()
			var ec *exitcode.Error
			switch {
			case tt.cannot && (res.CannotTell == "" || !errors.As(err, &ec) || ec.Code != exitcode.Lateness || !strings.Contains(res.Text, "cannot tell")):
				t.Errorf("cannot tell %q, verdict %v; want cannot tell, exit %d", res.CannotTell, err, exitcode.Lateness)
			case !tt.cannot && (res.CannotTell != "" || err != nil || math.Abs(res.Metrics[itl+".mean"]-20) > 1e-9):
				t.Errorf("cannot tell %q, verdict %v, mean %v; want the re-probed line, mean 20", res.CannotTell, err, res.Metrics[itl+".mean"])
			}
		})
	}
}
