package main

import (
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/reprise-bench/reprise/internal/flagmap"
	"github.com/reprise-bench/reprise/selftest/calibration"
)

// TestTraceIsDirectory: a directory given as the trace is named as one,
// with a file of it to give instead, by every command that reads a trace.
func TestTraceIsDirectory(t *testing.T) {
	dir := t.TempDir()
	if err := os.WriteFile(filepath.Join(dir, "t.jsonl"), []byte(`{"timestamp": 0, "input_length": 16, "output_length": 2}`+"\n"), 0o644); err != nil {
		t.Fatal(err)
	}
	for _, args := range [][]string{
		{"replay", "-m", "M", dir},
		{"analyze-trace", dir},
		{"anonymize", dir},
	} {
		code, _, stderr := runCLI(t, "", args...)
		if code != 2 || !strings.Contains(stderr, dir+": is a directory, not a trace file\n") ||
			!strings.Contains(stderr, "hint: give a trace file, e.g. "+filepath.Join(dir, "t.jsonl")) {
			t.Errorf("%s: exit %d, want 2 and the directory named: %s", args[0], code, stderr)
		}
		if strings.Contains(stderr, "cut short") {
			t.Errorf("%s: a directory is not a file cut short: %s", args[0], stderr)
		}
	}
}

// TestURLWithoutScheme: --url host:port is http://host:port, as AIPerf
// reads it; with --quiet the run directory is the one line on stdout.
func TestURLWithoutScheme(t *testing.T) {
	srv := startMockServer(t, nil)
	hostPort := strings.TrimPrefix(srv.URL(), "http://")
	out := filepath.Join(t.TempDir(), "run")
	code, stdout, stderr := runCLI(t, "", "replay", "--url", hostPort, "--model", "reprise-mock", "--isl", "8", "--osl", "2",
		"--request-count", "3", "--concurrency", "1", "-q", "--format", "jsonl", "--out", out)
	if code != 0 {
		t.Fatalf("--url %s: exit %d: %s", hostPort, code, stderr)
	}
	if stdout != out+"\n" {
		t.Errorf("-q: stdout %q, want the run directory %q on one line", stdout, out)
	}
	if n := len(readRecords(t, out)); n != 3 {
		t.Errorf("%d records, want 3", n)
	}
	for in, want := range map[string]string{
		"127.0.0.1:18000":            "http://127.0.0.1:18000",
		"localhost:8000":             "http://localhost:8000",
		"localhost":                  "http://localhost",
		"https://h:1/v1":             "https://h:1/v1",
		"":                           "",
		"http://u:p@127.0.0.1:8000/": "http://u:p@127.0.0.1:8000/",
	} {
		if got := flagmap.WithScheme(in); got != want {
			t.Errorf("flagmap.WithScheme(%q) = %q, want %q", in, got, want)
		}
	}
	// A --upstream without a scheme passes record's check (it then fails
	// to listen on a bad --listen, after the check).
	_, _, stderr = runCLI(t, "", "record", "--upstream", hostPort, "--listen", "256.0.0.1:1", "-o", filepath.Join(t.TempDir(), "t.jsonl"))
	if strings.Contains(stderr, "--upstream") {
		t.Errorf("record --upstream %s refused: %s", hostPort, stderr)
	}
}

// TestReportIntoRunDir: without -o, the report of one run is written into
// its directory, not the current one, and the path is printed; a later
// --overwrite of the run clears it with the run's files.
func TestReportIntoRunDir(t *testing.T) {
	srv := startMockServer(t, nil)
	out := filepath.Join(t.TempDir(), "run")
	replay := []string{"replay", "--url", srv.URL(), "--model", "reprise-mock", "--isl", "8", "--osl", "2",
		"--request-count", "3", "--concurrency", "1", "-q", "--format", "jsonl", "--out", out}
	if code, _, stderr := runCLI(t, "", replay...); code != 0 {
		t.Fatalf("replay: exit %d: %s", code, stderr)
	}
	cwd := t.TempDir()
	t.Chdir(cwd)
	code, stdout, stderr := runCLI(t, "", "report", out)
	want := filepath.Join(out, "report.html")
	if code != 0 || !strings.HasPrefix(stdout, "report: "+want+" (") {
		t.Fatalf("report: exit %d, stdout %q, want it to name %s: %s", code, stdout, want, stderr)
	}
	if _, err := os.Stat(want); err != nil {
		t.Errorf("no report in the run directory: %v", err)
	}
	if _, err := os.Stat(filepath.Join(cwd, "report.html")); err == nil {
		t.Error("report.html written into the current directory")
	}
	if code, _, stderr := runCLI(t, "", append(replay, "--overwrite")...); code != 0 {
		t.Fatalf("replay --overwrite over a run with its report: exit %d: %s", code, stderr)
	}
	if _, err := os.Stat(want); err == nil {
		t.Error("--overwrite kept the earlier run's report")
	}
}

// TestSelftestAutoNote: selftest --output FILE says when --calibration
// auto will not find FILE (it reads only the file in the user's own cache
// directory), and is silent when it will.
func TestSelftestAutoNote(t *testing.T) {
	cache := t.TempDir()
	t.Setenv("XDG_CACHE_HOME", cache)
	t.Setenv("HOME", cache)
	def, err := calibration.DefaultPath()
	if err != nil {
		t.Fatal(err)
	}
	if !strings.HasPrefix(def, cache+string(filepath.Separator)) {
		t.Errorf("the calibration %s is not in the user's cache directory %s", def, cache)
	}
	if n := autoNote(def); n != "" {
		t.Errorf("note for the file auto reads: %q", n)
	}
	other := filepath.Join(t.TempDir(), "cal.json")
	if n := autoNote(other); !strings.Contains(n, "--calibration auto reads only "+def) || !strings.Contains(n, "--calibration "+other) {
		t.Errorf("note for %s: %q", other, n)
	}
}
