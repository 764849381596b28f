package adaptive

import (
	"strings"
	"testing"
	"time"

	"github.com/google/go-cmp/cmp"

	"github.com/reprise-bench/reprise/internal/search"
)

func testConfig(lo, hi int) Config {
	c := NewConfig()
	c.Min, c.Max, c.Period, c.Sustain = lo, hi, time.Second, 3*time.Second
	c.SLAs = []search.Constraint{{Metric: "request_latency:avg", Op: "<=", Threshold: 400}}
	return c
}

// drive runs a controller against a server whose SLA holds up to
// boundary (and, from window failAt on, never: 0 = not), one window a
// second, and returns the settings window by window and the outcome.
func drive(cfg Config, boundary, failAt int) ([]int, Outcome) {
	c := NewController(cfg)
	settings := []int{}
	for k := 1; k <= 40; k++ {
		settings = append(settings, c.Setting())
		pass := c.Setting() <= boundary && (failAt == 0 || k < failAt)
		if d := c.Step(Verdict{Conclusive: true, Pass: pass}, int64(k)*int64(time.Second)); d.Done {
			break
		}
	}
	return settings, c.Outcome()
}

// TestControllerFindsTheBoundary: doubling until a failure, bisection
// until the passing and failing settings are adjacent, then the
// boundary held for the sustain duration.
func TestControllerFindsTheBoundary(t *testing.T) {
	tests := []struct {
		name     string
		lo, hi   int
		boundary int
		failAt   int
		settings []int
		want     Outcome
	}{
		// 1, 2, 4, 8 pass; 16 fails; 12 fails, 10 and 11 pass: 11 is held
		// from the window at 8 s for 3 s (windows 9, 10, 11).
		{"bisects to 11", 1, 32, 11, 0, []int{1, 2, 4, 8, 16, 12, 10, 11, 11, 11, 11},
			Outcome{Status: StatusComplete, Reason: "sustain_duration_completed", Boundary: 11, Setting: 11, LastPass: 11, FirstFail: 12, Sustained: true}},
		// The ceiling caps the doubling: 1, 2, 4, 5 and 5 passes.
		{"ceiling holds", 1, 5, 100, 0, []int{1, 2, 4, 5},
			Outcome{Status: StatusIncomplete, Reason: "max_control_value_reached_without_saturation", Boundary: 5, Setting: 5, LastPass: 5}},
		{"min fails", 2, 32, 1, 0, []int{2},
			Outcome{Status: StatusFailed, Reason: "no_sustainable_concurrency_found", Setting: 2, FirstFail: 0}},
		// 8 is found at window 5 (16 fails, then 12, 10, 9): held from
		// window 8; window 9 fails, one step down to 7; window 10 fails
		// again: failed.
		{"sustain fails twice", 1, 32, 8, 9, []int{1, 2, 4, 8, 16, 12, 10, 9, 8, 7},
			Outcome{Status: StatusFailed, Reason: "sustain_failed_after_recovery", Boundary: 7, Setting: 7, LastPass: 8, FirstFail: 9}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			got, out := drive(testConfig(tt.lo, tt.hi), tt.boundary, tt.failAt)
			if diff := cmp.Diff(tt.settings, got); diff != "" {
				t.Errorf("settings (-want +got):\n%s", diff)
			}
			if diff := cmp.Diff(tt.want, out); diff != "" {
				t.Errorf("outcome (-want +got):\n%s", diff)
			}
		})
	}
}

// TestControllerInconclusiveKeepsTheSetting: a window without enough
// requests changes nothing; End marks an unfinished run incomplete.
func TestControllerInconclusiveKeepsTheSetting(t *testing.T) {
	c := NewController(testConfig(1, 8))
	c.Step(Verdict{Conclusive: true, Pass: true}, 1)
	d := c.Step(Verdict{}, 2)
	if d.Event != EventWindow || d.Before != 2 || d.After != 2 || d.Done {
		t.Errorf("inconclusive window: %+v", d)
	}
	c.End("benchmark_duration_ended")
	if o := c.Outcome(); o.Status != StatusIncomplete || o.Reason != "benchmark_duration_ended" || o.LastPass != 1 {
		t.Errorf("outcome %+v", o)
	}
	if d := c.Step(Verdict{Conclusive: true, Pass: true}, 3); !d.Done || d.After != 2 {
		t.Errorf("a finished controller moved: %+v", d)
	}
}

// TestJudge: every SLA must hold; the binding SLA is the first that
// fails, else the closest to its limit; too few requests or a missing
// metric are inconclusive.
func TestJudge(t *testing.T) {
	slas := []search.Constraint{
		{Metric: "request_latency:p95", Op: "<=", Threshold: 1000},
		{Metric: "error_rate:avg", Op: "<=", Threshold: 0.01},
		{Metric: "output_token_throughput:avg", Op: ">=", Threshold: 100},
	}
	w := func(n int, lat, er, tput float64) Window {
		return Window{Completed: n, Values: map[string]float64{"request_latency:p95": lat, "error_rate:avg": er, "output_token_throughput:avg": tput}}
	}
	tests := []struct {
		name string
		w    Window
		want Verdict
	}{
		// Margins: latency 10 %, errors 100 %, throughput 50 %.
		{"all hold", w(10, 900, 0, 150), Verdict{Conclusive: true, Pass: true, Binding: "request_latency:p95:<=:1000"}},
		{"errors fail", w(10, 900, 0.05, 150), Verdict{Conclusive: true, Binding: "error_rate:avg:<=:0.01"}},
		{"throughput fails", w(10, 900, 0, 50), Verdict{Conclusive: true, Binding: "output_token_throughput:avg:>=:100"}},
		{"too few", w(0, 900, 0, 150), Verdict{}},
		// No latency is measured when every request failed: it fails.
		{"all failed", Window{Completed: 3, Errors: 3, Values: map[string]float64{}}, Verdict{Conclusive: true, Binding: "every request failed"}},
		{"metric missing", Window{Completed: 5, Values: map[string]float64{}}, Verdict{}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			if diff := cmp.Diff(tt.want, Judge(slas, 1, tt.w)); diff != "" {
				t.Errorf("(-want +got):\n%s", diff)
			}
		})
	}
}

// TestConfigValidate names every problem at once.
func TestConfigValidate(t *testing.T) {
	c := NewConfig()
	c.Max = 0
	c.SLAs = []search.Constraint{{Metric: "latency:p95", Op: "<=", Threshold: 1}}
	err := c.Validate()
	for _, want := range []string{"setting range", "sustain duration", "SLA latency:p95"} {
		if err == nil || !strings.Contains(err.Error(), want) {
			t.Errorf("Validate() = %v, want it to name %q", err, want)
		}
	}
	if c := testConfig(1, 8); c.Validate() != nil {
		t.Errorf("a valid config: %v", c.Validate())
	}
}
