package main

import (
	"path/filepath"
	"strings"
	"testing"
)

// TestProfileSeqDist: --seq-dist sends each request with one pair of the
// mixture's lengths, as the mock's oracle log counts them, and both pairs
// occur.
func TestProfileSeqDist(t *testing.T) {
	srv := startMockServer(t, nil)
	out := filepath.Join(t.TempDir(), "run")
	code, _, stderr := runCLI(t, "", "profile", "-m", "reprise-mock", "--url", srv.URL(), "--concurrency", "4",
		"--seq-dist", "20,4:50;60,12:50", "--request-count", "40", "--random-seed", "7",
		"--artifact-dir", out, "--format", "jsonl", "--quiet", "--export", "none")
	if code != 0 {
		t.Fatalf("exit %d: %s", code, stderr)
	}
	logs := srv.Log()
	if len(logs) != 40 {
		t.Fatalf("%d requests, want 40", len(logs))
	}
	seen := map[int]int{}
	for _, l := range logs {
		want := map[int]int{20: 4, 60: 12}[l.PromptTokens]
		if want == 0 || l.OutputTokens != want {
			t.Errorf("request %d: %d prompt and %d output tokens, want 20 and 4 or 60 and 12", l.Seq, l.PromptTokens, l.OutputTokens)
		}
		seen[l.PromptTokens]++
	}
	if seen[20] == 0 || seen[60] == 0 {
		t.Errorf("pairs drawn %v: want both", seen)
	}
}

// TestProfileSeqDistErrors: a malformed mixture or one beside --isl exits 2
// naming the flag.
func TestProfileSeqDistErrors(t *testing.T) {
	for _, args := range [][]string{
		{"--seq-dist", "20,4:50;60,12:40"},
		{"--seq-dist", "20:100"},
		{"--seq-dist", "20,4:100", "--isl", "30"},
	} {
		a := append([]string{"profile", "-m", "reprise-mock", "--url", "http://127.0.0.1:1", "--artifact-dir", t.TempDir()}, args...)
		code, _, stderr := runCLI(t, "", a...)
		if code != 2 || !strings.Contains(stderr, "--seq-dist") {
			t.Errorf("%v: exit %d, stderr %q; want 2 naming --seq-dist", args, code, stderr)
		}
	}
}
