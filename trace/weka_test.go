package trace

import (
	"slices"
	"strings"
	"testing"
	"time"
)

// TestWeka reads two Weka conversations: the lead's requests chain; two
// sub-agents spawned after the first request fan out from it and the
// lead's next request joins both; a background sub-agent is joined by
// nobody; local hash ids of different conversations never meet.
func TestWeka(t *testing.T) {
	rows, _, err := ReadAll("testdata/weka.jsonl", Options{})
	if err != nil {
		t.Fatal(err)
	}
	type got struct {
		id      int64
		session string
		waitFor []int64
		offset  time.Duration
		hasOff  bool
		delay   time.Duration
		in      int
		ids     []uint64
	}
	var g []got
	for _, r := range rows {
		if r.BlockSize != 64 || !r.Cumulative {
			t.Errorf("row %d: block %d cumulative %v", r.RequestID, r.BlockSize, r.Cumulative)
		}
		g = append(g, got{r.RequestID, r.SessionID, r.WaitFor, r.Offset, r.HasOffset, r.Delay, r.InputTokens, r.HashIDs})
	}
	slices.SortFunc(g, func(a, b got) int { return int(a.id - b.id) })
	want := []got{
		{0, "trace_0042", nil, 0, true, 0, 200, []uint64{0, 1, 2, 3}},
		{1, "trace_0042/agent_001", []int64{0}, 0, false, 0, 130, []uint64{0, 1, 4}},
		{2, "trace_0042/agent_001", []int64{1}, 0, false, 250 * time.Millisecond, 150, []uint64{0, 1, 4}},
		{3, "trace_0042/agent_002", []int64{0}, 0, false, 0, 100, []uint64{0, 1}},
		{4, "trace_0042", []int64{0, 2, 3}, 12500 * time.Millisecond, true, 400 * time.Millisecond, 260, []uint64{0, 1, 2, 3, 5}},
		{5, "trace_0043", nil, 1500 * time.Millisecond, true, 0, 64, []uint64{6}},
		{6, "trace_0043/bg", []int64{5}, 0, false, 0, 10, []uint64{7}},
	}
	if len(g) != len(want) {
		t.Fatalf("%d rows: %+v", len(g), g)
	}
	for i := range want {
		w, x := want[i], g[i]
		if w.id != x.id || w.session != x.session || !slices.Equal(w.waitFor, x.waitFor) || w.offset != x.offset || w.hasOff != x.hasOff ||
			w.delay != x.delay || w.in != x.in || !slices.Equal(w.ids, x.ids) {
			t.Errorf("row %d:\n got %+v\nwant %+v", i, x, w)
		}
	}
}

func TestWekaErrors(t *testing.T) {
	tests := []struct{ text, want string }{
		{`{"id":"a","block_size":64,"requests":[{"t":0,"in":200,"out":3,"hash_ids":[1,2]}]}`, "x.jsonl:1: requests[0].hash_ids: 2 ids but in 200 needs 4 at block size 64"},
		{`{"id":"a","block_size":64,"requests":[{"in":2,"out":3}]}`, "x.jsonl:1: requests[0].t: missing"},
		{`{"id":"a","block_size":64,"requests":[{"t":0,"in":2},{"type":"subagent","requests":[{"in":0}]}]}`, "x.jsonl:1: requests[1].requests[0].in: 0: want a whole number of input tokens ≥ 1"},
		{`{"id":"a","block_size":64,"requests":[{"t":-1,"in":2}]}`, "x.jsonl:1: requests[0].t: -1 is negative"},
		{`{"id":"a","block_size":64,"requests":[]}`, "x.jsonl:1: requests: missing or empty"},
		{`{"id":"a","block_size":64,"requests":[{"t":0,"in":2}]}` + "\n" + `{"id":"a","block_size":64,"requests":[{"t":0,"in":2}]}`, `x.jsonl:2: id: "a" is already the conversation of line 1`},
		{`{"id":"a","block_size":64,"requests":[{"t":0,"in":2,"hash_ids":"x"}]}`, "x.jsonl:1: requests.hash_ids: want []int64, not a JSON string"},
	}
	for _, tc := range tests {
		last := firstError("x.jsonl", tc.text, Options{Format: FormatWeka})
		if last == nil || !strings.HasPrefix(last.Error(), tc.want) {
			t.Errorf("%s:\n got %v\nwant %s…", tc.text, last, tc.want)
		}
	}
	if f, err := Detect("w.jsonl", strings.NewReader(`{"id":"a","block_size":64,"hash_id_scope":"local","requests":[]}`)); err != nil || f != FormatWeka {
		t.Errorf("Detect = %q, %v", f, err)
	}
}
