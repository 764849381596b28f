package reprise

import (
	"cmp"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"log/slog"
	"math"
	"os"
	"path/filepath"
	"regexp"
	"runtime"
	"runtime/debug"
	"runtime/pprof"
	"strings"
	"time"

	"github.com/reprise-bench/reprise/arrowio"
	"github.com/reprise-bench/reprise/engine"
	"github.com/reprise-bench/reprise/engine/adapter"
	"github.com/reprise-bench/reprise/engine/adapter/native"
	"github.com/reprise-bench/reprise/engine/summary"
	"github.com/reprise-bench/reprise/internal/adaptive"
	"github.com/reprise-bench/reprise/internal/livemetrics"
	"github.com/reprise-bench/reprise/internal/prio"
	"github.com/reprise-bench/reprise/internal/stability"
	"github.com/reprise-bench/reprise/internal/tokenizer"
	"github.com/reprise-bench/reprise/replay"
	"github.com/reprise-bench/reprise/selftest/hostinfo"
	"github.com/reprise-bench/reprise/wasm"
)

// promptCacheBytes bounds the prompt synthesizer's block cache.
const promptCacheBytes = 32 << 20

// Start is what a run is about to do, handed to [Options.OnStart] once
// the run directory exists and before the first request.
type Start struct {
	// Dir is the run directory.
	Dir string
	// Trace names the trace: its path, "-" for a reader, "" for a
	// synthetic load.
	Trace string
	// Graded describes the graded items ("100 items of mmlu", mixed
	// into the load or as the load); "" when nothing is graded.
	Graded string
	// URL is the base URL as files name it (no user info); EndpointPath
	// is the path the adapter appends to it.
	URL, EndpointPath string
	// Endpoint is the adapter's name.
	Endpoint string
	// Mode is the schedule's mode.
	Mode string
	// Planned is the number of requests planned, -1 when unknown (a
	// synthetic load limited by time alone).
	Planned int
	// TraceRows is the number of rows of the trace; HeldReason, when not
	// empty, says why they are held in memory rather than read while the
	// run goes.
	TraceRows  int
	HeldReason string
	// ServerOutputRows counts the trace's rows without an output length
	// sent with neither max_tokens nor ignore_eos (Options.ServerOutputLength).
	ServerOutputRows int64
	// ServerOutputSynthetic says a synthetic load without an output
	// length sends its requests with neither max_tokens nor ignore_eos.
	ServerOutputSynthetic bool
	// DefaultedOutput counts the trace's rows without an output length,
	// which ask for Synthetic.OSL output tokens.
	DefaultedOutput int64
	// Calibration is the machine calibration the run applies (nil =
	// none): its file, when it was made, its safe load and errors.
	Calibration *summary.Calibration
	// UI is the live view in effect: [UILine], or [UIDashboard] when
	// Options.UI asked for it and Progress is a terminal (what is written
	// to that terminal while the dashboard is up is drawn over).
	UI string
}

// Result is what a run measured and wrote.
type Result struct {
	// Dir is the run directory.
	Dir string
	// Summary is the run's summary, as written to summary.json.
	Summary *summary.Summary
	// Stats are the dispatcher's counts and lateness.
	Stats replay.Stats
	// Interrupted reports that Run's context was cancelled; Aborted that
	// Options.Abort was closed as well.
	Interrupted, Aborted bool
	// AIPerfSkipped reports that the AIPerf export was asked for but not
	// written because the run was aborted.
	AIPerfSkipped bool
	// InlineBuilds counts requests built on the send path because the
	// lookahead had not reached them.
	InlineBuilds int64
	// ClosesAfterStream reports that the server closed the connection
	// after every streamed response.
	ClosesAfterStream bool
	// Writer is how the record writer kept up (summary.json's
	// record_writer).
	Writer *arrowio.WriterReport
	// Verdicts are the checks the run failed, in the order of the
	// [VerdictKind] constants; empty when it passed. An interrupted run
	// has the Interrupted verdict alone.
	Verdicts []Verdict
	// Adaptive is the adaptive scaling's outcome (Options.Adaptive; nil
	// without).
	Adaptive *AdaptiveResult
}

// Run validates o (every problem at once, as a [*ConfigError], before
// anything is sent or created), prepares the trace, tokenizer, prompts,
// adapter, plan and telemetry, replays, and writes the run directory:
// records, telemetry tables, manifest.json and summary.json. A failed
// request is a row, never an error. When the run started but could not
// complete (a full disk, a failed telemetry table), Run returns the
// Result of what it measured together with the error.
//
// With Telemetry.MetricsAddr, Run serves the run's live metrics from
// before the first request (a port in use is a [*ConfigError]) and,
// after the summary is written, returns only once a scrape begun after
// the end was answered, Telemetry.MetricsLinger passed, or ctx is done.
//
// The errors that name an Options field are [*FieldError]s: every problem
// found before anything is sent, in a [*ConfigError]; a run directory at
// Output.Dir that holds files (wrapping [arrowio.ErrRunDirInUse]); a Nice
// value the system refuses; a profile or export file that cannot be
// written. Telemetry that cannot start is a [*TelemetryError]. Nothing
// was sent in any of these, except when the heap profile or the export,
// written after the run, fails.
//
// Before it creates the run directory, Run checks the servers
// ([PreflightOptions]); one that does not answer is an
// [*UnreachableError] with nothing sent or created. A run whose first
// requests all fail to connect ([Options.AbortAfterConnectFailures])
// stops early and returns its Result with an [*UnreachableError].
func Run(ctx context.Context, o Options) (*Result, error) {
	log := o.Log
	if log == nil {
		log = slog.New(slog.DiscardHandler)
	}
	setMemoryLimit()
	ar, sw := startAdaptive(&o), startStability(&o)
	rp, err := prepare(ctx, &o, log)
	if err != nil {
		return nil, err
	}
	defer rp.close() // a streamed plan's trace, when the run does not start; standard input's copy
	if rp.wasm != nil {
		defer rp.wasm.Close(context.WithoutCancel(ctx))
	}
	if err := readyServers(ctx, &o, rp, log); err != nil {
		return nil, err
	}
	// The run's own metrics listen before anything is created or sent: a
	// port in use is a setup error.
	live, err := listenLive(o.Telemetry.MetricsAddr, log)
	if err != nil {
		return nil, err
	}
	if live != nil {
		defer closeLive(ctx, live, log)
	}
	uiAbort := make(chan struct{}) // closed by the dashboard's second stop key
	abort, stopAbort := abortContext(o.Abort, uiAbort)
	defer stopAbort()
	rp.preflight = timerPreflight(log) // after Nice took effect: it changes how soon the kernel wakes reprise up
	mode := string(rp.plan.Mode())
	start := time.Now().UTC()
	rp.clock, rp.clockOK = hostinfo.ClockState()
	warnStart(&o, rp, start, log)
	acfg := tablesConfig(&o)
	// userCtx is ctx, cancelled too by the dashboard's first stop key (as
	// the first Ctrl-C cancels ctx). A table that cannot be written (a
	// full disk) stops the run at once.
	userCtx, userStop := context.WithCancel(ctx)
	defer userStop()
	runCtx, stopRun := context.WithCancelCause(userCtx)
	defer stopRun(nil)
	acfg.OnError = func(err error) { stopRun(err) }
	run, err := createRun(&o, start, mode, acfg)
	if err != nil {
		return nil, err
	}
	// The engine closes the records table and tel.stop the telemetry
	// tables, reporting their errors; this closes what an early return
	// leaves open.
	defer run.Close()
	return (&startedRun{o: &o, rp: rp, run: run, live: live, log: log, ar: ar, sw: sw, mode: mode, start: start,
		userCtx: userCtx, userStop: userStop, runCtx: runCtx, abort: abort, uiAbort: uiAbort}).execute(ctx)
}

// startedRun is a run whose directory is created: what replaying it and
// completing the directory need. The contexts: userCtx is Run's ctx,
// cancelled too by the dashboard's first stop key (userStop); runCtx is
// userCtx, cancelled too by a table that cannot be written; abort ends
// the requests in flight (Options.Abort, or the dashboard's second stop
// key, which closes uiAbort).
type startedRun struct {
	o        *Options
	rp       *replayPlan
	run      *arrowio.Run
	live     *livemetrics.Server // nil without Telemetry.MetricsAddr
	log      *slog.Logger
	ar       *adaptive.Run
	sw       *stability.Watch
	mode     string
	start    time.Time
	userCtx  context.Context
	userStop context.CancelFunc
	runCtx   context.Context
	abort    context.Context
	uiAbort  chan struct{}
}

// execute starts the run's telemetry, writes the manifest, serves the
// live metrics, replays the plan, and completes the run directory: the
// summary and the exports. Its deferred stops run before Run's.
func (r *startedRun) execute(ctx context.Context) (*Result, error) {
	o, rp, run, log, mode := r.o, r.rp, r.run, r.log, r.mode
	abort, runCtx, userCtx := r.abort, r.runCtx, r.userCtx
	dir := run.Dir()
	tel, err := startRunTelemetry(ctx, o, rp, run, log)
	if err != nil {
		return nil, err
	}
	info := runInfoOf(o, rp, mode, r.start)
	ui := uiOf(o)
	rcfg, inputs := newRunConfig(o, rp, run, info, abort.Done(), log)
	announce(o, rp, dir, info, ui)
	runID, err := writeManifest(run, o, rp, r.start)
	if err != nil {
		return nil, err
	}
	liveMetrics, push := serveLive(ctx, r.live, o, rp, info, runID, log)
	defer push.finish(ctx, log) // an early return; a no-op after the final push
	if o.Profile.CPU != "" {
		stop, err := startCPUProfile(o.Profile.CPU)
		if err != nil {
			return nil, err
		}
		defer stop()
	}
	if r.live != nil {
		// After the run (and its summary), until a scrape has read the
		// final values or MetricsLinger has passed.
		defer lingerLive(ctx, r.live, o.Telemetry.MetricsLinger, log)
	}
	if err := beforeRun(runCtx, o, &rcfg, rp, log); err != nil {
		tel.stop(abort, log)
		return nil, err
	}
	rcfg.Live = liveMetrics // after priming: its records are counted as Before
	var dash *liveDashboard // nil (a no-op) without the dashboard
	if ui == UIDashboard {
		dash = startDashboard(o, rp, rcfg.Prog, tel, mode, userCtx, abort, stopKey(userCtx, r.userStop, r.uiAbort))
	}
	defer dash.stop(nil) // an early return; a no-op after the final frame
	if err := profileServers(runCtx, o, true); err != nil {
		tel.stop(abort, log)
		return nil, err
	}
	res, runErr := runEngineWatched(runCtx, r.ar, r.sw, dir, rcfg, userCtx)
	stopServerProfiles(context.WithoutCancel(ctx), o, log)
	if runErr == nil && runCtx.Err() != nil && userCtx.Err() == nil {
		runErr = context.Cause(runCtx) // a telemetry table failed
	}
	if err := writeHeapProfile(o.Profile.Heap); err != nil {
		return nil, err
	}
	tel.stop(abort, log)
	push.finish(ctx, log) // every record is counted: the final values
	aborted := abort.Err() != nil
	if res == nil {
		return nil, fmt.Errorf("replay: %w", runErr)
	}
	completeSummary(o, rp, res, tel)
	dash.stop(res.Summary)
	out := resultOf(o, res, run, aborted)
	// Atomic: a full disk leaves no summary.json rather than a cut one. A
	// failure here still returns the result.
	sumErr := run.WriteSummary(res.Summary, out.Writer)
	// A run the failed-request threshold stopped has every record of what
	// it sent: its exports are written, as AIPerf writes them.
	_, thresholdStop := errors.AsType[*FailedRequestsError](runErr)
	if err := writeOutputs(ctx, run, o, res.Summary, out, inputs, rcfg.Outputs, log, aborted, (runErr == nil || thresholdStop) && sumErr == nil); err != nil {
		return out, err
	}
	return out, runError(runErr, sumErr, dir)
}

// setMemoryLimit sets the Go heap limit of a replay when GOMEMLIMIT is
// not set, from before the trace is read: loading a large trace makes
// garbage (the row slice's growth, parse buffers) that would otherwise
// double the peak at GOGC=100. The limit is soft: above it the GC works
// harder, capped at half the CPU by the runtime, never fails. While
// requests are sent it is the collector's only trigger
// (runConfig.QuietGC).
func setMemoryLimit() {
	if os.Getenv("GOMEMLIMIT") == "" {
		debug.SetMemoryLimit(defaultMemoryLimit)
	}
}

// stopServerProfiles ends the servers' profiles started for the run
// (Options.Server); a failure is only logged: the run is over.
func stopServerProfiles(ctx context.Context, o *Options, log *slog.Logger) {
	if err := profileServers(ctx, o, false); err != nil {
		log.Warn("server profiler", slog.Any("err", err))
	}
}

// startRunTelemetry starts sampling the servers' telemetry into run, on
// the one clock of the schedule, the records and the samples.
func startRunTelemetry(ctx context.Context, o *Options, rp *replayPlan, run *arrowio.Run, log *slog.Logger) (*telemetryRun, error) {
	if rp.engine.Clock == nil {
		rp.engine.Clock = replay.NewClock()
	}
	tel, err := startTelemetry(ctx, telemetryConfigOf(o), run, rp.engine.Clock, log)
	if err != nil {
		return nil, &TelemetryError{Err: err}
	}
	return tel, nil
}

// announce tells Options.OnStart what the run is about to do.
func announce(o *Options, rp *replayPlan, dir string, info summary.RunInfo, ui string) {
	if o.OnStart != nil {
		o.OnStart(Start{Dir: dir, Trace: rp.tracePath, URL: rp.url, EndpointPath: rp.engine.Adapter.Info().Path,
			Endpoint: info.Endpoint, Mode: info.Mode, Planned: rp.plan.Requests(), TraceRows: rp.nRows, HeldReason: rp.loadNote,
			DefaultedOutput: rp.stats.DefaultedOutput, ServerOutputRows: rp.stats.NoOutput, ServerOutputSynthetic: rp.serverOutput, Calibration: rp.calibration, UI: ui, Graded: rp.acc.describe()})
	}
}

// serveLive serves the run's live metrics on live, starts their OTLP
// push (Telemetry.OTLP), and returns both; nil when neither needs them.
func serveLive(ctx context.Context, live *livemetrics.Server, o *Options, rp *replayPlan, info summary.RunInfo, runID string, log *slog.Logger) (*livemetrics.Metrics, *otlpRun) {
	if live == nil && o.Telemetry.OTLP.URL == "" {
		return nil, nil
	}
	m := newLiveMetrics(o, rp, runID, info.Mode)
	if live != nil {
		live.Serve(m)
	}
	return m, startOTLP(ctx, o, m, info, runID, log)
}

// listenLive listens for the run's own metrics at addr
// (Telemetry.MetricsAddr) before anything is created or sent, so a port
// in use is a problem with the options, as validate's; nil for "".
func listenLive(addr string, log *slog.Logger) (*livemetrics.Server, error) {
	if addr == "" {
		return nil, nil
	}
	live, err := livemetrics.Listen(addr)
	if err != nil {
		return nil, &ConfigError{Errors: []*FieldError{
			fieldError("Telemetry.MetricsAddr", "{Telemetry.MetricsAddr}: %w; pick another port, or :0 for a free one", err)}}
	}
	log.Info("serving live metrics", slog.String("url", "http://"+live.Addr()+livemetrics.Path))
	return live, nil
}

func closeLive(ctx context.Context, live *livemetrics.Server, log *slog.Logger) {
	if err := live.Close(ctx); err != nil {
		log.Warn("live metrics server", slog.Any("err", err))
	}
}

// lingerLive serves the final live metrics until a scrape has read them
// or linger has passed.
func lingerLive(ctx context.Context, live *livemetrics.Server, linger time.Duration, log *slog.Logger) {
	if linger > 0 {
		log.Info("serving the final live metrics until a scrape", slog.String("url", "http://"+live.Addr()+livemetrics.Path),
			slog.Duration("at_most", linger))
	}
	live.Linger(ctx, linger)
}

// prepare waits for the servers to start (Options.Server) and validates
// o into a plan.
func prepare(ctx context.Context, o *Options, log *slog.Logger) (*replayPlan, error) {
	if err := waitForServers(ctx, o, log); err != nil {
		return nil, err
	}
	rp, err := validate(ctx, o, log)
	if err != nil {
		if ctx.Err() != nil && errors.Is(err, ctx.Err()) {
			return nil, fmt.Errorf("interrupted while reading the trace: %w", err) // nothing is wrong with the options
		}
		return nil, err
	}
	return rp, nil
}

// readyServers readies the run once the plan is made: reprise's own
// priority (Options.Nice), the servers checked (Options.Preflight) and
// reset (Options.Server).
func readyServers(ctx context.Context, o *Options, rp *replayPlan, log *slog.Logger) error {
	if o.Nice != nil {
		if err := prio.SetNice(*o.Nice); err != nil {
			return fieldError("Nice", "{Nice} %d: %w, or leave {Nice} out", *o.Nice, err)
		}
	}
	if err := checkServers(ctx, o, rp, log); err != nil {
		if ctx.Err() != nil {
			return fmt.Errorf("interrupted while checking the server: %w", err)
		}
		return err
	}
	return resetServers(ctx, o, log)
}

// runError is Run's error from the run's (runErr) and the summary's
// (sumErr); nil when neither failed.
func runError(runErr, sumErr error, dir string) error {
	if runErr != nil {
		if sumErr != nil {
			return fmt.Errorf("replay: %w; %w (partial results in %s)", runErr, sumErr, dir)
		}
		return fmt.Errorf("replay: %w (partial results in %s)", runErr, dir)
	}
	return sumErr
}

// stopKey is what the dashboard's stop key does: the first press stops
// sending, as a first Ctrl-C (userStop); the next ones cancel the
// requests in flight (closing uiAbort).
func stopKey(userCtx context.Context, userStop func(), uiAbort chan struct{}) func() {
	return func() {
		if userCtx.Err() == nil {
			userStop()
			return
		}
		select {
		case <-uiAbort:
		default:
			close(uiAbort)
		}
	}
}

// timerPreflight measures the host's timer quality for the manifest.
func timerPreflight(log *slog.Logger) map[string]any {
	pfStart := time.Now()
	pf := replay.Preflight(replay.DefaultPreflight)
	pfTook := time.Since(pfStart)
	log.Debug("timer preflight", slog.String("primitive", pf.Primitive), slog.Duration("p50", pf.P50),
		slog.Duration("p99", pf.P99), slog.Duration("max", pf.Max), slog.Duration("took", pfTook))
	return preflightManifest(pf, pfTook)
}

// tablesConfig is how the run's tables are written (Options.Output).
func tablesConfig(o *Options) arrowio.Config {
	acfg := arrowio.NewConfig()
	acfg.Format = arrowio.Format(o.Output.Format)
	acfg.SingleFile = o.Output.SingleFile
	acfg.PartInterval, acfg.PartRows = partInterval(o.Output.PartInterval), o.Output.PartRows
	acfg.Metadata = map[string]string{"reprise.version": Version()}
	return acfg
}

// completeSummary adds to the engine's summary what the engine does not
// know: the servers' telemetry and the accuracy settings.
func completeSummary(o *Options, rp *replayPlan, res *engineResult, tel *telemetryRun) {
	if tel != nil {
		servers, gpu := tel.summaries(res.Summary.WindowStartNS, res.Summary.WindowEndNS, res.Summary.TotalOSL)
		res.Summary.AttachTelemetry(&summary.Telemetry{Servers: servers, GPU: gpu})
	}
	if res.Summary.Accuracy != nil {
		res.Summary.Accuracy.Settings = rp.acc.settings(&o.Accuracy)
	}
}

// resultOf is Run's result of the engine's res into run.
func resultOf(o *Options, res *engineResult, run *arrowio.Run, aborted bool) *Result {
	out := &Result{Dir: run.Dir(), Summary: res.Summary, Stats: res.Stats, Interrupted: res.Interrupted, Aborted: aborted,
		InlineBuilds: res.InlineBuilds, ClosesAfterStream: res.ClosesAfterStream, Writer: run.Records().Report()}
	q := res.SinkQueue // the one queue in front of the record writer
	out.Writer.Waits, out.Writer.WaitNS, out.Writer.MaxQueuedBatches = q.Waits, q.WaitNS, q.MaxQueued
	out.Verdicts = verdicts(o, res.Summary, &res.Stats, res.Interrupted, aborted)
	out.Adaptive = res.adaptive
	return out
}

// startAdaptive makes o.Adaptive's controller, when set, and gives it to
// o.Replay (o is Run's copy of the caller's options; checkAdaptive
// reports the problems of an invalid one, which gets none).
func startAdaptive(o *Options) *adaptive.Run {
	if o.Adaptive == nil {
		return nil
	}
	var bad bool
	c := adaptiveConfig(o, func(string, string, ...any) { bad = true })
	if bad || c.Validate() != nil {
		return nil
	}
	ar := adaptive.NewRun(c)
	o.Replay.Adaptive = &replay.Adaptive{Start: c.Min, Period: c.Period, Assess: ar.Assess}
	return ar
}

// startStability makes o.Stability's watch, when set, and gives it to
// o.Replay (checkStability reports the problems of an invalid one, which
// gets none). A run bounded by nothing else lasts until the watch stops
// it.
func startStability(o *Options) *stability.Watch {
	st := o.Stability
	if st == nil || st.Interval <= 0 || st.Percentage <= 0 || st.MaxWindows < stability.Windows || o.Adaptive != nil {
		return nil
	}
	sw := stability.NewWatch(st.Percentage, st.MaxWindows, st.Interval)
	o.Replay.Watch = &replay.Watch{Period: st.Interval, Check: sw.Check}
	if o.Replay.Duration == 0 && o.Replay.RequestCount == 0 {
		// A bound one window past the cap: the load goes on until the
		// watch ends it.
		o.Replay.Duration = st.Interval * time.Duration(st.MaxWindows+1)
	}
	return sw
}

// runEngineWatched is runEngineAdaptive with sw's stability watch (nil:
// none): its windows get every record, and its report is the summary's.
func runEngineWatched(ctx context.Context, ar *adaptive.Run, sw *stability.Watch, dir string, rcfg runConfig, userCtx context.Context) (*engineResult, error) {
	if sw == nil {
		return runEngineAdaptive(ctx, ar, dir, rcfg, userCtx)
	}
	rcfg.Observe = sw.Observe // checkStability refuses it with ar
	res, err := runEngineAdaptive(ctx, nil, dir, rcfg, userCtx)
	if res != nil && res.Summary != nil {
		res.Summary.Run.Stability = sw.Report()
	}
	return res, err
}

// runEngineAdaptive is runEngine with ar's controller (nil: none): its
// first window and events file start in dir, its windows get every
// record, and its summary is written when the run ends (a run that ended
// first, by its duration or userCtx's interruption, leaves it
// incomplete).
func runEngineAdaptive(ctx context.Context, ar *adaptive.Run, dir string, rcfg runConfig, userCtx context.Context) (*engineResult, error) {
	if ar == nil {
		return runEngine(ctx, rcfg)
	}
	if err := ar.Open(dir, rcfg.Summary, time.Now().UnixNano()); err != nil {
		return nil, err
	}
	rcfg.Observe = ar.Observe
	res, err := runEngine(ctx, rcfg)
	reason := "benchmark_duration_ended"
	if userCtx.Err() != nil {
		reason = "interrupted"
	}
	s, serr := ar.Close(reason)
	if res != nil {
		o := s.Outcome
		res.adaptive = &AdaptiveResult{Status: o.Status, Reason: o.Reason, Boundary: o.Boundary, Setting: o.Setting,
			LastPassing: o.LastPass, FirstFailing: o.FirstFail, Sustained: o.Sustained}
	}
	if err == nil {
		err = serr
	}
	return res, err
}

// runInfoOf is the summary's description of the run of o and rp.
func runInfoOf(o *Options, rp *replayPlan, mode string, start time.Time) summary.RunInfo {
	info := summary.RunInfo{Model: o.Model, URL: rp.url, Endpoint: rp.engine.Adapter.Info().Name, Mode: mode,
		Trace: rp.tracePath, Streaming: rp.streaming, Start: start, Version: Version(), NetworkRTT: givenRTT(o.NetworkLatency)}
	if rp.kind != adapter.KindGenerate {
		info.EndpointKind = rp.kind.String()
		if !rp.kind.Generates() {
			info.InputsPerRequest = o.BatchSize
		}
	}
	return info
}

// newRunConfig is the engine run of o's plan rp into run's records, and
// the inputs log of an AIPerf export (nil without one).
func newRunConfig(o *Options, rp *replayPlan, run *arrowio.Run, info summary.RunInfo, abort <-chan struct{}, log *slog.Logger) (runConfig, *inputsLog) {
	rp.engine.Counter = rp.tok
	rp.engine.CaptureText = o.Output.ExportOutputs
	for i := range rp.targets {
		rp.targets[i].Counter = rp.tok // every target's output is counted alike
	}
	outputs := newOutputsLog(o) // outputs.go: --export-outputs-json
	var inputs *inputsLog
	if o.Output.Export == "aiperf" {
		inputs = newInputsLog()
	}
	rcfg := runConfig{
		Engine: rp.engine, Targets: rp.targets, Policy: o.URLPolicy, Plan: rp.plan,
		Synthetic: syntheticLengths{ISL: o.Synthetic.ISL, ISLStd: o.Synthetic.ISLStdDev, OSL: o.Synthetic.OSL, OSLStd: o.Synthetic.OSLStdDev, Seed: o.Replay.Seed,
			MaxISL: o.Trace.MaxInputTokens},
		Media:   mediaConfig(&o.Media),
		Prompts: rp.prompts, Context: engine.ContextMode(o.Prompts.ContextMode), Streaming: rp.streaming, MaxTokensFromTrace: o.MaxTokensFromTrace, Sink: run.Records(),
		Summary: summary.Options{Streaming: rp.streaming, UseServerTokenCount: o.UseServerTokenCount, Goodput: rp.slos,
			LateThreshold: o.Replay.LateThreshold, ISLCorrection: o.Prompts.ISLCorrection, Calibration: rp.calibration,
			Targets: targetInfos(o, rp), HTTPTiming: o.Output.HTTPTiming, HTTPTrace: o.Output.HTTPTrace},
		Info: info, Abort: abort, Log: log, QuietGC: true, Inputs: inputs, Outputs: outputs,
		Cancel:        cancelPlan{Rate: o.CancelRate, After: o.CancelAfter, Seed: o.Replay.Seed},
		SessionHeader: o.SessionHeader,
		Accuracy:      rp.acc,
		Batch:         newBatchPlan(rp.kind, o),
	}
	if o.Progress != nil && uiOf(o) == UILine {
		rcfg.Progress = o.Progress
		rcfg.TTY = isTerminal(o.Progress)
		rcfg.ProgressInterval = o.ProgressInterval
	}
	rcfg.Prog = newProgress(rp.plan)
	rcfg.OnEnd, rcfg.AbortAfterConnectFailures, rcfg.FailedRequestThreshold = o.OnEnd, o.AbortAfterConnectFailures, o.FailedRequestThreshold
	if n := o.NetworkLatency; n.Probe {
		rcfg.RTTProbe = cmp.Or(n.ProbeInterval, engine.DefaultRTTProbeInterval) // the measured run's: warmup and priming drop it
	}
	return rcfg, inputs
}

// beforeRun sends what goes before the measured run: the priming
// requests (Options.PrimePrefixes), then the warmup phase (Options.Warmup);
// their records become rcfg.Before.
func beforeRun(ctx context.Context, o *Options, rcfg *runConfig, rp *replayPlan, log *slog.Logger) error {
	if len(rp.prime) > 0 {
		before, err := prime(ctx, *rcfg, rp, log)
		if err != nil {
			return err
		}
		rcfg.Before = before
	}
	if o.Warmup.active() {
		before, err := warmup(ctx, o, *rcfg, rp, log)
		if err != nil {
			return err
		}
		rcfg.Before = append(rcfg.Before, before...)
	}
	return nil
}

// startCPUProfile starts the CPU profile of Options.Profile.CPU, to path;
// stop ends it and closes the file.
func startCPUProfile(path string) (stop func(), err error) {
	f, err := os.Create(path)
	if err != nil {
		return nil, fieldError("Profile.CPU", "{Profile.CPU}: %w", err)
	}
	if err := pprof.StartCPUProfile(f); err != nil {
		f.Close()
		return nil, fieldError("Profile.CPU", "{Profile.CPU}: %w", err)
	}
	return func() { pprof.StopCPUProfile(); f.Close() }, nil
}

// writeOutputs writes what follows the summary: the time slices and the
// AIPerf export, when o asks for them; ok is whether the run and its
// summary went well (neither is written otherwise). An aborted run
// skips the export (it reads every record back).
func writeOutputs(ctx context.Context, run *arrowio.Run, o *Options, s *summary.Summary, out *Result, inputs *inputsLog, outputs *outputsLog, log *slog.Logger, aborted, ok bool) error {
	dir := out.Dir
	if o.Output.SliceDuration > 0 && !aborted && ok {
		if err := writeTimeSlices(run, dir, o, s, out.Writer); err != nil {
			return fieldError("Output.SliceDuration", "{Output.SliceDuration}: %w", err)
		}
	}
	if err := outputs.export(dir, s, log, aborted || !ok); err != nil {
		return err
	}
	if o.Output.Export == "aiperf" && aborted {
		out.AIPerfSkipped = true // it reads every record back: not now
	} else if o.Output.Export == "aiperf" && ok {
		if err := run.ExportAIPerf(s); err != nil {
			return fieldError("Output.Export", "{Output.Export} aiperf: %w", err)
		}
		if err := arrowio.RenameAIPerfExports(dir, o.Output.ExportPrefix); err != nil {
			return fieldError("Output.ExportPrefix", "{Output.ExportPrefix}: %w", err)
		}
		if err := arrowio.WriteAIPerfInputs(dir, inputs.list()); err != nil {
			return fieldError("Output.Export", "{Output.Export} aiperf: %w", err)
		}
		if err := writeServerMetricsExport(dir, o.Output.ServerMetricsFormats, s); err != nil {
			return fieldError("Output.ServerMetricsFormats", "{Output.ServerMetricsFormats}: %w", err)
		}
	}
	logMLflow(ctx, o, dir, s, mlflowStatus(aborted, ok), log)
	return nil
}

// abortContext is a context cancelled when ch or ui is closed (never for
// a nil one); stop releases it.
func abortContext(ch, ui <-chan struct{}) (context.Context, func()) {
	ctx, cancel := context.WithCancel(context.Background())
	if ch == nil && ui == nil {
		return ctx, cancel
	}
	done := make(chan struct{})
	go func() {
		select {
		case <-ch:
			cancel()
		case <-ui:
			cancel()
		case <-done:
		}
	}()
	return ctx, func() { close(done); cancel() }
}

// hasTrace reports whether o names a trace (else the load is synthetic).
func hasTrace(o *Options) bool { return o.Trace.Path != "" || o.Trace.Reader != nil }

// tracePath names o's trace in messages and files: its path, or "-" for
// a reader without one.
func tracePath(o *Options) string {
	if o.Trace.Reader != nil && o.Trace.Path == "" {
		return "-"
	}
	if o.Trace.Reader != nil {
		return o.Trace.Path
	}
	return o.Trace.Path
}

// partInterval maps OutputOptions.PartInterval to arrowio's PartInterval,
// in which 0 means the default and a negative value none.
func partInterval(d time.Duration) time.Duration {
	if d == 0 {
		return -1
	}
	return d
}

// createRun creates the run directory: Output.Dir, refused when it holds
// files (unless Overwrite, which clears an earlier run from it), or a new
// runs/<UTC time>-<model>-<mode>/, with a -2, -3, … suffix when a run
// started in the same second has that name.
func createRun(o *Options, start time.Time, mode string, tables arrowio.Config) (*arrowio.Run, error) {
	if o.Output.Dir == "" {
		return arrowio.Create(filepath.Join("runs", fmt.Sprintf("%s-%s-%s", start.Format("20060102T150405Z"), safeName(o.Model), mode)),
			arrowio.CreateConfig{Tables: tables, Unique: true})
	}
	run, err := arrowio.Create(o.Output.Dir, arrowio.CreateConfig{Tables: tables, Overwrite: o.Output.Overwrite})
	if err != nil {
		if !errors.Is(err, arrowio.ErrRunDirInUse) {
			return nil, err
		}
		return nil, fieldError("Output.Dir", "{Output.Dir} %w", err)
	}
	return run, nil
}

var unsafeChars = regexp.MustCompile(`[^A-Za-z0-9._-]+`)

// safeName makes a model name usable in a directory name.
func safeName(s string) string {
	s = unsafeChars.ReplaceAllString(s, "_")
	if s == "" {
		return "model"
	}
	return s
}

// isTerminal reports whether w is a terminal.
func isTerminal(w io.Writer) bool {
	f, ok := w.(*os.File)
	if !ok {
		return false
	}
	st, err := f.Stat()
	return err == nil && st.Mode()&os.ModeCharDevice != 0
}

// endpointError is the problem of a Wasm endpoint that failed to load or
// rejected its configuration: what failed, said once.
func endpointError(o *Options, err error) *FieldError {
	if errors.Is(err, wasm.ErrUnknownAdapter) {
		return fieldError("Endpoint", "{Endpoint} %q: want a native endpoint (%s), a .wasm file or a shipped Wasm adapter (%s)",
			o.Endpoint, strings.Join(native.Names(), ", "), strings.Join(wasm.ShippedNames(), ", "))
	}
	if le, ok := errors.AsType[*wasm.LoadError](err); ok {
		return fieldError("Endpoint", "{Endpoint} %q: %s", o.Endpoint, le.Reason())
	}
	return fieldError("Endpoint", "{Endpoint} %q: %v", o.Endpoint, err)
}

// writeManifest records the effective configuration (secrets redacted)
// and the run's provenance: docs/format/manifest.md.
func writeManifest(run *arrowio.Run, o *Options, rp *replayPlan, start time.Time) (string, error) {
	var traceSHA256, traceBytes any // null without a trace
	if rp.digest != nil {
		traceSHA256, traceBytes = rp.digest.Sum(), rp.digest.n
	}
	headers := make([]string, 0, len(o.Headers))
	for _, h := range o.Headers {
		headers = append(headers, headerForFiles(h))
	}
	m := map[string]any{
		"reprise_version":        Version(),
		"start_time":             start,
		"host":                   hostinfo.Describe(),
		"preflight":              rp.preflight,
		"trace":                  rp.tracePath,
		"trace_sha256":           traceSHA256,
		"trace_size_bytes":       traceBytes,
		"trace_format":           string(rp.format),
		"trace_rows":             rp.nRows,
		"trace_streamed":         rp.streamed,
		"url":                    rp.url,
		"url_user_info_set":      rp.userInfo,
		"model":                  o.Model,
		"endpoint":               o.Endpoint,
		"adapter":                adapterManifest(rp),
		"streaming":              rp.streaming,
		"ignore_eos":             o.IgnoreEOS,
		"min_tokens":             o.MinTokens,
		"max_tokens_from_trace":  o.MaxTokensFromTrace,
		"server_output_rows":     rp.stats.NoOutput,
		"extra_body":             extraBodyForFiles(o.ExtraBody),
		"headers":                headers,
		"api_key_set":            o.APIKey != "",
		"timeout":                o.Timeout.String(),
		"session_header":         o.SessionHeader,
		"accuracy":               rp.acc.settings(&o.Accuracy),
		"batch_size":             o.BatchSize,
		"query_tokens":           o.QueryTokens,
		"rankings":               rankingsManifest(&o.Rankings),
		"cancel_rate":            o.CancelRate,
		"cancel_after":           o.CancelAfter.String(),
		"max_response_events":    o.MaxResponseEvents,
		"max_event_bytes":        o.MaxEventBytes,
		"max_response_bytes":     o.MaxResponseBytes,
		"http2":                  o.HTTP2,
		"kernel_timestamps":      !o.NoKernelTimestamps && !o.HTTP2,
		"max_connections":        o.MaxConnections,
		"connection_reuse":       connReuseName(o),
		"nice":                   processNice(),
		"tokenizer":              rp.tok.Name(),
		"tokenizer_sha256":       tokenizer.Identity(rp.tok),
		"use_server_token_count": o.UseServerTokenCount,
		"goodput":                o.Goodput,
		"min_good_fraction":      o.MinGoodFraction,
		"max_error_rate":         o.MaxErrorRate,
		"format":                 o.Output.Format,
		"single_file":            o.Output.SingleFile,
		"part_interval":          o.Output.PartInterval.String(),
		"part_rows":              o.Output.PartRows,
		"export_level":           o.Output.ExportLevel,
		"export":                 o.Output.Export,
		"synthetic":              map[string]float64{"isl": o.Synthetic.ISL, "isl_stddev": o.Synthetic.ISLStdDev, "osl": o.Synthetic.OSL, "osl_stddev": o.Synthetic.OSLStdDev},
		"replay":                 o.Replay.Manifest(),
		"mode":                   string(rp.plan.Mode()),
		"planned_requests":       rp.plan.Requests(),
		"context_mode":           o.Prompts.ContextMode,
		"prompts": map[string]any{"seed": o.Prompts.Seed, "format": o.Prompts.Format, "hash_mismatch": o.Prompts.HashMismatch,
			"isl_correction": o.Prompts.ISLCorrection},
		"clock":       clockManifest(rp),
		"calibration": calibrationManifest(rp.calibration, start),
	}
	if len(o.Targets) > 0 {
		ts := []map[string]any{{"url": rp.url, "model": o.Model, "headers": headers}}
		for i, t := range targetInfos(o, rp)[1:] {
			th := make([]string, 0, len(o.Targets[i].Headers))
			for _, h := range o.Targets[i].Headers {
				th = append(th, headerForFiles(h))
			}
			ts = append(ts, map[string]any{"url": t.URL, "model": t.Model, "headers": th})
		}
		m["targets"], m["url_policy"] = ts, o.URLPolicy
	}
	b, err := json.Marshal(m)
	if err != nil {
		return "", fmt.Errorf("encode manifest: %w", err)
	}
	id, err := manifestRunID(b)
	if err != nil {
		return "", fmt.Errorf("encode manifest: %w", err)
	}
	m["run_id"] = id
	return id, run.WriteManifest(m)
}

// newLiveMetrics makes the run's live metrics (Telemetry.MetricsAddr),
// labelled with its run id (every shard's is the same) and its targets.
func newLiveMetrics(o *Options, rp *replayPlan, runID, mode string) *livemetrics.Metrics {
	ts := []livemetrics.Target{{URL: rp.url, Model: o.Model}}
	if infos := targetInfos(o, rp); len(infos) > 0 {
		ts = ts[:0]
		for _, t := range infos {
			ts = append(ts, livemetrics.Target{URL: t.URL, Model: t.Model})
		}
	}
	shard := ""
	if o.Replay.Shard.Sharded() {
		shard = o.Replay.Shard.String()
	}
	return livemetrics.New(livemetrics.Config{RunID: runID, Targets: ts, Streaming: rp.streaming, Mode: mode, Shard: shard,
		Version: Version(), Go: true})
}

// processNice is the nice value reprise's threads run at (Options.Nice,
// or the one it was started with), nil where it cannot be read.
func processNice() *int {
	n, err := prio.Nice()
	if err != nil {
		return nil
	}
	return &n
}

// adapterManifest describes the endpoint adapter for the manifest.
func adapterManifest(rp *replayPlan) map[string]any {
	info := rp.engine.Adapter.Info()
	m := map[string]any{"name": info.Name, "version": info.Version, "path": info.Path}
	if rp.wasm != nil {
		m["source"] = rp.wasm.Source()
		m["sha256"] = rp.wasm.SHA256()
		m["interruptible"] = rp.wasm.Interruptible()
	} else {
		m["source"] = "native"
	}
	return m
}

func writeHeapProfile(path string) error {
	if path == "" {
		return nil
	}
	f, err := os.Create(path)
	if err != nil {
		return fieldError("Profile.Heap", "{Profile.Heap}: %w", err)
	}
	defer f.Close()
	runtime.GC()
	if err := pprof.WriteHeapProfile(f); err != nil {
		return fieldError("Profile.Heap", "{Profile.Heap}: %w", err)
	}
	return nil
}

// clockManifest is the manifest's "clock": the host clock's state, null
// where the system reports none.
func clockManifest(rp *replayPlan) any {
	if !rp.clockOK {
		return nil
	}
	return rp.clock
}

// warnStart warns about what makes a shard's common start less common:
// a host clock that is not synchronised (or whose state is unknown), and
// a Replay.StartAt already past.
func warnStart(o *Options, rp *replayPlan, now time.Time, log *slog.Logger) {
	at, sh := o.Replay.StartAt, o.Replay.Shard
	if at.IsZero() && !sh.Sharded() {
		return
	}
	switch {
	case !rp.clockOK:
		log.Warn("the host clock's synchronisation state is unknown: shards started at one instant may start apart")
	case !rp.clock.Synchronized:
		log.Warn("the host clock is not synchronised (NTP/PTP): shards started at one instant start as far apart as their clocks are",
			slog.Duration("max_error", time.Duration(rp.clock.MaxErrorNS)))
	}
	if !at.IsZero() && at.Before(now) {
		log.Warn("Replay.StartAt is already past: the schedule starts there, and what fell due since is late",
			slog.Time("start_at", at), slog.Duration("past_by", now.Sub(at)))
	}
}

// calibrationManifest is the manifest's calibration: the file the run
// applied, when it was made and how long before the run's start, null for
// none.
func calibrationManifest(c *summary.Calibration, start time.Time) any {
	if c == nil {
		return nil
	}
	return map[string]any{"file": c.File, "created": c.Created, "age_s": math.Round(start.Sub(c.Created).Seconds())}
}

// targetInfos names the targets of a run with several for its summary
// (nil with one).
func targetInfos(o *Options, rp *replayPlan) []summary.TargetInfo {
	if len(o.Targets) == 0 {
		return nil
	}
	ts := []summary.TargetInfo{{URL: rp.url, Model: o.Model}}
	for i, t := range o.Targets {
		model := t.Model
		if model == "" {
			model = o.Model
		}
		ts = append(ts, summary.TargetInfo{URL: rp.targetURLs[i], Model: model})
	}
	return ts
}
