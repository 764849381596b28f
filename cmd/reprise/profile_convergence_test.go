package main

import (
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/reprise-bench/reprise/engine/summary"
	"github.com/reprise-bench/reprise/internal/mockserver"
	"github.com/reprise-bench/reprise/internal/sweep"
)

// TestProfileConvergenceModes runs aiperf profile's --num-profile-runs
// with each of AIPerf's --convergence-mode stops against the mock server:
//   - cv on the output length (fixed by --osl, CV 0) stops after the
//     3 runs a rule needs, of the 5 allowed;
//   - distribution on the input length (the same lengths every run, KS D
//     0, p 1) stops there too;
//   - distribution on TTFT with a p-value bound of 0.9999 is not reached
//     in 3 runs (of 3): continuous TTFTs of independent runs give D > 0
//     and, even from one distribution, p above 0.9999 once in 10⁴.
//
// runs.json and stderr say the mode, what was achieved and whether it
// was reached; a bad mode, or a run-level metric for distribution, exits 2.
func TestProfileConvergenceModes(t *testing.T) {
	mock := func(t *testing.T) string {
		t.Helper()
		return startMockServer(t, func(c *mockserver.Config) {
			c.TTFT, c.ITL, c.PrefillPerToken = 5*time.Millisecond, time.Millisecond, time.Millisecond
		}).URL()
	}
	base := []string{"profile", "-m", mockserver.DefaultModel, "--no-server-metrics", "--streaming",
		"--isl", "64", "--osl", "4", "--concurrency", "4", "--request-count", "40"}
	for _, tc := range []struct {
		mode, metric, threshold, most string
		runs                          int
		reached                       bool
		text                          string
	}{
		{"cv", "output_sequence_length", "0.01", "5", 3, true, "(cv) reached after 3 runs: CV 0 % < 1 %"},
		{"distribution", "input_sequence_length", "0.05", "5", 3, true, "(distribution) reached after 3 runs: the last run's distribution is the earlier runs' (KS D 0, p 1 > 0.05)"},
		{"distribution", "time_to_first_token", "0.9999", "3", 3, false, "(distribution) not reached after 3 runs"},
	} {
		t.Run(tc.mode+" "+tc.metric, func(t *testing.T) {
			dir := filepath.Join(t.TempDir(), "r")
			code, _, stderr := runCLI(t, "", append(base, "--url", mock(t), "--artifact-dir", dir, "--num-profile-runs", tc.most, "--convergence-mode", tc.mode, "--convergence-metric", tc.metric,
				"--convergence-threshold", tc.threshold)...)
			if code != 0 {
				t.Fatalf("exit %d: %s", code, stderr)
			}
			a, err := sweep.ReadRuns(dir)
			if err != nil {
				t.Fatal(err)
			}
			c := a.Convergence
			if c == nil || c.Mode != tc.mode || c.Reached != tc.reached || a.Runs != tc.runs || a.Converged != tc.reached {
				t.Fatalf("runs.json: %d runs, converged %v, convergence %+v; want mode %s reached %v after %d", a.Runs, a.Converged, c, tc.mode, tc.reached, tc.runs)
			}
			if tc.mode == summary.ModeDistribution && !tc.reached && (c.KS <= 0 || c.PValue > 0.9999 || c.Metric != "time_to_first_token.avg") {
				t.Errorf("TTFT: KS D %v, p %v on %q; want D > 0, p ≤ 0.9999", c.KS, c.PValue, c.Metric)
			}
			if !strings.Contains(stderr, tc.text) {
				t.Errorf("stderr lacks %q:\n%s", tc.text, stderr)
			}
		})
	}
	for _, tc := range []struct {
		args []string
		want string
	}{
		{[]string{"--convergence-mode", "ks"}, `--convergence-mode "ks": want ci_width, cv, distribution`},
		{[]string{"--convergence-mode", "cv"}, "--convergence-mode cv needs --convergence-metric"},
		{[]string{"--convergence-mode", "distribution", "--convergence-metric", "request_throughput", "--convergence-threshold", "0.05"}, "a run-level one none"},
	} {
		code, _, stderr := runCLI(t, "", append(append(base, "--url", "http://127.0.0.1:1", "--num-profile-runs", "5"), tc.args...)...)
		if code != 2 || !strings.Contains(stderr, tc.want) {
			t.Errorf("%v: exit %d, %s; want 2 with %q", tc.args, code, stderr, tc.want)
		}
	}
}
