package main

import (
	"os"
	"path/filepath"
	"strings"
	"testing"
)

// TestReportCommand replays against the mock server, then writes the
// run's report twice (one run; the run overlaid on itself with labels)
// and checks the files hold the runs' labels and charts; bad arguments
// are usage errors that name every problem and write nothing.
func TestReportCommand(t *testing.T) {
	srv := startMockServer(t, nil)
	run := filepath.Join(t.TempDir(), "run")
	code, _, stderr := runCLI(t, "", "replay", "../../traces/mooncake-sample.jsonl", "--url", srv.URL(),
		"--model", "reprise-mock", "--speedup", "1000", "--request-count", "40", "--out", run, "--quiet")
	if code != 0 {
		t.Fatalf("replay exit %d: %s", code, stderr)
	}
	out := filepath.Join(t.TempDir(), "r.html")
	code, stdout, stderr := runCLI(t, "", "report", "-o", out, run)
	if code != 0 || !strings.HasPrefix(stdout, "report: "+out+" (") {
		t.Fatalf("report exit %d, stdout %q: %s", code, stdout, stderr)
	}
	b, err := os.ReadFile(out)
	if err != nil {
		t.Fatal(err)
	}
	for _, want := range []string{"<title>reprise report: run</title>", `data-chart="cdf-ttft"`, `id="verdicts"`} {
		if !strings.Contains(string(b), want) {
			t.Errorf("the report lacks %s", want)
		}
	}
	code, _, stderr = runCLI(t, "", "report", "-o", out, "--title", "A/B", "--label", "before", "--label", "after", run, run)
	b, _ = os.ReadFile(out)
	if code != 0 || !strings.Contains(string(b), "<title>A/B</title>") || !strings.Contains(string(b), "<b>after</b>") {
		t.Errorf("report of two labelled runs: exit %d: %s", code, stderr)
	}

	dir := t.TempDir()
	file := filepath.Join(dir, "file")
	os.WriteFile(file, nil, 0o644)
	bad := filepath.Join(dir, "bad.html")
	code, _, stderr = runCLI(t, "", "report", "-o", bad, "--max-points", "-1", "--label", "a", "--label", "b", "--label", "c",
		filepath.Join(dir, "missing"), file)
	if code != 2 {
		t.Errorf("bad arguments: exit %d, want 2", code)
	}
	for _, want := range []string{"missing does not exist", "is a file, not a directory", "--max-points -1", "--label given 3 times for 2 runs"} {
		if !strings.Contains(stderr, want) {
			t.Errorf("stderr lacks %q:\n%s", want, stderr)
		}
	}
	code, _, stderr = runCLI(t, "", "report", "-o", bad, dir) // a directory without records
	if code != 2 || !strings.Contains(stderr, "records") {
		t.Errorf("a directory without records: exit %d: %s", code, stderr)
	}
	if _, err := os.Stat(bad); !os.IsNotExist(err) {
		t.Errorf("a failed report left %s", bad)
	}
}

// TestReportRefusesLinkedManifest: a run directory whose manifest.json
// is a symbolic link to another file (a planted secret) is refused; the
// file is never embedded in a report.
func TestReportRefusesLinkedManifest(t *testing.T) {
	srv := startMockServer(t, nil)
	run := filepath.Join(t.TempDir(), "run")
	code, _, stderr := runCLI(t, "", "replay", "--url", srv.URL(), "--model", "reprise-mock", "--isl", "4", "--osl", "2",
		"--request-count", "2", "--concurrency", "1", "--out", run, "--quiet", "--no-server-metrics")
	if code != 0 {
		t.Fatalf("replay exit %d: %s", code, stderr)
	}
	secret := filepath.Join(t.TempDir(), "secret.json")
	os.WriteFile(secret, []byte(`{"api_key":"planted-secret-123"}`), 0o600)
	m := filepath.Join(run, "manifest.json")
	if err := os.Remove(m); err != nil {
		t.Fatal(err)
	}
	if err := os.Symlink(secret, m); err != nil {
		t.Skip(err)
	}
	out := filepath.Join(t.TempDir(), "r.html")
	code, stdout, stderr := runCLI(t, "", "report", "-o", out, run)
	b, _ := os.ReadFile(out)
	if code == 0 || !strings.Contains(stderr, "not a regular file") || strings.Contains(string(b)+stdout+stderr, "planted-secret-123") {
		t.Errorf("report of a run whose manifest links elsewhere: exit %d, stderr %q, report holds the secret: %v",
			code, stderr, strings.Contains(string(b), "planted-secret-123"))
	}
}

// TestReportLoadSeries runs AIPerf's Methodology B loop (one profile
// per concurrency, each into artifacts/pareto-cN) and reports the
// directories in the shell glob's order (c1, c10, c4): the report puts
// them in load order with the Pareto front and the per-user curve, and
// reprise plot over artifacts/ does the same.
func TestReportLoadSeries(t *testing.T) {
	srv := startMockServer(t, nil)
	art := filepath.Join(t.TempDir(), "artifacts")
	for _, c := range []string{"1", "4", "10"} {
		code, _, stderr := runCLI(t, "", "profile", "-m", "reprise-mock", "--url", srv.URL(), "--streaming", "--isl", "16", "--osl", "4",
			"--request-count", "12", "--concurrency", c, "--artifact-dir", filepath.Join(art, "pareto-c"+c), "--ui-type", "none")
		if code != 0 {
			t.Fatalf("profile --concurrency %s: exit %d\n%s", c, code, stderr)
		}
	}
	glob, _ := filepath.Glob(filepath.Join(art, "pareto-c*"))
	if want := []string{"pareto-c1", "pareto-c10", "pareto-c4"}; filepath.Base(glob[1]) != want[1] {
		t.Fatalf("glob order %v, want %v (the order the report must not keep)", glob, want)
	}
	out := filepath.Join(t.TempDir(), "pareto.html")
	code, _, stderr := runCLI(t, "", append([]string{"report", "-o", out}, glob...)...)
	if code != 0 {
		t.Fatalf("report: exit %d\n%s", code, stderr)
	}
	page, err := os.ReadFile(out)
	if err != nil {
		t.Fatal(err)
	}
	order := func(page string) []int {
		var at []int
		for _, c := range []string{"1", "4", "10"} {
			at = append(at, strings.Index(page, "<b>pareto-c"+c+"</b>"))
		}
		return at
	}
	if at := order(string(page)); !(at[0] >= 0 && at[0] < at[1] && at[1] < at[2]) {
		t.Errorf("runs not in load order (c1, c4, c10): header positions %v", at)
	}
	for _, id := range []string{`"id":"sweep-pareto"`, `"id":"sweep-per-user"`, `"id":"sweep-points"`, `"labels":["concurrency=1","concurrency=4","concurrency=10"]`} {
		if !strings.Contains(string(page), id) {
			t.Errorf("report lacks %s", id)
		}
	}
	if strings.Contains(string(page), `id="comparison`) {
		t.Error("a load series is compared against its first run")
	}

	code, stdout, stderr := runCLI(t, "", "plot", "--paths", art)
	if code != 0 {
		t.Fatalf("plot: exit %d\n%s", code, stderr)
	}
	plotted := filepath.Join(art, "plots", "report.html")
	if !strings.Contains(stdout, plotted) {
		t.Errorf("plot printed %q, want the path %s", stdout, plotted)
	}
	page, err = os.ReadFile(plotted)
	if err != nil {
		t.Fatal(err)
	}
	if at := order(string(page)); !(at[0] >= 0 && at[0] < at[1] && at[1] < at[2]) || !strings.Contains(string(page), `"id":"sweep-pareto"`) {
		t.Errorf("plot's report is not the load series in order: %v", at)
	}
	if code, _, stderr := runCLI(t, "", "plot", "--theme", "dark", art); code != 2 || !strings.Contains(stderr, "one theme") {
		t.Errorf("plot --theme dark: exit %d\n%s", code, stderr)
	}
	if code, _, stderr := runCLI(t, "", "plot", t.TempDir()); code != 2 || !strings.Contains(stderr, "no run directory found") {
		t.Errorf("plot of an empty directory: exit %d\n%s", code, stderr)
	}
}
