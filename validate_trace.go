package reprise

import (
	"context"
	"fmt"
	"log/slog"
	"strings"

	"github.com/reprise-bench/reprise/engine"
	"github.com/reprise-bench/reprise/engine/adapter/native"
	"github.com/reprise-bench/reprise/internal/prompt"
	"github.com/reprise-bench/reprise/internal/spool"
	"github.com/reprise-bench/reprise/internal/tokenizer"
	"github.com/reprise-bench/reprise/replay"
	"github.com/reprise-bench/reprise/trace"
)

// readTrace is validate's fourth step: the trace's rows, checked in a
// first pass and read again while the run goes (design 0006), or, when
// that cannot be, held whole (rp.rows). It reports whether the plan is
// streamed, and then complete: rp.plan and rp.prompts are made.
func (v *validation) readTrace() (streamed bool, err error) {
	o, rp := v.o, v.rp
	rp.tracePath = tracePath(o)
	opts := traceOptions(v.ctx, o, rp.tok, v.log)
	src := newTraceSource(o, rp, &opts)
	if streamed, err = scanTrace(o, rp, src, opts, rp.pcfg); err != nil {
		return false, problem("Trace.Path", err)
	}
	if streamed {
		return true, nil
	}
	if !o.Trace.Hold {
		opts.Log = nil // the first pass logged the warnings
	}
	if rp.digest == nil && rp.spool == nil { // Hold: the first pass stopped early (a file only)
		if rp.digest, err = digestFile(rp.tracePath); err != nil {
			return false, problem("Trace.Path", err)
		}
	}
	if rp.rows, rp.stats, err = src.readAll(opts); err != nil {
		return false, problem("Trace.Path", err)
	}
	if len(rp.rows) == 0 {
		return false, problem("Trace.Path", noRows(rp))
	}
	rp.rows = takeEntries(o, rp.rows)
	if reshaping(o) {
		if rp.rows, err = reshapeRows(o, rp.rows, v.log); err != nil {
			return false, problem("Trace.Synthesis", err)
		}
	}
	if sm, _ := trace.ParseSampling(o.Trace.Sampling); sm != trace.SampleSequential && o.Trace.Sessions == 0 {
		n := 0
		if o.Replay.RequestCount > 0 {
			n = o.Replay.RequestCount + o.Replay.WarmupRequests
		}
		rp.rows = trace.Sample(rp.rows, sm, o.Replay.Seed, n)
	}
	if o.Prompts.SharedSystemTokens > 0 || o.Prompts.UserContextTokens > 0 {
		if err := preambleRows(rp.tracePath, rp.rows); err != nil {
			return false, problem("Prompts.SharedSystemTokens", err)
		}
	}
	rp.nRows = len(rp.rows)
	warnBelowTemplate(o, rp.rows, v.log)
	return false, nil
}

// warnBelowTemplate says how many rows ask for no more tokens than the
// chat template alone adds (--apply-chat-template): such a prompt is
// sent with one token of its own, so the server counts more than asked.
func warnBelowTemplate(o *Options, rows []trace.Row, log *slog.Logger) {
	corr := o.Prompts.ISLCorrection
	if !o.Prompts.ApplyChatTemplate || corr <= 0 {
		return
	}
	n := 0
	for i := range rows {
		if rows[i].InputTokens > 0 && rows[i].InputTokens <= corr {
			n++
		}
	}
	if n > 0 {
		log.Warn("prompts shorter than the chat template", slog.Int("rows", n), slog.Int("of", len(rows)), slog.Int("template_tokens", corr),
			slog.String("sent as", fmt.Sprintf("%d tokens (the template and one of the prompt's own)", corr+1)))
	}
}

// traceOptions is how o's trace is read, its tokens counted with tok. A
// row without an output length would go without max_tokens, which under
// ignore_eos never ends: it is refused unless Synthetic.OSL gives one.
func traceOptions(ctx context.Context, o *Options, tok tokenizer.Tokenizer, log *slog.Logger) trace.Options {
	tf, _ := trace.ParseFormat(o.Trace.Format) // checkOptions reported its problem
	opts := trace.Options{Format: tf, BlockSize: o.Trace.BlockSize, FitHashIDs: o.Prompts.HashMismatch == string(prompt.MismatchFit), SkipInvalid: o.Trace.SkipInvalid, DropFailed: o.Trace.DropFailed,
		ModelFilter: o.Trace.ModelFilter, MaxInputTokens: o.Trace.MaxInputTokens, DefaultOutputTokens: int(o.Synthetic.OSL),
		RequireOutput: o.MaxTokensFromTrace && !o.ServerOutputLength && !generatesMedia(o.Endpoint), CountNoOutput: o.ServerOutputLength, Log: log, Context: ctx,
		Columns: o.Trace.Columns, Sessions: o.Trace.AllTurns, CountTokens: tok.Count, MediaLimits: mediaLimits(&o.Media)}
	switch o.Endpoint {
	case trace.EndpointChat, trace.EndpointCompletions:
		// A recorded row's lengths are those of its endpoint's requests.
		opts.Endpoint = o.Endpoint
	}
	return opts
}

// generatesMedia reports whether endpoint is a native generation
// endpoint (image, video, transcription, speech), whose requests carry
// no max_tokens: a row's output length means nothing there.
func generatesMedia(endpoint string) bool {
	ep, ok := native.Lookup(endpoint)
	if !ok {
		return false
	}
	return ep.Adapter.Info().Kind.Media()
}

// scanTrace is the first pass over the trace file (design 0006): it reads
// every row once, reporting every problem as ReadAll would, and meanwhile
// prepares prompt synthesis, checks the context mode and surveys what the
// plan needs. When the trace can be replayed while it is read again, it
// fills rp (a streamed plan, the prompts, the counts) and returns true;
// otherwise it returns false and says why in rp.loadNote, and the caller
// loads the trace whole. Nothing per row is kept but the prompt
// expectations (8 bytes).
func scanTrace(o *Options, rp *replayPlan, src traceSource, opts trace.Options, pcfg prompt.Config) (bool, error) {
	r, dr, closeTrace, err := src.first(opts)
	if err != nil {
		return false, err
	}
	rp.format = r.Format()
	if o.PrimePrefixes && rp.spool == nil {
		closeTrace()
		rp.loadNote = "priming the prefixes reads every row first"
		return false, nil
	}
	if o.Trace.Hold && rp.spool == nil {
		closeTrace()
		rp.loadNote = "loading was asked for"
		return false, nil
	}
	if reshaping(o) && rp.spool == nil {
		closeTrace()
		rp.loadNote = "the --synthesis-* options reshape the whole trace"
		return false, nil
	}
	if sm, _ := trace.ParseSampling(o.Trace.Sampling); sm != trace.SampleSequential && rp.spool == nil {
		closeTrace()
		rp.loadNote = "dataset sampling " + string(sm) + " draws from all rows"
		return false, nil
	}
	if note := holdNote(o); note != "" && rp.spool == nil {
		closeTrace()
		rp.loadNote = note
		return false, nil
	}
	s, synthErr := prompt.New(rp.tok, pcfg)
	var prep *prompt.Preparer
	if synthErr == nil {
		if prep, err = s.NewPreparer(); err != nil {
			closeTrace()
			return false, err
		}
	}
	sv := replay.NewSurvey(o.Replay)
	cc := engine.ContextMode(o.Prompts.ContextMode).Checker()
	rp.stats, err = trace.Scan(r, func(row *trace.Row) {
		if prep != nil {
			prep.Add(row)
		}
		sv.Add(row)
		cc.Add(row)
	})
	partial := opts.MaxRows > 0 && rp.stats.Kept >= opts.MaxRows
	if err == nil && !partial {
		if err = dr.drain(); err != nil {
			err = fmt.Errorf("read trace %s: %w", rp.tracePath, err)
		}
	}
	closeTrace()
	if err != nil {
		return false, err
	}
	if !partial {
		rp.digest = dr.d // a digest of part of standard input would name no file
	}
	if rp.stats.Kept == 0 {
		return false, noRows(rp)
	}
	if o.Trace.Hold { // standard input: its copy is complete now
		rp.loadNote = "loading was asked for"
		return false, nil
	}
	if reshaping(o) {
		rp.loadNote = "the --synthesis-* options reshape the whole trace"
		return false, nil
	}
	if sm, _ := trace.ParseSampling(o.Trace.Sampling); sm != trace.SampleSequential {
		rp.loadNote = "dataset sampling " + string(sm) + " draws from all rows"
		return false, nil
	}
	if note := holdNote(o); note != "" {
		rp.loadNote = note
		return false, nil
	}
	if err := sv.Streamable(); err != nil {
		rp.loadNote = strings.TrimPrefix(err.Error(), replay.ErrNotStreamable.Error()+": ")
		return false, nil
	}
	if synthErr != nil {
		return false, problem("Tokenizer", fmt.Errorf("%s: prompt synthesis with tokenizer %s: %w", rp.tracePath, rp.tok.Name(), synthErr))
	}
	if err := prep.Done(); err != nil {
		return false, problem("Trace.Path", fmt.Errorf("%s: %w", rp.tracePath, err))
	}
	if err := cc.Err(); err != nil {
		return false, problem("Prompts.ContextMode", err)
	}
	// The second pass reads quietly: its warnings were the first's. The
	// run's window stops it (Close), not the context: a request built
	// while in-flight requests finish after Ctrl-C still finds its row.
	again := opts
	again.Log, again.Context = nil, nil
	rp.plan, err = replay.NewStreamPlan(sv, func() (*trace.Reader, error) { return src.again(again) })
	if err != nil {
		return false, err
	}
	rp.prompts = &promptSource{s: s, ids: o.Endpoint == "completions" && pcfg.Format == prompt.FormatTokenIDs, chat: rp.chat}
	rp.nRows = int(rp.stats.Kept)
	rp.streamed = true
	return true, nil
}

// traceSource is where a replay reads its trace: once to validate it,
// hashing its bytes, and again while the run goes or to hold it whole.
type traceSource struct {
	// first opens the validating pass; drain the digestReader before
	// calling close for a digest of the whole input.
	first func(opts trace.Options) (r *trace.Reader, dr *digestReader, close func(), err error)
	// again opens a later pass.
	again func(opts trace.Options) (*trace.Reader, error)
}

// traceSource returns the source of the trace file c names, or, for "-",
// of standard input through an unnamed temporary copy (rp.spool, capped
// by Trace.SpoolMiB). From a reader with Replay.RequestCount N (and
// neither Replay.StartOffset nor Replay.WarmupDuration), only the first N
// + Replay.WarmupRequests rows are read (opts.MaxRows): a producer that never
// ends can feed a run, and the rest of the input is never read.
func newTraceSource(o *Options, rp *replayPlan, opts *trace.Options) traceSource {
	if rp.tracePath != "-" {
		path := rp.tracePath
		return traceSource{
			first: func(opts trace.Options) (*trace.Reader, *digestReader, func(), error) {
				return openDigested(path, opts)
			},
			again: func(opts trace.Options) (*trace.Reader, error) { return trace.Open(path, opts) },
		}
	}
	if rc := o.Replay; rc.RequestCount > 0 && rc.StartOffset == 0 && rc.WarmupDuration == 0 {
		opts.MaxRows = int64(rc.RequestCount) + int64(rc.WarmupRequests)
	}
	return traceSource{
		first: func(opts trace.Options) (*trace.Reader, *digestReader, func(), error) {
			sp, err := spool.New(o.Trace.Reader, spool.Config{Max: int64(o.Trace.SpoolMiB) << 20, What: "standard input"})
			if err != nil {
				return nil, nil, nil, err
			}
			rp.spool = sp
			dr := newDigestReader(sp, newTraceDigest())
			r, err := trace.NewReader("-", dr, opts)
			if err != nil {
				return nil, nil, nil, err
			}
			return r, dr, func() { r.Close() }, nil
		},
		again: func(opts trace.Options) (*trace.Reader, error) {
			in, err := rp.spool.Reopen()
			if err != nil {
				return nil, err
			}
			return trace.NewReader("-", in, opts)
		},
	}
}

// readAll reads the whole trace again, as trace.ReadAll does: rows stably
// sorted by arrival, re-based to the earliest.
func (s traceSource) readAll(opts trace.Options) ([]trace.Row, trace.ReadStats, error) {
	r, err := s.again(opts)
	if err != nil {
		return nil, trace.ReadStats{}, err
	}
	defer r.Close()
	return trace.ReadAllFrom(r)
}

// traceEndpoint returns the endpoint the first row of o's trace file was
// recorded through (Mooncake endpoint, written by reprise record), or ""
// when it names none or cannot be read (the trace's own read says why).
// Standard input is not read twice: its rows are checked against the
// default endpoint.
func traceEndpoint(ctx context.Context, o *Options) string {
	if o.Trace.Reader != nil || o.Trace.Path == "" || o.Trace.Path == "-" {
		return ""
	}
	tf, err := trace.ParseFormat(o.Trace.Format)
	if err != nil || (tf != "" && tf != trace.FormatMooncake) {
		return ""
	}
	r, err := trace.Open(o.Trace.Path, trace.Options{Format: tf, BlockSize: o.Trace.BlockSize, MaxRows: 1, Context: ctx})
	if err != nil {
		return ""
	}
	defer r.Close()
	var row trace.Row
	if r.Format() != trace.FormatMooncake || r.Next(&row) != nil {
		return ""
	}
	return row.Endpoint
}
