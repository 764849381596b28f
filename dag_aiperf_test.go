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

// aiperfDAGTrace is an AIPerf dag_jsonl task of depth 3 with a fan-out of
// 4: the lead plans and spawns four workers (each waits a tool time of
// 2+k ms before its turn), then joins them at its second turn after a
// 3 ms think time; the lead's turns extend each other, worker 0 has a
// second turn extending its first, and a background fork summarises the
// plan with its live reply.
func aiperfDAGTrace() string {
	var b strings.Builder
	b.WriteString(`{"session_id":"lead","turns":[{"messages":[{"role":"user","content":"Plan the release of the new storage engine in four parts."}],"max_tokens":6,` +
		`"spawns":[{"children":["w0","w1","w2","w3"],"join_at":1}],"forks":[{"child":"sum","background":true}]},` +
		`{"messages":[{"role":"user","content":"Merge the four parts."}],"max_tokens":5,"delay":3}]}` + "\n")
	for k := range 4 {
		fmt.Fprintf(&b, `{"session_id":"w%d","turns":[{"messages":[{"role":"user","content":"Write part %d of the plan."}],"max_tokens":4,"delay":%d}`, k, k, 2+k)
		if k == 0 {
			b.WriteString(`,{"messages":[{"role":"user","content":"Check it."}],"max_tokens":3,"delay":1}`)
		}
		b.WriteString("]}\n")
	}
	b.WriteString(`{"session_id":"sum","turns":[{"messages":[{"role":"user","content":"Summarise the plan."}],"max_tokens":3,"delay":1}]}` + "\n")
	return b.String()
}

// aiperfGraphTrace is the same shape in the Graph IR, two trace records:
// plan fans out to four workers (a tool time of 2+k ms after plan
// completed), and join gates on all four outputs plus a 3 ms minimum
// start delay; worker 3 follows worker 2's dispatch by 1 ms instead
// (start-anchored), i.e. it waits for plan plus 2+1 ms.
func aiperfGraphTrace() string {
	var nodes, edges []string
	node := func(name, text, out string, extra string) {
		nodes = append(nodes, fmt.Sprintf(`%q:{"node_type":"llm","prompt":[{"role":"system","content":"You write storage engine plans."},{"role":"user","content":[%q,"@topic"]}],"output":%q,"max_tokens":4%s}`, name, text, out, extra))
	}
	node("plan", "Plan the release of ", "plan_out", "")
	var inputs []string
	for k := range 4 {
		w := fmt.Sprintf("w%d", k)
		node(w, fmt.Sprintf("Write part %d of the plan for ", k), w+"_out", "")
		inputs = append(inputs, fmt.Sprintf(`{"channel":%q,"count":"all"}`, w+"_out"))
		if k < 3 {
			edges = append(edges, fmt.Sprintf(`{"source":"plan","target":%q,"delay_after_predecessor_us":%d}`, w, (2+k)*1000))
		}
	}
	edges = append(edges, `{"source":"w2","target":"w3","delay_after_predecessor_start_us":1000}`)
	node("join", "Merge the parts for ", "j_out", `,"min_start_delay_us":3000,"inputs":[`+strings.Join(inputs, ",")+`]`)
	return `{"kind":"graph","id":"g","version":"2.0","nodes":{` + strings.Join(nodes, ",") + `},"edges":[` + strings.Join(edges, ",") + `]}` + "\n" +
		`{"kind":"trace","id":"t1","graph_ref":"g","initial_state":{"topic":"the storage engine"}}` + "\n" +
		`{"kind":"trace","id":"t2","graph_ref":"g","initial_state":{"topic":"the query planner"}}` + "\n"
}

// TestAIPerfDAGReplay replays both AIPerf DAG formats against the mock
// server: on the mock's oracle log every request arrived only after each
// request it waits for had written its last byte, plus its delay; a row
// extending another (dag_jsonl deltas and forks) was sent after the
// parent's prompt and live reply, with the parent's prompt in the prefix
// cache; and every task completed.
func TestAIPerfDAGReplay(t *testing.T) {
	for _, tc := range []struct {
		name    string
		format  trace.Format
		text    string
		rows    int
		extends int
		tasks   int
	}{
		{"dag_jsonl", trace.FormatAIPerfDAG, aiperfDAGTrace(), 8, 3, 1},
		{"graph_ir", trace.FormatAIPerfGraph, aiperfGraphTrace(), 12, 0, 2},
	} {
		t.Run(tc.name, func(t *testing.T) {
			rc := replay.NewConfig()
			rc.Grace = time.Second
			hr, err := replayText(t, tc.text, tc.format, engine.ContextAuto, openai.Chat, rc)
			if err != nil {
				t.Fatal(err)
			}
			if len(hr.rows) != tc.rows {
				t.Fatalf("%d rows, want %d", len(hr.rows), tc.rows)
			}
			byID := map[int64]*trace.Row{}
			for i := range hr.rows {
				byID[hr.rows[i].RequestID] = &hr.rows[i]
			}
			waits, extends := 0, 0
			for i := range hr.rows {
				row := &hr.rows[i]
				l := hr.logs[row.Index]
				for _, d := range row.WaitFor {
					waits++
					dl := hr.logs[byID[d].Index]
					if gap := time.Duration(l.ReceivedNS - dl.EndNS); gap < row.Delay+row.ToolWait {
						t.Errorf("request %d (%s turn %d) reached the server %v after request %d ended; want ≥ its delay %v",
							row.RequestID, row.SessionID, row.Turn, gap, d, row.Delay+row.ToolWait)
					}
				}
				if row.ParentID < 0 {
					continue
				}
				extends++
				p := byID[row.ParentID]
				pl, pr := hr.logs[p.Index], hr.recs[p.Index]
				if l.PromptTokens <= pl.PromptTokens+int(pr.OutputTokens) {
					t.Errorf("request %d: %d prompt tokens, want more than its parent's prompt %d + reply %d", row.RequestID, l.PromptTokens, pl.PromptTokens, pr.OutputTokens)
				}
				if full := pl.PromptTokens / 16 * 16; l.CachedTokens < full {
					t.Errorf("request %d: cached %d, want ≥ %d (its parent's prompt)", row.RequestID, l.CachedTokens, full)
				}
			}
			if waits < tc.rows || extends != tc.extends {
				t.Errorf("%d dependencies checked, %d rows extending a parent; want ≥ %d and %d", waits, extends, tc.rows, tc.extends)
			}
			if st := hr.res.Stats; st.Completed != int64(tc.rows) || st.Skipped != 0 {
				t.Errorf("stats: %+v", st)
			}
			if ts := hr.res.Summary.Tasks; ts == nil || ts.Count != tc.tasks || ts.Completed != tc.tasks {
				t.Errorf("summary tasks %+v, want %d complete", ts, tc.tasks)
			}
		})
	}
}
