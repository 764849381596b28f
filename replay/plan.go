package replay

import (
	"cmp"
	"errors"
	"fmt"
	"slices"
	"strings"
	"time"

	"github.com/reprise-bench/reprise/trace"
)

// NewPlan validates cfg, resolves its mode against rows and plans the run.
// rows must be sorted by Offset (as trace.ReadAll returns them) and must
// not change until the run ends; nil means a synthetic load whose items
// are the indices 0, 1, 2, …. Every problem is reported at once
// (errors.Join), naming the row's line where one is at fault.
func NewPlan(cfg Config, rows []trace.Row) (*Plan, error) {
	var errs []error
	if err := cfg.Validate(); err != nil {
		errs = append(errs, err)
	}
	traceRows := rows != nil
	hasTS := false
	for i := range rows {
		if rows[i].HasOffset {
			hasTS = true
			break
		}
	}
	mode, err := cfg.ModeFor(traceRows, hasTS)
	if err != nil {
		errs = append(errs, err)
	}
	if traceRows && len(rows) == 0 {
		errs = append(errs, errors.New("the trace has no rows"))
	}
	if len(errs) > 0 {
		return nil, errors.Join(errs...)
	}
	share := cfg.Share()
	p := &Plan{cfg: share, mode: mode, rows: rows, limit: share.RequestCount, userRate: cfg.UserCentricRate}
	p.series = seriesFor(share)
	if hasDeps(rows) {
		if cfg.Shard.Sharded() {
			return nil, fieldError("Shard", "{Shard}: a trace of dependent requests (wait_for) cannot be sharded")
		}
		p.dag = true
		if err := p.buildDAG(); err != nil {
			return nil, err
		}
		return p, nil
	}
	if err := p.build(); err != nil {
		return nil, err
	}
	return p, nil
}

// build plans the rows: the kept rows, their sessions and turns, the
// sessions' starts by the mode, this shard's part and the budget.
func (p *Plan) build() error {
	if p.rows == nil {
		p.buildSynthetic()
		return nil
	}
	fixed := p.mode == ModeFixed
	keep, err := p.keepWindow(fixed)
	if err != nil {
		return err
	}
	items, start := p.groupSessions(keep)
	nsess := len(p.sessLen)
	p.linkTurns(keep, items, start, fixed)
	p.meanTurns = float64(p.kept) / float64(nsess)
	firsts := make([]int32, nsess)
	for s := range nsess {
		firsts[s] = items[start[s]]
	}
	if err := p.planStarts(firsts); err != nil {
		return err
	}
	if err := p.keepShard(); err != nil {
		return err
	}
	p.budget()
	return nil
}

// buildSynthetic sizes a plan without trace rows: DefaultRequestCount
// requests when neither a count nor a duration bounds it, requests the
// count plus the warmup (-1: until the duration ends).
func (p *Plan) buildSynthetic() {
	c := &p.cfg
	if p.limit == 0 && c.Duration == 0 {
		p.limit = DefaultRequestCount
	}
	p.requests = -1
	if p.limit > 0 {
		p.requests = p.limit + c.WarmupRequests
	}
}

// groupSessions sets sessOf and sessLen: rows with the same SessionID
// are a session, a row without SessionID is a session of its own. It
// returns the members of session s as items[start[s]:start[s+1]], one
// flat array (4 bytes per row, not a slice per session), in row order.
func (p *Plan) groupSessions(keep []bool) (items, start []int32) {
	p.sessOf = make([]int32, len(p.rows))
	bySession := map[string]int32{}
	for i := range p.rows {
		if !keep[i] {
			continue
		}
		id := p.rows[i].SessionID
		s, ok := int32(len(p.sessLen)), false
		if id != "" {
			if s, ok = bySession[id]; !ok {
				s = int32(len(p.sessLen))
				bySession[id] = s
			}
		}
		if !ok {
			p.sessLen = append(p.sessLen, 0)
		}
		p.sessLen[s]++
		p.sessOf[i] = s
	}
	p.sessLen = slices.Clip(p.sessLen)
	nsess := len(p.sessLen)
	start = make([]int32, nsess+1)
	for s, n := range p.sessLen {
		start[s+1] = start[s] + n
	}
	items = make([]int32, start[nsess])
	fill := slices.Clone(start[:nsess])
	for i := range p.rows {
		if keep[i] {
			s := p.sessOf[i]
			items[fill[s]] = int32(i)
			fill[s]++
		}
	}
	return items, start
}

// linkTurns orders each session's members by Turn then position and,
// when some session has several turns, links each turn to the next
// (next) and sets the delay before it (delay; scaled by the speedup on
// the fixed schedule).
func (p *Plan) linkTurns(keep []bool, items, start []int32, fixed bool) {
	c := &p.cfg
	nsess := len(p.sessLen)
	members := func(s int) []int32 { return items[start[s]:start[s+1]] }
	multi := false
	for s := range nsess {
		if m := members(s); len(m) > 1 {
			slices.SortStableFunc(m, func(a, b int32) int { return cmp.Compare(p.rows[a].Turn, p.rows[b].Turn) })
			multi = true
		}
	}
	if !multi {
		return
	}
	p.next = make([]int32, len(p.rows))
	for i := range p.next {
		p.next[i] = -1
	}
	for s := range nsess {
		m := members(s)
		for k := 0; k+1 < len(m); k++ {
			p.next[m[k]] = m[k+1]
		}
	}
	// A turn's delay is read only for a session's next turn.
	p.delay = make([]int64, len(p.rows))
	for i := range p.rows {
		p.delay[i] = -1
		if r := &p.rows[i]; keep[i] && r.HasDelay {
			d := r.Delay
			if fixed {
				p.delay[i] = c.turnDelay(scaleTrace(d, c.Speedup))
			} else {
				p.delay[i] = c.turnDelay(int64(d))
			}
		}
	}
}

// planStarts schedules the sessions' first turns (firsts) by the mode:
// the fixed schedule, the user-centric users, or in session order.
func (p *Plan) planStarts(firsts []int32) error {
	c := &p.cfg
	switch p.mode {
	case ModeFixed:
		return p.planFixed(firsts)
	case ModeUserCentric:
		if p.meanTurns < 2 && !slices.ContainsFunc(p.sessLen, func(n int32) bool { return n >= 2 }) {
			return fieldError("UserCentricRate", "{UserCentricRate} needs a trace with multi-turn sessions (every session here has one turn)")
		}
		p.sessFirst = firsts
		p.gap = int64(float64(c.NumUsers) / c.UserCentricRate * 1e9)
		p.users = userCentricStart(c.NumUsers, c.UserCentricRate, p.meanTurns)
		if d := userShift(c.Shard, p.userRate); d > 0 {
			for i := range p.users {
				p.users[i].At += d
			}
		}
	default:
		p.sessFirst = firsts
	}
	return nil
}

// planFixed computes every timestamped row's send time: target =
// (timestamp − zero) / speedup, where zero is the smallest kept first-turn
// timestamp with AutoOffset, else StartOffset. Every session's first
// turn must have a timestamp.
func (p *Plan) planFixed(firsts []int32) error {
	c := &p.cfg
	var missing []string
	zero := time.Duration(-1)
	for _, it := range firsts {
		r := &p.rows[it]
		if !r.HasOffset {
			if len(missing) < 5 {
				missing = append(missing, fmt.Sprintf("line %d (session %q)", r.Line, r.SessionID))
			}
			continue
		}
		if zero < 0 || r.Offset < zero {
			zero = r.Offset
		}
	}
	if missing != nil {
		return fieldError("Mode", "fixed schedule: the first turn of every session needs a timestamp; without one: %s; "+
			"use {Mode} rate or concurrency to ignore timestamps", strings.Join(missing, ", "))
	}
	if !c.AutoOffset {
		zero = c.StartOffset
	}
	p.due = make([]int64, len(p.rows))
	for i := range p.rows {
		p.due[i] = -1
		if r := &p.rows[i]; r.HasOffset && r.Offset >= zero {
			p.due[i] = scaleTrace(r.Offset-zero, c.Speedup)
		} else if r.HasOffset {
			// Only reachable for rows outside the window (dropped).
			p.due[i] = 0
		}
	}
	p.sessFirst = slices.Clone(firsts)
	slices.SortStableFunc(p.sessFirst, func(a, b int32) int { return cmp.Compare(p.due[a], p.due[b]) })
	return nil
}
