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
