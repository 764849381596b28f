package replay

import (
	"errors"
	"fmt"
	"math"
	"strings"
	"time"

	"github.com/reprise-bench/reprise/trace"
)

// ErrNotStreamable is wrapped by [Survey.Streamable] when a trace must be
// loaded whole ([NewPlan]) rather than read while the run goes.
var ErrNotStreamable = errors.New("the trace cannot be replayed while it is read")

// DefaultWindowRows is the least number of rows a streamed plan's window
// holds; it holds at least four rows per sender.
const DefaultWindowRows = trace.DefaultWindowSize

// Survey gathers, one row at a time and in file order, what planning a
// trace needs when the trace is not held in memory: the row count,
// timestamps, the rows of the offset window, whether the rows are sorted
// and whether any row belongs to a multi-turn session. Its memory does not
// depend on the number of rows. Feed it every row of a first pass
// ([trace.Scan]), then call [Survey.Streamable] and [NewStreamPlan].
// A Survey is not safe for concurrent use.
type Survey struct {
	cfg      Config
	rows     int64
	hasTS    bool
	multi    bool
	unsorted bool
	prev     time.Duration
	hasPrev  bool
	// rows without a timestamp: the first few lines, and how many
	missing  []string
	nMissing int64
	// rows with a timestamp before StartOffset (lo) and up to
	// EndOffset (hi): in a sorted trace the window is rows [lo, hi).
	lo, hi int64
	zero   time.Duration // smallest offset inside the window; -1 none
}

// NewSurvey returns an empty Survey for a run of cfg.
func NewSurvey(cfg Config) *Survey { return &Survey{cfg: cfg, zero: -1} }

// Add accounts for row, the next row of the trace in file order. It keeps
// nothing of row.
func (s *Survey) Add(row *trace.Row) {
	s.rows++
	if row.Turn > 0 || row.ParentID >= 0 || row.WaitFor != nil {
		// A later turn (or, conservatively, any row with a parent or a
		// dependency): sessions of two or more turns and dependent
		// requests need the plan's per-row arrays.
		s.multi = true
	}
	if !row.HasOffset {
		if len(s.missing) < 5 {
			s.missing = append(s.missing, fmt.Sprintf("line %d (session %q)", row.Line, row.SessionID))
		}
		s.nMissing++
		return
	}
	s.hasTS = true
	if s.hasPrev && row.Offset < s.prev {
		s.unsorted = true
	}
	s.prev, s.hasPrev = row.Offset, true
	c := &s.cfg
	if row.Offset < c.StartOffset {
		s.lo++
	}
	if c.EndOffset == 0 || row.Offset <= c.EndOffset {
		s.hi++
		if row.Offset >= c.StartOffset && (s.zero < 0 || row.Offset < s.zero) {
			s.zero = row.Offset
		}
	}
}

// Rows returns the number of rows added.
func (s *Survey) Rows() int64 { return s.rows }

// Streamable reports whether [NewStreamPlan] can plan the trace: nil, or
// an error wrapping ErrNotStreamable that says why the trace must be
// loaded ([NewPlan]) instead: rows out of arrival order (loading sorts
// them) or multi-turn sessions (whose later turns leave in completion
// order, not file order).
func (s *Survey) Streamable() error {
	switch {
	case s.cfg.Shard.Sharded():
		return fmt.Errorf("%w: a shard (Shard %s) picks its sessions from the whole trace", ErrNotStreamable, s.cfg.Shard)
	case s.unsorted:
		return fmt.Errorf("%w: its rows are not sorted by arrival", ErrNotStreamable)
	case s.multi:
		return fmt.Errorf("%w: it has multi-turn sessions", ErrNotStreamable)
	case s.rows > math.MaxInt32:
		return fmt.Errorf("%w: it has more than %d rows", ErrNotStreamable, math.MaxInt32)
	}
	return nil
}

// NewStreamPlan plans a run of the Survey's Config over the trace the
// survey saw, without holding it: the run reads the rows again through a
// [trace.Window] (see [Plan.Window]) that open re-opens the trace for. It
// reports the same problems, with the same messages, as [NewPlan] would
// for the trace's rows, and also every reason of [Survey.Streamable].
//
// Positions (the jobs' Item) are the rows' indices as [trace.ReadAll]
// returns them; when the run goes round the trace more than once they
// count on (Item − first kept row) mod [Plan.Sessions] is then the
// session), and the window reads the trace again.
func NewStreamPlan(sv *Survey, open func() (*trace.Reader, error)) (*Plan, error) {
	cfg := sv.cfg
	var errs []error
	if err := cfg.Validate(); err != nil {
		errs = append(errs, err)
	}
	mode, err := cfg.ModeFor(true, sv.hasTS)
	if err != nil {
		errs = append(errs, err)
	}
	if sv.rows == 0 {
		errs = append(errs, errors.New("the trace has no rows"))
	}
	if len(errs) > 0 {
		return nil, errors.Join(errs...)
	}
	if err := sv.Streamable(); err != nil {
		return nil, err
	}
	p := &Plan{cfg: cfg, mode: mode, limit: cfg.RequestCount, meanTurns: 1}
	p.series = seriesFor(cfg)
	c := &p.cfg
	first, n := int64(0), sv.rows
	if mode == ModeFixed {
		// Kept: the rows inside the window, and rows without a timestamp
		// (which the fixed schedule then rejects, as NewPlan does).
		first, n = sv.lo, sv.hi-sv.lo+sv.nMissing
		if n <= 0 {
			return nil, fieldError("StartOffset", "no trace row lies inside {StartOffset} %v .. {EndOffset} %v", c.StartOffset, c.EndOffset)
		}
		if sv.nMissing > 0 {
			return nil, fieldError("Mode", "fixed schedule: the first turn of every session needs a timestamp; without one: %s; "+
				"use {Mode} rate or concurrency to ignore timestamps", strings.Join(sv.missing, ", "))
		}
		p.zero = sv.zero
		if !c.AutoOffset {
			p.zero = c.StartOffset
		}
	}
	if mode == ModeUserCentric {
		return nil, fieldError("UserCentricRate", "{UserCentricRate} needs a trace with multi-turn sessions (every session here has one turn)")
	}
	p.kept = int(n)
	p.first, p.n = first, n
	p.budget()
	p.win = trace.NewWindow(trace.WindowConfig{Open: open, First: first, Count: n,
		Wrap: p.wrap && (p.requests < 0 || p.requests > p.kept), Size: max(DefaultWindowRows, 4*p.Senders())})
	return p, nil
}

// Window returns the window a streamed plan ([NewStreamPlan]) reads its
// rows through, or nil for a plan over loaded rows or a synthetic load.
// A job's row is Window().Row(int64(job.Item)) while its Handle (or Skip)
// runs; the plan releases each job's position when its Handle (or Skip)
// returns, and a handler may release it earlier. Run closes the window
// when it returns.
func (p *Plan) Window() *trace.Window { return p.win }

// Close releases what a plan that will not run holds (a streamed plan's
// open trace); Run does it itself. It is safe to call more than once.
func (p *Plan) Close() error {
	if p.win != nil {
		return p.win.Close()
	}
	return nil
}

// synthetic reports a plan without a trace.
func (p *Plan) synthetic() bool { return p.rows == nil && p.win == nil }

// fixedItem returns the item of the k-th fixed-schedule session start.
func (p *Plan) fixedItem(k int) int32 {
	if p.win != nil {
		return int32(p.first + int64(k))
	}
	return p.sessFirst[k]
}

// fixedDue returns the fixed-schedule send time of the k-th session start
// (run ns, before any shift); false when a streamed plan cannot read its
// row (see trace.Window.Err). A streamed plan reads the row's offset from
// the window: the row is not dispatched yet, so it is there (or the
// reader is behind, and this waits for it).
func (p *Plan) fixedDue(k int) (int64, bool) {
	if p.win == nil {
		return p.due[p.sessFirst[k]], true
	}
	row := p.win.Row(p.first + int64(k))
	if row == nil {
		return 0, false
	}
	return scaleTrace(row.Offset-p.zero, p.cfg.Speedup), true
}

// release tells a streamed plan's window that item's row is no longer
// needed by the scheduler.
func (p *Plan) release(item int32) {
	if p.win != nil {
		p.win.Release(int64(item))
	}
}
