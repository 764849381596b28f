package main

import (
	"os"
	"path/filepath"
	"strings"
	"testing"
)

// A trace whose rows were all skipped says so, instead of falling back to
// the synthetic-load checks.
func TestReplayAllRowsSkipped(t *testing.T) {
	p := filepath.Join(t.TempDir(), "bad.jsonl")
	if err := os.WriteFile(p, []byte(`{"timestamp": 5, "input_length": -4, "output_length": 3}`+"\n"), 0o644); err != nil {
		t.Fatal(err)
	}
	code, _, stderr := runCLI(t, "", "replay", p, "--url", "http://127.0.0.1:9", "--model", "m", "--skip-invalid")
	if code != 2 || !strings.Contains(stderr, "no rows to replay (read 1: 1 invalid") {
		t.Fatalf("exit %d, stderr:\n%s", code, stderr)
	}
}
