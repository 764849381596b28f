package reprise

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"github.com/reprise-bench/reprise/engine"
	"github.com/reprise-bench/reprise/engine/adapter"
	"github.com/reprise-bench/reprise/engine/record"
	"github.com/reprise-bench/reprise/engine/summary"
	"github.com/reprise-bench/reprise/internal/httpfield"
	"github.com/reprise-bench/reprise/internal/livemetrics"
	"github.com/reprise-bench/reprise/replay"
	"github.com/reprise-bench/reprise/trace"
	"github.com/reprise-bench/reprise/trace/media"
	"io"
	"log/slog"
	"math"
	"math/rand/v2"
	"slices"
	"sync"
	"sync/atomic"
	"time"
)

// Defaults of [runConfig].
const (
	// defaultLookahead is how many requests are built ahead of the
	// highest one sent (at least twice the number of senders).
	defaultLookahead = 1024
	// defaultLookaheadBytes bounds the bodies built ahead: long prompts
	// (Mooncake averages 12k tokens, ~70 KB per body) would otherwise hold
	// tens of seconds of requests in memory.
	defaultLookaheadBytes = 16 << 20
	// defaultBuilders is the number of goroutines building requests ahead.
	defaultBuilders = 2
	// maxPrebuild bounds how long a run waits, before its time zero, for
	// the builders to fill the lookahead.
	maxPrebuild = 5 * time.Second
	// batchRequests and batchEvents size the batches handed to the sink.
	batchRequests = 512
	batchEvents   = 8192
	// flushInterval bounds how long a partial batch waits for the sink.
	flushInterval = time.Second
	// sinkQueueBatches is the capacity of the collector's queue to the
	// sink, in batches: the one queue between the senders and the disk.
	// When it is full, the sender that completed a batch waits
	// ([sinkQueue]).
	sinkQueueBatches = 64
)

// syntheticLengths describes a synthetic load (no trace): input and
// output lengths drawn from normal distributions (rounded, at least 1),
// deterministic per request.
type syntheticLengths struct {
	ISL, ISLStd float64
	OSL, OSLStd float64
	Seed        uint64
	// MaxISL caps every drawn input length (Trace.MaxInputTokens).
	MaxISL int
}

// runConfig configures one replay run.
type runConfig struct {
	// Accuracy is the run's graded items; nil for none.
	Accuracy *accPlan
	// Engine is target 0's; Targets are the further targets' (each a
	// copy of Engine with its own BaseURL, headers and model), and Policy
	// says how requests are spread over them.
	Engine  engine.Config
	Targets []engine.Config
	Policy  string
	// Plan is the schedule (required): a plan over loaded rows or a
	// synthetic load (replay.NewPlan), or a streamed plan
	// (replay.NewStreamPlan), whose rows runEngine reads through the plan's
	// window while the run goes. The plan owns its rows and its
	// replay.Config, Grace included. A plan runs once.
	Plan *replay.Plan
	// Synthetic gives the lengths of a synthetic load (a plan without a
	// trace).
	Synthetic syntheticLengths
	// Media are the synthetic media of every request (design 0022).
	Media   media.SyntheticConfig
	Prompts engine.PromptSource
	// Context decides which turns of multi-turn sessions are sent with
	// their session's history ("" = engine.DefaultContextMode). Growing a history
	// needs Prompts to be an engine.SessionPromptSource.
	Context   engine.ContextMode
	Streaming bool
	// MaxTokensFromTrace sends each row's output length as the max tokens.
	MaxTokensFromTrace bool
	Sink               recordSink
	// Before are records sent before this plan (the priming requests),
	// counted in the summary first.
	Before []record.Request
	// IDBase is added to every request id (a warmup phase's:
	// WarmupRequestIDBase), on the wire (X-Request-Id) and in records.
	IDBase  uint64
	Summary summary.Options
	Info    summary.RunInfo
	// Progress receives the live status line (nil = none); TTY rewrites
	// it in place.
	Progress io.Writer
	TTY      bool
	// Prog, when not nil, is the live counters the run updates (the
	// dashboard reads them); nil makes the run its own.
	Prog *progress
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
	// Batch says how many inputs an embeddings or rankings request
	// carries (the zero value: text generation, one prompt).
	Batch batchPlan
	// SessionHeader names the header that carries a row's session id
	// (router affinity; "" = none).
	SessionHeader string
	// Cancel plans cancellations (--cancel-rate); the zero value plans
	// none.
	Cancel cancelPlan
	// Inputs, when set, keeps the request bodies for AIPerf's inputs.json.
	Inputs *inputsLog
	// Outputs, when set, keeps the response texts for outputs.json.
	Outputs *outputsLog
	// QuietGC turns the garbage collector's proportional mode off while
	// the run sends, leaving only the memory limit (defaultMemoryLimit
	// when the process has none) to trigger it: fewer collections, fewer
	// stalls of the dispatcher (see quietGC). It changes process-wide
	// settings for the run's length; `reprise replay` sets it.
	QuietGC bool
	// OnEnd, when not nil, is called when the last request has ended
	// (Options.OnEnd).
	OnEnd func()
	// AbortAfterConnectFailures stops the run when its first N requests
	// to end all failed to connect (Options.AbortAfterConnectFailures;
	// 0 = never).
	AbortAfterConnectFailures int
	// FailedRequestThreshold aborts the run once more than this fraction
	// of its measured requests had failed (Options.FailedRequestThreshold;
	// nil = never).
	FailedRequestThreshold *float64
	// ProgressInterval is how often the progress line is printed
	// (Options.ProgressInterval; 0 = the default).
	ProgressInterval time.Duration
	// RTTProbe, when positive, probes the network round trip to Engine's
	// server this often during the run (Options.NetworkLatency.Probe):
	// the summary's RunInfo.NetworkRTT.
	RTTProbe time.Duration
	// Live, when not nil, gets every record as the summary does, on the
	// collector's goroutine, and reads the run's in-flight counts and
	// intended rate when scraped (--metrics-addr).
	Live *livemetrics.Metrics
	// Observe, when not nil, gets every record as it is collected, on
	// the sender that completed it (the adaptive controller's windows).
	Observe func(*record.Request)
}

// batchPlan shapes the requests of an embeddings or rankings endpoint:
// Inputs inputs (embeddings) or passages (rankings) of the row's input
// length each, and for rankings a query of QueryTokens tokens. A rankings
// request varies them when the standard deviations are above 0 (AIPerf's
// --rankings-*-stddev): its passage count, each passage's length and its
// query's length are drawn apart, from normals of those means (positiveNormal).
type batchPlan struct {
	Kind        adapter.Kind
	Inputs      int
	QueryTokens int
	// InputsStdDev, InputTokensStdDev and QueryTokensStdDev are the
	// rankings draws' standard deviations (0 = fixed, nothing drawn).
	InputsStdDev, InputTokensStdDev, QueryTokensStdDev float64
}

// newBatchPlan is the batch plan of o's requests to an endpoint of kind.
func newBatchPlan(kind adapter.Kind, o *Options) batchPlan {
	v := &o.Rankings
	return batchPlan{Kind: kind, Inputs: o.BatchSize, QueryTokens: o.QueryTokens,
		InputsStdDev: v.PassagesStdDev, InputTokensStdDev: v.PassageTokensStdDev, QueryTokensStdDev: v.QueryTokensStdDev}
}

// rankingsManifest is the manifest's "rankings" object (manifest.md).
func rankingsManifest(v *RankingsVariation) map[string]float64 {
	return map[string]float64{"passages_stddev": v.PassagesStdDev, "passage_tokens_stddev": v.PassageTokensStdDev,
		"query_tokens_stddev": v.QueryTokensStdDev}
}

// batchInputs synthesizes the inputs of row's request beyond in's prompt
// (already built): for embeddings the inputs after the first, for
// rankings every passage, with in's prompt rebuilt as the query. Each
// input is a fresh synthesized text of its length, keyed by the request's
// seed and its position. It returns the tokens of the request as the
// server counts them: every input's for embeddings, and for rankings
// every (query, passage) pair's, the query counted once per passage, as
// vLLM's usage.prompt_tokens does.
func (b batchPlan) batchInputs(ps engine.PromptSource, row *trace.Row, in *adapter.BuildInput, first int) (int, error) {
	fresh := func(n int, k uint64) (string, int, error) {
		r := *row
		r.Index, r.HashIDs, r.BlockSize, r.Raw, r.InputTokens = -1, nil, 0, nil, n
		var bi adapter.BuildInput
		bi.Seed = in.Seed ^ (k+1)*0xD1B54A32D192ED03
		got, _, err := ps.Prompt(&r, &bi)
		return bi.PromptText, got, err
	}
	if b.Kind == adapter.KindEmbeddings {
		total := first
		for k := range b.Inputs - 1 {
			t, n, err := fresh(row.InputTokens, uint64(k))
			if err != nil {
				return 0, err
			}
			in.Inputs = append(in.Inputs, t)
			total += n
		}
		return total, nil
	}
	// Rankings: the row's own prompt is the first passage, unless the
	// passages' lengths vary (then each is drawn and built afresh).
	d := b.rankingsDraw(in.Seed, row.InputTokens)
	q, nq, err := fresh(d.query, 1<<32)
	if err != nil {
		return 0, err
	}
	in.Inputs = append(in.Inputs[:0], in.PromptText)
	in.PromptText = q
	docs := first
	if d.lengths != nil {
		in.Inputs, docs = in.Inputs[:0], 0
	}
	for k := range d.passages {
		if d.lengths == nil && k == 0 {
			continue
		}
		// Passage k is keyed k−1, as with fixed lengths; a drawn first
		// passage (k = 0) wraps to the row's own prompt seed.
		t, n, err := fresh(d.length(k, row.InputTokens), uint64(k)-1)
		if err != nil {
			return 0, err
		}
		in.Inputs = append(in.Inputs, t)
		docs += n
	}
	return d.passages*nq + docs, nil
}

// rankingsDraw is one rankings request's shape: its passage count, query
// length and, when they vary, each passage's length (nil = all of the
// row's input length).
type rankingsDraw struct {
	passages, query int
	lengths         []int
}

// length returns passage k's length: its draw, or the row's length isl.
func (d *rankingsDraw) length(k, isl int) int {
	if d.lengths == nil {
		return isl
	}
	return d.lengths[k]
}

// rankingsDraw draws the shape of the rankings request of seed whose row
// has input length isl. With no standard deviation it draws nothing: the
// plan's fixed counts. The draws come from one generator keyed by the
// request's seed, so equal seeds give equal requests.
func (b batchPlan) rankingsDraw(seed uint64, isl int) rankingsDraw {
	d := rankingsDraw{passages: b.Inputs, query: b.QueryTokens}
	if b.InputsStdDev <= 0 && b.InputTokensStdDev <= 0 && b.QueryTokensStdDev <= 0 {
		return d
	}
	rng := rand.New(rand.NewPCG(seed, 0x52414E4B494E4753)) // "RANKINGS"
	d.passages = positiveNormal(rng, float64(b.Inputs), b.InputsStdDev)
	d.query = positiveNormal(rng, float64(b.QueryTokens), b.QueryTokensStdDev)
	if b.InputTokensStdDev > 0 {
		d.lengths = make([]int, d.passages)
		for k := range d.lengths {
			d.lengths[k] = positiveNormal(rng, float64(isl), b.InputTokensStdDev)
		}
	}
	return d
}

// positiveNormal draws a positive integer as AIPerf's
// sample_positive_normal_integer does: a normal of mean and std truncated
// at 0 (rejection, up to 100 tries, then the mean), rounded up, at least 1.
// With std ≤ 0 it draws nothing and returns the mean rounded half to even
// (Python's round; at least 1).
func positiveNormal(rng *rand.Rand, mean, std float64) int {
	if std <= 0 {
		return max(1, int(math.RoundToEven(mean)))
	}
	v := mean
	for range 100 {
		if x := mean + std*rng.NormFloat64(); x >= 0 {
			v = x
			break
		}
	}
	return max(1, int(math.Ceil(min(v, math.MaxInt32))))
}

// rowHeaders returns the request headers of row: its session id in the
// session header (when both are set), then the row's own "headers" object
// (string values). Nil when there are none; an error names the row.
func rowHeaders(session string, row *trace.Row) ([]adapter.Header, error) {
	var hs []adapter.Header
	if session != "" && row.SessionID != "" {
		// The trace reader refused rows whose session id is no header
		// value; rows built otherwise (a Go caller's) are checked here.
		if err := httpfield.CheckValue(row.SessionID); err != nil {
			return nil, fmt.Errorf("row %d (line %d): session_id %.40q: %w", row.Index, row.Line, row.SessionID, err)
		}
		hs = append(hs, adapter.Header{Name: session, Value: row.SessionID})
	}
	if len(row.Raw) == 0 || !bytes.Contains(row.Raw, []byte(`"headers"`)) {
		return hs, nil
	}
	var raw struct {
		Headers map[string]string `json:"headers"`
	}
	if err := json.Unmarshal(row.Raw, &raw); err != nil {
		return nil, fmt.Errorf("row %d (line %d): headers: want an object of string values: %w", row.Index, row.Line, err)
	}
	names := make([]string, 0, len(raw.Headers))
	for k := range raw.Headers {
		names = append(names, k)
	}
	slices.Sort(names) // a stable order on the wire
	for _, k := range names {
		v := raw.Headers[k]
		if err := httpfield.Check(k, v); err != nil {
			return nil, fmt.Errorf("row %d (line %d): headers: %w", row.Index, row.Line, err)
		}
		hs = append(hs, adapter.Header{Name: k, Value: v})
	}
	return hs, nil
}

// cancelPlan picks the requests a run cancels on purpose (AIPerf's
// request cancellation): each measured request with probability Rate,
// drawn from Seed and the request id, so equal seeds cancel the same
// requests. Warmup requests are never cancelled.
type cancelPlan struct {
	Rate  float64
	After time.Duration
	Seed  uint64
}

// picks reports whether request id is cancelled. It does not allocate.
func (c cancelPlan) picks(id uint64) bool {
	if c.Rate <= 0 {
		return false
	}
	// splitmix64 of (seed, id): uniform 53-bit fraction.
	x := c.Seed ^ 0x5ca1ab1e ^ id*0x9E3779B97F4A7C15
	x ^= x >> 30
	x *= 0xBF58476D1CE4E5B9
	x ^= x >> 27
	x *= 0x94D049BB133111EB
	x ^= x >> 31
	return float64(x>>11)/(1<<53) < c.Rate
}

// engineResult is what a run produced.
type engineResult struct {
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
	// counts responses cut to maxHistoryResponse in a history.
	HistoryBuilds    int64
	HistoryTruncated int64
	// SinkQueue says how the sink kept up with the run.
	SinkQueue sinkQueue
	// adaptive is the adaptive scaling's outcome (runEngineAdaptive).
	adaptive *AdaptiveResult
}

// SinkQueue counts the collector's hand-overs to the sink that found its
// queue ([sinkQueueBatches]) full: the sink (the disk) was slower than
// the run, and the sender that completed the batch waited for it.
type sinkQueue struct {
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

// runEngine replays cfg: it plans the schedule, prebuilds requests in a
// lookahead window, runs them on the scheduler's senders, writes records
// to the sink in batches and returns the summary. A failed request is a
// row, never an error: its error means the run could not run. When ctx
// is cancelled, sending stops, in-flight requests get the plan's Grace to finish,
// then are cancelled (recorded as cancelled), and everything is written.
// A sink error stops the run the same way, at once; runEngine returns it with the
// result.
func runEngine(ctx context.Context, cfg runConfig) (*engineResult, error) {
	log := cfg.Log
	if log == nil {
		log = slog.New(slog.DiscardHandler)
	}
	plan := cfg.Plan
	if plan == nil {
		return nil, errors.New("reprise: runConfig.Plan is nil: build it with replay.NewPlan or replay.NewStreamPlan")
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
	es, err := newEngines(&cfg)
	defer func() {
		for i := len(es) - 1; i >= 0; i-- {
			es[i].Close()
		}
	}()
	if err != nil {
		return nil, err
	}
	e := es[0]
	hist, err := newHistories(cfg.Context, rows, cfg.Prompts, log)
	if err != nil {
		return nil, err
	}

	rn := &runner{cfg: &cfg, e: e, es: es, fanOut: cfg.Policy == URLPolicyFanOut, leastInFlight: cfg.Policy == URLPolicyLeastInFlight,
		inflight: make([]atomic.Int64, len(es)), log: log, senders: make([]*senderState, nSenders), hist: hist,
		rows: rows, stream: plan.Window(), seed: plan.Config().Seed, plan: plan, shard: plan.Config().Shard}
	if cfg.Media.Enabled() {
		rn.media = media.NewGenerator(cfg.Media, rn.seed)
	}
	rn.prefillCap = plan.Config().PrefillConcurrency > 0
	rn.random = cfg.Policy == URLPolicyRandom
	first := rn.setTotal()
	rn.prog = cfg.Prog
	if rn.prog == nil {
		rn.prog = newProgress(plan)
	}
	rn.acc = summary.NewAccumulator(cfg.Summary)
	for i := range cfg.Before {
		rn.acc.Add(&cfg.Before[i])
	}
	if cfg.Live != nil {
		rn.attachLive(cfg.Live)
	}
	// A sink that fails stops the run at once, as an interruption does:
	// its records could not be written anyway.
	ctx, abort := context.WithCancelCause(ctx)
	defer abort(nil)
	rn.startCollector(abort)

	// Contexts: stopCtx stops the dispatcher; reqCtx cancels requests.
	rn.reqCtx, rn.cancelReq = context.WithCancelCause(context.WithoutCancel(ctx))
	stopCtx, stopSending := context.WithCancel(context.WithoutCancel(ctx))
	defer stopSending()
	finished := make(chan struct{})
	var interrupted atomic.Bool
	go rn.watchStop(ctx, grace, stopSending, finished, &interrupted)

	// Lookahead builders.
	rn.win = rn.newLookahead(nSenders, first)
	var bwg sync.WaitGroup
	buildQuit := make(chan struct{})
	if err := rn.startBuilders(buildQuit, &bwg); err != nil {
		close(finished)
		return nil, err
	}

	progStop, progDone := rn.startProgress()

	// One clock: the scheduler's intended and dispatch times and the
	// engine's sent, token and end times are all read on e.Clock().
	t0 := time.Now()
	if n := rn.win.prefill(stopCtx, first, maxPrebuild); n > 0 {
		log.Debug("lookahead filled before the start", slog.Int64("requests", n), slog.Duration("took", time.Since(t0)))
	}
	if cfg.QuietGC {
		defer quietGC()()
	}
	stats, runErr := rn.runOnClock(ctx, stopCtx, e.Clock())
	unreachable, failed := rn.stopped(&stats)
	if cfg.OnEnd != nil {
		cfg.OnEnd()
	}
	close(finished)
	close(buildQuit)
	rn.win.close()
	bwg.Wait()
	for _, s := range rn.senders {
		if s != nil {
			s.close()
		}
	}
	close(progStop)
	<-progDone
	sinkErr := rn.col.close()

	res := rn.result(stats, interrupted.Load(), unreachable, failed)
	if runErr != nil && !errors.Is(runErr, context.Canceled) {
		return res, runErr
	}
	if sinkErr != nil {
		return res, fmt.Errorf("write records: %w", sinkErr)
	}
	if unreachable != nil {
		return res, unreachable
	}
	if failed != nil {
		return res, failed
	}
	return res, nil
}

// stopped returns why the run stopped before its schedule ended, if it
// did (the connect watch or the failed-request threshold), and says so
// in stats.
func (rn *runner) stopped(stats *replay.Stats) (*UnreachableError, *FailedRequestsError) {
	unreachable, failed := rn.connect.err.Load(), rn.fails.err.Load()
	if unreachable != nil {
		stats.StopReason = fmt.Sprintf("the first %d requests failed to connect", unreachable.Requests)
	}
	if failed != nil {
		stats.StopReason = fmt.Sprintf("%d of %d measured requests failed", failed.Failed, failed.Ended)
	}
	return unreachable, failed
}

// startProgress starts the progress line (runConfig.Progress); closing
// stop ends it, and done is closed once it has (at once without one).
func (rn *runner) startProgress() (stop, done chan struct{}) {
	stop, done = make(chan struct{}), make(chan struct{})
	if rn.cfg.Progress != nil {
		go rn.prog.run(rn.cfg.Progress, rn.cfg.TTY, rn.cfg.ProgressInterval, stop, done)
	} else {
		close(done)
	}
	return stop, done
}

// newEngines makes the engine of every target, target 0's
// (cfg.Engine) first, the others sharing its clock, log and
// concurrency. The caller closes those returned, even with an error.
func newEngines(cfg *runConfig) ([]*engine.Engine, error) {
	e, err := engine.New(cfg.Engine)
	if err != nil {
		return nil, err
	}
	es := []*engine.Engine{e}
	for _, tc := range cfg.Targets {
		tc.Clock, tc.Log, tc.Concurrency = cfg.Engine.Clock, cfg.Engine.Log, cfg.Engine.Concurrency
		te, err := engine.New(tc)
		if err != nil {
			return es, err
		}
		es = append(es, te)
	}
	return es, nil
}

// setTotal sets the run's number of items and returns the first: a
// streamed plan's items are window positions from the first kept row
// on.
func (rn *runner) setTotal() (first int64) {
	rn.total = int64(rn.plan.Requests())
	switch {
	case rn.rows != nil:
		rn.total = int64(len(rn.rows))
	case rn.stream != nil:
		first = rn.stream.First()
		if rn.total >= 0 {
			rn.total += first
		}
	}
	return first
}

// startCollector starts the collector of the run's records; a sink that
// fails, or the connect failures of AbortAfterConnectFailures, stop the
// run through abort.
func (rn *runner) startCollector(abort context.CancelCauseFunc) {
	cfg := rn.cfg
	rn.col = newCollector(cfg.Sink, rn.acc, rn.log)
	rn.col.live = cfg.Live
	rn.col.observe = cfg.Observe
	rn.col.skipRecord = rn.skipRecord
	rn.col.onErr = func(err error) { abort(fmt.Errorf("write records: %w", err)) }
	if n := cfg.AbortAfterConnectFailures; n > 0 {
		rn.connect.limit = int64(n)
		rn.connect.stop = func(err error) { abort(err) }
		rn.connect.armed.Store(true)
	}
	if t := cfg.FailedRequestThreshold; t != nil {
		rn.fails = failWatch{on: true, limit: *t, floor: int64(max(rn.plan.Config().Concurrency, failedRequestFloor)),
			stop: func(err error) { abort(err) }}
	}
}

// watchStop stops sending when ctx is done, and then, after the plan's
// grace (or at once on a second interruption, cfg.Abort), cancels the
// requests in flight; it returns when the run is finished. interrupted
// is set when ctx was interrupted rather than stopped by the run.
func (rn *runner) watchStop(ctx context.Context, grace time.Duration, stopSending func(), finished <-chan struct{}, interrupted *atomic.Bool) {
	log := rn.log
	select {
	case <-ctx.Done():
		rn.signalled.Store(true)
		cause := context.Cause(ctx)
		_, unreachable := errors.AsType[*UnreachableError](cause)
		_, failed := errors.AsType[*FailedRequestsError](cause)
		switch {
		case failed:
			log.Error("stopping the run: no new requests; waiting for in-flight ones", slog.Any("err", cause), slog.Duration("grace", grace))
		case unreachable:
			// Not an interruption: the run ends early, as its schedule
			// would have later; the error says why.
			log.Debug("stopping the run: no new requests; waiting for in-flight ones", slog.Any("err", cause), slog.Duration("grace", grace))
		case errors.Is(cause, context.Canceled) || errors.Is(cause, context.DeadlineExceeded):
			interrupted.Store(true)
			log.Warn("interrupted: no new requests; waiting for in-flight ones", slog.Duration("grace", grace))
		default:
			interrupted.Store(true)
			log.Error("stopping the run: no new requests; waiting for in-flight ones", slog.Any("err", cause), slog.Duration("grace", grace))
		}
		stopSending()
		t := time.NewTimer(grace)
		defer t.Stop()
		select {
		case <-t.C:
			rn.cancelReq(errInterrupted)
		case <-rn.cfg.Abort:
			log.Warn("interrupted twice: cancelling in-flight requests")
			rn.cancelReq(errAborted)
		case <-finished:
		}
	case <-finished:
	}
}

// newLookahead is the run's window of requests built ahead, from item
// first on, sized for nSenders senders.
func (rn *runner) newLookahead(nSenders int, first int64) *window {
	cfg, plan := rn.cfg, rn.plan
	size := cfg.Lookahead
	if size <= 0 {
		size = max(defaultLookahead, 2*nSenders)
		if sh := plan.Config().Shard; sh.Sharded() && rn.rows != nil {
			size *= sh.Count // a shard builds about one row in Count
		}
	}
	win := newWindow(size, rn.total, len(rn.es))
	win.next.Store(first)
	win.high.Store(first)
	win.maxBytes = cfg.LookaheadBytes
	if win.maxBytes <= 0 {
		win.maxBytes = defaultLookaheadBytes
	}
	return win
}

// startBuilders starts the lookahead's builders (runConfig.Builders),
// each with a builder of every target's engine, until quit is closed;
// bwg counts them.
func (rn *runner) startBuilders(quit chan struct{}, bwg *sync.WaitGroup) error {
	nb := rn.cfg.Builders
	if nb <= 0 {
		nb = defaultBuilders
	}
	for range nb {
		bs := make([]*engine.Builder, len(rn.es))
		for k, te := range rn.es {
			b, err := te.NewBuilder()
			if err != nil {
				return err
			}
			bs[k] = b
		}
		bwg.Add(1)
		go func() {
			defer bwg.Done()
			defer func() {
				for _, b := range bs {
					b.Close()
				}
			}()
			rn.win.builderLoop(quit, rn, func(item int64, row *trace.Row, ps []engine.Prepared) {
				if rn.hist.role(int(item))&roleLater != 0 {
					return // built on the send path, with its history
				}
				for k := range ps {
					if rn.builds(int(item), k) {
						rn.build(bs[k], int(item), row, &ps[k], nil)
					}
				}
			})
		}()
	}
	return nil
}

// attachLive gives the live metrics the records sent before the run and
// what they read while it goes: the requests in flight and the intended
// rate.
func (rn *runner) attachLive(live *livemetrics.Metrics) {
	live.Observe(rn.cfg.Before)
	live.SetInFlight(func(t int) int64 {
		if t < 0 || t >= len(rn.inflight) {
			return 0
		}
		return rn.inflight[t].Load()
	})
	rate, has := intendedRate(rn.plan)
	live.SetIntendedRate(func() (float64, bool) { return rate, has })
}

// result is the run's result once every sender and the collector are
// done: the scheduler's stats, the engines' counts and the summary.
func (rn *runner) result(stats replay.Stats, interrupted bool, unreachable *UnreachableError, failed *FailedRequestsError) *engineResult {
	cfg, plan, hist := rn.cfg, rn.plan, rn.hist
	var retries int64
	closes := false
	for _, te := range rn.es {
		retries += te.Retries()
		closes = closes || te.ClosesAfterStream()
	}
	res := &engineResult{Stats: stats, Interrupted: interrupted, Retries: retries,
		ClosesAfterStream: closes, InlineBuilds: rn.inline.Load(),
		SinkQueue: sinkQueue{Waits: rn.col.waits.Load(), WaitNS: rn.col.waitNS.Load(), MaxQueued: rn.col.maxQueued.Load()}}
	if hist != nil {
		res.HistoryBuilds, res.HistoryTruncated = hist.builds.Load(), hist.truncated.Load()
	}
	info := cfg.Info
	info.Cancelled = res.Interrupted
	if u := unreachable; u != nil {
		info.Stopped = fmt.Sprintf("the first %d requests all failed to connect to %s: %v", u.Requests, u.URL, u.Err)
	}
	if failed != nil {
		info.Stopped = failed.reason()
	}
	if info.End.IsZero() {
		info.End = time.Now().UTC()
	}
	if info.Planned == 0 && plan.Requests() > 0 {
		info.Planned = plan.Requests()
	}
	res.Summary = rn.acc.Summary(info)
	return res
}

// intendedRate is the request rate plan's schedule aims at, in requests
// per second, this process's share (a shard's plan has its share): the
// open-loop rate of ModeRate (its plateau, after a ramp), the total turn
// rate of ModeUserCentric. Trace timestamps and closed loops have none.
func intendedRate(plan *replay.Plan) (float64, bool) {
	c := plan.Config()
	switch plan.Mode() {
	case replay.ModeRate:
		return c.RequestRate, c.RequestRate > 0
	case replay.ModeUserCentric:
		return c.UserCentricRate, c.UserCentricRate > 0
	}
	return 0, false
}

// runner is the replay.Handler: it runs jobs on the engine.
type runner struct {
	cfg *runConfig
	// media makes each request's synthetic media (nil for none).
	media *media.Generator
	e     *engine.Engine   // target 0's
	es    []*engine.Engine // every target's, by index
	// fanOut sends every request to every target; leastInFlight sends
	// each to the target with the fewest requests in flight (inflight);
	// else they go round-robin by item.
	fanOut, leastInFlight bool

	// prefillCap reports a replay.Config.PrefillConcurrency: responses tell the job their first token.
	prefillCap bool
	// random reports URLPolicyRandom.
	random bool

	inflight []atomic.Int64
	log      *slog.Logger
	win      *window
	col      *collector
	acc      *summary.Accumulator
	prog     *progress

	hist *histories // nil when no session grows a history

	// The trace: rows loaded whole, or a streamed plan's window (nil,
	// nil for a synthetic load). See row, pin and unpin.
	rows   []trace.Row
	stream *trace.Window
	seed   uint64 // the plan's replay.Config.Seed, of the prompts' seeds
	plan   *replay.Plan
	shard  replay.Shard // the plan's shard: maps synthetic items to the unsharded run's

	total     int64
	senders   []*senderState // indexed by sender id; each touched only by its goroutine
	reqCtx    context.Context
	cancelReq context.CancelCauseFunc
	signalled atomic.Bool
	hctxOnce  sync.Once
	inline    atomic.Int64
	connect   connectWatch
	fails     failWatch
}

// connectWatch stops a run whose first requests all failed to connect
// (runConfig.AbortAfterConnectFailures). Safe for concurrent use; while it
// is disarmed, see is not called (one atomic load per request).
type connectWatch struct {
	armed    atomic.Bool
	failures atomic.Int64
	limit    int64
	stop     func(error)
	err      atomic.Pointer[UnreachableError] // set once it stopped the run
}

// see counts r, a request that ended at target url: a connect failure
// counts towards the limit, and any other outcome of a request that was
// sent (an answer, even an error status; a reset; a timeout) disarms the
// watch for the rest of the run. The request that reaches the limit stops
// the run.
func (w *connectWatch) see(r *record.Request, url string) {
	switch r.ErrorKind {
	case record.ErrConnect:
	case record.ErrBuild, record.ErrNotDelivered:
		return // never on the wire
	default:
		w.armed.Store(false)
		return
	}
	if n := w.failures.Add(1); n >= w.limit && w.armed.CompareAndSwap(true, false) {
		e := &UnreachableError{URL: url, Requests: int(n), Err: errors.New(r.ErrorMessage)}
		w.err.Store(e)
		w.stop(e)
	}
}

// failedRequestFloor is the fewest measured requests that must have
// ended before failWatch judges their failures (AIPerf's grace floor,
// max(concurrency, 10)).
const failedRequestFloor = 10

// failWatch aborts a run once more than limit of its measured requests
// that ended had failed (runConfig.FailedRequestThreshold), from the
// floor-th on. Safe for concurrent use; off (on false), see does nothing.
type failWatch struct {
	on            bool
	limit         float64
	floor         int64
	ended, failed atomic.Int64
	fired         atomic.Bool
	stop          func(error)
	err           atomic.Pointer[FailedRequestsError] // set once it stopped the run
}

// see counts r, a request that ended (or a skipped job's record, with
// ok false): warmup requests do not count. The first count over the
// limit stops the run.
func (w *failWatch) see(phase record.Phase, ok bool) {
	if !w.on || phase != record.PhaseProfile {
		return
	}
	failed := w.failed.Load()
	if !ok {
		failed = w.failed.Add(1)
	}
	n := w.ended.Add(1)
	if n < w.floor || float64(failed) <= w.limit*float64(n) || !w.fired.CompareAndSwap(false, true) {
		return
	}
	e := &FailedRequestsError{Failed: failed, Ended: n, Threshold: w.limit}
	w.err.Store(e)
	w.stop(e)
}

// senderState is one sender goroutine's: a Sender per target (created on
// first need), the builders of inline builds, and, with fan-out, a lane
// per further target.
type senderState struct {
	ss    []*engine.Sender
	bs    []*engine.Builder
	recs  []record.Request // one per target
	lanes []*lane          // fan-out: the len(ss)−1 sends besides this goroutine's
}

func (st *senderState) close() {
	for _, ln := range st.lanes {
		close(ln.start)
		<-ln.exited
	}
	for _, s := range st.ss {
		if s != nil {
			s.Close()
		}
	}
	for _, b := range st.bs {
		if b != nil {
			b.Close()
		}
	}
}

// lane is a long-lived goroutine that sends a fan-out request to one
// target while its sender sends to another (the lead, which rotates with
// the request): the sender hands it the send (start), sends its own, and
// waits for the lane (done). The two send stamps differ by the time the
// runtime takes to wake a parked goroutine.
type lane struct {
	// s, p and rec are the send the sender hands over with start: a
	// target's Sender (owned by the lane until done), its request and
	// record.
	s      *engine.Sender
	p      *engine.Prepared
	rec    *record.Request
	start  chan struct{}
	done   chan struct{}
	exited chan struct{}
}

func (rn *runner) runLane(ln *lane) {
	defer close(ln.exited)
	for range ln.start {
		rn.send(ln.s, ln.p, ln.rec)
		ln.done <- struct{}{}
	}
}

// builds reports whether item is built for target k: every target's with
// fan-out and least-in-flight, only its own round-robin target's else.
func (rn *runner) builds(item, k int) bool {
	return rn.fanOut || rn.leastInFlight || len(rn.es) == 1 || rn.oneOf(item) == k
}

// oneOf is the target of item under round-robin (item mod n) or random
// (a seeded draw per item, randomTarget).
func (rn *runner) oneOf(item int) int {
	if rn.random {
		return randomTarget(item, len(rn.es), rn.seed)
	}
	return item % len(rn.es)
}

// pick returns the target of a request that goes to one target.
func (rn *runner) pick(item int) int {
	n := len(rn.es)
	switch {
	case n == 1:
		return 0
	case rn.leastInFlight:
		best := 0
		for k := 1; k < n; k++ {
			if rn.inflight[k].Load() < rn.inflight[best].Load() {
				best = k
			}
		}
		return best
	}
	return rn.oneOf(item)
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
	switch {
	case role != 0 && rn.hist.dag:
		h = rn.hist.dagGet(j.Item)
	case role != 0:
		h = rn.hist.get(j.SessionRun, role&roleFirst != 0)
	}
	// The job's row stays in a streamed plan's window until it is
	// released below (the scheduler holds it for the Handle call).
	row := rn.row(j.Item)
	ps := rn.win.take(int64(j.Item))
	k := 0 // the target, or with fan-out the one whose response counts
	if !rn.fanOut {
		k = rn.pick(j.Item)
	}
	switch {
	case role&roleLater != 0 && h != nil:
		// A later turn needs the responses of the earlier ones: it is
		// built now, between DispatchedNS and SentNS (the session-induced
		// build time is SentNS − DispatchedNS; the adapter's part is in
		// AdapterNS).
		rn.hist.builds.Add(1)
		ps = rn.inlineBuild(st, j.Item, row, k, h.sp)
	case ps == nil:
		rn.inline.Add(1)
		ps = rn.inlineBuild(st, j.Item, row, k, nil)
	}
	rn.cfg.Inputs.markSent(j.Item)
	p := &ps[k]
	p.Capture = role&roleCapture != 0
	r := &st.recs[k]
	*r = record.Request{}
	rn.identify(r, j, row)
	r.Target = int32(k)
	if r.Graded {
		for t := range ps {
			ps[t].Capture = true // the answer is graded (send)
		}
	}
	// A planned cancellation (--cancel-rate) cancels the request at
	// every target of a fan-out alike.
	var cancelAfter time.Duration
	if rn.cfg.Cancel.picks(j.ID) && r.Phase == record.PhaseProfile {
		cancelAfter = max(rn.cfg.Cancel.After, time.Nanosecond)
	}
	p.CancelAfter = cancelAfter
	for t := range ps {
		// The session's connection (engine.ConnSticky), at every target.
		ps[t].Session, ps[t].EndSession = j.SessionRun, j.Last
	}
	lead := k // the target this goroutine sends to
	if rn.fanOut {
		lead = rn.fanOutLanes(st, j, row, ps, k, cancelAfter)
	}
	if rn.stream != nil {
		// Built and identified: the window may reuse the row's slot
		// while the request runs (a slow request must not stop the
		// reader). Streamed plans have no session histories.
		rn.stream.Release(int64(j.Item))
		row = nil
	}
	if rn.prefillCap {
		// The prefill slot (replay.Config.PrefillConcurrency) is freed at
		// the first token of the response that counts.
		st.ss[k].NotifyFirstToken(j)
	}
	if rn.fanOut {
		// Every target at the same instant: the lanes are started first,
		// then this goroutine sends to the lead target.
		for _, ln := range st.lanes {
			ln.start <- struct{}{}
		}
		rn.send(st.ss[lead], &ps[lead], &st.recs[lead])
		for _, ln := range st.lanes {
			<-ln.done
		}
	} else {
		rn.send(st.ss[k], p, r)
	}
	if h != nil {
		rn.keepHistory(h, j, row, st.ss[k], p.Capture)
	}
	j.Failed = !r.OK() // a dependent request's dependents are then not sent
}

// fanOutLanes identifies the records of every target of a fan-out (k's
// is already) and gives each target but the lead one a lane of st; it
// returns the lead target. The lead rotates with the request, so no
// target is always the one sent first (or last): the lanes' wake-up is
// spread over all of them alike.
func (rn *runner) fanOutLanes(st *senderState, j *replay.Job, row *trace.Row, ps []engine.Prepared, k int, cancelAfter time.Duration) int {
	n := uint64(len(rn.es))
	lead := int(j.ID % n)
	li := 0
	for t := range rn.es {
		rt := &st.recs[t]
		if t != k {
			*rt = record.Request{}
			rn.identify(rt, j, row)
			rt.Target = int32(t)
		}
		fanOutID(rt, j, n, uint64(t))
		ps[t].CancelAfter = cancelAfter
		if t == lead {
			continue
		}
		ln := rn.lane(st, li)
		ln.s, ln.p, ln.rec = st.ss[t], &ps[t], rt
		li++
	}
	return lead
}

// keepHistory records in h what s received for the job's row, when the
// response was captured (even from a failed request: the next turn
// carries exactly the conversation the server produced; with fan-out,
// target 0's), or ends the session's history when it was not.
func (rn *runner) keepHistory(h *history, j *replay.Job, row *trace.Row, s *engine.Sender, captured bool) {
	if !captured {
		if !rn.hist.dag {
			rn.hist.done(j.SessionRun)
		}
		return
	}
	if err := h.sp.Record(row, rn.hist.response(s.Response())); err != nil {
		rn.log.Error("session history", slog.Int64("row", row.Index), slog.Any("err", err))
	}
	if rn.hist.dag {
		rn.hist.dagSave(j.Item, h)
	}
}

// send sends p on s into r and hands the record to the collector. The
// progress line counts target 0's requests of a fan-out (one per job).
func (rn *runner) send(s *engine.Sender, p *engine.Prepared, r *record.Request) {
	t := r.Target
	counted := !rn.fanOut || t == 0
	rn.inflight[t].Add(1)
	if counted {
		rn.prog.sent.Add(1)
		rn.prog.inflight.Add(1)
		rn.prog.intended(r.IntendedNS)
	}
	s.Do(rn.reqCtx, p, r)
	rn.inflight[t].Add(-1)
	if rn.connect.armed.Load() {
		rn.connect.see(r, rn.baseURL(int(t)))
	}
	rn.fails.see(r.Phase, r.OK())
	r.BytesSent = int64(len(p.Body))
	rn.cfg.Outputs.add(r, s.Response())
	if r.Graded {
		rn.cfg.Accuracy.grade(rn.reqCtx, r, s.Response())
	}
	if counted {
		rn.prog.inflight.Add(-1)
		rn.prog.done.Add(1)
		rn.prog.ended(r)
	}
	rn.col.add(r, s.Events())
}

// baseURL is target t's base URL (without user info).
func (rn *runner) baseURL(t int) string {
	if t == 0 {
		return rn.cfg.Engine.BaseURL
	}
	return rn.cfg.Targets[t-1].BaseURL
}

// lane returns st's lane i (of len(rn.es)−1), starting it on first use.
func (rn *runner) lane(st *senderState, i int) *lane {
	for len(st.lanes) <= i {
		ln := &lane{start: make(chan struct{}), done: make(chan struct{}), exited: make(chan struct{})}
		st.lanes = append(st.lanes, ln)
		go rn.runLane(ln)
	}
	return st.lanes[i]
}

// Skip implements replay.SkipHandler: --late skip dropped the job. It runs
// on the dispatcher and never blocks: the job is queued in the collector's
// skip list and becomes a record on the collector's flush goroutine.
//
// What the record needs of the job's row is copied now: a streamed plan's
// window may reuse the row's slot once Skip returns.
func (rn *runner) Skip(j *replay.Job) {
	rn.prog.failed(record.ErrNotDelivered)
	rn.fails.see(j.Phase, false)
	sk := skipped{j: *j, traceRow: -1, isl: -1}
	if row := rn.row(j.Item); row != nil {
		sk.traceRow, sk.session, sk.isl = row.Index, row.SessionID, traceISL(row)
	}
	if !rn.fanOut {
		sk.target = int32(rn.pick(j.Item))
		rn.col.skip(&sk)
		return
	}
	// A fan-out job is a request to every target: each gets its record.
	for t := range rn.es {
		sk.target = int32(t)
		rn.col.skip(&sk)
	}
}

// skipped is a job --late skip dropped, with what its record needs of
// its row.
type skipped struct {
	j        replay.Job
	traceRow int64 // -1 none
	session  string
	isl      int32
	target   int32
}

// skipRecord fills r for a job --late skip dropped.
func (rn *runner) skipRecord(sk *skipped, r *record.Request) {
	j := &sk.j
	if rn.hist.role(j.Item) != 0 && (!rn.fanOut || sk.target == 0) {
		rn.hist.done(j.SessionRun) // --late skip ends the session run
	}
	*r = record.Request{}
	rn.identify(r, j, nil)
	r.TraceRow, r.SessionID = sk.traceRow, sk.session
	r.Target = sk.target
	if rn.fanOut {
		fanOutID(r, j, uint64(len(rn.es)), uint64(sk.target))
	}
	r.ErrorKind = record.ErrNotDelivered
	r.ErrorMessage = "dropped by --late skip"
	if j.DepFailed {
		r.ErrorMessage = "not sent: a request it depends on failed or was not sent"
	}
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
	r.RequestID = rn.cfg.IDBase + j.ID
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
	if j.Depth >= 0 {
		r.Task, r.ReleasedBy, r.Level = int64(j.Session)+1, j.ReleasedBy, int32(j.Depth)+1
		r.DependsOn = j.DependsOn
	}
	if i, ok := rn.cfg.Accuracy.pick(j.Item, row); ok {
		rn.cfg.Accuracy.mark(r, i)
	}
}

// fanOutID gives r, the record of job j at target t of a fan-out to n
// targets, its request id and those of its dependencies at the same
// target (job id × n + t).
func fanOutID(r *record.Request, j *replay.Job, n, t uint64) {
	r.RequestID = j.ID*n + t
	if j.ReleasedBy > 0 {
		r.ReleasedBy = (j.ReleasedBy-1)*n + t + 1
	}
	if j.DependsOn != nil {
		r.DependsOn = make([]uint64, len(j.DependsOn))
		for i, id := range j.DependsOn {
			r.DependsOn[i] = id*n + t
		}
	}
}

func (rn *runner) sender(id int) *senderState {
	if id < 0 || id >= len(rn.senders) {
		return nil
	}
	st := rn.senders[id]
	if st == nil {
		st = &senderState{ss: make([]*engine.Sender, len(rn.es)), bs: make([]*engine.Builder, len(rn.es)),
			recs: make([]record.Request, len(rn.es))}
		for t, te := range rn.es {
			s, err := te.NewSender()
			if err != nil {
				rn.log.Error("sender", slog.Int("target", t), slog.Any("err", err))
				st.close()
				return nil
			}
			st.ss[t] = s
		}
		rn.senders[id] = st
	}
	return st
}

// inlineBuild builds item (whose row is row) on the sender's goroutine,
// with its own builders: for target k, or for every target with fan-out.
func (rn *runner) inlineBuild(st *senderState, item int, row *trace.Row, k int, sp engine.SessionPrompts) []engine.Prepared {
	ps := make([]engine.Prepared, len(rn.es))
	for t := range ps {
		if t != k && !rn.fanOut {
			continue
		}
		if st.bs[t] == nil {
			b, err := rn.es[t].NewBuilder()
			if err != nil {
				ps[t].Err = err
				continue
			}
			st.bs[t] = b
		}
		rn.build(st.bs[t], item, row, &ps[t], sp)
	}
	return ps
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
		if item < 0 || item >= int64(len(rn.rows)) || !rn.plan.Sends(int(item)) {
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
func (rn *runner) build(b *engine.Builder, item int, tr *trace.Row, p *engine.Prepared, sp engine.SessionPrompts) {
	cfg := rn.cfg
	var row trace.Row
	planItem := item // before a shard's renumbering
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
		// A shard's k-th synthetic request is the unsharded run's
		// request k·Count+Index: the same lengths and prompt.
		if sh := rn.shard; sh.Sharded() {
			item = item*sh.Count + sh.Index
			seedIdx = uint64(item)
		}
		row = synthRow(&cfg.Synthetic, item)
	}
	if i, ok := cfg.Accuracy.pick(planItem, tr); ok && sp == nil {
		cfg.Accuracy.apply(&row, i)
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
		SessionID:      row.SessionID,
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
	ms := row.Media
	if rn.media != nil {
		parts, st, err := rn.mediaParts(nil, seedIdx)
		if err != nil {
			p.Err = fmt.Errorf("synthetic media of request %d: %w", item, err)
			return
		}
		in.Media = parts
		ms.Merge(st)
	}
	p.Media = recordMedia(&ms)
	if cfg.MaxTokensFromTrace && row.OutputTokens > 0 {
		in.MaxTokens = row.OutputTokens
	}
	p.InputTokens = int32(row.InputTokens)
	p.TraceInputTokens = traceISL(&row)
	p.ExpectedCachedTokens = -1
	hdr, err := rowHeaders(cfg.SessionHeader, &row)
	if err != nil {
		p.Err = err
		return
	}
	p.RowHeader = hdr
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
		if len(in.Messages) > 1 {
			in.Flags |= adapter.BuildHistory // the conversation prompts before the row (preamble.go)
		}
		if !cfg.Batch.Kind.Generates() {
			if n, err = cfg.Batch.batchInputs(cfg.Prompts, &row, &in, n); err != nil {
				p.Err = fmt.Errorf("batch inputs for row %d (line %d): %w", row.Index, row.Line, err)
				return
			}
			cached = -1
		}
		p.InputTokens = int32(n)
		p.ExpectedCachedTokens = int32(cached)
	}
	b.Build(&in, p)
	rn.recordInput(b, item, &row, &in, p, sp != nil)
}

// synthRow draws the lengths of synthetic request i, deterministically.
// Fixed lengths (no standard deviation) draw nothing and allocate nothing.
func synthRow(s *syntheticLengths, i int) trace.Row {
	var rng *rand.Rand
	draw := func(mean, std float64) float64 {
		v := mean
		if std > 0 {
			if rng == nil {
				rng = rand.New(rand.NewPCG(s.Seed, uint64(i)))
			}
			v = mean + std*rng.NormFloat64()
		}
		return v
	}
	maxISL := math.MaxInt32
	if s.MaxISL > 0 {
		maxISL = s.MaxISL
	}
	isl := synthLength(draw(s.ISL, s.ISLStd), maxISL)
	osl := 0 // no output length: the server decides (Options.ServerOutputLength)
	if s.OSL > 0 {
		osl = synthLength(draw(s.OSL, s.OSLStd), math.MaxInt32)
	}
	return trace.Row{Index: -1, InputTokens: isl, OutputTokens: osl, ParentID: -1, RequestID: -1}
}
