package engine

import (
	"context"
	"errors"
	"fmt"
	"io"
	"log/slog"
	"math"
	"math/rand/v2"
	"sync"
	"sync/atomic"
	"time"

	"github.com/reprise-bench/reprise/engine/adapter"
	"github.com/reprise-bench/reprise/engine/record"
	"github.com/reprise-bench/reprise/engine/summary"
	"github.com/reprise-bench/reprise/replay"
	"github.com/reprise-bench/reprise/trace"
)

// Defaults of [RunConfig].
const (
	// DefaultLookahead is how many requests are built ahead of the
	// highest one sent (at least twice the number of senders).
	DefaultLookahead = 1024
	// DefaultLookaheadBytes bounds the bodies built ahead: long prompts
	// (Mooncake averages 12k tokens, ~70 KB per body) would otherwise hold
	// tens of seconds of requests in memory.
	DefaultLookaheadBytes = 16 << 20
	// DefaultBuilders is the number of goroutines building requests ahead.
	DefaultBuilders = 2
	// maxPrebuild bounds how long a run waits, before its time zero, for
	// the builders to fill the lookahead.
	maxPrebuild = 5 * time.Second
	// batchRequests and batchEvents size the batches handed to the sink.
	batchRequests = 512
	batchEvents   = 8192
	// flushInterval bounds how long a partial batch waits for the sink.
	flushInterval = time.Second
	// SinkQueueBatches is the capacity of the collector's queue to the
	// sink, in batches: the one queue between the senders and the disk.
	// When it is full, the sender that completed a batch waits
	// ([SinkQueue]).
	SinkQueueBatches = 64
)

// PromptSource synthesizes the prompt of a row: it fills in.PromptText
// and/or in.PromptTokens and returns the prompt's length in client
// tokens and the tokens the row's prefix structure lets a server reuse
// (-1 unknown). It must be safe for concurrent use; it runs on the
// builder goroutines, ahead of the send time.
type PromptSource interface {
	Prompt(row *trace.Row, in *adapter.BuildInput) (inputTokens, expectedCached int, err error)
}

// SyntheticLoad describes a synthetic load (no trace): input and output
// lengths drawn from normal distributions (rounded, at least 1),
// deterministic per request.
type SyntheticLoad struct {
	ISL, ISLStd float64
	OSL, OSLStd float64
	Seed        uint64
}

// RunConfig configures one replay run.
type RunConfig struct {
	Engine Config
	// Plan is the schedule (required): a plan over loaded rows or a
	// synthetic load (replay.NewPlan), or a streamed plan
	// (replay.NewStreamPlan), whose rows Run reads through the plan's
	// window while the run goes. The plan owns its rows and its
	// replay.Config, Grace included. A plan runs once.
	Plan *replay.Plan
	// Synthetic gives the lengths of a synthetic load (a plan without a
	// trace).
	Synthetic SyntheticLoad
	Prompts   PromptSource
	// Context decides which turns of multi-turn sessions are sent with
	// their session's history ("" = DefaultContextMode). Growing a history
	// needs Prompts to be a SessionPromptSource.
	Context   ContextMode
	Streaming bool
	// MaxTokensFromTrace sends each row's output length as the max tokens.
	MaxTokensFromTrace bool
	Sink               Sink
	Summary            summary.Options
	Info               summary.RunInfo
	// Progress receives the live status line (nil = none); TTY rewrites
	// it in place.
	Progress io.Writer
	TTY      bool
	// Lookahead, LookaheadBytes and Builders tune prebuilding (0 =
	// defaults): at most Lookahead requests and LookaheadBytes of bodies
	// are built ahead of the highest request sent.
	Lookahead      int
	LookaheadBytes int64
	Builders       int
	// Abort, once closed after ctx was cancelled, ends the grace period at
	// once: in-flight requests are cancelled (a second Ctrl-C). Nil never
	// aborts.
	Abort <-chan struct{}
	Log   *slog.Logger
	// QuietGC turns the garbage collector's proportional mode off while
	// the run sends, leaving only the memory limit (DefaultMemoryLimit
	// when the process has none) to trigger it: fewer collections, fewer
	// stalls of the dispatcher (see quietGC). It changes process-wide
	// settings for the run's length; `reprise replay` sets it.
	QuietGC bool
}

// Result is what a run produced.
type Result struct {
	Summary *summary.Summary
	Stats   replay.Stats
	// Interrupted reports that ctx was cancelled (Ctrl-C / SIGTERM).
	Interrupted bool
	// Retries and ClosesAfterStream report connection handling.
	Retries           int64
	ClosesAfterStream bool
	// InlineBuilds counts requests built on the send path because the
	// lookahead had not reached them.
	InlineBuilds int64
	// HistoryBuilds counts later turns of sessions built on the send path
	// with their history (they cannot be built ahead); HistoryTruncated
	// counts responses cut to MaxHistoryResponse in a history.
	HistoryBuilds    int64
	HistoryTruncated int64
	// SinkQueue says how the sink kept up with the run.
	SinkQueue SinkQueue
}

// SinkQueue counts the collector's hand-overs to the sink that found its
// queue ([SinkQueueBatches]) full: the sink (the disk) was slower than
// the run, and the sender that completed the batch waited for it.
type SinkQueue struct {
	Waits  int64 // hand-overs that waited for queue space
	WaitNS int64 // total time they waited
	// MaxQueued is the most batches queued at once (the sink's lag
	// high-water mark).
	MaxQueued int64
}

// errGrace is the cancellation cause at the end of the grace period.
var (
	errGrace       = errors.New("end of grace period")
	errInterrupted = errors.New("interrupted; grace period over")
	errAborted     = errors.New("interrupted twice; in-flight requests cancelled at once")
)

// Run replays cfg: it plans the schedule, prebuilds requests in a
// lookahead window, runs them on the scheduler's senders, writes records
// to the sink in batches and returns the summary. A failed request is a
// row, never an error: Run's error means the run could not run. When ctx
// is cancelled, sending stops, in-flight requests get the plan's Grace to finish,
// then are cancelled (recorded as cancelled), and everything is written.
// A sink error stops the run the same way, at once; Run returns it with the
// result.
func Run(ctx context.Context, cfg RunConfig) (*Result, error) {
	log := cfg.Log
	if log == nil {
		log = slog.New(slog.DiscardHandler)
	}
	plan := cfg.Plan
	if plan == nil {
		return nil, errors.New("engine: RunConfig.Plan is nil: build it with replay.NewPlan or replay.NewStreamPlan")
	}
	rows, grace := plan.Rows(), plan.Config().Grace
	if cfg.Engine.Clock == nil {
		cfg.Engine.Clock = replay.NewClock()
	}
	nSenders := plan.Senders()
	if cfg.Engine.Concurrency == 0 {
		cfg.Engine.Concurrency = nSenders
	}
	cfg.Engine.Log = log
	e, err := New(cfg.Engine)
	if err != nil {
		return nil, err
	}
	defer e.Close()
	hist, err := newHistories(cfg.Context, rows, cfg.Prompts, log)
	if err != nil {
		return nil, err
	}

	rn := &runner{cfg: &cfg, e: e, log: log, senders: make([]*senderState, nSenders), hist: hist,
		rows: rows, stream: plan.Window(), seed: plan.Config().Seed}
	rn.total = int64(plan.Requests())
	first := int64(0)
	switch {
	case rows != nil:
		rn.total = int64(len(rows))
	case rn.stream != nil:
		// Items are window positions from the first kept row on.
		first = rn.stream.First()
		if rn.total >= 0 {
			rn.total += first
		}
	}
	rn.prog.planned = int64(plan.Requests())
	rn.prog.start = time.Now()
	rn.acc = summary.NewAccumulator(cfg.Summary)
	// A sink that fails stops the run at once, as an interruption does:
	// its records could not be written anyway.
	ctx, abort := context.WithCancelCause(ctx)
	defer abort(nil)
	rn.col = newCollector(cfg.Sink, rn.acc, log)
	rn.col.skipRecord = rn.skipRecord
	rn.col.onErr = func(err error) { abort(fmt.Errorf("write records: %w", err)) }

	// Contexts: stopCtx stops the dispatcher; reqCtx cancels requests.
	var cancelReq context.CancelCauseFunc
	rn.reqCtx, cancelReq = context.WithCancelCause(context.WithoutCancel(ctx))
	rn.cancelReq = cancelReq
	stopCtx, stopSending := context.WithCancel(context.WithoutCancel(ctx))
	defer stopSending()
	finished := make(chan struct{})
	var interrupted atomic.Bool
	go func() {
		select {
		case <-ctx.Done():
			interrupted.Store(true)
			rn.signalled.Store(true)
			if cause := context.Cause(ctx); errors.Is(cause, context.Canceled) || errors.Is(cause, context.DeadlineExceeded) {
				log.Warn("interrupted: no new requests; waiting for in-flight ones", slog.Duration("grace", grace))
			} else {
				log.Error("stopping the run: no new requests; waiting for in-flight ones", slog.Any("err", cause), slog.Duration("grace", grace))
			}
			stopSending()
			t := time.NewTimer(grace)
			defer t.Stop()
			select {
			case <-t.C:
				cancelReq(errInterrupted)
			case <-cfg.Abort:
				log.Warn("interrupted twice: cancelling in-flight requests")
				cancelReq(errAborted)
			case <-finished:
			}
		case <-finished:
		}
	}()

	// Lookahead builders.
	size := cfg.Lookahead
	if size <= 0 {
		size = max(DefaultLookahead, 2*nSenders)
	}
	rn.win = newWindow(size, rn.total)
	rn.win.next.Store(first)
	rn.win.high.Store(first)
	rn.win.maxBytes = cfg.LookaheadBytes
	if rn.win.maxBytes <= 0 {
		rn.win.maxBytes = DefaultLookaheadBytes
	}
	nb := cfg.Builders
	if nb <= 0 {
		nb = DefaultBuilders
	}
	var bwg sync.WaitGroup
	buildQuit := make(chan struct{})
	for range nb {
		b, err := e.NewBuilder()
		if err != nil {
			close(finished)
			return nil, err
		}
		bwg.Add(1)
		go func() {
			defer bwg.Done()
			defer b.Close()
			rn.win.builderLoop(buildQuit, rn, func(item int64, row *trace.Row, p *Prepared) {
				if rn.hist.role(int(item))&roleLater != 0 {
					return // built on the send path, with its history
				}
				rn.build(b, int(item), row, p, nil)
			})
		}()
	}

	// Progress.
	progStop := make(chan struct{})
	progDone := make(chan struct{})
	if cfg.Progress != nil {
		go rn.prog.run(cfg.Progress, cfg.TTY, progStop, progDone)
	} else {
		close(progDone)
	}

	// One clock: the scheduler's intended and dispatch times and the
	// engine's sent, token and end times are all read on e.clock.
	t0 := time.Now()
	if n := rn.win.prefill(stopCtx, first, maxPrebuild); n > 0 {
		log.Debug("lookahead filled before the start", slog.Int64("requests", n), slog.Duration("took", time.Since(t0)))
	}
	if cfg.QuietGC {
		defer quietGC()()
	}
	stats, runErr := plan.RunOnClock(stopCtx, rn, e.clock)
	close(finished)
	close(buildQuit)
	rn.win.close()
	bwg.Wait()
	for _, s := range rn.senders {
		if s != nil {
			s.s.Close()
			if s.b != nil {
				s.b.Close()
			}
		}
	}
	close(progStop)
	<-progDone
	sinkErr := rn.col.close()

	res := &Result{Stats: stats, Interrupted: interrupted.Load(), Retries: e.Retries(),
		ClosesAfterStream: e.ClosesAfterStream(), InlineBuilds: rn.inline.Load(),
		SinkQueue: SinkQueue{Waits: rn.col.waits.Load(), WaitNS: rn.col.waitNS.Load(), MaxQueued: rn.col.maxQueued.Load()}}
	if hist != nil {
		res.HistoryBuilds, res.HistoryTruncated = hist.builds.Load(), hist.truncated.Load()
	}
	info := cfg.Info
	info.Cancelled = res.Interrupted
	if info.End.IsZero() {
		info.End = time.Now().UTC()
	}
	if info.Planned == 0 && plan.Requests() > 0 {
		info.Planned = plan.Requests()
	}
	res.Summary = rn.acc.Summary(info)
	if runErr != nil && !errors.Is(runErr, context.Canceled) {
		return res, runErr
	}
	if sinkErr != nil {
		return res, fmt.Errorf("write records: %w", sinkErr)
	}
	return res, nil
}

// runner is the replay.Handler: it runs jobs on the engine.
type runner struct {
	cfg  *RunConfig
	e    *Engine
	log  *slog.Logger
	win  *window
	col  *collector
	acc  *summary.Accumulator
	prog progress

	hist *histories // nil when no session grows a history

	// The trace: rows loaded whole, or a streamed plan's window (nil,
	// nil for a synthetic load). See row, pin and unpin.
	rows   []trace.Row
	stream *trace.Window
	seed   uint64 // the plan's replay.Config.Seed, of the prompts' seeds

	total     int64
	senders   []*senderState // indexed by sender id; each touched only by its goroutine
	reqCtx    context.Context
	cancelReq context.CancelCauseFunc
	signalled atomic.Bool
	hctxOnce  sync.Once
	inline    atomic.Int64
}

type senderState struct {
	s   *Sender
	b   *Builder // for inline builds, created on first need
	rec record.Request
}

var _ replay.Handler = (*runner)(nil)
var _ replay.SkipHandler = (*runner)(nil)

// Handle implements replay.Handler: one request, synchronously.
func (rn *runner) Handle(hctx context.Context, j *replay.Job) {
	rn.hctxOnce.Do(func() {
		// The scheduler cancels hctx at the end of --duration's grace
		// (cancel the requests) and at once on interruption (then our own
		// grace timer decides).
		context.AfterFunc(hctx, func() {
			if !rn.signalled.Load() {
				rn.cancelReq(errGrace)
			}
		})
	})
	st := rn.sender(j.Sender)
	if st == nil {
		return
	}
	role := rn.hist.role(j.Item)
	var h *history
	if role != 0 {
		h = rn.hist.get(j.SessionRun, role&roleFirst != 0)
	}
	// The job's row stays in a streamed plan's window until it is
	// released below (the scheduler holds it for the Handle call).
	row := rn.row(j.Item)
	p := rn.win.take(int64(j.Item))
	switch {
	case role&roleLater != 0:
		// A later turn needs the responses of the earlier ones: it is
		// built now, between DispatchedNS and SentNS (the session-induced
		// build time is SentNS − DispatchedNS; the adapter's part is in
		// AdapterNS).
		rn.hist.builds.Add(1)
		p = &Prepared{}
		rn.inlineBuild(st, j.Item, row, p, h.sp)
	case p == nil:
		rn.inline.Add(1)
		p = &Prepared{}
		rn.inlineBuild(st, j.Item, row, p, nil)
	}
	p.Capture = role&roleCapture != 0
	r := &st.rec
	*r = record.Request{}
	rn.identify(r, j, row)
	if rn.stream != nil {
		// Built and identified: the window may reuse the row's slot
		// while the request runs (a slow request must not stop the
		// reader). Streamed plans have no session histories.
		rn.stream.Release(int64(j.Item))
		row = nil
	}
	rn.prog.sent.Add(1)
	rn.prog.inflight.Add(1)
	st.s.Do(rn.reqCtx, p, r)
	if h != nil {
		if p.Capture {
			// What was received, even from a failed request: the next turn
			// carries exactly the conversation the server produced.
			if err := h.sp.Record(row, rn.hist.response(st.s.Response())); err != nil {
				rn.log.Error("session history", slog.Int64("row", row.Index), slog.Any("err", err))
			}
		} else {
			rn.hist.done(j.SessionRun)
		}
	}
	r.BytesSent = int64(len(p.Body))
	rn.prog.inflight.Add(-1)
	rn.prog.done.Add(1)
	if !r.OK() {
		rn.prog.errors.Add(1)
	}
	if r.Phase == record.PhaseProfile {
		rn.prog.lateness.add(r.LatenessNS)
		if r.TTFTNS > 0 {
			rn.prog.ttft.add(r.TTFTNS)
		}
	}
	rn.col.add(r, st.s.Events())
}

// Skip implements replay.SkipHandler: --late skip dropped the job. It runs
// on the dispatcher and never blocks: the job is queued in the collector's
// skip list and becomes a record on the collector's flush goroutine.
//
// What the record needs of the job's row is copied now: a streamed plan's
// window may reuse the row's slot once Skip returns.
func (rn *runner) Skip(j *replay.Job) {
	rn.prog.errors.Add(1)
	sk := skipped{j: *j, traceRow: -1, isl: -1}
	if row := rn.row(j.Item); row != nil {
		sk.traceRow, sk.session, sk.isl = row.Index, row.SessionID, traceISL(row)
	}
	rn.col.skip(&sk)
}

// skipped is a job --late skip dropped, with what its record needs of
// its row.
type skipped struct {
	j        replay.Job
	traceRow int64 // -1 none
	session  string
	isl      int32
}

// skipRecord fills r for a job --late skip dropped.
func (rn *runner) skipRecord(sk *skipped, r *record.Request) {
	j := &sk.j
	if rn.hist.role(j.Item) != 0 {
		rn.hist.done(j.SessionRun) // --late skip ends the session run
	}
	*r = record.Request{}
	rn.identify(r, j, nil)
	r.TraceRow, r.SessionID = sk.traceRow, sk.session
	r.ErrorKind = record.ErrNotDelivered
	r.ErrorMessage = "dropped by --late skip"
	r.ServerPromptTokens, r.ServerCompletionTokens, r.ServerReasoningTokens, r.ServerCachedTokens = -1, -1, -1, -1
	r.ExpectedCachedTokens = -1
	r.ServerMinusClientOutputTokens = record.NoTokenDiff
	r.TraceInputTokens = sk.isl
}

// traceISL is the row's input length for record.Request.TraceInputTokens.
func traceISL(row *trace.Row) int32 {
	if row.InputTokens <= 0 {
		return -1
	}
	return int32(row.InputTokens)
}

// identify fills r's identity from j and its row (nil: none).
func (rn *runner) identify(r *record.Request, j *replay.Job, row *trace.Row) {
	r.RequestID = j.ID
	r.TraceRow = -1
	if row != nil {
		r.TraceRow = row.Index
		r.SessionID = row.SessionID
	}
	r.Turn = int32(j.Turn)
	r.Phase = j.Phase
	r.SenderID = int32(j.Sender)
	r.IntendedNS = j.IntendedNS
	r.DispatchedNS = j.DispatchedNS
	r.LatenessNS = j.DispatchedNS - j.IntendedNS
	r.SessionDelayNS = j.SessionDelayNS
}

func (rn *runner) sender(id int) *senderState {
	if id < 0 || id >= len(rn.senders) {
		return nil
	}
	st := rn.senders[id]
	if st == nil {
		s, err := rn.e.NewSender()
		if err != nil {
			rn.log.Error("sender", slog.Any("err", err))
			return nil
		}
		st = &senderState{s: s}
		rn.senders[id] = st
	}
	return st
}

// inlineBuild builds item (whose row is row) into p on the sender's
// goroutine, with its own builder.
func (rn *runner) inlineBuild(st *senderState, item int, row *trace.Row, p *Prepared, sp SessionPrompts) {
	if st.b == nil {
		b, err := rn.e.NewBuilder()
		if err != nil {
			p.Err = err
			return
		}
		st.b = b
	}
	rn.build(st.b, item, row, p, sp)
}

// row returns item's row, which the caller holds (a job being handled or
// skipped: the scheduler releases it afterwards), or nil for a synthetic
// load and for an item a streamed plan could not read.
func (rn *runner) row(item int) *trace.Row {
	switch {
	case rn.stream != nil:
		return rn.stream.Row(int64(item))
	case item >= 0 && item < len(rn.rows):
		return &rn.rows[item]
	}
	return nil
}

// pin returns item's row for a builder and holds it until unpin: nil for a
// synthetic load; false when the item is not to be built (outside the
// trace, or a streamed row already sent and released).
func (rn *runner) pin(item int64) (*trace.Row, bool) {
	switch {
	case rn.stream != nil:
		row := rn.stream.Pin(item)
		return row, row != nil
	case rn.rows != nil:
		if item < 0 || item >= int64(len(rn.rows)) {
			return nil, false
		}
		return &rn.rows[item], true
	}
	return nil, true
}

func (rn *runner) unpin(item int64) {
	if rn.stream != nil {
		rn.stream.Unpin(item)
	}
}

// build renders item into p (on a builder goroutine, or inline); row is
// item's row (nil for a synthetic load); sp, when set, builds it as a
// later turn of a session, with the history.
func (rn *runner) build(b *Builder, item int, tr *trace.Row, p *Prepared, sp SessionPrompts) {
	cfg := rn.cfg
	var row trace.Row
	// The seed follows the row's index in the trace (a streamed plan's
	// positions count on when the trace wraps around; loaded items
	// repeat), so both paths send the same bodies.
	seedIdx := uint64(item)
	switch {
	case tr != nil:
		row = *tr
		if rn.stream != nil {
			seedIdx = uint64(rn.stream.Index(int64(item)))
		}
	case rn.rows != nil || rn.stream != nil:
		err := error(nil)
		if rn.stream != nil {
			err = rn.stream.Err()
		}
		p.Err = fmt.Errorf("trace row of request item %d unavailable: %v", item, err)
		return
	default:
		row = synthRow(&cfg.Synthetic, item)
	}
	in := adapter.BuildInput{
		TraceRow:       row.Index,
		InputTokens:    row.InputTokens,
		Turn:           uint32(row.Turn),
		BlockSize:      row.BlockSize,
		HashIDs:        row.HashIDs,
		Raw:            row.Raw,
		Seed:           rn.seed ^ seedIdx*0x9E3779B97F4A7C15,
		IntendedOffset: row.Offset,
	}
	if cfg.Streaming {
		in.Flags |= adapter.BuildStream
	}
	if row.Turn == 0 {
		in.Flags |= adapter.BuildFirstTurn
	}
	if len(row.Raw) > 0 {
		in.Flags |= adapter.BuildHasRaw
	}
	if cfg.MaxTokensFromTrace && row.OutputTokens > 0 {
		in.MaxTokens = row.OutputTokens
	}
	p.InputTokens = int32(row.InputTokens)
	p.TraceInputTokens = traceISL(&row)
	p.ExpectedCachedTokens = -1
	if sp != nil {
		n, cached, err := sp.Prompt(&row, &in)
		if err != nil {
			p.Err = fmt.Errorf("prompt for row %d (line %d) with its session's history: %w", row.Index, row.Line, err)
			return
		}
		if len(in.Messages) > 1 {
			in.Flags |= adapter.BuildHistory
		}
		p.InputTokens = int32(n)
		p.ExpectedCachedTokens = int32(cached)
	} else if cfg.Prompts != nil {
		n, cached, err := cfg.Prompts.Prompt(&row, &in)
		if err != nil {
			p.Err = fmt.Errorf("prompt for row %d (line %d): %w", row.Index, row.Line, err)
			return
		}
		p.InputTokens = int32(n)
		p.ExpectedCachedTokens = int32(cached)
	}
	b.Build(&in, p)
}

// synthRow draws the lengths of synthetic request i, deterministically.
func synthRow(s *SyntheticLoad, i int) trace.Row {
	rng := rand.New(rand.NewPCG(s.Seed, uint64(i)))
	draw := func(mean, std float64) int {
		v := mean
		if std > 0 {
			v = mean + std*rng.NormFloat64()
		}
		return max(1, int(math.Round(v)))
	}
	return trace.Row{Index: -1, InputTokens: draw(s.ISL, s.ISLStd), OutputTokens: draw(s.OSL, s.OSLStd), ParentID: -1, RequestID: -1}
}

// window holds requests built ahead: slot i%size holds item i.
type window struct {
	size     int64
	total    int64 // items that exist (-1 unbounded)
	maxBytes int64
	bytes    atomic.Int64 // body bytes held by built, untaken slots
	slots    []slot
	next     atomic.Int64 // next item a builder claims
	built    atomic.Int64 // items the builders finished
	high     atomic.Int64 // highest item taken + 1
	wake     chan struct{}
	quit     chan struct{}
	once     sync.Once
}

type slot struct {
	mu     sync.Mutex
	item   int64
	ready  bool
	inline bool // taken before it was built: builders skip it
	p      *Prepared
}

func newWindow(size int, total int64) *window {
	w := &window{size: int64(size), total: total, slots: make([]slot, size), wake: make(chan struct{}, 1), quit: make(chan struct{})}
	for i := range w.slots {
		w.slots[i].item = -1
	}
	return w
}

func (w *window) close() { w.once.Do(func() { close(w.quit) }) }

// rowPins gives builders the rows they build (see runner.pin).
type rowPins interface {
	pin(item int64) (*trace.Row, bool)
	unpin(item int64)
}

// builderLoop claims items in order and builds them, staying at most
// size items ahead of the highest item taken. It pins each item's row
// before taking the item's slot lock, so that it never waits for a
// streamed trace's reader while holding the lock a sender needs.
func (w *window) builderLoop(quit <-chan struct{}, rows rowPins, build func(int64, *trace.Row, *Prepared)) {
	for {
		i := w.next.Add(1) - 1
		if w.total >= 0 && i >= w.total {
			return
		}
		// Stay within size items and maxBytes of bodies ahead; the next
		// item to send (i == high) is always built.
		for i >= w.high.Load()+w.size || (i > w.high.Load() && w.bytes.Load() > w.maxBytes) {
			select {
			case <-w.wake:
			case <-quit:
				return
			case <-w.quit:
				return
			case <-time.After(10 * time.Millisecond):
			}
		}
		row, ok := rows.pin(i)
		if !ok {
			continue
		}
		sl := &w.slots[i%w.size]
		sl.mu.Lock()
		if sl.item == i && sl.inline {
			sl.mu.Unlock()
			rows.unpin(i)
			continue
		}
		p := &Prepared{}
		build(i, row, p)
		if sl.ready && sl.p != nil { // evict an item that was never taken
			w.bytes.Add(-int64(len(sl.p.Body)))
		}
		sl.item, sl.ready, sl.inline, sl.p = i, true, false, p
		w.bytes.Add(int64(len(p.Body)))
		sl.mu.Unlock()
		rows.unpin(i)
		w.built.Add(1)
	}
}

// prefill waits until the builders have filled the lookahead — size items
// from first, the items that exist, or maxBytes of bodies — or for at
// most max, or until ctx is done, and returns how many it built. A run
// calls it before its time zero, so that its first requests are not built
// on the send path: the first seconds of a trace are often dense, and at
// a high --speedup the whole lookahead can fall due at once.
func (w *window) prefill(ctx context.Context, first int64, max time.Duration) int64 {
	want := w.size
	if w.total >= 0 {
		want = min(want, w.total-first)
	}
	deadline := time.Now().Add(max)
	for w.built.Load() < want && w.bytes.Load() < w.maxBytes && ctx.Err() == nil && time.Now().Before(deadline) {
		time.Sleep(time.Millisecond)
	}
	return w.built.Load()
}

// take returns the prebuilt request for item, or nil when it is not
// built (the caller builds it inline).
func (w *window) take(item int64) *Prepared {
	if item < 0 {
		return nil
	}
	sl := &w.slots[item%w.size]
	sl.mu.Lock()
	var p *Prepared
	if sl.item == item && sl.ready {
		p = sl.p
		sl.p, sl.ready = nil, false
		w.bytes.Add(-int64(len(p.Body)))
	} else if sl.item < item {
		if sl.ready && sl.p != nil {
			w.bytes.Add(-int64(len(sl.p.Body)))
		}
		sl.item, sl.ready, sl.inline, sl.p = item, false, true, nil
	}
	sl.mu.Unlock()
	for {
		h := w.high.Load()
		if item+1 <= h || w.high.CompareAndSwap(h, item+1) {
			break
		}
	}
	select {
	case w.wake <- struct{}{}:
	default:
	}
	return p
}

// collector batches records for the sink and the summary.
type collector struct {
	mu       sync.Mutex
	reqs     []record.Request
	evs      []record.Event
	ch       chan collBatch
	sink     Sink
	acc      *summary.Accumulator
	log      *slog.Logger
	done     chan struct{}
	err      error
	warn     sync.Once
	tick     *time.Ticker
	stop     chan struct{}
	tickDone chan struct{}

	// Skipped jobs (--late skip) are queued here by the dispatcher, which
	// must never wait for the sink, and turned into records by
	// skipRecord on the flush goroutine. A full list kicks a flush.
	skipMu     sync.Mutex
	skips      []skipped
	kick       chan struct{}
	skipRecord func(sk *skipped, r *record.Request)
	// onErr is called once, with the sink's first error.
	onErr func(error)
	// The queue's counters (SinkQueue).
	waits, waitNS, maxQueued atomic.Int64
	// free holds request batches the sink is done with, for reuse.
	free chan []record.Request
}

type collBatch struct {
	reqs []record.Request
	evs  []record.Event
}

func newCollector(sink Sink, acc *summary.Accumulator, log *slog.Logger) *collector {
	c := &collector{sink: sink, acc: acc, log: log, ch: make(chan collBatch, SinkQueueBatches), free: make(chan []record.Request, 4), done: make(chan struct{}),
		stop: make(chan struct{}), tickDone: make(chan struct{}), kick: make(chan struct{}, 1)}
	c.reqs = make([]record.Request, 0, batchRequests)
	go c.loop()
	c.tick = time.NewTicker(flushInterval)
	go func() {
		defer close(c.tickDone)
		for {
			select {
			case <-c.tick.C:
				c.flush()
			case <-c.kick:
				c.flush()
			case <-c.stop:
				return
			}
		}
	}()
	return c
}

// add copies r (and evs) into the current batch. It waits when the sink
// is more than 64 batches behind (senders only; see skip).
func (c *collector) add(r *record.Request, evs []record.Event) {
	c.mu.Lock()
	c.reqs = append(c.reqs, *r)
	c.evs = append(c.evs, evs...)
	if len(c.reqs) < batchRequests && len(c.evs) < batchEvents {
		c.mu.Unlock()
		return
	}
	b := c.swap()
	c.mu.Unlock()
	c.send(b)
}

// skip queues a skipped job without ever blocking: the list grows (a copy
// of the job and its row's identity each, ~180 bytes) until the flush goroutine drains it, which
// a full batch wakes at once.
func (c *collector) skip(sk *skipped) {
	c.skipMu.Lock()
	c.skips = append(c.skips, *sk)
	n := len(c.skips)
	c.skipMu.Unlock()
	if n >= batchRequests {
		select {
		case c.kick <- struct{}{}:
		default:
		}
	}
}

// takeSkips moves the queued skipped jobs into the current batch as
// records. c.mu must be held.
func (c *collector) takeSkips() {
	c.skipMu.Lock()
	js := c.skips
	c.skips = nil
	c.skipMu.Unlock()
	for i := range js {
		var r record.Request
		if c.skipRecord != nil {
			c.skipRecord(&js[i], &r)
		}
		c.reqs = append(c.reqs, r)
	}
}

func (c *collector) swap() collBatch {
	b := collBatch{c.reqs, c.evs}
	select {
	case c.reqs = <-c.free:
	default:
		c.reqs = make([]record.Request, 0, batchRequests)
	}
	c.evs = nil
	return b
}

func (c *collector) flush() {
	c.mu.Lock()
	c.takeSkips()
	if len(c.reqs) == 0 && len(c.evs) == 0 {
		c.mu.Unlock()
		return
	}
	b := c.swap()
	c.mu.Unlock()
	c.send(b)
}

func (c *collector) send(b collBatch) {
	select {
	case c.ch <- b:
	default:
		c.warn.Do(func() {
			c.log.Warn("the record writer cannot keep up; senders wait for it (results stay complete, timing of later requests may suffer)")
		})
		t := time.Now()
		c.ch <- b
		c.waits.Add(1)
		c.waitNS.Add(int64(time.Since(t)))
	}
	for q := int64(len(c.ch)); ; {
		m := c.maxQueued.Load()
		if q <= m || c.maxQueued.CompareAndSwap(m, q) {
			return
		}
	}
}

func (c *collector) loop() {
	defer close(c.done)
	for b := range c.ch {
		for i := range b.reqs {
			c.acc.Add(&b.reqs[i])
		}
		if c.sink != nil && c.err == nil && len(b.reqs) > 0 {
			c.fail(c.sink.WriteRequests(b.reqs))
		}
		if c.sink != nil && c.err == nil && len(b.evs) > 0 {
			c.fail(c.sink.WriteEvents(b.evs))
		}
		if cap(b.reqs) == batchRequests {
			select { // the sink copied the rows: the batch is free again
			case c.free <- b.reqs[:0]:
			default:
			}
		}
	}
}

// fail keeps the sink's first error and reports it to onErr.
func (c *collector) fail(err error) {
	if err == nil || c.err != nil {
		return
	}
	c.err = err
	if c.onErr != nil {
		c.onErr(err)
	}
}

// close flushes everything and closes the sink.
func (c *collector) close() error {
	c.tick.Stop()
	close(c.stop)
	<-c.tickDone
	c.flush()
	close(c.ch)
	<-c.done
	if c.sink != nil {
		if err := c.sink.Close(); err != nil && c.err == nil {
			c.err = err
		}
	}
	return c.err
}
