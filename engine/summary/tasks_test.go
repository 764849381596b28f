package summary

import (
	"testing"

	"github.com/reprise-bench/reprise/engine/record"
)

// TestTasks: one task of a root, two children released by it and a join
// released by the child that ended last; a second task of one failed
// request. Completion is first send to last end; the critical path walks
// back from the last response through the releasing requests.
func TestTasks(t *testing.T) {
	ms := int64(1e6)
	req := func(id uint64, task int64, by uint64, level int32, sent, end int64, ok bool) record.Request {
		r := record.Request{RequestID: id, Task: task, ReleasedBy: by, Level: level, SentNS: sent * ms, EndNS: end * ms,
			E2ENS: (end - sent) * ms, TTFTNS: ms * int64(level), ServerCachedTokens: -1, ExpectedCachedTokens: -1}
		if !ok {
			r.ErrorKind, r.E2ENS, r.TTFTNS = record.ErrHTTPStatus, 0, 0
		}
		return r
	}
	recs := []record.Request{
		req(0, 1, 0, 1, 100, 110, true),
		req(1, 1, 1, 2, 115, 125, true),
		req(2, 1, 1, 2, 112, 130, true),
		req(3, 1, 3, 3, 135, 140, true),
		req(4, 2, 0, 1, 100, 101, false),
		{RequestID: 5, SentNS: 1, EndNS: 2, E2ENS: 1}, // no task
	}
	s := Summarize(recs, RunInfo{}, Options{})
	ts := s.Tasks
	if ts == nil || ts.Count != 2 || ts.Completed != 1 {
		t.Fatalf("tasks %+v", ts)
	}
	// Task 1: 100 → 140 = 40 ms; path 3 ← 2 ← 0: 5 + 18 + 10 = 33 ms of
	// server time, 7 ms waiting. Task 2: 1 ms, all server.
	if ts.Completion.Max != 40 || ts.Completion.Min != 1 || ts.CriticalServer.Max != 33 || ts.CriticalWait.Max != 7 || ts.CriticalWait.Min != 0 {
		t.Errorf("completion %+v server %+v wait %+v", ts.Completion, ts.CriticalServer, ts.CriticalWait)
	}
	for d, n := range map[int32]int{0: 1, 1: 2, 2: 1} {
		if st := ts.TTFTByDepth[d]; st == nil || st.Count != n || st.Avg != float64(d+1) {
			t.Errorf("depth %d: %+v", d, st)
		}
	}
	js, err := s.JSON()
	if err != nil {
		t.Fatal(err)
	}
	for _, k := range []string{`"tasks"`, `"task_completion_time"`, `"critical_path_wait_time"`, `"time_to_first_token_by_depth"`} {
		if !contains(js, k) {
			t.Errorf("summary.json lacks %s", k)
		}
	}
	if Summarize(recs[5:], RunInfo{}, Options{}).Tasks != nil {
		t.Error("a run without tasks has a tasks section")
	}
}

func contains(b []byte, s string) bool {
	for i := 0; i+len(s) <= len(b); i++ {
		if string(b[i:i+len(s)]) == s {
			return true
		}
	}
	return false
}
