package main

import (
	"encoding/json"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/reprise-bench/reprise/arrowio"
)

// TestReplayRefusesUsedOut: a second run into the same --out directory is
// refused (exit 2, naming the directory and --overwrite) instead of mixing
// its records with the first run's; --overwrite replaces the earlier run;
// a directory holding other files is never cleared.
func TestReplayRefusesUsedOut(t *testing.T) {
	srv := startMockServer(t, nil)
	out := filepath.Join(t.TempDir(), "run")
	replay := func(n string, extra ...string) (int, string) {
		args := append([]string{"replay", "--url", srv.URL(), "--model", "reprise-mock", "--isl", "8", "--osl", "2",
			"--concurrency", "1", "--request-count", n, "--quiet", "--out", out}, extra...)
		code, _, stderr := runCLI(t, "", args...)
		return code, stderr
	}
	count := func() int {
		t.Helper()
		reqs, err := arrowio.ReadRequests(out)
		if err != nil {
			t.Fatal(err)
		}
		return len(reqs)
	}
	if code, stderr := replay("5", "--export-level", "events"); code != 0 {
		t.Fatalf("first run: exit %d: %s", code, stderr)
	}
	code, stderr := replay("3")
	if code != 2 || !strings.Contains(stderr, "--out "+out) || !strings.Contains(stderr, "--overwrite") {
		t.Errorf("second run into %s: exit %d, want 2 naming the directory and --overwrite: %s", out, code, stderr)
	}
	if n := count(); n != 5 {
		t.Errorf("after the refused run: %d records, want the first run's 5", n)
	}
	if code, stderr := replay("3", "--overwrite"); code != 0 {
		t.Fatalf("--overwrite: exit %d: %s", code, stderr)
	}
	if n := count(); n != 3 {
		t.Errorf("after --overwrite: %d records, want the new run's 3 only", n)
	}
	if _, err := os.Stat(filepath.Join(out, arrowio.EventsTable)); !os.IsNotExist(err) {
		t.Errorf("the first run's events table is still there (%v)", err)
	}
	code, stdout, stderr := runCLI(t, "", "summarize", out, "--format", "json")
	var sum struct {
		RequestCount struct{ Avg float64 } `json:"request_count"`
	}
	if err := json.Unmarshal([]byte(stdout), &sum); code != 0 || err != nil || sum.RequestCount.Avg != 3 {
		t.Errorf("summarize after --overwrite: exit %d (%v), request_count %v, want 3: %s", code, err, sum.RequestCount.Avg, stderr)
	}

	// A file the user put there: --overwrite refuses and removes nothing.
	notes := filepath.Join(out, "notes.txt")
	if err := os.WriteFile(notes, []byte("keep me"), 0o644); err != nil {
		t.Fatal(err)
	}
	code, stderr = replay("2", "--overwrite")
	if code != 2 || !strings.Contains(stderr, "notes.txt") {
		t.Errorf("--overwrite with a foreign file: exit %d, want 2 naming notes.txt: %s", code, stderr)
	}
	if _, err := os.Stat(notes); err != nil {
		t.Errorf("notes.txt: %v", err)
	}
	if n := count(); n != 3 {
		t.Errorf("after the refused --overwrite: %d records, want 3", n)
	}
}

// TestReplayDefaultRunDirUnique: without --out, a run never writes into an
// existing directory of the same default name (another run started in the
// same second): it gets a directory of its own.
func TestReplayDefaultRunDirUnique(t *testing.T) {
	srv := startMockServer(t, nil)
	t.Chdir(t.TempDir())
	// Occupy every name the run could pick in the next minute.
	now := time.Now().UTC()
	var taken []string
	for s := -2; s < 60; s++ {
		d := filepath.Join("runs", now.Add(time.Duration(s)*time.Second).Format("20060102T150405Z")+"-reprise-mock-concurrency")
		writeFiles(t, d, "marker")
		taken = append(taken, d)
	}
	code, _, stderr := runCLI(t, "", "replay", "--url", srv.URL(), "--model", "reprise-mock", "--isl", "8", "--osl", "2",
		"--concurrency", "1", "--request-count", "2")
	if code != 0 {
		t.Fatalf("exit %d: %s", code, stderr)
	}
	for _, d := range taken {
		ents, err := os.ReadDir(d)
		if err != nil || len(ents) != 1 {
			t.Fatalf("the run wrote into the existing %s (%d entries, %v): %s", d, len(ents), err, stderr)
		}
	}
	all, _ := filepath.Glob(filepath.Join("runs", "*"))
	var fresh []string
	for _, d := range all {
		if !slices.Contains(taken, d) {
			fresh = append(fresh, d)
		}
	}
	if len(fresh) != 1 || !strings.Contains(stderr, "results: "+fresh[0]) {
		t.Fatalf("new run directories %v, want one, named on stderr: %s", fresh, stderr)
	}
	if _, err := os.Stat(filepath.Join(fresh[0], "manifest.json")); err != nil {
		t.Error(err)
	}
}

// writeFiles creates dir and the named files in it.
func writeFiles(t *testing.T, dir string, names ...string) {
	t.Helper()
	if err := os.MkdirAll(dir, 0o755); err != nil {
		t.Fatal(err)
	}
	for _, n := range names {
		if err := os.WriteFile(filepath.Join(dir, n), []byte("x"), 0o644); err != nil {
			t.Fatal(err)
		}
	}
}
