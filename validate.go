package reprise

import (
	"context"
	"errors"
	"fmt"
	"log/slog"
	"math/rand/v2"
	"regexp"

	"github.com/reprise-bench/reprise/engine"
	"github.com/reprise-bench/reprise/engine/adapter"
	"github.com/reprise-bench/reprise/engine/summary"
	"github.com/reprise-bench/reprise/internal/prompt"
	"github.com/reprise-bench/reprise/internal/spool"
	"github.com/reprise-bench/reprise/internal/tokenizer"
	"github.com/reprise-bench/reprise/replay"
	"github.com/reprise-bench/reprise/selftest/hostinfo"
	"github.com/reprise-bench/reprise/trace"
	"github.com/reprise-bench/reprise/wasm"
)

// replayPlan is everything a validated command line resolves to.
type replayPlan struct {
	// chat is the chat template synthesized prompts are fitted through
	// (Options.Prompts.ApplyChatTemplate); nil for none.
	chat *chatFit
	// acc is the run's graded items (Options.Accuracy); nil for none.
	acc      *accPlan
	engine   engine.Config
	slos     []summary.SLO
	rows     []trace.Row // nil when streamed
	nRows    int         // rows of the trace
	streamed bool        // the plan reads the trace while the run goes
	// kind is the endpoint's kind; streaming is whether responses are
	// streamed (Options.Streaming, off for embeddings and rankings,
	// which never stream).
	kind      adapter.Kind
	streaming bool
	clock     hostinfo.Clock
	clockOK   bool   // clock was read
	loadNote  string // why a trace file is held whole
	// serverOutput is a synthetic load of a generating endpoint without
	// an output length (Options.ServerOutputLength): the server decides.
	serverOutput bool
	stats        trace.ReadStats
	format       trace.Format
	tok          tokenizer.Tokenizer
	wasm         *wasm.Adapter
	prompts      *promptSource
	// prime are the priming requests' rows (Options.PrimePrefixes), the
	// prompts prepared with them first; nil without priming.
	prime     []trace.Row
	pcfg      prompt.Config
	plan      *replay.Plan
	tracePath string
	// url is Options.URL as files and logs name it: without user info
	// (urlForFiles); userInfo says whether it had some.
	url      string
	userInfo bool
	// targets are the engines of Options.Targets, and targetURLs their
	// URLs as files name them.
	targets    []engine.Config
	targetURLs []string
	// digest is the trace's sha256 and size, from its first read (nil
	// without a trace, or when standard input was not read to its end).
	digest *traceDigest
	// spool is the copy of a trace read from standard input, which the
	// run reads again (nil otherwise); close releases it.
	spool *spool.Spool
	// preflight is the manifest's timer preflight (runReplay).
	preflight map[string]any
	// calibration is the one the run applies (nil = none).
	calibration *summary.Calibration
}

var headerName = regexp.MustCompile("^[!#$%&'*+.^_`|~0-9A-Za-z-]+$")

// validate reports every problem of the command line and of the trace at
// once, before anything is sent. Reading the trace stops when ctx is done.
// On success the caller closes the plan (rp.close); on error nothing is
// left open.
//
// It goes in steps, each reading what the one before made (design 0030):
// the options alone (checkOptions: no file, no server), what they name
// outside (resolveInputs), the tokenizer and the adapter
// (resolveTokenizer, resolveEngine); every problem so far is reported
// together. Then the trace (readTrace) and the plan (buildPlan), each of
// which stops at its first problem.
func validate(ctx context.Context, o *Options, log *slog.Logger) (rp *replayPlan, err error) {
	rp = &replayPlan{}
	opened := rp // rp is nil once an error is returned
	defer func() {
		if err != nil {
			opened.close()
		}
	}()
	v := newValidation(ctx, o, log, rp)
	v.errs = checkOptions(o)
	v.resolveInputs()
	v.resolveTokenizer()
	v.resolveEngine()
	v.applyChatTemplate()
	if len(v.errs) > 0 {
		return nil, &ConfigError{Errors: v.errs}
	}
	rp.pcfg = promptConfig(o, v.fixedISL)
	if hasTrace(o) {
		streamed, err := v.readTrace()
		if err != nil {
			return nil, err
		}
		if streamed {
			return rp, nil
		}
	}
	if err := buildPlan(o, rp); err != nil {
		return nil, err
	}
	return rp, nil
}

// promptConfig is how prompts are synthesized for o; fixedISL is whether
// o.Prompts.ISLCorrection was given (not learned from the server).
func promptConfig(o *Options, fixedISL bool) prompt.Config {
	pcfg := prompt.NewConfig()
	// Blocks are cheap to regenerate (a few ns per token); a smaller cache
	// keeps a long-prompt replay within a few hundred MB.
	pcfg.BlockCacheBytes = promptCacheBytes
	pcfg.Seed = o.Prompts.Seed
	if b := o.Prompts.CacheBust; b != "" && b != "none" {
		pcfg.Seed ^= rand.Uint64() // this run's salt: no block equals an earlier run's
	}
	pcfg.Mismatch = prompt.Mismatch(o.Prompts.HashMismatch)
	// An ISL correction given is every row's; else a recorded row's
	// template_tokens replace the one learned from the server.
	pcfg.ISLCorrection, pcfg.FixedISLCorrection = o.Prompts.ISLCorrection, fixedISL
	pcfg.Format = prompt.Format(o.Prompts.Format)
	if o.Prompts.Corpus != "" {
		pcfg.Corpus, _ = prompt.CorpusWords(o.Prompts.Corpus) // checkPrompts reported an unknown name
	}
	return pcfg
}

// buildPlan is validate's last step: the rows a trace does not give (a
// shaped synthetic load, the graded items), the priming rows, the
// prompts and the replay plan.
func buildPlan(o *Options, rp *replayPlan) error {
	if !hasTrace(o) && o.Synthetic.shaped() {
		rp.rows = shapedRows(&o.Synthetic, &o.Replay, o.Trace.MaxInputTokens, o.Trace.Sampling)
		rp.nRows = len(rp.rows)
	}
	if rp.acc != nil && rp.acc.all {
		rp.rows = rp.acc.rows() // the items are the load
		rp.nRows = len(rp.rows)
	}
	if o.PrimePrefixes && rp.rows != nil {
		rp.prime = primeRows(rp.rows)
	}
	var err error
	rp.prompts, err = newPromptSource(rp, rp.pcfg, o.Endpoint == "completions" && rp.pcfg.Format == prompt.FormatTokenIDs)
	if err != nil {
		if rp.tracePath != "" {
			return problem("Trace.Path", fmt.Errorf("%s: %w", rp.tracePath, err))
		}
		return problem("Tokenizer", err)
	}
	rp.prompts.pre = newPreamble(o, rp.prompts)
	rp.prompts.chat = rp.chat
	if err := engine.ContextMode(o.Prompts.ContextMode).Check(rp.rows); err != nil {
		return problem("Prompts.ContextMode", err)
	}
	rc := o.Replay
	rc.RequestCount = sessionsCount(o, len(rp.rows))
	if rp.plan, err = replay.NewPlan(rc, rp.rows); err != nil {
		return problem("Trace.Path", err)
	}
	return nil
}

// problem returns err, a problem found while reading the trace or
// preparing the run from it, as a *ConfigError: its replay.Config problems
// are those of Options.Replay, the others those of the field at path.
// It returns err as it is when err is the context's (an interrupted read
// finds nothing wrong with the options).
func problem(path string, err error) error {
	switch he := (*engine.HistoryError)(nil); {
	case errors.Is(err, context.Canceled) || errors.Is(err, context.DeadlineExceeded):
		return err
	case errors.As(err, new(*prompt.HashMismatchError)):
		return &ConfigError{Errors: []*FieldError{fieldError("Prompts.HashMismatch",
			"%w; fix the trace, set the right block size, or use {Prompts.HashMismatch=fit}", err)}}
	case errors.As(err, &he):
		return &ConfigError{Errors: []*FieldError{fieldError("Prompts.ContextMode",
			"{Prompts.ContextMode} history: %w; use {Prompts.ContextMode=auto} (each row as its format means it) or self-contained", he.Err)}}
	case errors.Is(err, spool.ErrFull):
		return &ConfigError{Errors: []*FieldError{fieldError("Trace.SpoolMiB",
			"%w; raise {Trace.SpoolMiB}, or save it to a file and give its path", err)}}
	}
	return &ConfigError{Errors: fieldErrors(err, path)}
}

// noRows is the error for a trace without a row to replay.
func noRows(rp *replayPlan) error {
	st := rp.stats
	return fmt.Errorf("%s: no rows to replay (read %d: %d invalid, %d failed, %d filtered out)",
		rp.tracePath, st.Read, st.DroppedInvalid, st.DroppedFailed, st.DroppedFiltered)
}

// close releases what the plan holds open: a streamed plan's trace and
// standard input's copy. It is safe to call more than once.
func (rp *replayPlan) close() {
	if rp.plan != nil {
		rp.plan.Close()
	}
	if rp.spool != nil {
		rp.spool.Close()
	}
}
