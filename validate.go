package reprise

import (
	"context"
	"encoding/base64"
	"encoding/json"
	"errors"
	"fmt"
	"log/slog"
	"math"
	"net"
	"net/http"
	"net/url"
	"reflect"
	"regexp"
	"slices"
	"strings"
	"time"

	"github.com/reprise-bench/reprise/arrowio"
	"github.com/reprise-bench/reprise/engine"
	"github.com/reprise-bench/reprise/engine/adapter"
	"github.com/reprise-bench/reprise/engine/adapter/native"
	"github.com/reprise-bench/reprise/engine/adapter/openai"
	"github.com/reprise-bench/reprise/engine/summary"
	"github.com/reprise-bench/reprise/internal/httpfield"
	"github.com/reprise-bench/reprise/internal/prio"
	"github.com/reprise-bench/reprise/internal/prompt"
	"github.com/reprise-bench/reprise/internal/servertok"
	"github.com/reprise-bench/reprise/internal/spool"
	"github.com/reprise-bench/reprise/internal/tokenizer"
	"github.com/reprise-bench/reprise/replay"
	"github.com/reprise-bench/reprise/selftest/calibration"
	"github.com/reprise-bench/reprise/selftest/hostinfo"
	"github.com/reprise-bench/reprise/trace"
	"github.com/reprise-bench/reprise/wasm"
)

// replayPlan is everything a validated command line resolves to.
type replayPlan struct {
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
	stats     trace.ReadStats
	format    trace.Format
	tok       tokenizer.Tokenizer
	wasm      *wasm.Adapter
	prompts   *promptSource
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
func validate(ctx context.Context, o *Options, log *slog.Logger) (rp *replayPlan, err error) {
	var errs []*FieldError
	bad := func(path, format string, args ...any) { errs = append(errs, fieldError(path, format, args...)) }
	rp = &replayPlan{}
	opened := rp // rp is nil once an error is returned
	defer func() {
		if err != nil {
			opened.close()
		}
	}()
	if o.Model == "" {
		bad("Model", "{Model} is required: the model name to put in every request")
	}
	nonFinite(reflect.ValueOf(o).Elem(), "", bad)
	if o.Trace.PublicDataset != "" {
		resolvePublicDataset(ctx, o, log, bad)
	}
	switch o.Calibration {
	case "":
	case AutoCalibration:
		f, path, err := calibration.Auto(time.Now())
		switch {
		case err == nil:
			rp.calibration = f.Applied(path)
		case !errors.Is(err, calibration.ErrNone):
			bad("Calibration", "{Calibration} %s: %w; run reprise selftest again, or give {Calibration} a file or none", AutoCalibration, err)
		}
	default:
		f, err := calibration.Read(o.Calibration)
		if err != nil {
			bad("Calibration", "{Calibration}: %w", err)
		} else {
			rp.calibration = f.Applied(o.Calibration)
		}
	}
	if o.Nice != nil {
		if err := prio.Check(*o.Nice); err != nil {
			bad("Nice", "{Nice}: %w", err)
		}
	}
	ec := engine.NewConfig()
	base, basicAuth, urlErr := splitUserInfo(o.URL)
	if urlErr != nil {
		errs = append(errs, urlErr)
	}
	ec.BaseURL = base
	rp.url, rp.userInfo = urlForFiles(o.URL), basicAuth != ""
	ec.Timeout = o.Timeout
	ec.MaxResponseEvents, ec.MaxEventBytes, ec.MaxResponseBytes = o.MaxResponseEvents, o.MaxEventBytes, o.MaxResponseBytes
	ec.HTTP2 = o.HTTP2
	ec.NoKernelStamps = o.NoKernelTimestamps
	ec.MaxConnections = o.MaxConnections
	ec.UseServerTokenCount = o.UseServerTokenCount
	ec.Events = o.Output.ExportLevel == "events"
	if o.Endpoint == "" {
		// A recorded trace says which endpoint its requests went to.
		if e := traceEndpoint(ctx, o); e != "" {
			o.Endpoint = e
			log.Info("endpoint from the trace", slog.String("endpoint", e), slog.String("trace", o.Trace.Path))
		} else {
			o.Endpoint = DefaultEndpoint
		}
	}
	// An ISL correction given is every row's; else a recorded row's
	// template_tokens replace the one learned from the server.
	fixedISL := o.Prompts.ISLCorrection != 0
	// One tokenizer for prompts, output counts and Wasm adapters'
	// token_count.
	var tok tokenizer.Tokenizer
	if o.Tokenizer == TokenizerServer {
		if urlErr == nil && o.Model != "" {
			st, info, err := servertok.Load(ctx, servertok.Config{BaseURL: serverRoot(base), Model: o.Model,
				Header: tokenizeHeader(o, basicAuth)})
			switch {
			case err != nil && ctx.Err() != nil:
				bad("Tokenizer", "{Tokenizer} %s: %w", TokenizerServer, err)
			case err != nil:
				// No /tokenize, a placeholder tokenizer, or one reprise
				// cannot learn from: the run goes on with the builtin
				// tokenizer, and says what that costs.
				log.Warn("--tokenizer server: the server's tokenizer cannot be learned; counting with the builtin tokenizer (o200k_base), so input lengths are estimates, not exact (give --tokenizer a tokenizer.json, a GGUF file or the model's Hugging Face id for exact lengths)",
					slog.String("reason", err.Error()))
				if tok, err = tokenizer.Builtin(); err != nil {
					bad("Tokenizer", "{Tokenizer}: %w", err)
				}
			default:
				tok = st
				log.Info("server tokenizer", slog.String("name", st.Name()), slog.Int("words", st.Words()),
					slog.String("shape", info.Shape), slog.Bool("cached", info.Cached), slog.Int("requests", info.Requests),
					slog.Bool("counts only", info.CountOnly), slog.String("cache", info.CachePath))
				if (o.Endpoint == "" || o.Endpoint == "chat") && o.Prompts.ISLCorrection == 0 {
					// A chat request's prompt tokens include the template's:
					// take them off the synthesized prompts, as
					// {Prompts.ISLCorrection} would, when the server says
					// how many they are.
					if n, ok := st.ChatTemplateTokens(); ok && n > 0 {
						o.Prompts.ISLCorrection = n
						log.Info("server chat template", slog.Int("tokens", n), slog.String("applied as", "isl correction"))
					}
				}
			}
		}
	} else {
		tok = loadTokenizer(ctx, o, log, func(field, format string, args ...any) { bad(field, format, args...) })
	}
	rp.tok = tok
	if least := wasm.DefaultMemoryLimitPages >> 4; o.Adapter.MemoryMiB < least {
		bad("Adapter.MemoryMiB", "{Adapter.MemoryMiB} %d: want at least %d (one adapter instance's memory limit, MiB)", o.Adapter.MemoryMiB, least)
	}
	sandbox, err := wasm.ParseInterrupt(o.Adapter.Sandbox)
	if err != nil {
		bad("Adapter.Sandbox", "{Adapter.Sandbox}: %w", err)
	}
	nat, isNative := native.Lookup(o.Endpoint)
	if o.Endpoint == "" {
		nat, isNative = native.Lookup(DefaultEndpoint)
	}
	switch {
	case isNative:
		ec.Adapter = nat.Adapter
	case strings.HasSuffix(o.Endpoint, ".json"):
		// A declarative template (docs/format/template.md).
		isNative = true
		if t, err := openai.LoadTemplate(o.Endpoint); err != nil {
			bad("Endpoint", "{Endpoint}: %v", err)
		} else {
			ec.Adapter = t
		}
	default:
		// A Wasm adapter: a .wasm file or a shipped adapter's name.
		wc := wasm.Config{AdapterConfig: json.RawMessage(o.Adapter.Config), SHA256: o.Adapter.SHA256, Interrupt: sandbox, Log: log,
			MemoryBudget: int64(o.Adapter.MemoryMiB) << 20}
		if o.Adapter.Config == "" {
			wc.AdapterConfig = nil
		}
		if tok != nil {
			wc.Tokenizer = tok
		}
		wa, err := wasm.Load(context.Background(), o.Endpoint, wc)
		if err != nil {
			errs = append(errs, endpointError(o, err))
		} else {
			ec.Adapter = wa
			rp.wasm = wa
		}
	}
	rp.streaming = o.Streaming
	if ec.Adapter != nil {
		rp.kind = ec.Adapter.Info().Kind
	}
	if !rp.kind.Generates() || rp.kind == adapter.KindVideo {
		rp.streaming = false // embeddings, rankings and video jobs answer with one body
	}
	if o.BatchSize < 1 {
		bad("BatchSize", "{BatchSize} %d: want at least 1 input per request", o.BatchSize)
	} else if o.BatchSize > 1 && rp.kind == adapter.KindGenerate && ec.Adapter != nil {
		bad("BatchSize", "{BatchSize} %d: only embeddings and rankings endpoints take batches; {Endpoint} %q generates text", o.BatchSize, o.Endpoint)
	}
	if o.QueryTokens < 1 {
		bad("QueryTokens", "{QueryTokens} %d: want a query of at least 1 token", o.QueryTokens)
	}
	ac := adapter.Config{Model: o.Model, Stream: rp.streaming, IgnoreEOS: o.IgnoreEOS, IncludeUsage: true, Seed: o.Replay.Seed}
	if isNative && o.Adapter.Config != "" {
		// A native endpoint's options are strings (max_tokens_field, ...).
		if err := json.Unmarshal([]byte(o.Adapter.Config), &ac.Options); err != nil {
			bad("Adapter.Config", "{Adapter.Config} %q: a native endpoint takes a JSON object of strings, e.g. '%s': %v",
				o.Adapter.Config, `{"max_tokens_field":"max_completion_tokens"}`, err)
		}
	}
	if o.ExtraBody != "" {
		var m map[string]json.RawMessage
		if err := json.Unmarshal([]byte(o.ExtraBody), &m); err != nil {
			if json.Valid([]byte(o.ExtraBody)) {
				bad("ExtraBody", "{ExtraBody} %q: want a JSON object, e.g. '%s'", o.ExtraBody, `{"temperature":0}`)
			} else {
				bad("ExtraBody", "{ExtraBody} %q: want a JSON object, e.g. '%s': %v", o.ExtraBody, `{"temperature":0}`, err)
			}
		} else {
			ac.ExtraBody = json.RawMessage(o.ExtraBody)
		}
	}
	ec.Adapter = generationSetup(o, ec.Adapter, &ec, &ac, bad) // generation.go
	ec.AdapterConfig = ac
	if rp.wasm != nil {
		// The adapter checks its configuration before anything is created.
		if in, err := rp.wasm.NewInstance(&ac); err != nil {
			errs = append(errs, endpointError(o, err))
		} else {
			in.Release()
		}
	}
	for _, h := range o.Headers {
		k, v, ok := strings.Cut(h, ":")
		k, v = strings.TrimSpace(k), strings.TrimSpace(v)
		if !ok || !headerName.MatchString(k) || httpfield.CheckValue(v) != nil {
			bad("Headers", "{Headers} %q: want NAME:VALUE, e.g. {Headers=X-Tenant: a}", h)
			continue
		}
		ec.Header = append(ec.Header, adapter.Header{Name: k, Value: v})
	}
	if o.APIKey != "" {
		ec.Header = append(ec.Header, adapter.Header{Name: "Authorization", Value: "Bearer " + o.APIKey})
	}
	if basicAuth != "" && !slices.ContainsFunc(ec.Header, func(h adapter.Header) bool { return strings.EqualFold(h.Name, "Authorization") }) {
		// As net/http does for a URL with user info, over both protocols.
		ec.Header = append(ec.Header, adapter.Header{Name: "Authorization", Value: basicAuth})
	}
	errs = append(errs, requestProblems(base, o)...)
	rp.engine = ec
	errs = append(errs, rp.addTargets(o)...)
	slos, err := summary.ParseGoodput(o.Goodput)
	if err != nil {
		bad("Goodput", "{Goodput}: %w", err)
	}
	rp.slos = slos
	for _, slo := range slos {
		if !rp.streaming && summary.StreamingOnly(slo.Tag) {
			bad("Goodput", "{Goodput} %s: this metric exists only for streamed responses; drop {Streaming=false} or the SLO", slo.Tag)
		}
	}
	if o.MaxErrorRate < 0 || o.MaxErrorRate > 1 {
		bad("MaxErrorRate", "{MaxErrorRate} %v: want a fraction between 0 and 1", o.MaxErrorRate)
	}
	if o.MinGoodFraction < 0 || o.MinGoodFraction > 1 {
		bad("MinGoodFraction", "{MinGoodFraction} %v: want a fraction between 0 and 1", o.MinGoodFraction)
	}
	switch o.Output.Format {
	case "parquet", "arrow", "jsonl":
	default:
		bad("Output.Format", "{Output.Format} %q: want parquet, arrow or jsonl", o.Output.Format)
	}
	if a := o.Telemetry.MetricsAddr; a != "" {
		if _, _, err := net.SplitHostPort(a); err != nil {
			bad("Telemetry.MetricsAddr", "{Telemetry.MetricsAddr} %q: want HOST:PORT, such as :9464 (every interface) or 127.0.0.1:9464", a)
		}
	}
	if o.Telemetry.MetricsLinger < 0 {
		bad("Telemetry.MetricsLinger", "{Telemetry.MetricsLinger} %v: want a duration ≥ 0 (0 = stop serving at the end)", o.Telemetry.MetricsLinger)
	}
	if o.Output.PartInterval < 0 {
		bad("Output.PartInterval", "{Output.PartInterval} %v: want a duration ≥ 0 (0 = complete parts by {Output.PartRows} only)", o.Output.PartInterval)
	}
	if o.Output.PartRows < 1 {
		bad("Output.PartRows", "{Output.PartRows} %d: want a number of rows ≥ 1", o.Output.PartRows)
	}
	switch o.Output.Export {
	case "":
	case "aiperf":
	default:
		bad("Output.Export", "{Output.Export} %q: want aiperf", o.Output.Export)
	}
	if o.Output.SliceDuration < 0 {
		bad("Output.SliceDuration", "{Output.SliceDuration} %v: want a duration > 0 (0 = no time slices)", o.Output.SliceDuration)
	}
	if p := o.Output.ExportPrefix; p != "" && (o.Output.Export != "aiperf" || !arrowio.ValidExportPrefix(p)) {
		bad("Output.ExportPrefix", "{Output.ExportPrefix} %q: want a plain file name (no /, not . or ..) with {Output.Export} aiperf", p)
	}
	switch o.UI {
	case "", UILine, UIDashboard:
	default:
		bad("UI", "{UI} %q: want %s or %s", o.UI, UILine, UIDashboard)
	}
	switch o.Output.ExportLevel {
	case "records", "events":
	default:
		bad("Output.ExportLevel", "{Output.ExportLevel} %q: want records or events", o.Output.ExportLevel)
	}
	tf, err := trace.ParseFormat(o.Trace.Format)
	if err != nil {
		bad("Trace.Format", "{Trace.Format}: %w", err)
	}
	if _, err := trace.ParseSampling(o.Trace.Sampling); err != nil {
		bad("Trace.Sampling", "{Trace.Sampling}: %w", err)
	}
	if o.Trace.BlockSize < 0 {
		bad("Trace.BlockSize", "{Trace.BlockSize} %d: want a positive number of tokens (0 = the format's default)", o.Trace.BlockSize)
	}
	// A public dataset that could not be had is its own error, not a
	// missing synthetic load.
	syntheticProblems(&o.Synthetic, hasTrace(o) || o.Trace.PublicDataset != "" || o.Accuracy.itemsLoad(), bad)
	mediaProblems(&o.Media, bad)
	if !hasTrace(o) && o.Trace.PublicDataset == "" && !o.Accuracy.itemsLoad() {
		switch {
		case rp.kind != adapter.KindGenerate:
			// Embeddings and rankings answer with vectors or scores: an
			// input length is the whole load, there is no output length.
			if o.Synthetic.ISL < 1 {
				bad("Synthetic", "without a {Trace.Path}, give a synthetic load: {Synthetic.ISL=N} (tokens per input, ≥ 1)")
			}
		case o.Synthetic.ISL < 1 || o.Synthetic.OSL < 1:
			bad("Synthetic", "without a {Trace.Path}, give a synthetic load: {Synthetic.ISL=N} and {Synthetic.OSL=N} (tokens, ≥ 1)")
		}
		if o.Synthetic.ISLStdDev < 0 || o.Synthetic.OSLStdDev < 0 {
			bad("Synthetic", "{Synthetic.ISLStdDev} and {Synthetic.OSLStdDev} must not be negative")
		}
		// The cap on a trace row's input applies to every synthetic
		// length, checked before any prompt is built: a first turn is the
		// shared prefix, the session's context and ISL tokens.
		// (Draws of ISL ± ISLStdDev are clamped to it: synthLength.)
		if max := o.Trace.MaxInputTokens; max > 0 {
			s := &o.Synthetic
			first := float64(s.SharedPrefix) + float64(s.UserContext) + math.Round(s.ISL)
			switch {
			case s.ISL > float64(max):
				bad("Synthetic.ISL", "{Synthetic.ISL} %v: over the cap of %d input tokens ({Trace.MaxInputTokens}); lower it, or raise {Trace.MaxInputTokens}", s.ISL, max)
			case s.SharedPrefix > max || s.UserContext > max || first > float64(max):
				bad("Synthetic.SharedPrefix", "{Synthetic.SharedPrefix} %d + {Synthetic.UserContext} %d + {Synthetic.ISL} %v: a first turn of %.0f input tokens, over the cap of %d ({Trace.MaxInputTokens}); lower them, or raise {Trace.MaxInputTokens}",
					s.SharedPrefix, s.UserContext, s.ISL, first, max)
			}
		}
		if o.Synthetic.OSL > math.MaxInt32 {
			bad("Synthetic.OSL", "{Synthetic.OSL} %v: want at most %d output tokens", o.Synthetic.OSL, math.MaxInt32)
		}
	} else {
		if o.Synthetic.ISL > 0 || o.Synthetic.ISLStdDev > 0 || o.Synthetic.OSLStdDev > 0 {
			bad("Synthetic", "{Synthetic.ISL}, {Synthetic.ISLStdDev} and {Synthetic.OSLStdDev} describe a synthetic load; with a {Trace.Path} the lengths come from the trace")
		}
		if o.Synthetic.OSL != 0 && (o.Synthetic.OSL < 1 || o.Synthetic.OSL != math.Trunc(o.Synthetic.OSL) || o.Synthetic.OSL > math.MaxInt32) {
			bad("Synthetic.OSL", "{Synthetic.OSL} %v: with a {Trace.Path}, the output length of rows that have none: want a whole number of tokens ≥ 1", o.Synthetic.OSL)
		}
	}
	if o.Trace.MaxInputTokens < 1 {
		bad("Trace.MaxInputTokens", "{Trace.MaxInputTokens} %d: want a positive number of tokens", o.Trace.MaxInputTokens)
	}
	if o.Trace.SpoolMiB < 1 {
		bad("Trace.SpoolMiB", "{Trace.SpoolMiB} %d: want a positive number of MiB", o.Trace.SpoolMiB)
	}
	pcfg := prompt.NewConfig()
	// Blocks are cheap to regenerate (a few ns per token); a smaller cache
	// keeps a long-prompt replay within a few hundred MB.
	pcfg.BlockCacheBytes = promptCacheBytes
	pcfg.Seed = o.Prompts.Seed
	pcfg.Mismatch = prompt.Mismatch(o.Prompts.HashMismatch)
	pcfg.ISLCorrection, pcfg.FixedISLCorrection = o.Prompts.ISLCorrection, fixedISL
	pcfg.Format = prompt.Format(o.Prompts.Format)
	switch pcfg.Mismatch {
	case prompt.MismatchError, prompt.MismatchFit:
	default:
		bad("Prompts.HashMismatch", "{Prompts.HashMismatch} %q: want %q or %q", pcfg.Mismatch, prompt.MismatchError, prompt.MismatchFit)
	}
	switch pcfg.Format {
	case prompt.FormatText, prompt.FormatTokenIDs:
	default:
		bad("Prompts.Format", "{Prompts.Format} %q: want %q or %q", pcfg.Format, prompt.FormatText, prompt.FormatTokenIDs)
	}
	if pcfg.ISLCorrection < 0 {
		bad("Prompts.ISLCorrection", "{Prompts.ISLCorrection} %d: want ≥ 0 tokens", pcfg.ISLCorrection)
	}
	if err := engine.ContextMode(o.Prompts.ContextMode).Validate(); err != nil {
		bad("Prompts.ContextMode", "{Prompts.ContextMode} %q: want %s, %s or %s", o.Prompts.ContextMode,
			engine.ContextAuto, engine.ContextHistory, engine.ContextSelfContained)
	}
	rp.pcfg = pcfg
	if o.Accuracy.enabled() && tok != nil {
		rp.acc = newAccPlan(ctx, o, tok.Count, log, func(field, format string, args ...any) { bad(field, format, args...) })
	}
	errs = append(errs, fieldErrors(o.Replay.Validate(), "Replay")...)
	errs = append(errs, validateServerControl(&o.Server)...)
	errs = append(errs, validateWarmup(o)...)
	if o.Replay.PrefillConcurrency > 0 && !o.Streaming {
		bad("Replay.PrefillConcurrency", "{Replay.PrefillConcurrency} needs {Streaming}: a response's first token is known only when it is streamed")
	}
	if len(errs) > 0 {
		return nil, &ConfigError{Errors: errs}
	}

	// The trace: validated in a first pass and read again while the run
	// goes (design 0006), or, when that cannot be, held whole.
	if hasTrace(o) {
		rp.tracePath = tracePath(o)
		// A row without an output length would go without max_tokens, which
		// under ignore_eos never ends: refused unless Synthetic.OSL gives one.
		opts := trace.Options{Format: tf, BlockSize: o.Trace.BlockSize, FitHashIDs: o.Prompts.HashMismatch == string(prompt.MismatchFit), SkipInvalid: o.Trace.SkipInvalid, DropFailed: o.Trace.DropFailed,
			ModelFilter: o.Trace.ModelFilter, MaxInputTokens: o.Trace.MaxInputTokens, DefaultOutputTokens: int(o.Synthetic.OSL),
			RequireOutput: o.MaxTokensFromTrace && !o.ServerOutputLength, CountNoOutput: o.ServerOutputLength, Log: log, Context: ctx,
			Columns: o.Trace.Columns, Sessions: o.Trace.AllTurns, CountTokens: rp.tok.Count, MediaLimits: mediaLimits(&o.Media)}
		switch o.Endpoint {
		case trace.EndpointChat, trace.EndpointCompletions:
			// A recorded row's lengths are those of its endpoint's requests.
			opts.Endpoint = o.Endpoint
		}
		src := newTraceSource(o, rp, &opts)
		streamed, err := scanTrace(o, rp, src, opts, pcfg)
		if err != nil {
			return nil, problem("Trace.Path", err)
		}
		if streamed {
			return rp, nil
		}
		if !o.Trace.Hold {
			opts.Log = nil // the first pass logged the warnings
		}
		if rp.digest == nil && rp.spool == nil { // Hold: the first pass stopped early (a file only)
			if rp.digest, err = digestFile(rp.tracePath); err != nil {
				return nil, problem("Trace.Path", err)
			}
		}
		if rp.rows, rp.stats, err = src.readAll(opts); err != nil {
			return nil, problem("Trace.Path", err)
		}
		if len(rp.rows) == 0 {
			return nil, problem("Trace.Path", noRows(rp))
		}
		if sm, _ := trace.ParseSampling(o.Trace.Sampling); sm != trace.SampleSequential {
			n := 0
			if o.Replay.RequestCount > 0 {
				n = o.Replay.RequestCount + o.Replay.WarmupRequests
			}
			rp.rows = trace.Sample(rp.rows, sm, o.Replay.Seed, n)
		}
		rp.nRows = len(rp.rows)
	}
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
	rp.prompts, err = newPromptSource(rp, pcfg, o.Endpoint == "completions" && pcfg.Format == prompt.FormatTokenIDs)
	if err != nil {
		if rp.tracePath != "" {
			return nil, problem("Trace.Path", fmt.Errorf("%s: %w", rp.tracePath, err))
		}
		return nil, problem("Tokenizer", err)
	}
	if err := engine.ContextMode(o.Prompts.ContextMode).Check(rp.rows); err != nil {
		return nil, problem("Prompts.ContextMode", err)
	}
	rp.plan, err = replay.NewPlan(o.Replay, rp.rows)
	if err != nil {
		return nil, problem("Trace.Path", err)
	}
	return rp, nil
}

// nonFinite reports every float field of v, a struct of reprise's, at any
// depth, that holds NaN or an infinity: no range check catches NaN
// (every comparison with it is false), and the manifest, JSON, holds
// neither.
func nonFinite(v reflect.Value, path string, bad func(path, format string, args ...any)) {
	switch v.Kind() {
	case reflect.Struct:
		if !strings.HasPrefix(v.Type().PkgPath(), "github.com/reprise-bench/reprise") {
			return
		}
		for i := range v.NumField() {
			f := v.Type().Field(i)
			if !f.IsExported() {
				continue
			}
			p := f.Name
			if path != "" {
				p = path + "." + f.Name
			}
			nonFinite(v.Field(i), p, bad)
		}
	case reflect.Pointer:
		if !v.IsNil() {
			nonFinite(v.Elem(), path, bad)
		}
	case reflect.Slice, reflect.Array:
		for i := range v.Len() {
			nonFinite(v.Index(i), path, bad)
		}
	case reflect.Float32, reflect.Float64:
		if x := v.Float(); math.IsNaN(x) || math.IsInf(x, 0) {
			bad(path, "{"+path+"} %v: want a finite number", x)
		}
	}
}

// requestProblems reports the problems of the URL (base, without its user
// info) and of the request bounds of o, as engine.Config.Validate finds
// them.
func requestProblems(base string, o *Options) []*FieldError {
	var errs []*FieldError
	bad := func(path, format string, args ...any) { errs = append(errs, fieldError(path, format, args...)) }
	if base == "" {
		bad("URL", "{URL} is required")
	} else if u, err := url.Parse(base); err != nil {
		bad("URL", "{URL} %q: %w", base, err)
	} else if u.Scheme != "http" && u.Scheme != "https" {
		bad("URL", "{URL} %q: want an http:// or https:// URL", base)
	} else if u.Host == "" {
		bad("URL", "{URL} %q: no host", base)
	}
	if o.SessionHeader != "" && !headerName.MatchString(o.SessionHeader) {
		bad("SessionHeader", "{SessionHeader} %q: want a header name (an HTTP token), e.g. X-Session-Id", o.SessionHeader)
	}
	if o.CancelRate < 0 || o.CancelRate > 1 || math.IsNaN(o.CancelRate) {
		bad("CancelRate", "{CancelRate} %v: want a fraction between 0 and 1 of the requests to cancel", o.CancelRate)
	}
	if o.CancelAfter < 0 {
		bad("CancelAfter", "{CancelAfter} %v: must not be negative", o.CancelAfter)
	}
	if o.CancelAfter > 0 && o.CancelRate == 0 {
		bad("CancelAfter", "{CancelAfter} %v needs {CancelRate}: the fraction of requests to cancel", o.CancelAfter)
	}
	if o.Timeout < 0 {
		bad("Timeout", "{Timeout} %v: must not be negative", o.Timeout)
	}
	if o.MaxConnections < 0 {
		bad("MaxConnections", "{MaxConnections} %d: must not be negative", o.MaxConnections)
	}
	if o.Preflight.Timeout < 0 {
		bad("Preflight.Timeout", "{Preflight.Timeout} %v: must not be negative (0 = %v)", o.Preflight.Timeout, DefaultPreflightTimeout)
	}
	if o.AbortAfterConnectFailures < 0 {
		bad("AbortAfterConnectFailures", "{AbortAfterConnectFailures} %d: must not be negative (0 = never stop)", o.AbortAfterConnectFailures)
	}
	if o.MaxResponseEvents < 0 {
		bad("MaxResponseEvents", "{MaxResponseEvents} %d: must not be negative (0 = no cap)", o.MaxResponseEvents)
	}
	if o.MaxEventBytes < 0 || o.MaxEventBytes > math.MaxInt32 {
		bad("MaxEventBytes", "{MaxEventBytes} %d: want 0 (no cap) to %d", o.MaxEventBytes, math.MaxInt32)
	}
	if o.MaxResponseBytes < 0 {
		bad("MaxResponseBytes", "{MaxResponseBytes} %d: must not be negative (0 = no cap)", o.MaxResponseBytes)
	}
	return errs
}

// serverRoot is the scheme and host of a base URL: where a server's
// /tokenize is.
func serverRoot(base string) string {
	u, err := url.Parse(base)
	if err != nil {
		return base
	}
	return (&url.URL{Scheme: u.Scheme, Host: u.Host}).String()
}

// tokenizeHeader is the request headers that reach /tokenize: the
// well-formed Headers, the API key and the URL's user info, as requests
// get them.
func tokenizeHeader(o *Options, basicAuth string) http.Header {
	h := http.Header{}
	for _, kv := range o.Headers {
		if k, v, ok := strings.Cut(kv, ":"); ok && headerName.MatchString(strings.TrimSpace(k)) && !strings.ContainsAny(v, "\r\n") {
			h.Add(strings.TrimSpace(k), strings.TrimSpace(v))
		}
	}
	if o.APIKey != "" {
		h.Set("Authorization", "Bearer "+o.APIKey)
	}
	if basicAuth != "" && h.Get("Authorization") == "" {
		h.Set("Authorization", basicAuth)
	}
	return h
}

// splitUserInfo returns the URL without its user info, and the user info as
// an HTTP Basic Authorization value ("" without). The engine never sees
// the credentials in the URL, so no log or error message of it can show
// them. A query or fragment is an error: the endpoint path is appended to
// the URL, so neither would reach the server. A URL that does not parse is
// returned as given, for the engine's validation to report.
func splitUserInfo(raw string) (base, basicAuth string, err *FieldError) {
	u, perr := url.Parse(raw)
	if perr != nil {
		return raw, "", nil
	}
	if u.RawQuery != "" || u.ForceQuery || u.Fragment != "" {
		err = fieldError("URL", "{URL} %s?…: a query or fragment cannot be sent (the endpoint path is appended to {URL}); "+
			"drop it, and give credentials with {APIKey} or {Headers}", urlForFiles(raw))
	}
	if u.User == nil {
		return raw, "", err
	}
	pass, _ := u.User.Password()
	basicAuth = "Basic " + base64.StdEncoding.EncodeToString([]byte(u.User.Username()+":"+pass))
	u.User = nil
	return u.String(), basicAuth, err
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
	if sm, _ := trace.ParseSampling(o.Trace.Sampling); sm != trace.SampleSequential && rp.spool == nil {
		closeTrace()
		rp.loadNote = "dataset sampling " + string(sm) + " draws from all rows"
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
	if sm, _ := trace.ParseSampling(o.Trace.Sampling); sm != trace.SampleSequential {
		rp.loadNote = "dataset sampling " + string(sm) + " draws from all rows"
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
	rp.prompts = &promptSource{s: s, ids: o.Endpoint == "completions" && pcfg.Format == prompt.FormatTokenIDs}
	rp.nRows = int(rp.stats.Kept)
	rp.streamed = true
	return true, nil
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

// addTargets makes an engine configuration of each of o.Targets: a copy
// of target 0's with the target's URL, model and headers.
func (rp *replayPlan) addTargets(o *Options) []*FieldError {
	var errs []*FieldError
	bad := func(path, format string, args ...any) { errs = append(errs, fieldError(path, format, args...)) }
	switch o.URLPolicy {
	case URLPolicyRoundRobin, URLPolicyLeastInFlight, URLPolicyFanOut, URLPolicyRandom:
	case "":
		if len(o.Targets) > 0 {
			bad("URLPolicy", "{URLPolicy} is empty: want %s, %s or %s", URLPolicyRoundRobin, URLPolicyLeastInFlight, URLPolicyFanOut)
		}
	default:
		bad("URLPolicy", "{URLPolicy} %q: want %s, %s, %s or %s", o.URLPolicy, URLPolicyRoundRobin, URLPolicyRandom, URLPolicyLeastInFlight, URLPolicyFanOut)
	}
	for i, t := range o.Targets {
		path := fmt.Sprintf("Targets[%d]", i)
		ec := rp.engine
		base, basicAuth, err := splitUserInfo(t.URL)
		if err != nil {
			bad(path+".URL", "{"+path+".URL}: %v", err.Format(func(string) string { return path + ".URL" }))
		} else if u, perr := url.Parse(base); base == "" || perr != nil || (u.Scheme != "http" && u.Scheme != "https") || u.Host == "" {
			bad(path+".URL", "{"+path+".URL} %q: want an http:// or https:// URL with a host", base)
		}
		ec.BaseURL = base
		if t.Model != "" {
			ec.AdapterConfig.Model = t.Model
		}
		ec.Header = slices.Clone(rp.engine.Header)
		for _, h := range t.Headers {
			k, v, ok := strings.Cut(h, ":")
			k, v = strings.TrimSpace(k), strings.TrimSpace(v)
			if !ok || !headerName.MatchString(k) || httpfield.CheckValue(v) != nil {
				bad(path+".Headers", "{"+path+".Headers} %q: want NAME:VALUE, e.g. X-Tenant: a", h)
				continue
			}
			ec.Header = slices.DeleteFunc(ec.Header, func(x adapter.Header) bool { return strings.EqualFold(x.Name, k) })
			ec.Header = append(ec.Header, adapter.Header{Name: k, Value: v})
		}
		if basicAuth != "" && !slices.ContainsFunc(t.Headers, func(h string) bool {
			k, _, _ := strings.Cut(h, ":")
			return strings.EqualFold(strings.TrimSpace(k), "Authorization")
		}) {
			ec.Header = slices.DeleteFunc(ec.Header, func(x adapter.Header) bool { return strings.EqualFold(x.Name, "Authorization") })
			ec.Header = append(ec.Header, adapter.Header{Name: "Authorization", Value: basicAuth})
		}
		rp.targets = append(rp.targets, ec)
		rp.targetURLs = append(rp.targetURLs, urlForFiles(t.URL))
	}
	return errs
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
