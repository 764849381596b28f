package main

import (
	"encoding/json"
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/reprise-bench/reprise/engine/summary"
	"github.com/reprise-bench/reprise/internal/mockserver"
	"github.com/reprise-bench/reprise/selftest/calibration"
)

// useChildServer makes selftest start its mock server as this test binary
// running `reprise mock-server`.
func useChildServer(t *testing.T) {
	t.Setenv(cliChildEnv, cliChildArgv)
	old := selfServer
	selfServer = func() ([]string, error) { return cliChildCommand("mock-server"), nil }
	t.Cleanup(func() { selfServer = old })
}

// TestSelftestCalibratesReplay: a small selftest (4 and 8 streams, a bound
// every step meets) writes a calibration whose safe load is 8 streams;
// a replay at twice that load with it is degraded in summary.json (and
// the table warns), a replay within it (a quarter, clear of the noise of a
// shared machine) is not flagged for its load, and
// summarize reproduces the calibrated summary.json byte for byte; the
// report shows the error bars and the warning.
func TestSelftestCalibratesReplay(t *testing.T) {
	useChildServer(t)
	dir := t.TempDir()
	cal := filepath.Join(dir, "cal.json")
	code, out, errOut := runCLI(t, "", "selftest", "--streams", "8", "--first-streams", "4", "--ttft", "5ms", "--itl", "5ms",
		"--isl", "16", "--osl", "8", "--max-error", "1h", "--no-co-located", "--output", cal, "--dir", filepath.Join(dir, "st"))
	if code != 0 {
		t.Fatalf("selftest: exit %d\n%s\n%s", code, out, errOut)
	}
	for _, want := range []string{"VERDICT: on this machine reprise measures TTFT, ITL and end-to-end latency to within ±3.6e+06 ms",
		"up to 8 concurrent streams", "No limit reached", "Calibration written to " + cal} {
		if !strings.Contains(out, want) {
			t.Errorf("report lacks %q:\n%s", want, out)
		}
	}
	f, err := calibration.Read(cal)
	if err != nil {
		t.Fatal(err)
	}
	if len(f.Steps) != 2 || f.SafeLevel != 8 || f.SafeLoad == nil || f.CoLocated != nil {
		t.Fatalf("calibration: %d steps, safe level %v, safe load %v", len(f.Steps), f.SafeLevel, f.SafeLoad)
	}
	for _, st := range f.Steps {
		// Every measured request (a second's worth of 40 ms requests,
		// 25 per stream) joined the server's log.
		if st.Requests != 25*int(st.Level) || st.Problems != 0 || !st.Within || st.ClientCPUPerEventUS <= 0 {
			t.Errorf("step %v: %+v", st.Level, st)
		}
	}

	srv := startMockServer(t, func(c *mockserver.Config) { c.TTFT, c.ITL = 5*time.Millisecond, 5*time.Millisecond })
	replayAt := func(streams string) (summary.Quality, string, string) {
		t.Helper()
		run := filepath.Join(dir, "run-"+streams)
		n, _ := strconv.Atoi(streams)
		code, _, errOut := runCLI(t, "", "replay", "--url", srv.URL(), "-m", mockserver.DefaultModel, "--concurrency", streams,
			"--request-count", strconv.Itoa(16*n), "--isl", "16", "--osl", "8", "--calibration", cal, "--out", run, "--format", "jsonl")
		if code != 0 {
			t.Fatalf("replay at %s streams: exit %d\n%s", streams, code, errOut)
		}
		b, err := os.ReadFile(filepath.Join(run, "summary.json"))
		if err != nil {
			t.Fatal(err)
		}
		var s struct {
			Quality     summary.Quality      `json:"measurement_quality"`
			Calibration *summary.Calibration `json:"calibration"`
		}
		if err := json.Unmarshal(b, &s); err != nil {
			t.Fatal(err)
		}
		if s.Calibration == nil || s.Calibration.File != cal {
			t.Errorf("summary.json calibration %+v, want %s", s.Calibration, cal)
		}
		code, sumOut, _ := runCLI(t, "", "summarize", "--json", run)
		if code != 0 || sumOut != string(b) {
			t.Errorf("summarize --json does not reproduce summary.json (exit %d)", code)
		}
		return s.Quality, errOut, string(b)
	}
	t.Logf("calibrated safe load at 8 streams: %+v", *f.SafeLoad)
	past := func(q summary.Quality) bool {
		t.Logf("load %+v: %s %q", q.Evidence.Load, q.Verdict, q.Reasons)
		for _, r := range q.Reasons {
			if strings.HasPrefix(r, "past the calibrated safe load") {
				return true
			}
		}
		return false
	}
	q, errOut, _ := replayAt("16")
	if q.Verdict != summary.QualityDegraded || !past(q) {
		t.Errorf("16 streams against a calibration safe to 8: %+v", q)
	}
	// Past the safe load the calibration's errors do not hold: no ±err
	// column, and the warning says so.
	for _, want := range []string{"reprise: applying the calibration " + cal, "WARNING: this run went past the load", "(no ±err column)"} {
		if !strings.Contains(errOut, want) {
			t.Errorf("replay's stderr lacks %q", want)
		}
	}
	// The report shows the error bars and the verdict's reason.
	html := filepath.Join(dir, "report.html")
	if code, _, errOut := runCLI(t, "", "report", filepath.Join(dir, "run-16"), "-o", html); code != 0 {
		t.Fatalf("report: exit %d: %s", code, errOut)
	}
	if b, err := os.ReadFile(html); err != nil {
		t.Fatal(err)
	} else {
		for _, want := range []string{"± calibrated error p99", "past the calibrated safe load"} {
			if !strings.Contains(string(b), want) {
				t.Errorf("report lacks %q", want)
			}
		}
	}
	q, errOut, _ = replayAt("2")
	if past(q) || q.Evidence.SafeLoad == nil {
		t.Errorf("2 streams against a calibration safe to 8: %+v", q)
	}
	if strings.Contains(errOut, "WARNING") {
		t.Errorf("a run within the calibration warns:\n%s", errOut)
	}
}

// TestReplayCalibrationErrors: a calibration that cannot be used is a
// usage error naming the flag and the file; off applies none.
func TestReplayCalibrationErrors(t *testing.T) {
	bad := filepath.Join(t.TempDir(), "bad.json")
	if err := os.WriteFile(bad, []byte(`{"version":9}`), 0o644); err != nil {
		t.Fatal(err)
	}
	code, _, errOut := runCLI(t, "", "replay", "-m", "m", "--calibration", bad)
	if code != 2 || !strings.Contains(errOut, "--calibration: calibration "+bad+": version: 9") {
		t.Errorf("exit %d: %s", code, errOut)
	}
}

// TestSelftestUsage: bad settings are usage errors, found before
// anything starts.
func TestSelftestUsage(t *testing.T) {
	code, _, errOut := runCLI(t, "", "selftest", "--streams", "0", "--max-error", "0s", "--output", filepath.Join(t.TempDir(), "c.json"))
	if code != 2 || !strings.Contains(errOut, "--streams 0, --first-streams 8: want at least 1") ||
		!strings.Contains(errOut, "--max-error 0s: must be positive") {
		t.Errorf("exit %d: %s", code, errOut)
	}
}
