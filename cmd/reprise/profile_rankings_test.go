package main

import (
	"fmt"
	"path/filepath"
	"slices"
	"strings"
	"testing"
)

// TestProfileRankingsStddev runs AIPerf's synthetic rankings command line
// with its three standard deviations against the mock server: inputs.json
// shows requests of varied passage counts, the server saw every request
// as inputs.json has it, the same --random-seed writes the same requests
// again, and the flags are refused for an endpoint that is not rankings.
func TestProfileRankingsStddev(t *testing.T) {
	srv := startMockServer(t, nil)
	// run returns the requests of inputs.json (each as one string, sorted)
	// and their passage counts (sorted).
	run := func(seed string) ([]string, []int) {
		out := filepath.Join(t.TempDir(), "run")
		code, _, stderr := runCLI(t, "", "profile", "-m", "reprise-mock", "--url", srv.URL(), "--endpoint-type", "hf_tei_rankings",
			"--rankings-passages-mean", "4", "--rankings-passages-stddev", "2", "--rankings-passages-prompt-token-mean", "12",
			"--rankings-passages-prompt-token-stddev", "3", "--rankings-query-prompt-token-mean", "8", "--rankings-query-prompt-token-stddev", "2",
			"--request-count", "30", "--concurrency", "3", "--random-seed", seed, "--artifact-dir", out, "--format", "jsonl", "--quiet")
		if code != 0 {
			t.Fatalf("exit %d: %s", code, stderr)
		}
		var bodies []string
		var counts []int
		for _, p := range firstPayloads(t, out) {
			texts, _ := p["texts"].([]any)
			counts = append(counts, len(texts))
			bodies = append(bodies, fmt.Sprint(p["query"], texts))
		}
		slices.Sort(bodies)
		slices.Sort(counts)
		if len(bodies) != 30 || len(slices.Compact(slices.Clone(counts))) < 3 {
			t.Errorf("inputs.json: %d requests, passage counts %v; want 30 requests of at least 3 counts", len(bodies), counts)
		}
		return bodies, counts
	}
	srv.ResetLog()
	a, counts := run("5")
	var seen []int
	for _, l := range srv.Log() {
		seen = append(seen, len(l.InputTokens))
	}
	slices.Sort(seen)
	if !slices.Equal(seen, counts) {
		t.Errorf("the server saw passage counts %v; inputs.json has %v", seen, counts)
	}
	if b, _ := run("5"); !slices.Equal(a, b) {
		t.Error("--random-seed 5 twice: the second run's inputs.json has other requests")
	}
	if c, _ := run("6"); slices.Equal(a, c) {
		t.Error("--random-seed 5 and 6 sent the same requests")
	}
	code, _, stderr := runCLI(t, "", "profile", "-m", "reprise-mock", "--url", srv.URL(), "--rankings-passages-stddev", "2",
		"--isl", "8", "--osl", "2", "--artifact-dir", filepath.Join(t.TempDir(), "chat"))
	if code != 2 || !strings.Contains(stderr, "--passages-stddev") || !strings.Contains(stderr, "only a rankings endpoint") {
		t.Errorf("chat with --rankings-passages-stddev: exit %d, %s; want 2, naming the flag", code, stderr)
	}
}
