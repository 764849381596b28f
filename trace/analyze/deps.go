package analyze

import (
	"github.com/reprise-bench/reprise/trace"
)

// Dependencies describes the dependent requests of a trace (rows with
// trace.Row.WaitFor, design 0008); nil in a report when no row waits for
// another. A task is one connected part of the dependency graph.
type Dependencies struct {
	Tasks         int64 `json:"tasks"`
	DependentRows int64 `json:"dependent_rows"`
	// Depth is the number of levels of each task (1: a single request);
	// the longest chain of requests, the critical path in requests.
	Depth Stats `json:"depth"`
	// TaskSize is the number of requests per task.
	TaskSize Stats `json:"task_size"`
	// FanOut is the number of dependents of each request that has any;
	// FanIn the number of dependencies of each dependent row.
	FanOut Stats `json:"fan_out"`
	FanIn  Stats `json:"fan_in"`
	// CriticalPathWait is, per task, the largest sum of think and tool
	// time along a chain from a root (seconds): the time no server can
	// save.
	CriticalPathWait Stats `json:"critical_path_wait_seconds"`
	// ThinkTime and ToolTime are the Delay and ToolWait of the dependent
	// rows (seconds).
	ThinkTime Stats `json:"think_time_seconds"`
	ToolTime  Stats `json:"tool_time_seconds"`
	// Prefix reuse in dependency order: the tokens of each row's leading
	// blocks that one of its ancestors (the rows it waits for, and theirs)
	// sent, which a server holds whatever the timing; over the input
	// tokens of rows with hash ids. 0 without hash ids.
	AncestorHitTokens     int64   `json:"ancestor_hit_tokens"`
	AncestorTokenHitRatio float64 `json:"ancestor_token_hit_ratio"`
}

// hasDeps reports whether any row waits for another.
func hasDeps(rows []trace.Row) bool {
	for i := range rows {
		if rows[i].WaitFor != nil {
			return true
		}
	}
	return false
}

// dependencies analyses the dependency graph of rows, which must list
// every row after the rows it waits for (as trace.ReadAll returns them).
// A dependency on an id no earlier row has is ignored.
func dependencies(rows []trace.Row) *Dependencies {
	if !hasDeps(rows) {
		return nil
	}
	d := &Dependencies{}
	n := len(rows)
	byID := make(map[int64]int, n)
	parent := make([]int, n)
	level := make([]int64, n)
	wait := make([]int64, n) // ns along the worst chain to the row
	fanOut := make([]int64, n)
	deps := make([][]int, n)
	find := func(x int) int {
		for parent[x] != x {
			parent[x] = parent[parent[x]]
			x = parent[x]
		}
		return x
	}
	fanIn := newHist(1, 1<<12)
	think, tool := newHist(1e6, 1<<20), newHist(1e6, 1<<20)
	var inTok int64
	for i := range rows {
		r := &rows[i]
		parent[i] = i
		level[i] = 1
		for _, id := range r.WaitFor {
			j, ok := byID[id]
			if !ok {
				continue
			}
			deps[i] = append(deps[i], j)
			fanOut[j]++
			level[i] = max(level[i], level[j]+1)
			wait[i] = max(wait[i], wait[j])
			if a, b := find(j), find(i); a != b {
				parent[a] = b
			}
		}
		if r.WaitFor != nil {
			d.DependentRows++
			fanIn.add(int64(len(deps[i])))
			think.add(int64(r.Delay))
			tool.add(int64(r.ToolWait))
			wait[i] += int64(r.Delay + r.ToolWait)
		}
		if r.RequestID >= 0 {
			byID[r.RequestID] = i
		}
		if len(r.HashIDs) > 0 && r.BlockSize > 0 {
			inTok += int64(r.InputTokens)
			d.AncestorHitTokens += ancestorHit(rows, deps, i)
		}
	}
	type task struct{ size, depth, wait int64 }
	tasks := map[int]*task{}
	fo := newHist(1, 1<<12)
	for i := range rows {
		t := tasks[find(i)]
		if t == nil {
			t = &task{}
			tasks[find(i)] = t
		}
		t.size++
		t.depth = max(t.depth, level[i])
		t.wait = max(t.wait, wait[i])
		if fanOut[i] > 0 {
			fo.add(fanOut[i])
		}
	}
	size, depth, cw := newHist(1, 1<<16), newHist(1, 1<<16), newHist(1e6, 1<<20)
	for _, t := range tasks {
		size.add(t.size)
		depth.add(t.depth)
		cw.add(t.wait)
	}
	d.Tasks = int64(len(tasks))
	d.Depth, d.TaskSize = depth.sorted().stats(1), size.sorted().stats(1)
	d.FanOut, d.FanIn = fo.sorted().stats(1), fanIn.sorted().stats(1)
	d.CriticalPathWait = cw.sorted().stats(1e9)
	d.ThinkTime, d.ToolTime = think.sorted().stats(1e9), tool.sorted().stats(1e9)
	d.AncestorTokenHitRatio = ratio(d.AncestorHitTokens, inTok)
	return d
}

// ancestorHit returns the tokens of row i's leading blocks that an
// ancestor sent: hash ids are chained, so that is the longest common
// prefix of its ids with any ancestor's, in blocks, capped at its length.
func ancestorHit(rows []trace.Row, deps [][]int, i int) int64 {
	ids := rows[i].HashIDs
	best := 0
	seen := map[int]bool{}
	stack := append([]int(nil), deps[i]...)
	for len(stack) > 0 && best < len(ids) {
		j := stack[len(stack)-1]
		stack = stack[:len(stack)-1]
		if seen[j] {
			continue
		}
		seen[j] = true
		a := rows[j].HashIDs
		k := 0
		for k < len(ids) && k < len(a) && ids[k] == a[k] {
			k++
		}
		best = max(best, k)
		stack = append(stack, deps[j]...)
	}
	return min(int64(best)*int64(rows[i].BlockSize), int64(rows[i].InputTokens))
}
