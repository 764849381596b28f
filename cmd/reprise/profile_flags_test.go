package main

import (
	"log/slog"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/reprise-bench/reprise/internal/exitcode"
	"github.com/reprise-bench/reprise/internal/mockserver"
)

// TestProfileFailedRequestThreshold: against a mock server that fails
// every request (HTTP 500), --failed-request-threshold 0.1 aborts the run
// after its first 10 requests, not 200: exit 3 with the counts, the
// server saw only those and the ones in flight, and the AIPerf export is
// written. Without the flag every request is sent (exit 1: none
// succeeded, known after the whole run).
func TestProfileFailedRequestThreshold(t *testing.T) {
	srv := startMockServer(t, func(c *mockserver.Config) {
		c.KeepLog, c.Seed = true, 3
		c.Faults = []mockserver.FaultRate{{Fault: mockserver.Fault{Kind: mockserver.Fault500}, Rate: 1}}
	})
	args := func(out string, extra ...string) []string {
		return append([]string{"profile", "-m", "reprise-mock", "--url", srv.URL(), "--isl", "16", "--osl", "4",
			"--request-count", "200", "--concurrency", "2", "--artifact-dir", out, "--quiet"}, extra...)
	}
	out := filepath.Join(t.TempDir(), "run")
	code, _, stderr := runCLI(t, "", args(out, "--failed-request-threshold", "0.1")...)
	if code != exitcode.SLOBreach {
		t.Fatalf("exit %d, want 3: %s", code, stderr)
	}
	if want := "stopped: 10 of 10 measured requests failed (100.0 %), over the failed-request threshold of 10.0 %"; !strings.Contains(stderr, want) {
		t.Errorf("stderr lacks %q:\n%s", want, stderr)
	}
	if n := len(srv.Log()); n < 10 || n > 20 {
		t.Errorf("the server saw %d requests, want 10 to 20 of the 200", n)
	}
	if _, err := os.Stat(filepath.Join(out, "profile_export_aiperf.json")); err != nil {
		t.Errorf("no AIPerf export after the abort: %v", err)
	}
	srv.ResetLog()
	code, _, stderr = runCLI(t, "", args(filepath.Join(t.TempDir(), "all"))...)
	if code != exitcode.RunError || !strings.Contains(stderr, "no request succeeded (200 failed") {
		t.Errorf("without the flag: exit %d, want 1 after all 200 failed: %s", code, stderr)
	}
	if n := len(srv.Log()); n != 200 {
		t.Errorf("without the flag the server saw %d requests, want 200", n)
	}
	code, _, stderr = runCLI(t, "", args(filepath.Join(t.TempDir(), "bad"), "--failed-request-threshold", "10")...)
	if code != exitcode.Usage || !strings.Contains(stderr, "--failed-request-threshold 10: want a fraction") {
		t.Errorf("threshold 10: exit %d, want 2 naming the flag: %s", code, stderr)
	}
}

// TestProfileStatsInterval: --stats-interval 0.05 prints the progress
// line (not on a terminal) about every 50 ms of a run of about 0.6 s; by
// default (every 5 s) the same run prints none.
func TestProfileStatsInterval(t *testing.T) {
	srv := startMockServer(t, func(c *mockserver.Config) { c.TTFT = 30 * time.Millisecond })
	lines := func(extra ...string) int {
		args := append([]string{"profile", "-m", "reprise-mock", "--url", srv.URL(), "--isl", "16", "--osl", "2",
			"--request-count", "20", "--concurrency", "1", "--artifact-dir", filepath.Join(t.TempDir(), "run")}, extra...)
		code, _, stderr := runCLI(t, "", args...)
		if code != 0 {
			t.Fatalf("exit %d: %s", code, stderr)
		}
		n := 0
		for l := range strings.SplitSeq(stderr, "\n") {
			if strings.HasPrefix(l, "sent ") && strings.Contains(l, " in flight ") {
				n++
			}
		}
		return n
	}
	if n := lines("--stats-interval", "0.05"); n < 5 {
		t.Errorf("--stats-interval 0.05: %d progress lines in a run of 20 × 30 ms, want at least 5", n)
	}
	if n := lines(); n != 0 {
		t.Errorf("default interval: %d progress lines in a run under 5 s, want 0", n)
	}
}

// TestProfileExtraVerbose: -vv and --extra-verbose log at debug level;
// without them the run logs no debug line.
func TestProfileExtraVerbose(t *testing.T) {
	srv := startMockServer(t, nil)
	for _, flag := range []string{"-vv", "--extra-verbose", ""} {
		args := []string{"profile", "-m", "reprise-mock", "--url", srv.URL(), "--isl", "16", "--osl", "2",
			"--request-count", "2", "--artifact-dir", filepath.Join(t.TempDir(), "run"), "--quiet"}
		if flag != "" {
			args = append(args, flag)
		}
		code, _, stderr := runCLI(t, "", args...)
		if code != 0 {
			t.Fatalf("%s: exit %d: %s", flag, code, stderr)
		}
		if debug := strings.Contains(stderr, "level=DEBUG"); debug != (flag != "") {
			t.Errorf("%q: debug lines %v:\n%s", flag, debug, stderr)
		}
	}
}

// TestProfileAutoPlot: --auto-plot (or GenAI-Perf's --generate-plots)
// writes the run's HTML report into ARTIFACT_DIR/plots/report.html, as
// reprise plot ARTIFACT_DIR does; without it (or with --no-auto-plot after
// it) no report is drawn, --plot-required alone included.
func TestProfileAutoPlot(t *testing.T) {
	srv := startMockServer(t, nil)
	for _, tt := range []struct {
		flags []string
		plot  bool
	}{{[]string{"--auto-plot"}, true}, {nil, false}, {[]string{"--auto-plot", "--no-auto-plot"}, false},
		{[]string{"--generate-plots"}, true}, {[]string{"--auto-plot", "--plot-required"}, true}, {[]string{"--plot-required"}, false}} {
		out := filepath.Join(t.TempDir(), "run")
		args := append([]string{"profile", "-m", "reprise-mock", "--url", srv.URL(), "--isl", "16", "--osl", "2",
			"--request-count", "4", "--artifact-dir", out, "--quiet"}, tt.flags...)
		code, _, stderr := runCLI(t, "", args...)
		if code != 0 {
			t.Fatalf("%v: exit %d: %s", tt.flags, code, stderr)
		}
		b, err := os.ReadFile(filepath.Join(out, "plots", "report.html"))
		if tt.plot && (err != nil || !strings.Contains(string(b), "<html")) {
			t.Errorf("%v: no report: %v", tt.flags, err)
		}
		if !tt.plot && err == nil {
			t.Errorf("%v: a report was drawn", tt.flags)
		}
	}
}

// TestAutoPlotRequired: a report that cannot be drawn (ARTIFACT_DIR/plots
// is a file) is a warning after a run that succeeded, and with
// --plot-required a run error (exit 1) naming the reason; a run that
// failed keeps its own error either way.
func TestAutoPlotRequired(t *testing.T) {
	srv := startMockServer(t, nil)
	out := filepath.Join(t.TempDir(), "run")
	if code, _, stderr := runCLI(t, "", "profile", "-m", "reprise-mock", "--url", srv.URL(), "--isl", "16", "--osl", "2",
		"--request-count", "2", "--artifact-dir", out, "--quiet"); code != 0 {
		t.Fatalf("exit %d: %s", code, stderr)
	}
	if err := os.WriteFile(filepath.Join(out, "plots"), nil, 0o644); err != nil {
		t.Fatal(err)
	}
	var log strings.Builder
	a := &app{stderr: &log, log: slog.New(slog.NewTextHandler(&log, nil))}
	if err := autoPlot(t.Context(), a, out, false, nil); err != nil || !strings.Contains(log.String(), "--auto-plot: the report was not written") {
		t.Errorf("not required: %v; log %q; want a warning only", err, log.String())
	}
	err := autoPlot(t.Context(), a, out, true, nil)
	if exitcode.Code(err) != exitcode.RunError || err == nil || !strings.Contains(err.Error(), "--plot-required") || !strings.Contains(err.Error(), "not a directory") {
		t.Errorf("required: %v (exit %d); want exit 1 naming --plot-required and the reason", err, exitcode.Code(err))
	}
	runErr := exitcode.Usagef("the run's own error")
	if err := autoPlot(t.Context(), a, out, true, runErr); err != runErr {
		t.Errorf("required after a failed run: %v; want the run's error", err)
	}
}
