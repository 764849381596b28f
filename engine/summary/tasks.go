package summary

import (
	"slices"
	"strconv"

	"github.com/reprise-bench/reprise/engine/record"
)

// Tasks are the per-task statistics of a run whose trace has dependent
// requests (design 0008; records with a task_id): a task is one
// connected part of the dependency graph, e.g. an agent's request with
// its sub-agents. Times are in ms.
type Tasks struct {
	// Count is the number of tasks with a measured request; Completed
	// those whose every measured request succeeded.
	Count     int
	Completed int
	// Completion is first send to last response end of each task.
	Completion Stats
	// CriticalServer is the server's share of each task's critical path:
	// the sum of sent-to-end times of the chain of requests that released
	// one another (parent_request_id) up to the task's last response.
	// CriticalWait is the rest of the completion time: dependencies'
	// delays, think and tool time, and the client's scheduling.
	CriticalServer Stats
	CriticalWait   Stats
	// TTFTByDepth holds the TTFT of the successful requests of each depth
	// (0 = roots).
	TTFTByDepth map[int32]*Stats
}

// taskAcc is what the Accumulator keeps per task, and taskNode per
// request of a task (for the critical path).
type taskAcc struct {
	first, last int64 // first send, last end (Unix ns)
	lastReq     int64 // request_id of the request that ended last
	failed      bool
}

type taskNode struct {
	parent    int64
	sent, end int64
}

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
