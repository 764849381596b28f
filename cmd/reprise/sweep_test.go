package main

import (
	"encoding/json"
	"fmt"
	"os"
	"path/filepath"
	"slices"
	"strconv"
	"strings"
	"testing"

	"github.com/google/go-cmp/cmp"

	"github.com/reprise-bench/reprise/engine/summary"
	"github.com/reprise-bench/reprise/internal/mockserver"
	"github.com/reprise-bench/reprise/internal/sweep"
)

func TestSweepCommand(t *testing.T) {
	srv := startMockServer(t, nil)
	dir := filepath.Join(t.TempDir(), "sw")
	args := []string{"sweep", "--url", srv.URL(), "--model", mockserver.DefaultModel, "--no-server-metrics",
		"--isl", "16", "--osl", "4,8", "--concurrency", "1:4:x2", "--request-count", "6", "--out", dir,
		"--before-point", "echo point $REPRISE_POINT", "--goodput", "ttft:1000"}
	code, _, errOut := runCLI(t, "", args...)
	if code != 0 {
		t.Fatalf("exit %d: %s", code, errOut)
	}
	for _, want := range []string{"point", "osl=4_concurrency=1", "osl=8_concurrency=4", "pareto", "sweep: " + dir} {
		if !strings.Contains(errOut, want) {
			t.Errorf("stderr lacks %q:\n%s", want, errOut)
		}
	}
	b, err := os.ReadFile(filepath.Join(dir, sweep.ManifestFile))
	if err != nil {
		t.Fatal(err)
	}
	var m sweep.Manifest
	if err := json.Unmarshal(b, &m); err != nil {
		t.Fatal(err)
	}
	// osl is the outer axis, concurrency (the load) the inner one.
	if len(m.Points) != 6 || m.Points[0].Name != "osl=4_concurrency=1" || m.Points[5].Name != "osl=8_concurrency=4" {
		t.Fatalf("points: %+v", m.Points)
	}
	seeds := map[uint64]bool{}
	for _, p := range m.Points {
		if p.Status != sweep.StatusDone || p.Row == nil || p.Row.Requests != 6 {
			t.Errorf("point %s: status %s row %+v", p.Name, p.Status, p.Row)
		}
		seeds[p.PromptSeed] = true
		log, err := os.ReadFile(filepath.Join(dir, p.Dir, sweep.BeforePointLog))
		if err != nil || string(log) != "point "+p.Name+"\n" {
			t.Errorf("%s: before-point log %q, %v", p.Name, log, err)
		}
	}
	if len(seeds) != 6 {
		t.Errorf("prompt seeds not fresh per point: %d distinct of 6", len(seeds))
	}
	if _, err := os.Stat(filepath.Join(dir, sweep.TableFile)); err != nil {
		t.Error(err)
	}

	// The same command again finds every point complete: nothing runs.
	code, _, errOut = runCLI(t, "", args...)
	if code != 0 || strings.Contains(errOut, "reprise: sweep point") {
		t.Errorf("resume of a finished sweep: exit %d, ran points:\n%s", code, errOut)
	}
	// Another grid in the same directory is refused (exit 2).
	args[9] = "4,6"
	if code, _, errOut := runCLI(t, "", args...); code != 2 || !strings.Contains(errOut, "different sweep") {
		t.Errorf("changed plan: exit %d: %s", code, errOut)
	}
}

// TestSweepFindCannotMeasure: a search whose probes the client cannot
// keep the schedule of (a lateness budget of 1 ns) stops after the
// re-runs with exit 4, saying so.
func TestSweepFindCannotMeasure(t *testing.T) {
	srv := startMockServer(t, nil)
	dir := filepath.Join(t.TempDir(), "sw")
	code, _, errOut := runCLI(t, "", "sweep", "--url", srv.URL(), "--model", mockserver.DefaultModel, "--no-server-metrics",
		"--isl", "16", "--osl", "4", "--request-count", "4", "--out", dir, "--goodput", "ttft:1000",
		"--find", "max-rate", "--find-start", "4", "--find-min-rounds", "0", "--find-min-probe-time", "0s", "--find-max-lateness", "1ns")
	if code != 4 || !strings.Contains(errOut, "cannot measure this load on this machine: request-rate 4") ||
		!strings.Contains(errOut, "request-rate=4_try=3") {
		t.Errorf("exit %d, want 4 saying it cannot measure after three tries:\n%s", code, errOut)
	}
}

func TestSweepUsageErrors(t *testing.T) {
	for _, c := range []struct {
		args []string
		want string
	}{
		{[]string{"--isl", "16"}, "nothing to sweep"},
		{[]string{"--request-rate", "1:8:x1"}, "must be > 1"},
		{[]string{"--request-rate", "8:1:+1"}, "0 < A ≤ B"},
		{[]string{"--concurrency", "1.5,2"}, "whole number"},
		{[]string{"--find", "max-rate"}, "give --goodput"},
		{[]string{"--find", "max-rate", "--goodput", "ttft:10", "--concurrency", "1,2"}, "searches one setting"},
		{[]string{"--find", "max-tps", "--goodput", "ttft:10"}, "want max-rate"},
		{[]string{"--concurrency", "1,2", "--runs", "2", "--until-ci", "5%"}, "--until-ci needs --runs"},
	} {
		args := append([]string{"sweep", "-m", "m", "--out", t.TempDir()}, c.args...)
		code, _, errOut := runCLI(t, "", args...)
		if code != 2 || !strings.Contains(errOut, c.want) {
			t.Errorf("%v: exit %d, want 2 with %q:\n%s", c.args, code, c.want, errOut)
		}
	}
}

func TestReplayRuns(t *testing.T) {
	srv := startMockServer(t, nil)
	dir := filepath.Join(t.TempDir(), "r")
	code, _, errOut := runCLI(t, "", "replay", "--url", srv.URL(), "--model", mockserver.DefaultModel, "--no-server-metrics",
		"--isl", "16", "--osl", "4", "--concurrency", "2", "--request-count", "6", "--out", dir, "--runs", "3")
	if code != 0 {
		t.Fatalf("exit %d: %s", code, errOut)
	}
	if !strings.Contains(errOut, "Across 3 runs") || !strings.Contains(errOut, "time_to_first_token.p50") {
		t.Errorf("no across-run table:\n%s", errOut)
	}
	a, err := sweep.ReadRuns(dir)
	if err != nil {
		t.Fatal(err)
	}
	if a.Runs != 3 || a.Metrics["request_throughput"].N != 3 {
		t.Errorf("runs.json: %+v", a)
	}
	for k := 1; k <= 3; k++ {
		if _, err := os.Stat(filepath.Join(sweep.RunDir(dir, k), "summary.json")); err != nil {
			t.Error(err)
		}
		if got := manifestSeed(t, sweep.RunDir(dir, k)); got != uint64(k) { // --seed 1 + k − 1: each run its own arrivals
			t.Errorf("run %d: seed %d, want %d", k, got, k)
		}
	}
	// The report's headline shows the set as one row of runs.json's
	// means, with their intervals.
	if code, _, errOut := runCLI(t, "", "report", dir); code != 0 {
		t.Fatalf("report: exit %d: %s", code, errOut)
	}
	page, err := os.ReadFile(filepath.Join(dir, "report.html"))
	if err != nil {
		t.Fatal(err)
	}
	want := fmt.Sprintf(`data-metric="request_throughput" data-value="%s"`, strconv.FormatFloat(a.Metrics["request_throughput"].Mean, 'g', -1, 64))
	if !strings.Contains(string(page), "r (mean of 3 runs)") || !strings.Contains(string(page), want) {
		t.Errorf("the report's headline has no row of the 3 runs' means (%s)", want)
	}
}

// TestRunsRefuseStdin: repeated runs read the trace again, so replay
// --runs and profile --num-profile-runs refuse standard input (exit 2)
// before anything is sent.
func TestRunsRefuseStdin(t *testing.T) {
	for _, tc := range []struct {
		args []string
		want string
	}{
		{[]string{"replay", "-", "--runs", "2"}, "--runs replays the trace several times: give a file, not - (standard input)"},
		{[]string{"profile", "--input-file", "-", "--num-profile-runs", "2"}, "--num-profile-runs replays the input several times: give a file, not - (standard input)"},
	} {
		args := append(tc.args, "--url", "http://127.0.0.1:1", "--model", "m")
		code, _, errOut := runCLI(t, "{\"timestamp\": 0, \"input_length\": 8, \"output_length\": 2}\n", args...)
		if code != 2 || !strings.Contains(errOut, tc.want) {
			t.Errorf("%v: exit %d, stderr %q; want 2 and %q", tc.args, code, errOut, tc.want)
		}
	}
}

func TestReportOfSweep(t *testing.T) {
	srv := startMockServer(t, nil)
	dir := filepath.Join(t.TempDir(), "sw")
	code, _, errOut := runCLI(t, "", "sweep", "--url", srv.URL(), "--model", mockserver.DefaultModel, "--no-server-metrics",
		"--isl", "16", "--osl", "4", "--concurrency", "1,2,4", "--request-count", "6", "--out", dir, "--goodput", "ttft:1000", "-q")
	if code != 0 {
		t.Fatalf("sweep: exit %d: %s", code, errOut)
	}
	out := filepath.Join(t.TempDir(), "r.html")
	code, _, errOut = runCLI(t, "", "report", "-o", out, dir)
	if code != 0 {
		t.Fatalf("report: exit %d: %s", code, errOut)
	}
	b, err := os.ReadFile(out)
	if err != nil {
		t.Fatal(err)
	}
	html := string(b)
	for _, want := range []string{"Pareto front", "sweep-pareto", "sweep-ttft", "sweep-goodput", "Latency against load",
		"concurrency=1", "concurrency=4", "reprise report: sweep sw"} {
		if !strings.Contains(html, want) {
			t.Errorf("the report lacks %q", want)
		}
	}
	if code, _, errOut := runCLI(t, "", "report", "-o", out, dir, dir); code != 2 || !strings.Contains(errOut, "give it alone") {
		t.Errorf("a sweep with another directory: exit %d: %s", code, errOut)
	}
}

// TestRunsConvergence: a convergence rule says whether it was reached,
// on which metric and with what half-width, on stderr and in runs.json.
// The output length is fixed by --osl, so its avg is equal in every run
// and converges after the minimum of 3 runs of the 5 allowed; a ±0.0001
// % bound on the throughputs and latencies is never reached in 3 runs.
func TestRunsConvergence(t *testing.T) {
	srv := startMockServer(t, nil)
	base := []string{"replay", "--url", srv.URL(), "--model", mockserver.DefaultModel, "--no-server-metrics",
		"--isl", "16", "--osl", "4", "--concurrency", "2", "--request-count", "4"}
	t.Run("reached", func(t *testing.T) {
		dir := filepath.Join(t.TempDir(), "r")
		code, _, errOut := runCLI(t, "", append(base, "--out", dir, "--runs", "5", "--convergence-metric", "output_sequence_length",
			"--convergence-threshold", "1%")...)
		if code != 0 {
			t.Fatalf("exit %d: %s", code, errOut)
		}
		a, err := sweep.ReadRuns(dir)
		if err != nil {
			t.Fatal(err)
		}
		c := a.Convergence
		if a.Runs != 3 || !a.Converged || c == nil || !c.Reached || c.Metric != "output_sequence_length.avg" || c.HalfWidth != 0 || c.Runs != 3 {
			t.Errorf("runs.json: runs %d, converged %v, convergence %+v; want reached on output_sequence_length.avg after 3 runs", a.Runs, a.Converged, c)
		}
		if _, ok := a.Metrics["output_sequence_length.avg"]; !ok {
			t.Error("runs.json lacks the convergence metric's interval")
		}
		if !strings.Contains(errOut, "convergence on output_sequence_length.avg reached after 3 runs") {
			t.Errorf("stderr does not say the rule was reached:\n%s", errOut)
		}
	})
	t.Run("not reached", func(t *testing.T) {
		dir := filepath.Join(t.TempDir(), "r")
		code, _, errOut := runCLI(t, "", append(base, "--out", dir, "--runs", "3", "--until-ci", "0.0001%")...)
		if code != 0 {
			t.Fatalf("exit %d: %s", code, errOut)
		}
		a, err := sweep.ReadRuns(dir)
		if err != nil {
			t.Fatal(err)
		}
		c := a.Convergence
		if c == nil || c.Reached || a.Converged || c.Rule != "until_ci" || c.Threshold != 1e-6 {
			t.Fatalf("runs.json convergence %+v, converged %v; want until_ci not reached", c, a.Converged)
		}
		iv, ok := a.Metrics[c.Metric]
		if !ok || !slices.Contains(sweep.UntilCIMetrics, c.Metric) || c.HalfWidth != iv.RelHalfWidth || c.HalfWidth <= 1e-6 {
			t.Errorf("widest metric %q ±%v; want one of --until-ci's metrics with its rel_half_width %v above the bound", c.Metric, c.HalfWidth, iv.RelHalfWidth)
		}
		if !strings.Contains(errOut, "--until-ci not reached after 3 runs: widest "+c.Metric) {
			t.Errorf("stderr does not say the bound was not reached:\n%s", errOut)
		}
	})
	t.Run("usage", func(t *testing.T) {
		for _, tc := range []struct {
			args []string
			want string
		}{
			{[]string{"--runs", "5", "--convergence-metric", "time_to_first_token"}, "go together"},
			{[]string{"--runs", "5", "--convergence-metric", "ttft", "--convergence-threshold", "5%"}, `unknown run metric "ttft"`},
			{[]string{"--runs", "5", "--convergence-metric", "request_throughput", "--convergence-stat", "p99", "--convergence-threshold", "5%"}, "its statistic is avg"},
			{[]string{"--runs", "5", "--convergence-metric", "time_to_first_token", "--convergence-threshold", "150%"}, "between 0 and 1"},
			{[]string{"--runs", "2", "--convergence-metric", "time_to_first_token", "--convergence-threshold", "5%"}, "N ≥ 3"},
		} {
			code, _, errOut := runCLI(t, "", append(base, tc.args...)...)
			if code != 2 || !strings.Contains(errOut, tc.want) {
				t.Errorf("%v: exit %d, stderr %q; want 2 and %q", tc.args, code, errOut, tc.want)
			}
		}
	})
}

// TestReadRepeatedRuns: summarize, report and compare read a --runs
// directory as its runs (they refused it: no such table "records").
// summarize prints each run's table and the across-run one, whose JSON
// equals runs.json; report draws each run as a series with the
// across-run table; compare pools the runs as one side and says so.
func TestReadRepeatedRuns(t *testing.T) {
	srv := startMockServer(t, nil)
	dir := filepath.Join(t.TempDir(), "r")
	code, _, errOut := runCLI(t, "", "replay", "--url", srv.URL(), "--model", mockserver.DefaultModel, "--no-server-metrics",
		"--isl", "16", "--osl", "4", "--concurrency", "2", "--request-count", "6", "--out", dir, "--runs", "3", "-q")
	if code != 0 {
		t.Fatalf("replay: exit %d: %s", code, errOut)
	}
	written, err := sweep.ReadRuns(dir)
	if err != nil {
		t.Fatal(err)
	}

	code, out, errOut := runCLI(t, "", "summarize", dir)
	if code != 0 {
		t.Fatalf("summarize: exit %d: %s", code, errOut)
	}
	for _, want := range []string{"run 1 of 3", "run 3 of 3", "Time to first token (ms)", "across 3 runs", "time_to_first_token.p50"} {
		if !strings.Contains(out, want) {
			t.Errorf("summarize lacks %q:\n%s", want, out)
		}
	}
	code, out, errOut = runCLI(t, "", "summarize", "--json", dir)
	if code != 0 {
		t.Fatalf("summarize --json: exit %d: %s", code, errOut)
	}
	var js struct {
		RunDirs   []string            `json:"run_dirs"`
		Summaries []json.RawMessage   `json:"summaries"`
		Across    *summary.AcrossRuns `json:"across_runs"`
	}
	if err := json.Unmarshal([]byte(out), &js); err != nil {
		t.Fatal(err)
	}
	if len(js.Summaries) != 3 || !slices.Equal(js.RunDirs, []string{"run-1", "run-2", "run-3"}) {
		t.Errorf("summarize --json: %d summaries, run_dirs %v", len(js.Summaries), js.RunDirs)
	}
	if diff := cmp.Diff(written, js.Across); diff != "" {
		t.Errorf("summarize's across-run view differs from runs.json (-written +recomputed):\n%s", diff)
	}

	html := filepath.Join(t.TempDir(), "r.html")
	if code, _, errOut := runCLI(t, "", "report", "-o", html, dir); code != 0 {
		t.Fatalf("report: exit %d: %s", code, errOut)
	}
	b, err := os.ReadFile(html)
	if err != nil {
		t.Fatal(err)
	}
	for _, want := range []string{"Across runs: r", "r/run-1", "r/run-3", "reprise report: repeated runs r"} {
		if !strings.Contains(string(b), want) {
			t.Errorf("the report lacks %q", want)
		}
	}

	code, out, errOut = runCLI(t, "", "compare", dir, sweep.RunDir(dir, 1))
	if code != 0 {
		t.Fatalf("compare: exit %d: %s", code, errOut)
	}
	if !strings.Contains(out, "replicates: 3 runs of A, 1 of B") || !strings.Contains(out, "18 requests") {
		t.Errorf("compare does not take the 3 runs' 18 requests as replicates of A:\n%s", out)
	}
}
