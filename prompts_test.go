package reprise

import (
	"context"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/reprise-bench/reprise/engine"
	"github.com/reprise-bench/reprise/engine/adapter"
	"github.com/reprise-bench/reprise/engine/adapter/openai"
	"github.com/reprise-bench/reprise/engine/record"
	"github.com/reprise-bench/reprise/engine/summary"
	"github.com/reprise-bench/reprise/internal/mockserver"
	"github.com/reprise-bench/reprise/internal/prompt"
	"github.com/reprise-bench/reprise/internal/tokenizer"
	"github.com/reprise-bench/reprise/replay"
	"github.com/reprise-bench/reprise/trace"
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

type historyRun struct {
	rows []trace.Row
	recs map[int64]record.Request // by trace row index
	logs map[int64]mockserver.RequestLog
	res  *engineResult
}

// replaySessions replays trace text against the mock server (builtin
// tokenizer, 16-token blocks, a prefix cache that never evicts, no chat
// template tokens) with the run's prompt synthesis, as reprise replay
// does.
func replaySessions(t *testing.T, text string, f trace.Format, mode engine.ContextMode, ep openai.Endpoint) (*historyRun, error) {
	t.Helper()
	rc := replay.NewConfig()
	rc.Speedup = 100
	rc.Grace = time.Second
	return replayText(t, text, f, mode, ep, rc)
}

// replayText is replaySessions with the schedule's configuration rc.
func replayText(t *testing.T, text string, f trace.Format, mode engine.ContextMode, ep openai.Endpoint, rc replay.Config) (*historyRun, error) {
	t.Helper()
	tok, err := tokenizer.Builtin()
	if err != nil {
		t.Fatal(err)
	}
	srv := startMockServer(t, func(c *mockserver.Config) {
		c.Tokenizer = tok
		c.BlockSize = 16
		c.PrefixCacheTokens = 1 << 30
		c.ITL = 100 * time.Microsecond
	})
	rd, err := trace.NewReader("sessions.jsonl", strings.NewReader(text), trace.Options{Format: f, BlockSize: 16})
	if err != nil {
		t.Fatal(err)
	}
	var rows []trace.Row
	for {
		var row trace.Row
		if err := rd.Next(&row); err != nil {
			break
		}
		rows = append(rows, row.Clone())
	}
	pcfg := prompt.NewConfig()
	sp, err := newPromptSource(&replayPlan{tok: tok, rows: rows}, pcfg, false)
	if err != nil {
		t.Fatal(err)
	}
	ec := engine.NewConfig()
	ec.BaseURL = srv.URL()
	ec.Adapter = openai.Adapter{Endpoint: ep}
	ec.AdapterConfig = adapter.Config{Model: mockserver.DefaultModel, Stream: true, IncludeUsage: true, IgnoreEOS: true}
	ec.Counter = tok
	plan, err := replay.NewPlan(rc, rows)
	if err != nil {
		t.Fatal(err)
	}
	sink := &memRecords{}
	res, err := runEngine(context.Background(), runConfig{
		Engine: ec, Plan: plan, Prompts: sp, Context: mode, Streaming: true, MaxTokensFromTrace: true,
		Sink: sink, Summary: summary.Options{Streaming: true},
	})
	if err != nil {
		return nil, err
	}
	hr := &historyRun{rows: rows, res: res, recs: map[int64]record.Request{}, logs: map[int64]mockserver.RequestLog{}}
	byID := map[string]mockserver.RequestLog{}
	for _, l := range serverLog(t, srv) {
		byID[l.ClientRequestID] = l
	}
	for _, r := range sink.reqs {
		if !r.OK() {
			t.Fatalf("row %d failed: %s %s", r.TraceRow, r.ErrorKind, r.ErrorMessage)
		}
		hr.recs[r.TraceRow] = r
		hr.logs[r.TraceRow] = byID[strconv.FormatUint(r.RequestID, 10)]
	}
	if len(hr.recs) != len(rows) {
		t.Fatalf("%d records for %d rows", len(hr.recs), len(rows))
	}
	return hr, nil
}

// memRecords is a recordSink in memory.
type memRecords struct{ reqs []record.Request }

func (m *memRecords) WriteRequests(b []record.Request) error {
	m.reqs = append(m.reqs, b...)
	return nil
}
func (m *memRecords) WriteEvents([]record.Event) error { return nil }
func (m *memRecords) Close() error                     { return nil }

// TestSessionHistory: in auto (and history) mode each later turn of a
// Mooncake session carries every earlier prompt and the live response,
// so the server counts exactly previous prompt + previous response + the
// new turn's tokens, and its prefix cache holds at least the full blocks
// of the previous prompt (exactly those: the mock caches prompts only),
// which is the request's expected_cached_tokens. Sessions never mix, and
// the independent row goes as it stands.
func TestSessionHistory(t *testing.T) {
	for _, tc := range []struct {
		mode engine.ContextMode
		ep   openai.Endpoint
	}{{engine.ContextAuto, openai.Chat}, {engine.ContextHistory, openai.Chat}, {engine.ContextAuto, openai.Completions}} {
		t.Run(string(tc.mode)+"/"+openai.Adapter{Endpoint: tc.ep}.Info().Name, func(t *testing.T) {
			hr, err := replaySessions(t, sessionTrace, trace.FormatMooncake, tc.mode, tc.ep)
			if err != nil {
				t.Fatal(err)
			}
			prev := map[string]int64{} // session → previous row
			for _, row := range hr.rows {
				r, l := hr.recs[row.Index], hr.logs[row.Index]
				if int(r.TraceInputTokens) != row.InputTokens || int(r.InputTokens) != l.PromptTokens {
					t.Errorf("row %d: trace_input_tokens %d (trace %d), input_tokens %d, server prompt tokens %d",
						row.Index, r.TraceInputTokens, row.InputTokens, r.InputTokens, l.PromptTokens)
				}
				p, ok := prev[row.SessionID]
				if row.SessionID != "" {
					prev[row.SessionID] = row.Index
				}
				if !ok {
					if l.PromptTokens != row.InputTokens {
						t.Errorf("row %d (first turn): server counted %d prompt tokens, want %d", row.Index, l.PromptTokens, row.InputTokens)
					}
					continue
				}
				pr, pl := hr.recs[p], hr.logs[p]
				if pr.OutputTokens <= 0 {
					t.Fatalf("row %d: no response tokens recorded", p)
				}
				want := pl.PromptTokens + int(pr.OutputTokens) + row.InputTokens
				if l.PromptTokens != want {
					t.Errorf("row %d: server counted %d prompt tokens, want previous prompt %d + response %d + new %d = %d",
						row.Index, l.PromptTokens, pl.PromptTokens, pr.OutputTokens, row.InputTokens, want)
				}
				full := pl.PromptTokens / 16 * 16
				if l.CachedTokens < full || int(r.ExpectedCachedTokens) != full || int(r.ServerCachedTokens) != l.CachedTokens {
					t.Errorf("row %d: server cached %d (reported %d), expected_cached_tokens %d; want ≥ and = %d, the full blocks of the previous prompt",
						row.Index, l.CachedTokens, r.ServerCachedTokens, r.ExpectedCachedTokens, full)
				}
			}
			if hr.res.HistoryBuilds != 4 {
				t.Errorf("%d turns built with their history, want 4", hr.res.HistoryBuilds)
			}
		})
	}
}

// TestSessionSelfContained: --context-mode self-contained sends every row
// as it stands, and Bailian rows (cumulative input_length) never get a
// history appended, while history mode refuses them.
func TestSessionSelfContained(t *testing.T) {
	for _, tc := range []struct {
		name, text string
		f          trace.Format
		mode       engine.ContextMode
	}{
		{"mooncake self-contained", sessionTrace, trace.FormatMooncake, engine.ContextSelfContained},
		{"bailian auto", bailianSessionTrace, trace.FormatBailian, engine.ContextAuto},
	} {
		t.Run(tc.name, func(t *testing.T) {
			hr, err := replaySessions(t, tc.text, tc.f, tc.mode, openai.Chat)
			if err != nil {
				t.Fatal(err)
			}
			for _, row := range hr.rows {
				if l := hr.logs[row.Index]; l.PromptTokens != row.InputTokens {
					t.Errorf("row %d: server counted %d prompt tokens, want the row's own %d", row.Index, l.PromptTokens, row.InputTokens)
				}
			}
			if hr.res.HistoryBuilds != 0 {
				t.Errorf("%d turns built with a history, want none", hr.res.HistoryBuilds)
			}
		})
	}
	t.Run("bailian history", func(t *testing.T) {
		_, err := replaySessions(t, bailianSessionTrace, trace.FormatBailian, engine.ContextHistory, openai.Chat)
		if err == nil || !strings.Contains(err.Error(), "count it twice") {
			t.Fatalf("err = %v, want a refusal of Bailian rows", err)
		}
	})
}

// startMockServer starts the in-process mock server on a loopback port,
// with mut applied to its configuration; it is closed when t ends.
func startMockServer(t *testing.T, mut func(*mockserver.Config)) *mockserver.Server {
	t.Helper()
	cfg := mockserver.NewConfig()
	cfg.Addr = "127.0.0.1:0"
	cfg.TTFT = time.Millisecond
	cfg.ITL = 0
	if mut != nil {
		mut(cfg)
	}
	srv, err := mockserver.Start(context.Background(), cfg)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { srv.Close() })
	return srv
}
