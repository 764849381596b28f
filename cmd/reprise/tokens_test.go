package main

import (
	"encoding/json"
	"os"
	"path/filepath"
	"testing"

	"github.com/reprise-bench/reprise/internal/mockserver"
)

// TestReplayOutputTokenSource: by default a request's output length comes
// from the server's usage and the summary says so; with
// --use-server-token-count=false it is the client tokenizer's; either way
// the records keep both counts and their difference, and with n = 2 the
// client counts both choices (so the two agree on the mock server).
func TestReplayOutputTokenSource(t *testing.T) {
	srv := startMockServer(t, func(c *mockserver.Config) { c.ReasoningTokens = 3 })
	for _, tc := range []struct {
		name   string
		flags  []string
		source string
	}{
		{"default", nil, "server"},
		{"client", []string{"--use-server-token-count=false"}, "client"},
		{"n=2", []string{"--extra-body", `{"n":2}`}, "server"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			out := t.TempDir()
			args := append([]string{"replay", "--url", srv.URL(), "--model", "reprise-mock", "--isl", "16", "--osl", "10",
				"--request-count", "6", "--concurrency", "2", "--out", out, "--quiet", "--format", "jsonl",
				"--max-error-rate", "0", "--no-server-metrics"}, tc.flags...)
			code, _, stderr := runCLI(t, "", args...)
			if code != 0 {
				t.Fatalf("exit %d: %s", code, stderr)
			}
			choices := 1.0
			if tc.name == "n=2" {
				choices = 2
			}
			for _, r := range readRecords(t, out) {
				client := r["output_tokens"].(float64) + r["reasoning_tokens"].(float64)
				server := r["server_completion_tokens"].(float64)
				if r["output_tokens_source"] != tc.source || server != 10*choices || client != server ||
					r["server_minus_client_output_tokens"] != 0.0 {
					t.Errorf("record: source %v, client %v, server %v, difference %v; want %s, %v tokens both, 0",
						r["output_tokens_source"], client, server, r["server_minus_client_output_tokens"], tc.source, 10*choices)
				}
			}
			b, err := os.ReadFile(filepath.Join(out, "summary.json"))
			if err != nil {
				t.Fatal(err)
			}
			var sum struct {
				Source map[string]int `json:"output_tokens_source"`
				OSL    struct {
					Avg float64 `json:"avg"`
				} `json:"output_sequence_length"`
			}
			if err := json.Unmarshal(b, &sum); err != nil {
				t.Fatal(err)
			}
			if len(sum.Source) != 1 || sum.Source[tc.source] != 6 || sum.OSL.Avg != 10*choices {
				t.Errorf("summary.json: output_tokens_source %v, OSL %v; want {%s: 6}, %v", sum.Source, sum.OSL.Avg, tc.source, 10*choices)
			}
		})
	}
}
