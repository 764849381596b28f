package main

import (
	"encoding/json"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"testing"

	"github.com/reprise-bench/reprise/internal/mockserver"
)

// turnsMulti is an AIPerf multi_turn file of three sessions of two turns.
const turnsMulti = `{"session_id": "a", "turns": [{"text": "Hello", "output_length": 3}, {"text": "And then?", "output_length": 3}]}
{"session_id": "b", "turns": [{"text": "Hi", "output_length": 3}, {"text": "Go on", "output_length": 3}]}
{"session_id": "c", "turns": [{"text": "Good day", "output_length": 3}, {"text": "Tell me more", "output_length": 3}]}
`

func writeTurnsFile(t *testing.T, name, content string) string {
	t.Helper()
	p := filepath.Join(t.TempDir(), name)
	if err := os.WriteFile(p, []byte(content), 0o644); err != nil {
		t.Fatal(err)
	}
	return p
}

// bySeq returns the mock's oracle log in arrival order.
func bySeq(srv *mockserver.Server) []mockserver.RequestLog {
	logs := srv.Log()
	slices.SortFunc(logs, func(a, b mockserver.RequestLog) int { return int(a.Seq) - int(b.Seq) })
	return logs
}

// inputMessages returns inputs.json's payloads' messages, by session, in
// the order the sessions appear.
func inputMessages(t *testing.T, dir string) (order []string, msgs map[string][][]struct{ Role, Content string }) {
	t.Helper()
	var in struct {
		Data []struct {
			SessionID string `json:"session_id"`
			Payloads  []struct {
				Messages []struct{ Role, Content string } `json:"messages"`
			} `json:"payloads"`
		} `json:"data"`
	}
	b, err := os.ReadFile(filepath.Join(dir, "inputs.json"))
	if err == nil {
		err = json.Unmarshal(b, &in)
	}
	if err != nil {
		t.Fatalf("inputs.json: %v", err)
	}
	msgs = map[string][][]struct{ Role, Content string }{}
	for _, d := range in.Data {
		order = append(order, d.SessionID)
		for _, p := range d.Payloads {
			msgs[d.SessionID] = append(msgs[d.SessionID], p.Messages)
		}
	}
	return order, msgs
}

// TestProfileFilePreamble: AIPerf's shared system prompt and user context
// prompt on a multi_turn file, as AIPerf adds them to synthetic data: a
// system message of 32 tokens, the same in every session, then a user
// message of 32 tokens, each session's own, before every turn. The mock's
// oracle log (blocks of 16 tokens) shows the system prompt shared: every
// session's first turn after the first finds exactly its 32 tokens cached
// and no more (the context differs from its first token on); a second turn
// finds at least both (its session's first turn computed them); a session
// drawn again (--num-sessions 4 of 3) is the same dataset entry and keeps
// its context, so its first turn finds both cached.
func TestProfileFilePreamble(t *testing.T) {
	srv := startMockServer(t, nil)
	in := writeTurnsFile(t, "multi.jsonl", turnsMulti)
	out := filepath.Join(t.TempDir(), "run")
	code, _, stderr := runCLI(t, "", "profile", "-m", "reprise-mock", "--url", srv.URL(), "--input-file", in,
		"--custom-dataset-type", "multi_turn", "--shared-system-prompt-length", "32", "--user-context-prompt-length", "32",
		"--num-sessions", "4", "--concurrency", "1", "--streaming", "--artifact-dir", out, "--format", "jsonl", "--quiet")
	if code != 0 {
		t.Fatalf("exit %d: %s", code, stderr)
	}
	logs := bySeq(srv)
	if len(logs) != 8 {
		t.Fatalf("%d requests, want 8 (4 sessions of 2 turns)", len(logs))
	}
	for i, l := range logs {
		session, turn := i/2, i%2
		switch {
		case turn == 0 && (l.PromptTokens <= 64 || l.PromptTokens > 64+8):
			t.Errorf("session %d turn 0: %d prompt tokens, want 32 + 32 + the turn's few", session, l.PromptTokens)
		case turn == 0 && session == 0 && l.CachedTokens != 0:
			t.Errorf("first request: %d cached tokens, want 0", l.CachedTokens)
		case turn == 0 && (session == 1 || session == 2) && l.CachedTokens != 32:
			t.Errorf("session %d turn 0: %d cached tokens, want exactly the 32 of the shared system prompt (its context is its own)", session, l.CachedTokens)
		case turn == 0 && session == 3 && l.CachedTokens < 64:
			t.Errorf("session a drawn again, turn 0: %d cached tokens, want its system prompt and context (64)", l.CachedTokens)
		case turn == 1 && l.CachedTokens < 64:
			t.Errorf("session %d turn 1: %d cached tokens, want at least the 64 of its first turn's prompts", session, l.CachedTokens)
		}
	}
	order, msgs := inputMessages(t, out)
	if len(order) != 4 {
		t.Fatalf("inputs.json: sessions %v, want 4", order)
	}
	system := msgs["a"][0][0].Content
	contexts := map[string]string{}
	for _, s := range order {
		for k, m := range msgs[s] {
			if len(m) != 3 || m[0].Role != "system" || m[1].Role != "user" || m[2].Role != "user" {
				t.Fatalf("session %s turn %d: messages %+v, want system, user context, the turn", s, k, m)
			}
			if m[0].Content != system {
				t.Errorf("session %s: a system prompt of its own, want the shared one", s)
			}
			base, _, _ := strings.Cut(s, "#")
			if c, ok := contexts[base]; ok && c != m[1].Content {
				t.Errorf("session %s turn %d: another user context than its entry's", s, k)
			}
			contexts[base] = m[1].Content
		}
	}
	if len(contexts) != 3 || contexts["a"] == contexts["b"] || contexts["b"] == contexts["c"] || contexts["a"] == contexts["c"] {
		t.Errorf("user contexts %d, want 3 distinct (one per entry)", len(contexts))
	}
}

// TestProfilePromptFilePreamble: a single_turn prompt file's rows are
// conversations of their own: the shared system prompt is cached after
// the first request, each row's context never; through the chat and the
// Responses endpoints.
func TestProfilePromptFilePreamble(t *testing.T) {
	in := writeTurnsFile(t, "single.jsonl", `{"text": "What is a KV cache?", "output_length": 2}
{"text": "Define TTFT.", "output_length": 2}
{"text": "Why batch requests?", "output_length": 2}
`)
	for _, ep := range []string{"chat", "responses"} {
		t.Run(ep, func(t *testing.T) {
			srv := startMockServer(t, nil)
			code, _, stderr := runCLI(t, "", "profile", "-m", "reprise-mock", "--url", srv.URL(), "--input-file", in, "--endpoint-type", ep,
				"--custom-dataset-type", "single_turn", "--shared-system-prompt-length", "48", "--user-context-prompt-length", "16",
				"--artifact-dir", filepath.Join(t.TempDir(), "run"), "--format", "jsonl", "--quiet", "--export", "none")
			if code != 0 {
				t.Fatalf("exit %d: %s", code, stderr)
			}
			logs := bySeq(srv)
			if len(logs) != 3 {
				t.Fatalf("%d requests, want 3", len(logs))
			}
			for i, l := range logs {
				if want := min(i, 1) * 48; l.Status != 200 || l.CachedTokens != want || l.PromptTokens <= 64 {
					t.Errorf("request %d to %s: status %d, %d prompt and %d cached tokens, want 200, > 64 and %d", i, l.Endpoint, l.Status, l.PromptTokens, l.CachedTokens, want)
				}
			}
		})
	}
}

// TestProfilePreambleErrors: the conversation prompts go before a text of
// the row's own, to a chat-like endpoint; a trace synthesized from
// lengths, or the completions endpoint, exits 2 naming the flag.
func TestProfilePreambleErrors(t *testing.T) {
	mooncake := writeTurnsFile(t, "mooncake.jsonl", `{"timestamp": 0, "input_length": 40, "output_length": 8, "hash_ids": [1, 2, 3]}`+"\n")
	multi := writeTurnsFile(t, "multi.jsonl", turnsMulti)
	for _, tt := range []struct {
		args []string
		want string
	}{
		{[]string{"--input-file", mooncake, "--isl-block-size", "16", "--shared-system-prompt-length", "32"}, "mooncake.jsonl: line 1: the row is synthesized from its lengths"},
		{[]string{"--input-file", multi, "--endpoint-type", "completions", "--user-context-prompt-length", "32"}, "--shared-system-prompt-length and --user-context-prompt-length are chat messages"},
		{[]string{"--input-file", mooncake, "--isl-block-size", "16", "--fixed-schedule", "--num-sessions", "2"}, "--num-sessions draws sessions again, which a fixed schedule cannot"},
	} {
		args := append([]string{"profile", "-m", "reprise-mock", "--url", "http://127.0.0.1:1", "--no-preflight", "--artifact-dir", t.TempDir()}, tt.args...)
		code, _, stderr := runCLI(t, "", args...)
		if code != 2 || !strings.Contains(stderr, tt.want) {
			t.Errorf("%v: exit %d, %q; want 2 with %q", tt.args, code, stderr, tt.want)
		}
	}
}

// TestProfileFileEntries: --num-sessions and --num-dataset-entries with a
// multi_turn file of three 2-turn sessions take exactly the entries asked,
// drawn by --dataset-sampling-strategy, as the mock's log counts them.
func TestProfileFileEntries(t *testing.T) {
	in := writeTurnsFile(t, "multi.jsonl", turnsMulti)
	for _, tt := range []struct {
		name     string
		args     []string
		requests int
		sessions []string // the sessions sent, in order (nil: not checked)
		perEntry int      // times each base session is drawn (0: not checked)
		entries  []string // the only base sessions allowed (nil: any)
		turns    int      // records per session id (0: 2, its turns)
	}{
		// Sequential cycles through the file; a session drawn again is a new conversation.
		{"sessions sequential", []string{"--num-sessions", "5"}, 10, []string{"a", "b", "c", "a#1", "b#1"}, 0, nil, 0},
		// Shuffle: a permutation per pass, so 6 of 3 draws each twice.
		{"sessions shuffle", []string{"--num-sessions", "6", "--dataset-sampling-strategy", "shuffle", "--random-seed", "4"}, 12, nil, 2, nil, 0},
		{"sessions random", []string{"--num-sessions", "7", "--dataset-sampling-strategy", "random", "--random-seed", "2"}, 14, nil, 0, nil, 0},
		// The sessions stop the run before a larger request count.
		{"sessions and count", []string{"--num-sessions", "2", "--request-count", "100"}, 4, []string{"a", "b"}, 0, nil, 0},
		// The dataset is the first 2 entries; the count cycles through them.
		// (A pass after the first keeps the session ids, as for any file.)
		{"entries", []string{"--num-dataset-entries", "2", "--request-count", "8"}, 8, []string{"a", "b"}, 0, []string{"a", "b"}, 4},
		{"entries and sessions", []string{"--num-dataset-entries", "1", "--num-sessions", "3"}, 6, []string{"a", "a#1", "a#2"}, 0, nil, 0},
	} {
		t.Run(tt.name, func(t *testing.T) {
			srv := startMockServer(t, nil)
			out := filepath.Join(t.TempDir(), "run")
			args := append([]string{"profile", "-m", "reprise-mock", "--url", srv.URL(), "--input-file", in, "--custom-dataset-type", "multi_turn",
				"--concurrency", "1", "--artifact-dir", out, "--format", "jsonl", "--quiet", "--export", "none"}, tt.args...)
			code, _, stderr := runCLI(t, "", args...)
			if code != 0 {
				t.Fatalf("exit %d: %s", code, stderr)
			}
			if n := len(srv.Log()); n != tt.requests {
				t.Errorf("%d requests reached the server, want %d", n, tt.requests)
			}
			var sessions []string
			turns := map[string]int{}
			for _, r := range readRecords(t, out) {
				s, _ := r["session_id"].(string)
				if turns[s]++; turns[s] == 1 {
					sessions = append(sessions, s)
				}
			}
			per := map[string]int{}
			for _, s := range sessions {
				if want := max(tt.turns, 2); turns[s] != want {
					t.Errorf("session %s: %d records, want %d", s, turns[s], want)
				}
				base, _, _ := strings.Cut(s, "#")
				per[base]++
				if tt.entries != nil && !slices.Contains(tt.entries, base) {
					t.Errorf("session %s is not among the entries %v", s, tt.entries)
				}
			}
			if tt.sessions != nil {
				slices.Sort(sessions) // one sender: in order, but records are written as they end
				want := slices.Sorted(slices.Values(tt.sessions))
				if !slices.Equal(sessions, want) {
					t.Errorf("sessions %v, want %v", sessions, want)
				}
			}
			for base, n := range per {
				if tt.perEntry > 0 && n != tt.perEntry {
					t.Errorf("entry %s drawn %d times, want %d", base, n, tt.perEntry)
				}
			}
		})
	}
}
