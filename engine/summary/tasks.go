package summary

import (
	"slices"
	"strconv"

	"github.com/reprise-bench/reprise/engine/record"
)

// addTask accounts for a measured record of a task.
func (a *Accumulator) addTask(r *record.Request) {
	if a.tasks == nil {
		a.tasks, a.taskNodes, a.ttftDepth = map[int64]*taskAcc{}, map[int64]taskNode{}, map[int32][]float64{}
	}
	t := a.tasks[r.Task]
	if t == nil {
		t = &taskAcc{lastReq: -1}
		a.tasks[r.Task] = t
	}
	if !r.OK() {
		t.failed = true
	}
	if r.SentNS == 0 || r.ErrorKind == record.ErrNotDelivered {
		return
	}
	end := r.EndNS
	if r.OK() && r.E2ENS > 0 {
		end = r.SentNS + r.E2ENS
	}
	if t.first == 0 || r.SentNS < t.first {
		t.first = r.SentNS
	}
	if end > t.last {
		t.last, t.lastReq = end, int64(r.RequestID)
	}
	a.taskNodes[int64(r.RequestID)] = taskNode{parent: int64(r.ReleasedBy) - 1, sent: r.SentNS, end: end}
	if r.OK() && r.TTFTNS > 0 && r.Level > 0 {
		a.ttftDepth[r.Level-1] = append(a.ttftDepth[r.Level-1], float64(r.TTFTNS)/1e6)
	}
}

// taskSummary computes Tasks; nil when no record had a task.
func (a *Accumulator) taskSummary() *Tasks {
	if len(a.tasks) == 0 {
		return nil
	}
	ts := &Tasks{Count: len(a.tasks), TTFTByDepth: map[int32]*Stats{}}
	var comp, server, wait []float64
	for _, t := range a.tasks {
		if !t.failed {
			ts.Completed++
		}
		if t.lastReq < 0 {
			continue
		}
		total := float64(t.last - t.first)
		var busy float64
		// Walk the critical path back from the last response; the walk is
		// bounded by the task's size (parents are earlier requests).
		for id, n := t.lastReq, 0; id >= 0 && n <= len(a.taskNodes); n++ {
			node, ok := a.taskNodes[id]
			if !ok {
				break
			}
			busy += float64(node.end - node.sent)
			id = node.parent
		}
		comp = append(comp, total/1e6)
		server = append(server, busy/1e6)
		wait = append(wait, (total-busy)/1e6)
	}
	ms := func(v []float64) Stats {
		s := Compute(v)
		s.Unit = "ms"
		return s
	}
	ts.Completion, ts.CriticalServer, ts.CriticalWait = ms(comp), ms(server), ms(wait)
	for d, v := range a.ttftDepth {
		s := ms(slices.Clone(v))
		ts.TTFTByDepth[d] = &s
	}
	return ts
}

// tasksJSON is the "tasks" object of summary.json.
func (ts *Tasks) json() map[string]any {
	depth := map[string]*Stats{}
	for d, s := range ts.TTFTByDepth {
		depth[strconv.Itoa(int(d))] = s
	}
	return map[string]any{
		"task_count":                   scalar{"tasks", float64(ts.Count)},
		"completed_task_count":         scalar{"tasks", float64(ts.Completed)},
		"task_completion_time":         ts.Completion,
		"critical_path_server_time":    ts.CriticalServer,
		"critical_path_wait_time":      ts.CriticalWait,
		"time_to_first_token_by_depth": depth,
	}
}
