package main

import (
	"os"
	"path/filepath"
	"strings"
	"testing"
)

// sessionTrace is two interleaved 3-turn Mooncake sessions in AIPerf's
// dialect (input_length and hash_ids of each turn's new tokens only) and
// one independent row, at block size 16.
const sessionTrace = `{"timestamp": 0, "session_id": "a", "input_length": 40, "output_length": 12, "hash_ids": [1, 2, 3]}
{"timestamp": 0, "session_id": "b", "input_length": 40, "output_length": 9, "hash_ids": [1, 2, 30]}
{"timestamp": 1, "input_length": 20, "output_length": 5, "hash_ids": [50, 51]}
{"delay": 0, "session_id": "a", "input_length": 20, "output_length": 12, "hash_ids": [4, 5]}
{"delay": 0, "session_id": "b", "input_length": 17, "output_length": 9, "hash_ids": [31, 32]}
{"delay": 0, "session_id": "a", "input_length": 33, "output_length": 12, "hash_ids": [6, 7, 8]}
{"delay": 0, "session_id": "b", "input_length": 5, "output_length": 9, "hash_ids": [33]}
`

// bailianSessionTrace is one 3-turn Bailian conversation: every
// input_length already includes the history.
const bailianSessionTrace = `{"chat_id": 1, "parent_chat_id": -1, "timestamp": 0, "input_length": 40, "output_length": 8, "type": "text", "turn": 1, "hash_ids": [1, 2, 3]}
{"chat_id": 2, "parent_chat_id": 1, "timestamp": 0.002, "input_length": 70, "output_length": 8, "type": "text", "turn": 2, "hash_ids": [1, 2, 4, 5, 6]}
{"chat_id": 3, "parent_chat_id": 2, "timestamp": 0.004, "input_length": 90, "output_length": 8, "type": "text", "turn": 3, "hash_ids": [1, 2, 4, 5, 7, 8]}
`

// TestReplayContextModeFlag: --context-mode reaches the run (the wire
// prompt of a later turn is the history plus the row, or the row alone),
// records carry trace_input_tokens next to input_tokens, and a mode that
// cannot apply to the trace is a usage error before anything is sent.
func TestReplayContextModeFlag(t *testing.T) {
	dir := t.TempDir()
	path := filepath.Join(dir, "sessions.jsonl")
	if err := os.WriteFile(path, []byte(sessionTrace), 0o644); err != nil {
		t.Fatal(err)
	}
	bailian := filepath.Join(dir, "bailian.jsonl")
	if err := os.WriteFile(bailian, []byte(bailianSessionTrace), 0o644); err != nil {
		t.Fatal(err)
	}
	srv := startMockServer(t, nil)
	for _, mode := range []string{"auto", "self-contained"} {
		out := filepath.Join(dir, mode)
		code, _, stderr := runCLI(t, "", "replay", path, "--url", srv.URL(), "--model", "reprise-mock", "--block-size", "16",
			"--speedup", "100", "--out", out, "--format", "jsonl", "--quiet", "--context-mode", mode)
		if code != 0 {
			t.Fatalf("%s: exit %d: %s", mode, code, stderr)
		}
		longer := 0
		for _, r := range readRecords(t, out) {
			if r["input_tokens"].(float64) > r["trace_input_tokens"].(float64) {
				longer++
			}
		}
		if want := map[string]int{"auto": 4, "self-contained": 0}[mode]; longer != want {
			t.Errorf("%s: %d requests longer than their trace row, want %d (the later turns with their history)", mode, longer, want)
		}
	}
	for _, args := range [][]string{{path, "--context-mode", "deltas"}, {bailian, "--context-mode", "history"}} {
		code, _, stderr := runCLI(t, "", append([]string{"replay", "--url", srv.URL(), "--model", "m", "--quiet", "--block-size", "16"}, args...)...)
		if code != 2 || !strings.Contains(stderr, "--context-mode") {
			t.Errorf("%v: exit %d, want 2 with a --context-mode message: %s", args, code, stderr)
		}
	}
}
