package main

import (
	"encoding/json"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/reprise-bench/reprise/internal/mockserver"
)

// TestSkillCardRecipes runs the recipes of the seed's AIPerf skill card,
// "aiperf" changed to "reprise", against the mock server and a fake
// Hugging Face Hub (HF_ENDPOINT): the model id's tokenizer and AIPerf's
// ShareGPT file are downloaded from it, as AIPerf does. The card itself is
// not in the repository: the command lines are reconstructed from the
// recipes' descriptions in AIPerf's CLI reference (the card's multi-turn
// recipe combines --input-file … multi_turn with
// --shared-system-prompt-length, which AIPerf's source rejects and
// reprise takes), with the mock's URL and small counts. The smoke test
// gives --output-tokens-mean so that the mock's answers stay short
// (without it the server decides, and the mock answers up to its
// context length). MMLU and the multimodal
// recipes are TestProfileAccuracyMMLU's and TestProfileCommands'. Each
// recipe must exit 0; the test checks what it measured in the mock's
// oracle log and summary.json.
func TestSkillCardRecipes(t *testing.T) {
	hub, _ := fakeHubEnv(t) // org/model's tokenizer.json
	hub.AddFile("datasets/anon8231489123/ShareGPT_Vicuna_unfiltered", "ShareGPT_V3_unfiltered_cleaned_split.json", `[
 {"id": "a", "conversations": [{"from": "human", "value": "Explain paged attention in one line please."}, {"from": "gpt", "value": "KV blocks are kept in pages."},
                               {"from": "human", "value": "And what about prefix caching?"}, {"from": "gpt", "value": "Shared blocks are reused again."}]},
 {"id": "b", "conversations": [{"from": "human", "value": "What is the time to first token?"}, {"from": "gpt", "value": "The wait for the first token."}]}
]`)
	dir := t.TempDir()
	mooncake := writeTurnsFile(t, "mooncake_trace.jsonl", `{"timestamp": 0, "input_length": 48, "output_length": 8, "hash_ids": [1, 2, 3]}
{"timestamp": 20, "input_length": 48, "output_length": 8, "hash_ids": [1, 2, 4]}
{"timestamp": 40, "input_length": 32, "output_length": 4, "hash_ids": [5, 6]}
{"timestamp": 60, "input_length": 48, "output_length": 8, "hash_ids": [1, 2, 3]}
`)
	conversations := writeTurnsFile(t, "conversations.jsonl", turnsMulti)
	m := "org/model"
	for _, tt := range []struct {
		name  string
		args  []string
		check func(t *testing.T, out string, logs []mockserver.RequestLog)
	}{
		{"smoke test", []string{"--endpoint-type", "chat", "--streaming", "--concurrency", "1", "--request-count", "10",
			"--synthetic-input-tokens-mean", "128", "--output-tokens-mean", "32"}, func(t *testing.T, out string, logs []mockserver.RequestLog) {
			wantRequests(t, logs, 10)
			for _, l := range logs {
				if l.OutputTokens != 32 || !l.Stream {
					t.Errorf("request %d: %d output tokens, stream %v; want 32 streamed", l.Seq, l.OutputTokens, l.Stream)
				}
			}
			wantSummary(t, out, "request_count", 10)
		}},
		{"sharegpt", []string{"--endpoint-type", "chat", "--streaming", "--public-dataset", "sharegpt", "--concurrency", "2"},
			func(t *testing.T, out string, logs []mockserver.RequestLog) {
				wantRequests(t, logs, 3) // every turn of both conversations
				wantSummary(t, out, "request_count", 3)
			}},
		{"mooncake with goodput", []string{"--input-file", mooncake, "--custom-dataset-type", "mooncake_trace", "--fixed-schedule",
			"--isl-block-size", "16", "--streaming", "--goodput", "time_to_first_token:5000 inter_token_latency:1000"},
			func(t *testing.T, out string, logs []mockserver.RequestLog) {
				wantRequests(t, logs, 4)
				wantSummary(t, out, "good_request_count", 4)
				// The last row repeats the first's blocks: the server finds them cached.
				if last := logs[3]; last.CachedTokens < 32 {
					t.Errorf("the repeated row found %d tokens cached, want its 2 full blocks", last.CachedTokens)
				}
			}},
		{"nim embeddings", []string{"--endpoint-type", "nim_embeddings", "--isl", "64", "--batch-size", "4", "--concurrency", "2", "--request-count", "8"},
			func(t *testing.T, out string, logs []mockserver.RequestLog) {
				wantRequests(t, logs, 8)
				for _, l := range logs {
					if !strings.HasSuffix(l.Endpoint, "/embeddings") {
						t.Errorf("request %d to %s, want the embeddings endpoint", l.Seq, l.Endpoint)
					}
				}
				wantSummary(t, out, "request_count", 8)
			}},
		{"multi-turn shared system prompt", []string{"--input-file", conversations, "--custom-dataset-type", "multi_turn",
			"--shared-system-prompt-length", "64", "--num-sessions", "3", "--concurrency", "1", "--streaming"},
			func(t *testing.T, out string, logs []mockserver.RequestLog) {
				wantRequests(t, logs, 6)
				for i, l := range logs {
					// The system prompt is shared: every session's first turn after the first finds it cached.
					if i%2 == 0 && i > 0 && l.CachedTokens < 48 {
						t.Errorf("session %d's first turn: %d cached tokens, want the shared system prompt's blocks", i/2, l.CachedTokens)
					}
				}
				wantSummary(t, out, "request_count", 6)
			}},
		{"goodput multi-run confidence cooldown", []string{"--endpoint-type", "chat", "--streaming", "--isl", "64", "--osl", "16",
			"--concurrency", "4", "--request-count", "12", "--goodput", "request_latency:5000 time_to_first_token:5000",
			"--num-profile-runs", "3", "--confidence-level", "0.95", "--profile-run-cooldown-seconds", "0.2"},
			func(t *testing.T, out string, logs []mockserver.RequestLog) {
				wantRequests(t, logs, 36)
				var prevEnd time.Time
				for _, run := range []string{"run-1", "run-2", "run-3"} {
					wantSummary(t, filepath.Join(out, run), "good_request_count", 12)
					start, end := runTimes(t, filepath.Join(out, run))
					if !prevEnd.IsZero() && start.Sub(prevEnd) < 200*time.Millisecond {
						t.Errorf("%s started %v after the run before, want the 0.2 s cooldown", run, start.Sub(prevEnd))
					}
					prevEnd = end
				}
				b, err := os.ReadFile(filepath.Join(out, "runs.json"))
				var runs struct {
					Runs            int     `json:"runs"`
					ConfidenceLevel float64 `json:"confidence_level"`
					Metrics         map[string]struct {
						N      int       `json:"n"`
						Values []float64 `json:"values"`
					} `json:"metrics"`
				}
				if err == nil {
					err = json.Unmarshal(b, &runs)
				}
				if g := runs.Metrics["good_request_fraction"]; err != nil || runs.Runs != 3 || runs.ConfidenceLevel != 0.95 || g.N != 3 {
					t.Errorf("runs.json: %v, %d runs at %v, good_request_fraction over %d; want 3 at 0.95", err, runs.Runs, runs.ConfidenceLevel, g.N)
				}
			}},
	} {
		t.Run(tt.name, func(t *testing.T) {
			srv := startMockServer(t, func(c *mockserver.Config) { c.Models = []string{m} })
			out := filepath.Join(dir, strings.ReplaceAll(tt.name, " ", "_"))
			args := append([]string{"profile", "-m", m, "--url", srv.URL()}, tt.args...)
			code, _, stderr := runCLI(t, "", append(args, "--artifact-dir", out, "--quiet")...)
			if code != 0 {
				t.Fatalf("exit %d: %s", code, stderr)
			}
			for _, f := range []string{"profile_export_aiperf.json", "inputs.json"} {
				if _, err := os.Stat(filepath.Join(out, f)); err != nil && !strings.Contains(tt.name, "multi-run") {
					t.Errorf("AIPerf file: %v", err)
				}
			}
			tt.check(t, out, bySeq(srv))
		})
	}
}

// wantRequests checks the number of requests the mock served, all 200.
func wantRequests(t *testing.T, logs []mockserver.RequestLog, n int) {
	t.Helper()
	if len(logs) != n {
		t.Fatalf("%d requests reached the server, want %d", len(logs), n)
	}
	for _, l := range logs {
		if l.Status != 200 {
			t.Errorf("request %d: status %d %s", l.Seq, l.Status, l.Error)
		}
	}
}

// wantSummary checks a count of summary.json ({"unit", "avg"}).
func wantSummary(t *testing.T, dir, key string, want float64) {
	t.Helper()
	var sum map[string]json.RawMessage
	var v struct {
		Avg float64 `json:"avg"`
	}
	b, err := os.ReadFile(filepath.Join(dir, "summary.json"))
	if err == nil {
		err = json.Unmarshal(b, &sum)
	}
	if err == nil {
		err = json.Unmarshal(sum[key], &v)
	}
	if err != nil || v.Avg != want {
		t.Errorf("%s summary.json %s: %v, %v; want %v", filepath.Base(dir), key, err, v.Avg, want)
	}
}

// runTimes returns a run's start and end (summary.json's run_info).
func runTimes(t *testing.T, dir string) (start, end time.Time) {
	t.Helper()
	var sum struct {
		RunInfo struct {
			Start time.Time `json:"start_time"`
			End   time.Time `json:"end_time"`
		} `json:"run_info"`
	}
	b, err := os.ReadFile(filepath.Join(dir, "summary.json"))
	if err == nil {
		err = json.Unmarshal(b, &sum)
	}
	if err != nil {
		t.Fatalf("%s: %v", dir, err)
	}
	return sum.RunInfo.Start, sum.RunInfo.End
}
