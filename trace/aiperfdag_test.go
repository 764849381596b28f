package trace

import (
	"os"
	"slices"
	"strings"
	"testing"
	"time"
)

// dagGot is what the AIPerf DAG tests compare of a row.
type dagGot struct {
	id      int64
	session string
	turn    int
	waitFor []int64
	parent  int64
	offset  time.Duration
	hasOff  bool
	delay   time.Duration
	out     int
	cum     bool
	raw     string
}

func dagRows(t *testing.T, name string, f Format) []dagGot {
	t.Helper()
	rows, _, err := ReadAll(name, Options{Format: f})
	if err != nil {
		t.Fatal(err)
	}
	var g []dagGot
	for _, r := range rows {
		g = append(g, dagGot{r.RequestID, r.SessionID, r.Turn, r.WaitFor, r.ParentID, r.Offset, r.HasOffset, r.Delay, r.OutputTokens, r.Cumulative, string(r.Raw)})
	}
	slices.SortFunc(g, func(a, b dagGot) int { return int(a.id - b.id) })
	return g
}

func checkDAG(t *testing.T, got, want []dagGot) {
	t.Helper()
	if len(got) != len(want) {
		t.Fatalf("%d rows: %+v", len(got), got)
	}
	for i := range want {
		w, x := want[i], got[i]
		if w.id != x.id || w.session != x.session || w.turn != x.turn || !slices.Equal(w.waitFor, x.waitFor) || w.parent != x.parent ||
			w.offset != x.offset || w.hasOff != x.hasOff || w.delay != x.delay || w.out != x.out || w.cum != x.cum || w.raw != x.raw {
			t.Errorf("row %d:\n got %+v\nwant %+v", i, x, w)
		}
	}
}

// TestAIPerfDAG reads a dag_jsonl file: the root's turns chain and extend
// each other (deltas_without_responses); spawn children wait for the
// spawning turn and start with their own messages (a system prompt kept
// verbatim); join_at 2 makes the third root turn wait for both
// children's last turns; a fork child extends the forking turn; delays
// are think time in ms.
func TestAIPerfDAG(t *testing.T) {
	got := dagRows(t, "testdata/aiperf-dag.jsonl", "")
	ms := time.Millisecond
	checkDAG(t, got, []dagGot{
		{0, "root", 0, nil, -1, 0, true, 0, 8, false, `{"text_input":"Plan the work."}`},
		{1, "root", 1, []int64{0}, 0, 0, false, 500 * ms, 4, false, `{"text_input":"Go on."}`},
		{2, "w1", 0, []int64{0}, -1, 0, false, 0, 6, true, `{"messages":[{"role":"system","content":"You are a worker."},{"role":"user","content":"Task A"}],"extra":{"min_tokens":6}}`},
		{3, "w2", 0, []int64{0}, -1, 0, false, 250 * ms, 6, false, `{"text_input":"Task B"}`},
		{4, "w2", 1, []int64{3}, 3, 0, false, 0, 3, false, `{"text_input":"Task B, part two"}`},
		{5, "root", 2, []int64{1, 2, 4}, 1, 0, false, 0, 4, false, `{"text_input":"Merge."}`},
		{6, "f1", 0, []int64{5}, 5, 0, false, 100 * ms, 5, false, `{"text_input":"Summarise."}`},
	})
}

// TestAIPerfGraph reads a Graph IR file with two trace records: each
// instantiates the graph as one task; @topic comes from the trace's
// initial_state; a completion-anchored edge is a dependency with its
// delay; a start-anchored edge from a root makes a root 250 µs later; an
// inputs AND-gate joins both writers, plus the node's minimum start
// delay; max_tokens 0 sends 1.
func TestAIPerfGraph(t *testing.T) {
	got := dagRows(t, "testdata/aiperf-graph.jsonl", "")
	us := time.Microsecond
	plan := func(topic string) string { return `{"messages":[{"content":"Plan for ` + topic + `","role":"user"}]}` }
	a := `{"messages":[{"content":"Do A.","role":"user"}]}`
	b := `{"messages":[{"content":"Do B.","role":"user"}]}`
	j := `{"messages":[{"content":"Merge.","role":"system"},{"content":"Merge A and B.","role":"user"}]}`
	checkDAG(t, got, []dagGot{
		{0, "t1", 0, nil, -1, 0, true, 0, 64, true, plan("the release")},
		{1, "t1", 1, []int64{0}, -1, 0, false, 1500000 * us, 8, true, a},
		{2, "t1", 2, nil, -1, 250 * us, true, 0, 8, true, b},
		{3, "t1", 3, []int64{1, 2}, -1, 0, false, 2000 * us, 1, true, j},
		{4, "t2", 0, nil, -1, 0, true, 0, 64, true, plan("the outage")},
		{5, "t2", 1, []int64{4}, -1, 0, false, 1500000 * us, 8, true, a},
		{6, "t2", 2, nil, -1, 250 * us, true, 0, 8, true, b},
		{7, "t2", 3, []int64{5, 6}, -1, 0, false, 2000 * us, 1, true, j},
	})
}

// TestAIPerfGraphStartChain: a start-anchored edge from a dependent node
// waits for that node's own dependencies, with its delay plus the edge's.
func TestAIPerfGraphStartChain(t *testing.T) {
	text := `{"kind":"graph","nodes":{"p":{"node_type":"llm","prompt":[{"role":"user","content":"p"}],"max_tokens":2},` +
		`"q":{"node_type":"llm","prompt":[{"role":"user","content":"q"}],"max_tokens":2},"r":{"node_type":"llm","prompt":[{"role":"user","content":"r"}],"max_tokens":2}},` +
		`"edges":[{"source":"p","target":"q","delay_after_predecessor_us":1000},{"source":"q","target":"r","delay_after_predecessor_start_us":500}]}`
	r, err := NewReader("g.jsonl", strings.NewReader(text), Options{})
	if err != nil {
		t.Fatal(err)
	}
	var got []dagGot
	var row Row
	for r.Next(&row) == nil {
		got = append(got, dagGot{row.RequestID, row.SessionID, row.Turn, slices.Clone(row.WaitFor), row.ParentID, row.Offset, row.HasOffset, row.Delay, row.OutputTokens, row.Cumulative, string(row.Raw)})
	}
	if r.Format() != FormatAIPerfGraph || len(got) != 3 || !slices.Equal(got[2].waitFor, []int64{0}) || got[2].delay != 1500*time.Microsecond || got[2].hasOff {
		t.Errorf("format %s rows %+v; want r to wait for p, 1.5 ms", r.Format(), got)
	}
}

func TestAIPerfDAGErrors(t *testing.T) {
	turn := func(extra string) string { return `{"messages":[{"role":"user","content":"x"}]` + extra + `}` }
	sess := func(id string, turns ...string) string {
		return `{"session_id":"` + id + `","turns":[` + strings.Join(turns, ",") + `]}`
	}
	tests := []struct {
		format Format
		text   string
		want   string
	}{
		{FormatAIPerfDAG, sess("a", turn(`,"spawns":["zz"]`), turn("")), `x.jsonl:1: turns[0].spawns[0]: "zz" is no session_id of this file`},
		{FormatAIPerfDAG, sess("a", turn(`,"spawns":[{"children":["b"],"join_at":5}]`), turn("")) + "\n" + sess("b", turn("")), "x.jsonl:1: turns[0].spawns[0].join_at: turn 5: want a later turn of this session (1..1)"},
		{FormatAIPerfDAG, sess("a", turn(`,"forks":["b"]`), turn("")) + "\n" + sess("b", turn("")), "x.jsonl:1: turns[0].forks: a fork without background: true ends the session, but 1 turns follow"},
		{FormatAIPerfDAG, sess("a", turn(`,"spawns":["b"]`), turn("")) + "\n" + sess("b", turn(`,"spawns":["a"]`), turn("")), "x.jsonl:1: turns[0]: the sessions start each other in a cycle"},
		{FormatAIPerfDAG, sess("a", turn(`,"spawns":["c"]`), turn("")) + "\n" + sess("b", turn(`,"spawns":["c"]`), turn("")) + "\n" + sess("c", turn("")), `x.jsonl:2: turns[0].spawns[0]: "c" is already started by session "a" (line 1)`},
		{FormatAIPerfDAG, sess("a", turn(""), `{"messages":[{"role":"system","content":"s"},{"role":"user","content":"x"}]}`), "x.jsonl:1: turns[1].messages: a turn that continues a conversation"},
		{FormatAIPerfDAG, sess("a", turn(`,"delay":-3`)), "x.jsonl:1: turns[0].delay: -3 is negative; want milliseconds ≥ 0"},
		{FormatAIPerfDAG, `{"session_id":"a","orchestrator":true,"turns":[]}`, "x.jsonl:1: orchestrator: a request-less orchestrator"},
		{FormatAIPerfDAG, sess("a", turn("")) + "\n" + sess("a", turn("")), `x.jsonl:2: session_id: "a" is already the session of line 1`},
		{FormatAIPerfDAG, `{"session_id":"a","turns":[{"max_tokens":3}]}`, "x.jsonl:1: turns[0].messages: missing"},
		{FormatAIPerfDAG, `{"session_id":"a","turns":"x"}`, "x.jsonl:1: turns: want []trace.dagTurn, not a JSON string"},
		{FormatAIPerfMulti, sess("a", turn("")), "x.jsonl:1: messages: an AIPerf multi_turn turn has text, not messages, forks or spawns: this looks like AIPerf dag_jsonl"},
		{FormatAIPerfGraph, `{"kind":"graph","nodes":{"a":{"node_type":"llm","prompt":[{"role":"user","content":"x"}],"output":"o"},"b":{"node_type":"llm","prompt":[{"role":"user","content":["y ","@o"]}]}},"edges":[{"source":"a","target":"b"}]}`,
			`x.jsonl:1: nodes.b.prompt[0].content[1]: "@o" is a node's live reply; reprise cannot splice`},
		{FormatAIPerfGraph, `{"kind":"graph","nodes":{"a":{"node_type":"llm","prompt":[{"role":"user","content":"x"}]},"b":{"node_type":"llm","prompt":[{"role":"user","content":"x"}]},"c":{"node_type":"llm","prompt":[{"role":"user","content":"x"}]}},"edges":[{"source":"a","target":"c","delay_after_predecessor_us":5},{"source":"b","target":"c"}]}`,
			"x.jsonl:1: nodes.c: waits 0s after b but 5µs after a"},
		{FormatAIPerfGraph, `{"kind":"graph","nodes":{"a":{"node_type":"llm","prompt":[{"role":"user","content":"x"}],"output":"o"},"b":{"node_type":"llm","prompt":[{"role":"user","content":"x"}],"output":"o"},"c":{"node_type":"llm","prompt":[{"role":"user","content":"x"}],"inputs":[{"channel":"o","count":1}]}}}`,
			`x.jsonl:1: nodes.c.inputs[0].count: 1 of the 2 writers of "o"`},
		{FormatAIPerfGraph, `{"kind":"graph","nodes":{"a":{"node_type":"llm","prompt":[{"role":"user","content":"x"}]},"b":{"node_type":"llm","prompt":[{"role":"user","content":"x"}]}},"edges":[{"source":"a","target":"b"},{"source":"b","target":"a"}]}`,
			"x.jsonl:1: nodes.a: is on a cycle"},
		{FormatAIPerfGraph, `{"kind":"graph","nodes":{"a":{"node_type":"llm","prompt":[{"role":"user","content":"x"}]},"b":{"node_type":"llm","prompt":[{"role":"user","content":"x"}]}},"edges":[{"source":"a","target":"b","delay_after_predecessor_first_token_us":3}]}`,
			"x.jsonl:1: edges[0].delay_after_predecessor_first_token_us: a first-token anchor needs delay_after_predecessor_start_us"},
		{FormatAIPerfGraph, `{"kind":"graph","nodes":{"a":{"node_type":"tool","prompt":[]}}}`, `x.jsonl:1: nodes.a.node_type: "tool": only llm nodes exist`},
		{FormatAIPerfGraph, `{"kind":"graph","id":"g","nodes":{"a":{"node_type":"llm","prompt":[{"role":"user","content":"@t"}]}}}` + "\n" + `{"kind":"trace","graph_ref":"h"}`, `x.jsonl:2: graph_ref: "h" names no graph record`},
		{FormatAIPerfGraph, `{"kind":"graph","nodes":{"a":{"node_type":"llm","prompt":[{"role":"user","content":"@t"}]}}}` + "\n" + `{"kind":"trace","id":"x"}`, `x.jsonl:1: nodes.a.prompt[0].content: "@t" names no channel of initial_state in trace "x" (line 2)`},
		{FormatAIPerfGraph, `{"kind":"graph","nodes":{"a":{"node_type":"llm","prompt":[{"role":"user","content":"x"}]}},"edges":[{"source":"a","target":"zz"}]}`, `x.jsonl:1: edges[0].target: "zz" is no node of this graph`},
		{FormatAIPerfGraph, `{"kind":"node"}`, `x.jsonl:1: kind: "node": want graph or trace`},
	}
	for _, tc := range tests {
		last := firstError("x.jsonl", tc.text, Options{Format: tc.format, SkipInvalid: tc.format != FormatAIPerfMulti})
		if last == nil || !strings.HasPrefix(last.Error(), tc.want) {
			t.Errorf("%s:\n got %v\nwant %s…", tc.text, last, tc.want)
		}
	}
	for text, want := range map[string]Format{
		`{"session_id":"a","turns":[{"messages":[{"role":"user","content":"x"}]}]}`: FormatAIPerfDAG,
		`{"session_id":"a","turns":[{"text":"x"}]}`:                                 FormatAIPerfMulti,
		`{"kind":"graph","version":"2.0","nodes":{}}`:                               FormatAIPerfGraph,
	} {
		if f, err := Detect("d.jsonl", strings.NewReader(text)); err != nil || f != want {
			t.Errorf("Detect(%s) = %q, %v; want %s", text, f, err, want)
		}
	}
	for name, want := range map[string]Format{"dag_jsonl": FormatAIPerfDAG, "graph_ir": FormatAIPerfGraph, "aiperf-graph": FormatAIPerfGraph} {
		if f, err := ParseFormat(name); err != nil || f != want {
			t.Errorf("ParseFormat(%s) = %q, %v", name, f, err)
		}
	}
}

// TestAIPerfGraphReadAllOrder: with roots at different START offsets,
// trace.ReadAll sorts the graph's rows by time and still keeps every row
// after the rows it waits for (y waits for a, the latest root).
func TestAIPerfGraphReadAllOrder(t *testing.T) {
	node := `{"node_type":"llm","prompt":[{"role":"user","content":"x"}],"max_tokens":2}`
	text := `{"kind":"graph","nodes":{"a":` + node + `,"b":` + node + `,"c":` + node + `,"y":` + node + `},"edges":[` +
		`{"source":"START","target":"a","min_start_delay_us":5000},{"source":"START","target":"b","min_start_delay_us":1000},` +
		`{"source":"START","target":"c","min_start_delay_us":3000},{"source":"a","target":"y"}]}`
	path := t.TempDir() + "/g.jsonl"
	if err := os.WriteFile(path, []byte(text), 0o644); err != nil {
		t.Fatal(err)
	}
	rows, _, err := ReadAll(path, Options{})
	if err != nil {
		t.Fatal(err)
	}
	seen := map[int64]bool{}
	for _, r := range rows {
		for _, d := range r.WaitFor {
			if !seen[d] {
				t.Errorf("row %d comes before request %d it waits for: %+v", r.RequestID, d, rows)
			}
		}
		seen[r.RequestID] = true
	}
	if len(rows) != 4 || rows[0].Offset != 0 || rows[2].Offset != 4*time.Millisecond {
		t.Errorf("rows %+v; want b, c, a by time, y after a", rows)
	}
}
