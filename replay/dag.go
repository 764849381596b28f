package replay

import (
	"cmp"
	"fmt"
	"slices"
	"strings"
	"time"

	"github.com/reprise-bench/reprise/trace"
)

// The plan of a trace with dependent requests (design 0008): items are
// the rows, edges come from trace.Row.WaitFor, and each connected part of
// the graph is a task, which takes the place of a session (sessOf,
// sessLen). Roots (items without dependencies) are the fixed schedule's
// starts (sessFirst); a dependent item is released by the completion of
// its last dependency (runner.completeDAG).

// hasDeps reports whether any row waits for another.
func hasDeps(rows []trace.Row) bool {
	for i := range rows {
		if rows[i].WaitFor != nil {
			return true
		}
	}
	return false
}

// buildDAG plans a trace with dependencies on the fixed schedule.
func (p *Plan) buildDAG() error {
	if p.mode != ModeFixed {
		return fieldError("Mode", "the trace has dependent requests (wait_for): they replay on the trace's schedule ({Mode} fixed), "+
			"with {Dependencies} open, closed or strict; %s cannot say when a dependent request is due", p.mode)
	}
	strict := p.cfg.Dependencies == DepsStrict
	keep, err := p.keepWindow(true)
	if err != nil {
		return err
	}
	byID, err := p.requestIndex()
	if err != nil {
		return err
	}
	tasks, err := p.countEdges(keep, byID, strict)
	if err != nil {
		return err
	}
	p.linkEdges(keep, byID, strict)
	if err := p.checkAcyclic(keep); err != nil {
		return err
	}
	p.numberTasks(keep, tasks)
	roots, err := p.scheduleDAG(keep, strict)
	if err != nil {
		return err
	}
	p.sessFirst = roots
	p.meanTurns = float64(p.kept) / float64(p.tasks)
	p.budget()
	return nil
}

// requestIndex maps each row's request id to its index (the last row
// with that id); repeated ids are an error naming up to five.
func (p *Plan) requestIndex() (map[int64]int32, error) {
	byID := make(map[int64]int32, len(p.rows))
	var dup []string
	for i := range p.rows {
		r := &p.rows[i]
		if r.RequestID >= 0 {
			if _, ok := byID[r.RequestID]; ok && len(dup) < 5 {
				dup = append(dup, fmt.Sprintf("line %d (request %d)", r.Line, r.RequestID))
			}
			byID[r.RequestID] = int32(i)
		}
	}
	if dup != nil {
		return nil, fmt.Errorf("the trace's request ids repeat: %s; each request needs its own id", strings.Join(dup, ", "))
	}
	return byID, nil
}

// unionFind is a disjoint-set forest over item indices: each item's
// parent, a root its own.
type unionFind []int32

// newUnionFind returns n items, each a set of its own.
func newUnionFind(n int) unionFind {
	u := make(unionFind, n)
	for i := range u {
		u[i] = int32(i)
	}
	return u
}

// find returns the root of x's set, halving the path on the way.
func (u unionFind) find(x int32) int32 {
	for u[x] != x {
		u[x] = u[u[x]]
		x = u[x]
	}
	return x
}

// union joins the sets of a and b.
func (u unionFind) union(a, b int32) {
	if a, b = u.find(a), u.find(b); a != b {
		u[a] = b
	}
}

// countEdges reads the edges, dependency d → item i, of the kept rows (a
// dependency outside the offset window counts as done): it counts each
// item's predecessors (npred) and each dependency's successors (in
// succStart[d+1]), none under strict, and joins the rows of an edge into
// one task, also under strict (the task is what the rows belong to,
// whatever the timing). A dependency naming no row, or the row itself,
// is an error naming up to five.
func (p *Plan) countEdges(keep []bool, byID map[int64]int32, strict bool) (unionFind, error) {
	n := len(p.rows)
	tasks := newUnionFind(n)
	p.npred = make([]int32, n)
	p.succStart = make([]int32, n+1)
	var unknown []string
	for i := range p.rows {
		if !keep[i] {
			continue
		}
		for _, id := range p.rows[i].WaitFor {
			d, ok := byID[id]
			if !ok {
				if len(unknown) < 5 {
					unknown = append(unknown, fmt.Sprintf("line %d waits for request %d", p.rows[i].Line, id))
				}
				continue
			}
			if d == int32(i) {
				if len(unknown) < 5 {
					unknown = append(unknown, fmt.Sprintf("line %d waits for itself", p.rows[i].Line))
				}
				continue
			}
			if !keep[d] {
				continue
			}
			tasks.union(d, int32(i))
			if !strict {
				p.npred[i]++
				p.succStart[d+1]++
			}
		}
	}
	if unknown != nil {
		return nil, fmt.Errorf("the trace's dependencies name no row: %s; wait_for must list request ids of the trace", strings.Join(unknown, ", "))
	}
	return tasks, nil
}

// linkEdges turns countEdges' counts into offsets (succStart, predStart)
// and fills the successor lists: succ[succStart[d]:succStart[d+1]] are
// d's successors, succSlot the slot of each edge among its successor's
// predecessors. Under strict there are no edges.
func (p *Plan) linkEdges(keep []bool, byID map[int64]int32, strict bool) {
	n := len(p.rows)
	for i := range n {
		p.succStart[i+1] += p.succStart[i]
	}
	p.succ = make([]int32, p.succStart[n])
	p.succSlot = make([]int32, p.succStart[n])
	p.predStart = make([]int32, n+1)
	for i, k := range p.npred {
		p.predStart[i+1] = p.predStart[i] + k
	}
	if strict {
		return
	}
	fill := slices.Clone(p.succStart[:n])
	for i := range p.rows {
		if !keep[i] {
			continue
		}
		slot := p.predStart[i]
		for _, id := range p.rows[i].WaitFor {
			if d, ok := byID[id]; ok && d != int32(i) && keep[d] {
				p.succ[fill[d]], p.succSlot[fill[d]] = int32(i), slot
				fill[d]++
				slot++
			}
		}
	}
}

// numberTasks numbers the tasks (tasks' sets) in order of their first
// kept row: sessOf, sessLen and the task count.
func (p *Plan) numberTasks(keep []bool, tasks unionFind) {
	p.sessOf = make([]int32, len(p.rows))
	taskOf := map[int32]int32{}
	for i := range p.rows {
		if !keep[i] {
			continue
		}
		root := tasks.find(int32(i))
		t, ok := taskOf[root]
		if !ok {
			t = int32(len(p.sessLen))
			taskOf[root] = t
			p.sessLen = append(p.sessLen, 0)
		}
		p.sessOf[i] = t
		p.sessLen[t]++
	}
	p.tasks = len(p.sessLen)
}

// scheduleDAG sets the times: every kept row with a timestamp is due at
// it (due); a dependent row also waits Delay + ToolWait after its last
// dependency (delay). It returns the roots, the kept rows that wait for
// nothing, by due time; each needs a timestamp.
func (p *Plan) scheduleDAG(keep []bool, strict bool) ([]int32, error) {
	c := &p.cfg
	n := len(p.rows)
	var roots []int32
	var missing []string
	zero := time.Duration(-1)
	p.delay = make([]int64, n)
	for i := range p.rows {
		r := &p.rows[i]
		p.delay[i] = -1
		if !keep[i] {
			continue
		}
		if d := r.Delay + r.ToolWait; r.HasDelay || r.ToolWait > 0 {
			p.delay[i] = c.turnDelay(scaleTrace(d, c.Speedup))
		}
		if p.npred[i] > 0 {
			continue
		}
		roots = append(roots, int32(i))
		if !r.HasOffset {
			if len(missing) < 5 {
				missing = append(missing, fmt.Sprintf("line %d", r.Line))
			}
			continue
		}
		if zero < 0 || r.Offset < zero {
			zero = r.Offset
		}
	}
	if missing != nil {
		if strict {
			return nil, fieldError("Dependencies", "{Dependencies} strict sends every row at its timestamp, and these rows have none: %s; "+
				"use {Dependencies} open or closed", strings.Join(missing, ", "))
		}
		return nil, fmt.Errorf("a row that waits for nothing needs a timestamp; without one: %s", strings.Join(missing, ", "))
	}
	if !c.AutoOffset {
		zero = c.StartOffset
	}
	p.due = make([]int64, n)
	for i := range p.rows {
		p.due[i] = -1
		if r := &p.rows[i]; keep[i] && r.HasOffset {
			p.due[i] = scaleTrace(max(r.Offset-zero, 0), c.Speedup)
		}
	}
	slices.SortStableFunc(roots, func(a, b int32) int { return cmp.Compare(p.due[a], p.due[b]) })
	return roots, nil
}

// checkAcyclic reports a cycle among the kept rows' edges (possible only
// for rows built in code: the readers accept dependencies on earlier
// lines only), by Kahn's algorithm, and sets each item's depth (its
// longest path from a root) on the way.
func (p *Plan) checkAcyclic(keep []bool) error {
	indeg := slices.Clone(p.npred)
	p.depth = make([]int32, len(indeg))
	queue := make([]int32, 0, len(indeg))
	for i, d := range indeg {
		if keep[i] && d == 0 {
			queue = append(queue, int32(i))
		}
	}
	seen := 0
	for len(queue) > 0 {
		it := queue[len(queue)-1]
		queue = queue[:len(queue)-1]
		seen++
		for _, s := range p.succ[p.succStart[it]:p.succStart[it+1]] {
			p.depth[s] = max(p.depth[s], p.depth[it]+1)
			if indeg[s]--; indeg[s] == 0 {
				queue = append(queue, s)
			}
		}
	}
	if seen == p.kept {
		return nil
	}
	for i, d := range indeg {
		if keep[i] && d > 0 {
			return fmt.Errorf("the trace's dependencies form a cycle through line %d; a request cannot wait for itself", p.rows[i].Line)
		}
	}
	return nil
}

// depDue computes when dependent item c is due once its last dependency
// completed at now (run ns), and the part of that caused by the
// dependencies (Job.SessionDelayNS). With t its own time and
// d = (Delay + ToolWait)/Speedup:
//
//	open:   max(t, now + d), the part after t caused by the dependencies;
//	        now + d without t
//	closed: now + d
func (p *Plan) depDue(c int32, now, shift int64) (due, sd int64) {
	ready := now + max(p.delay[c], 0)
	if p.cfg.Dependencies != DepsClosed && p.due[c] >= 0 {
		t := p.due[c] + shift
		if ready > t {
			return ready, ready - t
		}
		return t, 0
	}
	return ready, 0
}
