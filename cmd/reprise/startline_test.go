package main

import (
	"strings"
	"testing"
	"time"

	"github.com/reprise-bench/reprise/internal/runout"
)

// TestReplayStartLineDuration: a --duration run without a request count
// says how long it runs instead of "-1 requests planned".
func TestReplayStartLineDuration(t *testing.T) {
	srv := dyingServer(t, 1<<30)
	code, _, stderr := runCLI(t, "", "replay", "--url", srv.URL, "--model", "m", "--isl", "8", "--osl", "2", "--no-streaming",
		"--request-rate", "20", "--duration", "300ms", "--format", "jsonl", "--out", t.TempDir(), "--no-server-metrics")
	if code != 0 {
		t.Fatalf("exit %d: %s", code, stderr)
	}
	if strings.Contains(stderr, "-1 requests") || !strings.Contains(stderr, "rate mode, requests for 300ms)") {
		t.Errorf("start line does not say how long the run goes:\n%s", stderr)
	}
}

func TestPlannedText(t *testing.T) {
	tests := []struct {
		requests int
		duration string
		want     string
	}{
		{10, "", "10 requests planned"},
		{-1, "30s", "requests for 30s"},
		{100, "1m0s", "100 requests planned, for at most 1m0s"},
		{-1, "", "requests until stopped"},
	}
	for _, tt := range tests {
		if got := runout.PlannedText(tt.requests, mustDuration(t, tt.duration)); got != tt.want {
			t.Errorf("runout.PlannedText(%d, %q) = %q, want %q", tt.requests, tt.duration, got, tt.want)
		}
	}
}

func mustDuration(t *testing.T, s string) time.Duration {
	t.Helper()
	if s == "" {
		return 0
	}
	d, err := time.ParseDuration(s)
	if err != nil {
		t.Fatal(err)
	}
	return d
}
