package reprise

import (
	"context"
	"errors"
	"fmt"
	"log/slog"
	"time"

	"github.com/reprise-bench/reprise/engine/record"
	"github.com/reprise-bench/reprise/replay"
)

// WarmupRequestIDBase is added to the request ids of a warmup phase at
// its own load ([WarmupLoad]), so they never collide with the measured
// requests' (0, 1, …) or the priming requests' ([PrimeRequestIDBase]).
const WarmupRequestIDBase = 1 << 61

// WarmupLoad is a warmup phase at its own load, sent before the measured
// requests, as AIPerf's warmup phase (--warmup-concurrency,
// --warmup-request-rate, …): Requests requests (or those due within
// Duration), all recorded as warmup, then, once every one of them ended
// (or Grace after Duration passed), the measured run starts at its own
// load. The zero value has no such phase; Replay.WarmupRequests and
// WarmupDuration mark the first requests of the run itself instead.
//
// A load field left 0 takes the measured run's value (Replay's
// Concurrency, RequestRate, Arrival, …), as in AIPerf. The phase sends
// the same load (trace rows or synthetic requests) from its start, so
// its prompts are the run's first ones.
type WarmupLoad struct {
	// Requests or Duration bound the phase (one of them). Every turn of
	// a session counts as a request.
	Requests int
	Duration time.Duration
	// Grace is how long requests in flight at the end of Duration may
	// finish (0 = Replay.Grace).
	Grace time.Duration

	Concurrency            int
	ConcurrencyRamp        time.Duration
	RequestRate            float64
	RateRamp               time.Duration
	Arrival                replay.Arrival
	PrefillConcurrency     int
	PrefillConcurrencyRamp time.Duration
}

// active reports a warmup phase.
func (w *WarmupLoad) active() bool { return w.Requests > 0 || w.Duration > 0 }

// config returns the replay configuration of the phase: the run's c with
// w's load over it, every request warmup.
func (w *WarmupLoad) config(c replay.Config) replay.Config {
	pc := c
	pc.RequestCount, pc.Duration, pc.WarmupRequests, pc.WarmupDuration = 0, 0, 0, 0
	pc.MaxLateness, pc.StartAt, pc.Adaptive = 0, time.Time{}, nil
	if w.Concurrency > 0 {
		pc.Concurrency, pc.ConcurrencyRamp = w.Concurrency, w.ConcurrencyRamp
	}
	if w.RequestRate > 0 {
		pc.RequestRate, pc.RateRamp = w.RequestRate, w.RateRamp
	}
	if w.Arrival != "" {
		pc.Arrival = w.Arrival
	}
	if w.PrefillConcurrency > 0 {
		pc.PrefillConcurrency, pc.PrefillConcurrencyRamp = w.PrefillConcurrency, w.PrefillConcurrencyRamp
	}
	switch {
	case w.RequestRate > 0:
		pc.Mode = replay.ModeRate
		if w.Concurrency == 0 {
			pc.Concurrency = 0
		}
	case w.Concurrency > 0:
		pc.Mode, pc.RequestRate, pc.RateRamp = replay.ModeConcurrency, 0, 0
	}
	if pc.Mode == replay.ModeConcurrency && pc.Concurrency == 0 {
		pc.Concurrency = 1
	}
	if pc.Mode != replay.ModeRate && pc.Mode != replay.ModeAuto {
		pc.Arrival = replay.DefaultArrival // the pattern of a rate only
	}
	if pc.Arrival != replay.ArrivalGamma {
		pc.Smoothness = replay.DefaultSmoothness
	}
	if pc.PrefillConcurrency > 0 && pc.Concurrency > 0 && pc.PrefillConcurrency > pc.Concurrency {
		pc.PrefillConcurrency = pc.Concurrency
	}
	// The phase's plan counts its requests as measured ones, to stop at
	// Requests or Duration; warmupSink records them as warmup.
	if w.Duration > 0 {
		pc.Duration = w.Duration
		if w.Grace > 0 {
			pc.Grace = w.Grace
		}
	} else {
		pc.RequestCount = w.Requests
	}
	return pc
}

// validateWarmup reports the problems of o.Warmup.
func validateWarmup(o *Options) []*FieldError {
	w := &o.Warmup
	var errs []*FieldError
	bad := func(path, format string, args ...any) { errs = append(errs, fieldError(path, format, args...)) }
	n := 0
	for _, on := range []bool{w.Requests > 0, w.Duration > 0} {
		if on {
			n++
		}
	}
	loadSet := w.Concurrency != 0 || w.RequestRate != 0 || w.Arrival != "" || w.PrefillConcurrency != 0 || w.Grace != 0 ||
		w.ConcurrencyRamp != 0 || w.RateRamp != 0 || w.PrefillConcurrencyRamp != 0
	switch {
	case n > 1:
		bad("Warmup.Requests", "{Warmup.Requests} and {Warmup.Duration} exclude each other: give one")
	case n == 0 && loadSet:
		bad("Warmup.Requests", "a warmup load needs {Warmup.Requests} or {Warmup.Duration}")
	}
	if w.Requests < 0 || w.Concurrency < 0 || w.PrefillConcurrency < 0 || w.RequestRate < 0 || w.Duration < 0 || w.Grace < 0 {
		bad("Warmup", "{Warmup} counts, rates and durations must not be negative")
	}
	if w.Grace > 0 && w.Duration == 0 {
		bad("Warmup.Grace", "{Warmup.Grace} needs {Warmup.Duration}")
	}
	if w.active() && (o.Replay.WarmupRequests > 0 || o.Replay.WarmupDuration > 0) {
		bad("Warmup.Requests", "{Warmup.Requests} (a warmup phase) and {Replay.WarmupRequests}/{Replay.WarmupDuration} (warmup inside the run) exclude each other")
	}
	if w.active() && len(errs) == 0 {
		pc := w.config(o.Replay)
		if err := pc.Validate(); err != nil {
			bad("Warmup", "{Warmup}: %v", err)
		}
	}
	return errs
}

// warmupSink marks a warmup phase's records as warmup (their ids start
// at WarmupRequestIDBase: runConfig.IDBase).
type warmupSink struct {
	sink recordSink
	recs []record.Request
}

func (w *warmupSink) WriteRequests(batch []record.Request) error {
	for i := range batch {
		batch[i].Phase = record.PhaseWarmup
		w.recs = append(w.recs, batch[i])
	}
	return w.sink.WriteRequests(batch)
}

func (w *warmupSink) WriteEvents(batch []record.Event) error { return w.sink.WriteEvents(batch) }

func (w *warmupSink) Close() error { return nil }

// warmup runs the warmup phase of o on the run's engine and sink and
// returns its records for the run's summary.
func warmup(ctx context.Context, o *Options, rcfg runConfig, rp *replayPlan, log *slog.Logger) ([]record.Request, error) {
	w := &o.Warmup
	if rp.rows == nil && o.Trace.Path != "" {
		return nil, errors.New("warmup phase: the trace was streamed; hold it in memory (Trace.Hold)")
	}
	pc := w.config(o.Replay)
	plan, err := replay.NewPlan(pc, rp.rows)
	if err != nil {
		return nil, fmt.Errorf("warmup phase: %w", err)
	}
	ws := &warmupSink{sink: rcfg.Sink}
	wc := rcfg
	wc.Plan, wc.Sink, wc.Progress, wc.OnEnd, wc.Inputs, wc.Before, wc.Live = plan, ws, nil, nil, nil, nil, nil
	wc.IDBase = WarmupRequestIDBase
	wc.FailedRequestThreshold = nil // warmup requests are not judged
	wc.RTTProbe = 0                 // the measured run probes the round trip
	start := time.Now()
	res, err := runEngine(ctx, wc)
	if err != nil {
		return nil, fmt.Errorf("warmup phase: %w", err)
	}
	if res.Interrupted {
		return nil, fmt.Errorf("warmup phase: %w", context.Canceled)
	}
	log.Info("warmup phase done", slog.Int("requests", len(ws.recs)), slog.String("mode", string(plan.Mode())),
		slog.Int("concurrency", pc.Concurrency), slog.Float64("request_rate", pc.RequestRate), slog.Duration("took", time.Since(start)))
	return ws.recs, nil
}
