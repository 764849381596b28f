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

// Plan is a validated run: the configuration resolved against the trace,
// with every send time that can be known before the run computed. Build
// it with [NewPlan] before anything is sent, then call [Plan.Run] once.
// A Plan is not safe for concurrent use.
type Plan struct {
	cfg  Config
	mode Mode
	// series maps ModeRate's count axis to time for Config.RateSeries;
	// nil without one.
	series *seriesClock
	rows   []trace.Row // nil for a synthetic load

	// Sessions. Items are indices into rows; every kept row is in exactly
	// one session. sessFirst lists each session's first kept turn in start
	// order (fixed schedule: by send time, stably); next links a turn to
	// the session's next kept turn (-1 at the end); nil when no session
	// has two turns. sessOf maps an item to its session index, sessLen a
	// session to its number of kept turns.
	sessFirst []int32
	sessLen   []int32
	sessOf    []int32
	next      []int32
	// due is the fixed-schedule send time of each item with a timestamp,
	// ns after the run's start (before any shift); -1 without one. nil
	// outside the fixed schedule. delay is each item's delay after the
	// previous turn completed (scaled by Speedup in the fixed schedule),
	// -1 without one; nil when next is (no session has a next turn).
	due   []int64
	delay []int64
	kept  int // rows inside the offset window

	// Dependencies (design 0008, dag.go); dag false for a trace without
	// them. succ[succStart[i]:succStart[i+1]] are the items waiting for
	// item i, npred[i] the number of items i waits for; tasks is the
	// number of tasks (connected parts), which are the plan's sessions.
	// The items item i waits for have their slots
	// predStart[i]:predStart[i+1] in runner.depIDs, in wait_for order;
	// succSlot[e] is the slot of edge succ[e].
	dag       bool
	succStart []int32
	succ      []int32
	succSlot  []int32
	predStart []int32
	npred     []int32
	depth     []int32
	tasks     int

	// A streamed plan (NewStreamPlan) has no rows and no per-row arrays:
	// win reads the rows while the run goes, the sessions are the kept
	// rows first, first+1, … (n of them), and a fixed-schedule row's send
	// time is round((offset − zero) / speedup), computed when due.
	win   *trace.Window
	first int64
	n     int64
	zero  time.Duration

	requests  int  // requests planned (warmup included); -1 = bounded by time only
	limit     int  // RequestCount in effect (0 = none)
	wrap      bool // restart the trace's sessions when they run out
	meanTurns float64
	gap       int64 // user-centric turn gap, ns
	users     []userStart
	userRate  float64 // the unsharded UserCentricRate
	mine      []bool  // a shard's rows (nil: every row is the plan's)
}

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

// Config returns the plan's configuration, as given to [NewPlan] or
// [NewSurvey], with a shard's load divided ([Config.Share]).
func (p *Plan) Config() Config { return p.cfg }

// Rows returns the trace rows given to [NewPlan], which the run reads and
// nobody may change until it ends; nil for a synthetic load and for a
// streamed plan, whose rows come through [Plan.Window].
func (p *Plan) Rows() []trace.Row { return p.rows }

// Mode returns the resolved timing mode.
func (p *Plan) Mode() Mode { return p.mode }

// Requests returns the number of requests the plan will issue if nothing
// stops it early (warmup included), or -1 when only time bounds it.
func (p *Plan) Requests() int { return p.requests }

// Senders returns the number of sender goroutines the plan's run starts:
// [Config.SendersOrDefault] of its Config.
func (p *Plan) Senders() int { return p.cfg.SendersOrDefault() }

// Sessions returns the number of sessions in the trace after the offset
// window (a synthetic load: 0); for a trace with dependent requests, the
// number of tasks.
func (p *Plan) Sessions() int {
	if p.dag {
		return p.tasks
	}
	return int(p.sessions())
}

// Dependent reports whether the plan's trace has dependent requests
// (trace.Row.WaitFor), replayed under [Config.Dependencies].
func (p *Plan) Dependent() bool { return p.dag }

// Task returns the 0-based task of item in a plan with dependent requests
// (the connected part of the graph it belongs to), else -1.
func (p *Plan) Task(item int) int {
	if !p.dag || item < 0 || item >= len(p.sessOf) {
		return -1
	}
	return int(p.sessOf[item])
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

// keepWindow marks the rows inside the offset window (inclusive at both
// ends; on the fixed schedule only, and a row without an offset is
// always kept) and counts them in kept. No row kept is an error.
func (p *Plan) keepWindow(fixed bool) ([]bool, error) {
	c := &p.cfg
	keep := make([]bool, len(p.rows))
	for i := range p.rows {
		r := &p.rows[i]
		keep[i] = !fixed || !r.HasOffset ||
			(r.Offset >= c.StartOffset && (c.EndOffset == 0 || r.Offset <= c.EndOffset))
		if keep[i] {
			p.kept++
		}
	}
	if p.kept == 0 {
		return nil, fieldError("StartOffset", "no trace row lies inside {StartOffset} %v .. {EndOffset} %v", c.StartOffset, c.EndOffset)
	}
	return keep, nil
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

// budget sets the request budget from p.kept: the trace, wrapped around
// when a count or a duration asks for more in the load modes.
func (p *Plan) budget() {
	c := &p.cfg
	p.wrap = p.mode != ModeFixed && (c.RequestCount > 0 || c.Duration > 0)
	switch {
	case p.wrap && c.RequestCount > 0:
		p.requests = c.RequestCount + c.WarmupRequests
	case p.wrap:
		p.requests = -1
	default:
		p.requests = p.kept
		if c.RequestCount > 0 {
			p.requests = min(p.kept, c.RequestCount+c.WarmupRequests)
		}
	}
}
