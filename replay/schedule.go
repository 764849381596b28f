package replay

import (
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

// sessions returns the number of sessions of a trace plan.
func (p *Plan) sessions() int64 {
	if p.win != nil {
		return p.n
	}
	return int64(len(p.sessFirst))
}

// tickTime is the run time in ns of the count-axis point x of ModeRate's
// arrivals: under RateSeries, or RequestRate with its RateRamp.
func (p *Plan) tickTime(x float64) int64 {
	if p.series != nil {
		return p.series.time(x)
	}
	return rampTime(x, p.cfg.RequestRate, p.cfg.RateRamp)
}
