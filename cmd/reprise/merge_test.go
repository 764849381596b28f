package main

import (
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/reprise-bench/reprise/internal/mockserver"
)

// TestMergeCommand: two shards of a synthetic load merge into a run that
// summarize reads like any other (its summary.json reproduced byte for
// byte); merging one of them alone exits 1 and names the missing shard.
func TestMergeCommand(t *testing.T) {
	srv := startMockServer(t, nil)
	root := t.TempDir()
	var dirs []string
	for i := range 2 {
		d := filepath.Join(root, fmt.Sprintf("shard-%d", i))
		code, _, stderr := runCLI(t, "", "replay", "--url", srv.URL(), "--model", mockserver.DefaultModel, "--isl", "16", "--osl", "2",
			"--concurrency", "2", "--request-count", "10", "--shard", fmt.Sprintf("%d/2", i), "--no-server-metrics",
			"--format", "jsonl", "--quiet", "-o", d)
		if code != 0 {
			t.Fatalf("shard %d: exit %d: %s", i, code, stderr)
		}
		dirs = append(dirs, d)
	}
	merged := filepath.Join(root, "merged")
	code, stdout, stderr := runCLI(t, "", append([]string{"merge", "-o", merged}, dirs...)...)
	if code != 0 {
		t.Fatalf("merge: exit %d: %s", code, stderr)
	}
	for _, want := range []string{"shard 0/2", "shard 1/2", "5 records (5 ok, 0 failed"} {
		if !strings.Contains(stdout, want) {
			t.Errorf("merge output lacks %q:\n%s", want, stdout)
		}
	}
	code, js, stderr := runCLI(t, "", "summarize", "--json", merged)
	want, err := os.ReadFile(filepath.Join(merged, "summary.json"))
	if code != 0 || err != nil || js != string(want) {
		t.Errorf("summarize --json of the merged run (exit %d, %v, %s) differs from its summary.json", code, err, stderr)
	}
	if !strings.Contains(js, `"request_count": 10`) && !strings.Contains(js, `"avg": 10`) {
		t.Errorf("merged summary does not count 10 requests:\n%s", js)
	}

	code, _, stderr = runCLI(t, "", "merge", "-o", filepath.Join(root, "half"), dirs[0])
	if code != 1 || !strings.Contains(stderr, "ERROR: shard 1/2 is missing") {
		t.Errorf("merge of one shard of two: exit %d, stderr:\n%s", code, stderr)
	}
	code, _, stderr = runCLI(t, "", "merge", dirs[0])
	if code != 2 || !strings.Contains(stderr, "missing --out") {
		t.Errorf("merge without --out: exit %d, stderr:\n%s", code, stderr)
	}
}
