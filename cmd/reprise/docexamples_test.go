package main

import (
	"path/filepath"
	"strings"
	"testing"
)

// TestReplayRetrievalNeedsNoOSL: a synthetic load of an embeddings or
// rankings endpoint is its input length alone, as README's examples give
// it; an output length is not asked for.
func TestReplayRetrievalNeedsNoOSL(t *testing.T) {
	srv := startMockServer(t, nil)
	for _, args := range [][]string{
		{"--endpoint", "embeddings", "--batch-size", "4", "--isl", "32", "--request-rate", "50"},
		{"--endpoint", "rerank-tei", "--batch-size", "4", "--query-tokens", "8", "--isl", "32", "--concurrency", "2"},
	} {
		t.Run(args[1], func(t *testing.T) {
			out := filepath.Join(t.TempDir(), "run")
			code, _, stderr := runCLI(t, "", append([]string{"replay", "--url", srv.URL(), "--model", "reprise-mock",
				"--request-count", "3", "--no-server-metrics", "-q", "--out", out, "--format", "jsonl"}, args...)...)
			if code != 0 {
				t.Fatalf("exit %d, want 0\n%s", code, stderr)
			}
			if n := len(readRecords(t, out)); n != 3 {
				t.Errorf("%d records, want 3", n)
			}
		})
	}
	// Without --isl it is still a usage error, naming the input length only.
	code, _, stderr := runCLI(t, "", "replay", "--url", srv.URL(), "--model", "reprise-mock", "--endpoint", "embeddings", "--request-rate", "5")
	if code != 2 || !strings.Contains(stderr, "--isl N (tokens per input") || strings.Contains(stderr, "--osl") {
		t.Errorf("no --isl: exit %d, want 2 naming --isl alone\n%s", code, stderr)
	}
}

// TestSweepRetryAfterFailedFirstPoint: a sweep whose first point fails (a
// trace that does not exist, as README's example once named) measures
// nothing, so the corrected command into the same --out runs instead of
// being refused as a different sweep.
func TestSweepRetryAfterFailedFirstPoint(t *testing.T) {
	srv := startMockServer(t, nil)
	dir := filepath.Join(t.TempDir(), "sw")
	common := []string{"--url", srv.URL(), "-m", "reprise-mock", "--speedup", "20,40", "--request-count", "3",
		"--out", dir, "-q", "--no-server-metrics"}
	code, _, stderr := runCLI(t, "", append([]string{"sweep", "no-such-trace.jsonl"}, common...)...)
	if code == 0 {
		t.Fatalf("sweep of a missing trace: exit 0\n%s", stderr)
	}
	code, _, stderr = runCLI(t, "", append([]string{"sweep", "../../traces/mooncake-sample.jsonl"}, common...)...)
	if code != 0 {
		t.Fatalf("the corrected sweep into the same --out: exit %d, want 0\n%s", code, stderr)
	}
	// Once a point is measured, another plan is refused as before.
	common[5] = "20,30"
	if code, _, stderr := runCLI(t, "", append([]string{"sweep", "../../traces/mooncake-sample.jsonl"}, common...)...); code != 2 || !strings.Contains(stderr, "different sweep") {
		t.Errorf("another plan over a measured sweep: exit %d, want 2 \"different sweep\"\n%s", code, stderr)
	}
}
