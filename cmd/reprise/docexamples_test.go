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
