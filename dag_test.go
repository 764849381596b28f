package reprise

import (
	"fmt"
	"strings"
	"testing"
	"time"

	"github.com/reprise-bench/reprise/engine"
	"github.com/reprise-bench/reprise/engine/adapter/openai"
	"github.com/reprise-bench/reprise/replay"
	"github.com/reprise-bench/reprise/trace"
)

// dagTrace writes an agentic Mooncake trace (Dynamo's dialect: request_id,
// wait_for, delay and tool_wait_ms; input_length and hash_ids of the
// whole prompt, 16-token blocks) of two tasks, each of depth 3 with a
// fan-out of 4: a root plans; four workers extend its prompt and wait
// for it plus a tool call; a join extends worker 0's prompt and waits
// for all four plus a think time and a tool call. The second task starts
// 3 ms later and shares no block with the first (what two unrelated
// tasks share is reused in whichever order the server sees them).
func dagTrace() string {
	var b strings.Builder
	for task := range 2 {
		sys, base := 1+task, 100*(task+1)
		root := fmt.Sprintf("t%d-root", task)
		fmt.Fprintf(&b, `{"request_id": %q, "session_id": "t%d:lead", "timestamp": %d, "input_length": 48, "output_length": 6, "hash_ids": [%d, %d, %d]}`+"\n",
			root, task, 3*task, sys, base, base+1)
		var workers []string
		for k := range 4 {
			w := fmt.Sprintf("t%d-w%d", task, k)
			workers = append(workers, fmt.Sprintf("%q", w))
			fmt.Fprintf(&b, `{"request_id": %q, "session_id": "t%d:worker%d", "wait_for": [%q], "delay": 1, "tool_wait_ms": %d, "input_length": 80, "output_length": %d, "hash_ids": [%d, %d, %d, %d, %d]}`+"\n",
				w, task, k, root, 2+k, 3+k, sys, base, base+1, base+10+2*k, base+11+2*k)
		}
		fmt.Fprintf(&b, `{"request_id": "t%d-join", "session_id": "t%d:lead", "wait_for": [%s], "delay": 2, "tool_wait_ms": 3, "input_length": 100, "output_length": 5, "hash_ids": [%d, %d, %d, %d, %d, %d, %d]}`+"\n",
			task, task, strings.Join(workers, ", "), sys, base, base+1, base+10, base+11, base+50, base+51)
	}
	return b.String()
}

// TestDependentReplay replays dagTrace against the mock server: every
// request reached the server only after each request it waits for had
// written its last byte, plus its delay and tool time (the mock's
// oracle log, per request); and the server's cached tokens equal the
// reuse expected in dependency order: the longest run of the request's
// leading blocks that its ancestors sent (full blocks only), which is
// also the record's expected_cached_tokens.
func TestDependentReplay(t *testing.T) {
	rc := replay.NewConfig()
	rc.Grace = time.Second
	hr, err := replayText(t, dagTrace(), trace.FormatMooncake, engine.ContextAuto, openai.Chat, rc)
	if err != nil {
		t.Fatal(err)
	}
	if len(hr.rows) != 12 {
		t.Fatalf("%d rows, want 12", len(hr.rows))
	}
	byID := map[int64]*trace.Row{}
	for i := range hr.rows {
		byID[hr.rows[i].RequestID] = &hr.rows[i]
	}
	// ancestors' leading-block sets, in file order (a topological order).
	seen := map[int64]map[uint64]bool{}
	for i := range hr.rows {
		row := &hr.rows[i]
		anc := map[uint64]bool{}
		for _, d := range row.WaitFor {
			for id := range seen[d] {
				anc[id] = true
			}
		}
		want := 0
		for _, id := range row.HashIDs {
			if !anc[id] {
				break
			}
			want += 16
		}
		want = min(want, row.InputTokens/16*16)
		for _, id := range row.HashIDs {
			anc[id] = true
		}
		seen[row.RequestID] = anc

		l, r := hr.logs[row.Index], hr.recs[row.Index]
		if l.PromptTokens != row.InputTokens {
			t.Errorf("line %d: server counted %d prompt tokens, want %d", row.Line, l.PromptTokens, row.InputTokens)
		}
		if l.CachedTokens != want || int(r.ExpectedCachedTokens) != want {
			t.Errorf("line %d: server cached %d, expected_cached_tokens %d; want %d (reuse from its ancestors)",
				row.Line, l.CachedTokens, r.ExpectedCachedTokens, want)
		}
		wait := row.Delay + row.ToolWait
		for _, d := range row.WaitFor {
			dl := hr.logs[byID[d].Index]
			if gap := time.Duration(l.ReceivedNS - dl.EndNS); gap < wait {
				t.Errorf("line %d reached the server %v after line %d ended; want ≥ its delay + tool time %v",
					row.Line, gap, byID[d].Line, wait)
			}
		}
		if row.WaitFor == nil && r.SessionDelayNS != 0 {
			t.Errorf("line %d (a root): session delay %d", row.Line, r.SessionDelayNS)
		}
		// Records: task (6 lines per task), depth (root 0, workers 1, join
		// 2) and the dependency that released it (which one ended last is
		// the scheduler's business, tested under virtual time in replay).
		depth := map[int]int32{0: 0, 5: 2}[int(row.Index%6)]
		if row.Index%6 >= 1 && row.Index%6 <= 4 {
			depth = 1
		}
		parentOK := row.WaitFor == nil && r.ReleasedBy == 0
		for _, d := range row.WaitFor {
			parentOK = parentOK || hr.recs[byID[d].Index].RequestID+1 == r.ReleasedBy
		}
		if r.Task-1 != row.Index/6 || r.Level-1 != depth || !parentOK {
			t.Errorf("line %d: task %d depth %d parent %d; want task %d depth %d and a parent among %v", row.Line, r.Task-1, r.Level-1,
				int64(r.ReleasedBy)-1, row.Index/6, depth, row.WaitFor)
		}
	}
	if st := hr.res.Stats; st.Completed != 12 || st.Skipped != 0 {
		t.Errorf("stats: %+v", st)
	}
	// The summary's tasks: two, complete; each critical path waits at
	// least the think and tool time on it (root → worker: 1 ms + ≥ 2 ms,
	// worker → join: 2 + 3 ms); TTFT per level 0, 1, 2.
	ts := hr.res.Summary.Tasks
	if ts == nil || ts.Count != 2 || ts.Completed != 2 || ts.Completion.Count != 2 {
		t.Fatalf("summary tasks %+v", ts)
	}
	if ts.CriticalWait.Min < 8 || ts.CriticalServer.Min <= 0 {
		t.Errorf("critical path: server %+v wait %+v; want the 8 ms of think and tool time on it at least", ts.CriticalServer, ts.CriticalWait)
	}
	for d, n := range map[int32]int{0: 2, 1: 8, 2: 2} {
		if st := ts.TTFTByDepth[d]; st == nil || st.Count != n {
			t.Errorf("TTFT at depth %d: %+v, want %d values", d, st, n)
		}
	}
}

// TestDependentLiveResponse: rows that extend another request (extends)
// are sent after that request's prompt and the response the server
// actually gave, each branch on its own copy of the conversation: the
// server counts parent prompt + parent response + the row's new tokens,
// and holds the parent prompt's full blocks in its prefix cache.
func TestDependentLiveResponse(t *testing.T) {
	text := `{"request_id": "plan", "timestamp": 0, "input_length": 40, "output_length": 6, "hash_ids": [1, 2, 3]}
{"request_id": "a", "extends": "plan", "tool_wait_ms": 2, "input_length": 20, "output_length": 5, "hash_ids": [4, 5]}
{"request_id": "b", "extends": "plan", "tool_wait_ms": 2, "input_length": 17, "output_length": 4, "hash_ids": [6, 7]}
{"request_id": "a2", "extends": "a", "input_length": 9, "output_length": 3, "hash_ids": [8]}
`
	rc := replay.NewConfig()
	rc.Grace = time.Second
	hr, err := replayText(t, text, trace.FormatMooncake, engine.ContextAuto, openai.Chat, rc)
	if err != nil {
		t.Fatal(err)
	}
	byID := map[int64]*trace.Row{}
	for i := range hr.rows {
		byID[hr.rows[i].RequestID] = &hr.rows[i]
	}
	for i := range hr.rows {
		row := &hr.rows[i]
		l, r := hr.logs[row.Index], hr.recs[row.Index]
		if row.ParentID < 0 {
			if l.PromptTokens != row.InputTokens {
				t.Errorf("line %d: %d prompt tokens, want %d", row.Line, l.PromptTokens, row.InputTokens)
			}
			continue
		}
		p := byID[row.ParentID]
		pl, pr := hr.logs[p.Index], hr.recs[p.Index]
		want := pl.PromptTokens + int(pr.OutputTokens) + row.InputTokens
		if l.PromptTokens != want || int(r.InputTokens) != want {
			t.Errorf("line %d: server counted %d prompt tokens (record %d), want parent prompt %d + response %d + new %d = %d",
				row.Line, l.PromptTokens, r.InputTokens, pl.PromptTokens, pr.OutputTokens, row.InputTokens, want)
		}
		full := pl.PromptTokens / 16 * 16
		if l.CachedTokens < full || int(r.ExpectedCachedTokens) != full {
			t.Errorf("line %d: cached %d, expected_cached_tokens %d; want ≥ and = %d (the parent prompt's full blocks)",
				row.Line, l.CachedTokens, r.ExpectedCachedTokens, full)
		}
		if gap := time.Duration(l.ReceivedNS - pl.EndNS); gap < row.ToolWait {
			t.Errorf("line %d sent %v after its parent ended, want ≥ %v", row.Line, gap, row.ToolWait)
		}
	}
	if hr.res.HistoryBuilds != 3 {
		t.Errorf("%d rows built with a parent's conversation, want 3", hr.res.HistoryBuilds)
	}
}
