package main

import (
	"context"
	"encoding/base64"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"log/slog"
	"math"
	"net/url"
	"os"
	"path/filepath"
	"regexp"
	"runtime"
	"runtime/debug"
	"runtime/pprof"
	"slices"
	"strings"
	"time"

	"github.com/urfave/cli/v3"

	"github.com/reprise-bench/reprise/arrowio"
	"github.com/reprise-bench/reprise/engine"
	"github.com/reprise-bench/reprise/engine/adapter"
	"github.com/reprise-bench/reprise/engine/adapter/openai"
	"github.com/reprise-bench/reprise/engine/summary"
	"github.com/reprise-bench/reprise/internal/exitcode"
	"github.com/reprise-bench/reprise/internal/hostinfo"
	"github.com/reprise-bench/reprise/internal/prio"
	"github.com/reprise-bench/reprise/internal/prompt"
	"github.com/reprise-bench/reprise/internal/spool"
	"github.com/reprise-bench/reprise/internal/tokenizer"
	"github.com/reprise-bench/reprise/replay"
	"github.com/reprise-bench/reprise/trace"
	"github.com/reprise-bench/reprise/wasm"
)

// Defaults of the replay command.
const (
	defaultURL             = "http://localhost:8000"
	defaultMinGoodFraction = 0.95
	// defaultMaxErrorRate fails a run in which more than 5 % of the
	// measured requests failed. Latency statistics are computed over the
	// requests that succeeded; counting a failed request as one that never
	// ended, the p95 of all requests exists only while fewer than 5 %
	// failed, so above that the reported percentiles no longer describe
	// the load that was sent. A healthy server fails almost none; an
	// occasional timeout or 503 passes; a server that died mid-run fails.
	// An overload test that expects rejections loosens it with
	// --max-error-rate.
	defaultMaxErrorRate = 0.05
	// promptCacheBytes bounds the prompt synthesizer's block cache.
	promptCacheBytes = 32 << 20
)

// replayConfig is the replay command line, validated before any request.
type replayConfig struct {
	Args                []string
	Telemetry           telemetryConfig
	URL                 string
	Model               string
	Endpoint            string
	Streaming           bool
	IgnoreEOS           bool
	IgnoreEOSSet        bool
	MaxTokensFromTrace  bool
	ExtraBody           string
	Headers             []string
	APIKey              string
	Timeout             time.Duration
	Caps                responseCaps
	HTTP2               bool
	NoKernelStamps      bool
	Nice                *int // --nice, when given
	MaxConnections      int
	ISL, ISLStd         float64
	OSL, OSLStd         float64
	Tokenizer           string
	UseServerTokenCount bool
	Goodput             string
	MaxErrorRate        float64
	MinGoodFraction     float64
	Out                 string
	Overwrite           bool
	Quiet               bool
	CPUProfile          string
	MemProfile          string
	Format              string
	SingleFile          bool
	PartInterval        time.Duration
	PartRows            int
	Export              string
	ExportLevel         string
	TraceFormat         string
	BlockSize           int
	MaxInputTokens      int
	StdinSpoolMiB       int
	SkipInvalid         bool
	DropFailed          bool
	ModelFilter         string
	AdapterConfig       string
	AdapterSHA256       string
	AdapterSandbox      string
	AdapterMemoryMiB    int
	PromptSeed          uint64
	HashMismatch        string
	ISLCorrection       int
	PromptFormat        string
	ContextMode         string
	Replay              replay.Config
}

// replayPlan is everything a validated command line resolves to.
type replayPlan struct {
	engine    engine.Config
	slos      []summary.SLO
	rows      []trace.Row // nil when streamed
	nRows     int         // rows of the trace
	streamed  bool        // the plan reads the trace while the run goes
	loadNote  string      // why a trace file is held whole
	stats     trace.ReadStats
	format    trace.Format
	tok       tokenizer.Tokenizer
	wasm      *wasm.Adapter
	prompts   *synthPrompts
	pcfg      prompt.Config
	plan      *replay.Plan
	tracePath string
	// url is --url as files and logs name it: without user info
	// (urlForFiles); userInfo says whether it had some.
	url      string
	userInfo bool
	// digest is the trace's sha256 and size, from its first read (nil
	// without a trace, or when standard input was not read to its end).
	digest *traceDigest
	// spool is the copy of a trace read from standard input, which the
	// run reads again (nil otherwise); close releases it.
	spool *spool.Spool
	// preflight is the manifest's timer preflight (runReplay).
	preflight map[string]any
}

var headerName = regexp.MustCompile("^[!#$%&'*+.^_`|~0-9A-Za-z-]+$")

// validate reports every problem of the command line and of the trace at
// once, before anything is sent. Reading the trace stops when ctx is done.
// On success the caller closes the plan (rp.close); on error nothing is
// left open.
func (c *replayConfig) validate(ctx context.Context, a *app) (rp *replayPlan, err error) {
	var errs []error
	bad := func(format string, args ...any) { errs = append(errs, fmt.Errorf(format, args...)) }
	rp = &replayPlan{}
	opened := rp // rp is nil once an error is returned
	defer func() {
		if err != nil {
			opened.close()
		}
	}()
	if len(c.Args) > 1 {
		bad("want at most one TRACE, got %d: %s", len(c.Args), strings.Join(c.Args, " "))
	}
	if c.Model == "" {
		bad("--model is required: the model name to put in every request")
	}
	if c.Nice != nil {
		if err := prio.Check(*c.Nice); err != nil {
			bad("--nice: %w", err)
		}
	}
	ec := engine.NewConfig()
	base, basicAuth, err := splitUserInfo(c.URL)
	if err != nil {
		errs = append(errs, err)
	}
	ec.BaseURL = base
	rp.url, rp.userInfo = urlForFiles(c.URL), basicAuth != ""
	ec.Timeout = c.Timeout
	c.Caps.apply(&ec)
	ec.HTTP2 = c.HTTP2
	ec.NoKernelStamps = c.NoKernelStamps
	ec.MaxConnections = c.MaxConnections
	ec.UseServerTokenCount = c.UseServerTokenCount
	ec.Events = c.ExportLevel == "events"
	// One tokenizer for prompts, output counts and Wasm adapters'
	// token_count.
	tok, err := tokenizer.Load(c.Tokenizer)
	if err != nil {
		bad("--tokenizer %q: %w", c.Tokenizer, err)
	}
	rp.tok = tok
	if least := wasm.DefaultMemoryLimitPages >> 4; c.AdapterMemoryMiB < least {
		bad("--adapter-memory-mib %d: want at least %d (one adapter instance's memory limit, MiB)", c.AdapterMemoryMiB, least)
	}
	sandbox, err := wasm.ParseInterrupt(c.AdapterSandbox)
	if err != nil {
		bad("--adapter-sandbox: %w", err)
	}
	switch c.Endpoint {
	case "chat", "":
		ec.Adapter = openai.Adapter{Endpoint: openai.Chat}
	case "completions":
		ec.Adapter = openai.Adapter{Endpoint: openai.Completions}
	default:
		// A Wasm adapter: a .wasm file or a shipped adapter's name.
		wc := wasm.Config{AdapterConfig: json.RawMessage(c.AdapterConfig), SHA256: c.AdapterSHA256, Interrupt: sandbox, Log: a.log,
			MemoryBudget: int64(c.AdapterMemoryMiB) << 20}
		if c.AdapterConfig == "" {
			wc.AdapterConfig = nil
		}
		if tok != nil {
			wc.Tokenizer = tok
		}
		wa, err := wasm.Load(context.Background(), c.Endpoint, wc)
		if err != nil {
			bad("%s", endpointError(c, err))
		} else {
			ec.Adapter = wa
			rp.wasm = wa
		}
	}
	ac := adapter.Config{Model: c.Model, Stream: c.Streaming, IgnoreEOS: c.IgnoreEOS, IncludeUsage: true, Seed: c.Replay.Seed}
	if c.ExtraBody != "" {
		var m map[string]json.RawMessage
		if err := json.Unmarshal([]byte(c.ExtraBody), &m); err != nil {
			if json.Valid([]byte(c.ExtraBody)) {
				bad("--extra-body %q: want a JSON object, e.g. '{\"temperature\":0}'", c.ExtraBody)
			} else {
				bad("--extra-body %q: want a JSON object, e.g. '{\"temperature\":0}': %v", c.ExtraBody, err)
			}
		} else {
			ac.ExtraBody = json.RawMessage(c.ExtraBody)
		}
	}
	ec.AdapterConfig = ac
	if rp.wasm != nil {
		// The adapter checks its configuration before anything is created.
		if in, err := rp.wasm.NewInstance(&ac); err != nil {
			bad("%s", endpointError(c, err))
		} else {
			in.Release()
		}
	}
	for _, h := range c.Headers {
		k, v, ok := strings.Cut(h, ":")
		k, v = strings.TrimSpace(k), strings.TrimSpace(v)
		if !ok || !headerName.MatchString(k) || strings.ContainsAny(v, "\r\n") {
			bad("--header %q: want NAME:VALUE, e.g. -H 'X-Tenant: a'", h)
			continue
		}
		ec.Header = append(ec.Header, adapter.Header{Name: k, Value: v})
	}
	if c.APIKey != "" {
		ec.Header = append(ec.Header, adapter.Header{Name: "Authorization", Value: "Bearer " + c.APIKey})
	}
	if basicAuth != "" && !slices.ContainsFunc(ec.Header, func(h adapter.Header) bool { return strings.EqualFold(h.Name, "Authorization") }) {
		// As net/http does for a URL with user info, over both protocols.
		ec.Header = append(ec.Header, adapter.Header{Name: "Authorization", Value: basicAuth})
	}
	vc := ec
	if vc.Adapter == nil {
		vc.Adapter = openai.Adapter{} // the --endpoint problem is reported above
	}
	if err := vc.Validate(); err != nil {
		errs = append(errs, err)
	}
	rp.engine = ec
	slos, err := summary.ParseGoodput(c.Goodput)
	if err != nil {
		errs = append(errs, fmt.Errorf("--goodput: %w", err))
	}
	rp.slos = slos
	for _, slo := range slos {
		if !c.Streaming && summary.StreamingOnly(slo.Tag) {
			bad("--goodput %s: this metric exists only for streamed responses; drop --no-streaming or the SLO", slo.Tag)
		}
	}
	if c.MaxErrorRate < 0 || c.MaxErrorRate > 1 {
		bad("--max-error-rate %v: want a fraction between 0 and 1", c.MaxErrorRate)
	}
	if c.MinGoodFraction < 0 || c.MinGoodFraction > 1 {
		bad("--min-good-fraction %v: want a fraction between 0 and 1", c.MinGoodFraction)
	}
	switch c.Format {
	case "parquet", "arrow", "jsonl":
	default:
		bad("--format %q: want parquet, arrow or jsonl", c.Format)
	}
	if c.PartInterval < 0 {
		bad("--part-interval %v: want a duration ≥ 0 (0 = complete parts by --part-rows only)", c.PartInterval)
	}
	if c.PartRows < 1 {
		bad("--part-rows %d: want a number of rows ≥ 1", c.PartRows)
	}
	switch c.Export {
	case "":
	case "aiperf":
	default:
		bad("--export %q: want aiperf", c.Export)
	}
	switch c.ExportLevel {
	case "records", "events":
	default:
		bad("--export-level %q: want records or events", c.ExportLevel)
	}
	tf, err := trace.ParseFormat(c.TraceFormat)
	if err != nil {
		errs = append(errs, fmt.Errorf("--trace-format: %w", err))
	}
	if c.BlockSize < 0 {
		bad("--block-size %d: want a positive number of tokens (0 = the format's default)", c.BlockSize)
	}
	if len(c.Args) == 0 {
		if c.ISL < 1 || c.OSL < 1 {
			bad("without a TRACE, give a synthetic load: --isl N and --osl N (tokens, ≥ 1)")
		}
		if c.ISLStd < 0 || c.OSLStd < 0 {
			bad("--isl-stddev and --osl-stddev must not be negative")
		}
	} else {
		if c.ISL > 0 || c.ISLStd > 0 || c.OSLStd > 0 {
			bad("--isl, --isl-stddev and --osl-stddev describe a synthetic load; with a TRACE the lengths come from the trace")
		}
		if c.OSL != 0 && (c.OSL < 1 || c.OSL != math.Trunc(c.OSL) || c.OSL > math.MaxInt32) {
			bad("--osl %v: with a TRACE, the output length of rows that have none: want a whole number of tokens ≥ 1", c.OSL)
		}
	}
	if c.MaxInputTokens < 1 {
		bad("--max-input-tokens %d: want a positive number of tokens", c.MaxInputTokens)
	}
	if c.StdinSpoolMiB < 1 {
		bad("--stdin-spool-mib %d: want a positive number of MiB", c.StdinSpoolMiB)
	}
	pcfg := prompt.NewConfig()
	// Blocks are cheap to regenerate (a few ns per token); a smaller cache
	// keeps a long-prompt replay within a few hundred MB.
	pcfg.BlockCacheBytes = promptCacheBytes
	pcfg.Seed = c.PromptSeed
	pcfg.Mismatch = prompt.Mismatch(c.HashMismatch)
	pcfg.ISLCorrection = c.ISLCorrection
	pcfg.Format = prompt.Format(c.PromptFormat)
	if err := pcfg.Validate(); err != nil {
		errs = append(errs, err)
	}
	rp.pcfg = pcfg
	if err := c.Replay.Validate(); err != nil {
		errs = append(errs, err)
	}
	if len(errs) > 0 {
		return nil, errors.Join(errs...)
	}

	// The trace: validated in a first pass and read again while the run
	// goes (design 0006), or, when that cannot be, held whole.
	if len(c.Args) == 1 {
		rp.tracePath = c.Args[0]
		// A row without an output length would go without max_tokens, which
		// under ignore_eos never ends: refused unless --osl gives one.
		opts := trace.Options{Format: tf, BlockSize: c.BlockSize, SkipInvalid: c.SkipInvalid, DropFailed: c.DropFailed,
			ModelFilter: c.ModelFilter, MaxInputTokens: c.MaxInputTokens, DefaultOutputTokens: int(c.OSL),
			RequireOutput: c.MaxTokensFromTrace, Log: a.log, Context: ctx}
		src := c.traceSource(rp, a, &opts)
		streamed, err := c.scanTrace(rp, src, opts, pcfg)
		if err != nil {
			return nil, err
		}
		if streamed {
			return rp, nil
		}
		if !loadTraces {
			opts.Log = nil // the first pass logged the warnings
		}
		if rp.digest == nil && rp.spool == nil { // loadTraces: the first pass stopped early (a file only)
			if rp.digest, err = digestFile(rp.tracePath); err != nil {
				return nil, err
			}
		}
		if rp.rows, rp.stats, err = src.readAll(opts); err != nil {
			return nil, err
		}
		if len(rp.rows) == 0 {
			return nil, noRows(rp)
		}
		rp.nRows = len(rp.rows)
	}
	rp.prompts, err = newSynthPrompts(rp, pcfg, c.Endpoint == "completions" && pcfg.Format == prompt.FormatTokenIDs)
	if err != nil {
		if rp.tracePath != "" {
			return nil, fmt.Errorf("%s: %w", rp.tracePath, err)
		}
		return nil, err
	}
	if err := engine.ContextMode(c.ContextMode).Check(rp.rows); err != nil {
		return nil, err
	}
	rp.plan, err = replay.NewPlan(c.Replay, rp.rows)
	if err != nil {
		return nil, err
	}
	return rp, nil
}

// splitUserInfo returns --url without its user info, and the user info as
// an HTTP Basic Authorization value ("" without). The engine never sees
// the credentials in the URL, so no log or error message of it can show
// them. A query or fragment is an error: the endpoint path is appended to
// the URL, so neither would reach the server. A URL that does not parse is
// returned as given, for the engine's validation to report.
func splitUserInfo(raw string) (base, basicAuth string, err error) {
	u, perr := url.Parse(raw)
	if perr != nil {
		return raw, "", nil
	}
	if u.RawQuery != "" || u.ForceQuery || u.Fragment != "" {
		err = fmt.Errorf("--url %s?…: a query or fragment cannot be sent (the endpoint path is appended to --url); "+
			"drop it, and give credentials with --api-key or --header", urlForFiles(raw))
	}
	if u.User == nil {
		return raw, "", err
	}
	pass, _ := u.User.Password()
	basicAuth = "Basic " + base64.StdEncoding.EncodeToString([]byte(u.User.Username()+":"+pass))
	u.User = nil
	return u.String(), basicAuth, err
}

// loadTraces makes the replay command hold every trace in memory, as it
// did before traces were streamed: the tests compare both paths.
var loadTraces bool

// scanTrace is the first pass over the trace file (design 0006): it reads
// every row once, reporting every problem as ReadAll would, and meanwhile
// prepares prompt synthesis, checks the context mode and surveys what the
// plan needs. When the trace can be replayed while it is read again, it
// fills rp (a streamed plan, the prompts, the counts) and returns true;
// otherwise it returns false and says why in rp.loadNote, and the caller
// loads the trace whole. Nothing per row is kept but the prompt
// expectations (8 bytes).
func (c *replayConfig) scanTrace(rp *replayPlan, src traceSource, opts trace.Options, pcfg prompt.Config) (bool, error) {
	r, dr, closeTrace, err := src.first(opts)
	if err != nil {
		return false, err
	}
	rp.format = r.Format()
	if loadTraces && rp.spool == nil {
		closeTrace()
		rp.loadNote = "loading was asked for"
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
	sv := replay.NewSurvey(c.Replay)
	cc := engine.ContextMode(c.ContextMode).Checker()
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
	if loadTraces { // standard input: its copy is complete now
		rp.loadNote = "loading was asked for"
		return false, nil
	}
	if err := sv.Streamable(); err != nil {
		rp.loadNote = strings.TrimPrefix(err.Error(), replay.ErrNotStreamable.Error()+": ")
		return false, nil
	}
	if synthErr != nil {
		return false, fmt.Errorf("%s: prompt synthesis with tokenizer %s: %w", rp.tracePath, rp.tok.Name(), synthErr)
	}
	if err := prep.Done(); err != nil {
		return false, fmt.Errorf("%s: %w", rp.tracePath, err)
	}
	if err := cc.Err(); err != nil {
		return false, err
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
	rp.prompts = &synthPrompts{s: s, ids: c.Endpoint == "completions" && pcfg.Format == prompt.FormatTokenIDs}
	rp.nRows = int(rp.stats.Kept)
	rp.streamed = true
	return true, nil
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
// by --stdin-spool-mib). From standard input with --request-count N (and
// neither --start-offset nor --warmup-duration), only the first N +
// --warmup-requests rows are read (opts.MaxRows): a producer that never
// ends can feed a run, and the rest of the input is never read.
func (c *replayConfig) traceSource(rp *replayPlan, a *app, opts *trace.Options) traceSource {
	if rp.tracePath != "-" {
		path := rp.tracePath
		return traceSource{
			first: func(opts trace.Options) (*trace.Reader, *digestReader, func(), error) {
				return openDigested(path, opts)
			},
			again: func(opts trace.Options) (*trace.Reader, error) { return trace.Open(path, opts) },
		}
	}
	if rc := c.Replay; rc.RequestCount > 0 && rc.StartOffset == 0 && rc.WarmupDuration == 0 {
		opts.MaxRows = int64(rc.RequestCount) + int64(rc.WarmupRequests)
	}
	return traceSource{
		first: func(opts trace.Options) (*trace.Reader, *digestReader, func(), error) {
			sp, err := spool.New(a.stdin, spool.Config{Max: int64(c.StdinSpoolMiB) << 20, What: "standard input", Flag: "--stdin-spool-mib"})
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

// replayFlags are the engine's flags; the scheduler's come from
// timingFlags.
func replayFlags() []cli.Flag {
	const (
		catTarget = "Target"
		catReq    = "Requests"
		catLoad   = "Synthetic load (no TRACE)"
		catTrace  = "Trace"
		catOut    = "Results"
	)
	return []cli.Flag{
		&cli.StringFlag{Name: "url", Aliases: []string{"u"}, Value: defaultURL, Category: catTarget, Sources: envVars("url"),
			Usage: "server base `URL` (http:// or https://); the endpoint path is appended"},
		&cli.StringFlag{Name: "model", Aliases: []string{"m"}, Category: catTarget, Sources: envVars("model"),
			Usage: "`MODEL` name sent in every request (required)"},
		&cli.StringFlag{Name: "endpoint", Value: "chat", Category: catTarget, Sources: envVars("endpoint"),
			Usage: "API `KIND`: chat (/v1/chat/completions), completions (/v1/completions), a Wasm adapter FILE.wasm or a shipped adapter name"},
		&cli.StringFlag{Name: "adapter-config", Category: catTarget, Sources: envVars("adapter-config"),
			Usage: "`JSON` options for a Wasm --endpoint adapter (its rp_configure \"options\")"},
		&cli.StringFlag{Name: "adapter-sha256", Category: catTarget, Sources: envVars("adapter-sha256"),
			Usage: "pin a Wasm --endpoint adapter to this `SHA256` (a different module fails to load)"},
		&cli.StringFlag{Name: "adapter-sandbox", Value: "auto", Category: catTarget, Sources: envVars("adapter-sandbox"),
			Usage: "`MODE` of Wasm --endpoint adapters: auto (modules from files are interrupted at their deadline, shipped ones trusted), " +
				"always (every module interruptible; use it for third-party modules; costs 6-11x guest CPU) or never (no deadline: a looping guest hangs its sender)"},
		&cli.IntFlag{Name: "adapter-memory-mib", Value: wasm.DefaultMemoryBudget >> 20, Category: catTarget, Sources: envVars("adapter-memory-mib"),
			Usage: "cap the linear memory of all of a Wasm --endpoint adapter's instances together at `MIB` MiB (64 MiB each: the default keeps 16; senders wait for a free one)"},
		&cli.StringSliceFlag{Name: "header", Aliases: []string{"H"}, Category: catTarget, Sources: envVars("header"),
			Usage: "extra request header `NAME:VALUE` (repeatable)"},
		&cli.StringFlag{Name: "api-key", Category: catTarget, Sources: cli.EnvVars("REPRISE_API_KEY", "OPENAI_API_KEY"),
			Usage: "bearer `KEY` (also REPRISE_API_KEY or OPENAI_API_KEY); never written to any file"},
		&cli.DurationFlag{Name: "timeout", Value: engine.DefaultTimeout, Category: catTarget, Sources: envVars("timeout"),
			Usage: "give up on a request after `D` (recorded as timeout)"},
		&cli.BoolFlag{Name: "http2", Category: catTarget, Sources: envVars("http2"),
			Usage: "use HTTP/2 (h2c prior knowledge for http://, h2 for https://) instead of HTTP/1.1"},
		&cli.BoolFlag{Name: "no-kernel-timestamps", Category: catTarget, Sources: envVars("no-kernel-timestamps"),
			Usage: "stamp response bytes when reprise reads them, not when the kernel received them (SO_TIMESTAMPNS; Linux, HTTP/1.1)"},
		&cli.IntFlag{Name: "nice", Category: catTarget, Sources: envVars("nice"), DefaultText: "as started",
			Usage: "run reprise's threads at nice value `N` (-20 runs first: on a busy machine the kernel then delays reprise's reads and sends less; needs root or CAP_SYS_NICE below the current value)"},
		&cli.IntFlag{Name: "max-connections", Category: catTarget, Sources: envVars("max-connections"),
			Usage: "cap connections to the server at `N` (0 = one per request in flight)"},
		&cli.BoolWithInverseFlag{Name: "streaming", Value: true, Category: catReq, Sources: envVars("streaming"),
			Usage: "stream responses (SSE); --no-streaming asks for whole bodies"},
		&cli.BoolWithInverseFlag{Name: "ignore-eos", Value: true, Category: catReq, Sources: envVars("ignore-eos"),
			Usage: "ask the server to generate exactly max_tokens (output lengths follow the trace)"},
		&cli.BoolWithInverseFlag{Name: "max-tokens-from-trace", Value: true, Category: catReq, Sources: envVars("max-tokens-from-trace"),
			Usage: "send each row's output length (or --osl) as max_tokens"},
		&cli.StringFlag{Name: "extra-body", Aliases: []string{"extra-inputs"}, Category: catReq, Sources: envVars("extra-body"),
			Usage: "`JSON` object merged into every request body, e.g. '{\"temperature\":0}'"},
		&cli.StringFlag{Name: "tokenizer", Value: "builtin", Category: catReq, Sources: envVars("tokenizer"),
			Usage: "client tokenizer `SPEC`: builtin (o200k_base), an encoding name, a tokenizer.json, a model dir or a cached HF id"},
		&cli.BoolFlag{Name: "use-server-token-count", Value: true, Category: catReq, Sources: envVars("use-server-token-count"),
			Usage: "take output lengths (OSL, ITL) from the server's usage when it reports it; =false counts with the client tokenizer (both counts are recorded)"},
		&cli.FloatFlag{Name: "isl", Aliases: []string{"synthetic-input-tokens-mean"}, Category: catLoad, Sources: envVars("isl"),
			Usage: "synthetic input length, mean `TOKENS`"},
		&cli.FloatFlag{Name: "isl-stddev", Aliases: []string{"synthetic-input-tokens-stddev"}, Category: catLoad, Sources: envVars("isl-stddev"),
			Usage: "synthetic input length, standard deviation `TOKENS`"},
		&cli.FloatFlag{Name: "osl", Aliases: []string{"output-tokens-mean"}, Category: catLoad, Sources: envVars("osl"),
			Usage: "synthetic output length, mean `TOKENS`; with a TRACE, the output length of rows that have none (they are refused without it)"},
		&cli.FloatFlag{Name: "osl-stddev", Aliases: []string{"output-tokens-stddev"}, Category: catLoad, Sources: envVars("osl-stddev"),
			Usage: "synthetic output length, standard deviation `TOKENS`"},
		&cli.StringFlag{Name: "trace-format", Category: catTrace, Sources: envVars("trace-format"),
			Usage: "trace `FORMAT` (default: detected): mooncake, bailian, burstgpt, azure, …"},
		&cli.IntFlag{Name: "block-size", Category: catTrace, Sources: envVars("block-size"),
			Usage: "tokens per hash id `N` (0 = the format's default: 512 Mooncake, 16 Bailian)"},
		&cli.IntFlag{Name: "max-input-tokens", Value: trace.DefaultMaxInputTokens, Category: catTrace, Sources: envVars("max-input-tokens"),
			Usage: "refuse a trace row of more than `N` input tokens (the default, 2^24, is above any model's context window)"},
		withCategory(stdinSpoolFlag("which the run reads again; with --request-count only the rows it needs are read"), catTrace),
		&cli.BoolFlag{Name: "skip-invalid", Category: catTrace, Sources: envVars("skip-invalid"),
			Usage: "skip invalid trace rows (counted) instead of stopping"},
		&cli.BoolFlag{Name: "drop-failed", Category: catTrace, Sources: envVars("drop-failed"),
			Usage: "drop rows the trace marks as failed (BurstGPT zero output)"},
		&cli.StringFlag{Name: "model-filter", Category: catTrace, Sources: envVars("model-filter"),
			Usage: "keep only rows of trace model `NAME` (BurstGPT)"},
		&cli.Uint64Flag{Name: "prompt-seed", Category: catTrace, Sources: envVars("prompt-seed"),
			Usage: "`SEED` of the prompt words: equal seeds build equal prompts (and can reuse a server's cache)"},
		&cli.StringFlag{Name: "hash-mismatch", Value: string(prompt.DefaultMismatch), Category: catTrace, Sources: envVars("hash-mismatch"),
			Usage: "`MODE` of rows whose hash ids do not fit their length: error (stop before sending) or fit (adapt the ids, counted)"},
		&cli.IntFlag{Name: "isl-correction", Category: catTrace, Sources: envVars("isl-correction"),
			Usage: "subtract `N` tokens from every synthesized prompt (what the server's chat template adds)"},
		&cli.StringFlag{Name: "prompt-format", Value: string(prompt.DefaultFormat), Category: catTrace, Sources: envVars("prompt-format"),
			Usage: "`FORMAT` of synthesized prompts: text, or token-ids (sent as a token array with --endpoint completions)"},
		&cli.StringFlag{Name: "goodput", Category: catOut, Sources: envVars("goodput"),
			Usage: "SLOs `\"TAG:VALUE …\"`, e.g. \"ttft:250 itl:10 e2e:2000\" (ms; AIPerf tags accepted)"},
		&cli.FloatFlag{Name: "min-good-fraction", Value: defaultMinGoodFraction, Category: catOut, Sources: envVars("min-good-fraction"),
			Usage: "with --goodput, exit 3 when fewer than `F` of the requests meet every SLO"},
		&cli.FloatFlag{Name: "max-error-rate", Value: defaultMaxErrorRate, Category: catOut, Sources: envVars("max-error-rate"),
			Usage: "exit 3 when more than `R` (a fraction) of the measured requests failed (1 = never)"},
		&cli.StringFlag{Name: "out", Aliases: []string{"o"}, Category: catOut, Sources: envVars("out"),
			Usage: "run `DIR` (default runs/<UTC time>-<model>-<mode>/); it must be new or empty unless --overwrite"},
		&cli.BoolFlag{Name: "overwrite", Category: catOut, Sources: envVars("overwrite"),
			Usage: "reuse a non-empty --out run directory: clear the earlier run's files first (refused if it holds other files)"},
		&cli.StringFlag{Name: "format", Value: "parquet", Category: catOut, Sources: envVars("format"),
			Usage: "record file `FORMAT`: parquet, arrow or jsonl"},
		&cli.BoolFlag{Name: "single-file", Category: catOut, Sources: envVars("single-file"),
			Usage: "write one file per table (records.parquet) instead of rolling parts; a crash then loses the whole table"},
		&cli.DurationFlag{Name: "part-interval", Value: arrowio.DefaultPartInterval, Category: catOut, Sources: envVars("part-interval"),
			Usage: "durability: every record is in a complete file (survives kill -9) within `D` of reaching the writer; a part is completed (jsonl: flushed) at least this often (0 = by --part-rows only)"},
		&cli.IntFlag{Name: "part-rows", Value: arrowio.DefaultPartRows, Category: catOut, Sources: envVars("part-rows"),
			Usage: "complete a part (jsonl: flush) every `N` rows, if --part-interval has not already"},
		&cli.StringFlag{Name: "export", Category: catOut, Sources: envVars("export"),
			Usage: "`KIND`: aiperf also writes profile_export.jsonl and profile_export_aiperf.json (AIPerf's shapes) after the run"},
		&cli.StringFlag{Name: "export-level", Value: "records", Category: catOut, Sources: envVars("export-level"),
			Usage: "`LEVEL`: records (one row per request) or events (also one row per response event)"},
		&cli.StringFlag{Name: "cpuprofile", Category: catOut, Sources: envVars("cpuprofile"),
			Usage: "write a CPU profile of the run to `FILE`"},
		&cli.StringFlag{Name: "memprofile", Category: catOut, Sources: envVars("memprofile"),
			Usage: "write a heap profile at the end of the run (before the summary) to `FILE`"},
		&cli.BoolFlag{Name: "quiet", Aliases: []string{"q"}, Category: catOut, Sources: envVars("quiet"),
			Usage: "no progress and no summary table on stderr"},
	}
}

// replayCommand is `reprise replay [TRACE] --url URL --model M`.
func replayCommand(a *app) *cli.Command {
	return &cli.Command{
		Name:      "replay",
		Usage:     "replay a trace (or a synthetic load) against an OpenAI-compatible server and measure it",
		ArgsUsage: "[TRACE]",
		Description: "Sends every request of TRACE (any supported format; - = stdin) at its intended time, with\n" +
			"prompts that reproduce the trace's prefix sharing, streams the responses and records TTFT, TTFO,\n" +
			"ITL, latency, token counts, errors and its own schedule lateness per request. Without a TRACE it\n" +
			"runs a synthetic load (--isl, --osl) at --request-rate or --concurrency.\n" +
			"Writes records (Parquet), summary.json and the manifest to --out; prints the summary on stderr.\n" +
			"Ctrl-C stops sending, waits --grace for in-flight requests, cancels the rest and writes everything;\n" +
			"a second Ctrl-C cancels in-flight requests at once and writes what is finished.\n\n" +
			"Exit codes: 0 ok, 1 run error, interrupted or no request succeeded, 2 bad command line or trace,\n" +
			"3 goodput SLO or --max-error-rate (default 0.05) failed, 4 p99 schedule lateness over --max-lateness.\n\n" +
			"Examples:\n" +
			"  reprise replay traces/mooncake-sample.jsonl --url http://localhost:8000 --model M --speedup 10\n" +
			"  reprise replay --url http://localhost:8000 --model M --isl 512 --osl 128 --concurrency 32 --request-count 1000\n" +
			"  reprise replay trace.jsonl -m M --goodput \"ttft:250 itl:10\" --max-error-rate 0.01 --max-lateness 1ms",
		Flags: append(append(append(append(replayFlags(), responseCapFlags()...), contextFlags()...), timingFlags()...), telemetryFlags()...),
		Action: func(ctx context.Context, cmd *cli.Command) error {
			rc, err := timingConfigFrom(cmd)
			tc, terr := telemetryConfigFrom(cmd, cmd.String("url"))
			if err := errors.Join(err, terr); err != nil {
				return exitcode.UsageError(err, "see 'reprise replay --help'")
			}
			c := &replayConfig{
				Args: cmd.Args().Slice(), URL: cmd.String("url"), Model: cmd.String("model"), Endpoint: cmd.String("endpoint"),
				Streaming: cmd.Bool("streaming"), IgnoreEOS: cmd.Bool("ignore-eos"), MaxTokensFromTrace: cmd.Bool("max-tokens-from-trace"),
				ExtraBody: cmd.String("extra-body"), Headers: cmd.StringSlice("header"), APIKey: cmd.String("api-key"),
				Timeout: cmd.Duration("timeout"), HTTP2: cmd.Bool("http2"), NoKernelStamps: cmd.Bool("no-kernel-timestamps"), MaxConnections: cmd.Int("max-connections"),
				ISL: cmd.Float("isl"), ISLStd: cmd.Float("isl-stddev"), OSL: cmd.Float("osl"), OSLStd: cmd.Float("osl-stddev"),
				Tokenizer: cmd.String("tokenizer"), UseServerTokenCount: cmd.Bool("use-server-token-count"),
				Goodput: cmd.String("goodput"), MaxErrorRate: cmd.Float("max-error-rate"), MinGoodFraction: cmd.Float("min-good-fraction"),
				Out: cmd.String("out"), Overwrite: cmd.Bool("overwrite"), Quiet: cmd.Bool("quiet"), CPUProfile: cmd.String("cpuprofile"), MemProfile: cmd.String("memprofile"), Format: cmd.String("format"), ExportLevel: cmd.String("export-level"),
				SingleFile: cmd.Bool("single-file"), Export: cmd.String("export"),
				PartInterval: cmd.Duration("part-interval"), PartRows: cmd.Int("part-rows"),
				TraceFormat: cmd.String("trace-format"), BlockSize: cmd.Int("block-size"), MaxInputTokens: cmd.Int("max-input-tokens"),
				StdinSpoolMiB: cmd.Int("stdin-spool-mib"),
				SkipInvalid:   cmd.Bool("skip-invalid"),
				DropFailed:    cmd.Bool("drop-failed"), ModelFilter: cmd.String("model-filter"),
				AdapterConfig: cmd.String("adapter-config"), AdapterSHA256: cmd.String("adapter-sha256"),
				AdapterSandbox: cmd.String("adapter-sandbox"), AdapterMemoryMiB: cmd.Int("adapter-memory-mib"),
				PromptSeed: cmd.Uint64("prompt-seed"), HashMismatch: cmd.String("hash-mismatch"),
				ISLCorrection: cmd.Int("isl-correction"), PromptFormat: cmd.String("prompt-format"), ContextMode: cmd.String("context-mode"), Replay: rc, Telemetry: tc,
			}
			c.Caps = responseCapsFrom(cmd)
			if cmd.IsSet("nice") {
				n := cmd.Int("nice")
				c.Nice = &n
			}
			return runReplay(ctx, a, c)
		},
	}
}

// runReplay validates everything, runs, writes the run directory and maps
// the verdicts to exit codes.
func runReplay(ctx context.Context, a *app, c *replayConfig) error {
	// The Go heap limit of a replay when GOMEMLIMIT is not set, from before
	// the trace is read: loading a large trace makes garbage (the row
	// slice's growth, parse buffers) that would otherwise double the peak
	// at GOGC=100. The limit is soft: above it the GC works harder, capped
	// at half the CPU by the runtime, never fails. While requests are sent
	// it is the collector's only trigger (engine.RunConfig.QuietGC).
	if os.Getenv("GOMEMLIMIT") == "" {
		debug.SetMemoryLimit(engine.DefaultMemoryLimit)
	}
	rp, err := c.validate(ctx, a)
	if err != nil {
		if ctx.Err() != nil && errors.Is(err, ctx.Err()) {
			return fmt.Errorf("interrupted while reading the trace: %w", err) // exit 1: nothing is wrong with the command
		}
		err = flagSpelled(err)
		if h, ok := traceHint(err, "--trace-format", true); ok {
			return exitcode.UsageError(err, h)
		}
		return exitcode.UsageError(err, "see 'reprise replay --help'")
	}
	defer rp.close() // a streamed plan's trace, when the run does not start; standard input's copy
	if c.Nice != nil {
		if err := prio.SetNice(*c.Nice); err != nil {
			return fmt.Errorf("--nice %d: %w, or leave --nice out", *c.Nice, err)
		}
	}
	if rp.wasm != nil {
		defer rp.wasm.Close(context.WithoutCancel(ctx))
	}
	// The host's timer quality for the manifest, measured after --nice
	// took effect (it changes how soon the kernel wakes reprise up).
	pfStart := time.Now()
	pf := replay.Preflight(replay.DefaultPreflight)
	pfTook := time.Since(pfStart)
	rp.preflight = preflightManifest(pf, pfTook)
	a.log.Debug("timer preflight", slog.String("primitive", pf.Primitive), slog.Duration("p50", pf.P50),
		slog.Duration("p99", pf.P99), slog.Duration("max", pf.Max), slog.Duration("took", pfTook))
	if n := urlNote(rp.url, rp.engine.Adapter.Info().Path); n != "" {
		fmt.Fprintf(a.stderr, "reprise: note: %s\n", n)
	}
	mode := string(rp.plan.Mode())
	start := time.Now().UTC()
	acfg := arrowio.NewConfig()
	acfg.Format = arrowio.Format(c.Format)
	acfg.SingleFile = c.SingleFile
	acfg.PartInterval, acfg.PartRows = partInterval(c.PartInterval), c.PartRows
	acfg.Block = true // the collector goroutine waits; requests never do
	acfg.Metadata = map[string]string{"reprise.version": versionString()}
	// A table that cannot be written (a full disk) stops the run at once.
	runCtx, stopRun := context.WithCancelCause(ctx)
	defer stopRun(nil)
	acfg.OnError = func(err error) { stopRun(err) }
	run, err := createRun(c, start, mode, acfg)
	if err != nil {
		return err
	}
	// The engine closes the records table and tel.stop the telemetry
	// tables, reporting their errors; this closes what an early return
	// leaves open.
	defer run.Close()
	dir := run.Dir()
	// One clock for the schedule, records and telemetry samples.
	if rp.engine.Clock == nil {
		rp.engine.Clock = replay.NewClock()
	}
	tel, err := startTelemetry(ctx, c.Telemetry, run, rp.engine.Clock, a.log)
	if err != nil {
		return exitcode.UsageError(err, "drop --gpu-telemetry, or point it at a DCGM exporter with dcgm=URL")
	}
	info := summary.RunInfo{Model: c.Model, URL: rp.url, Endpoint: rp.engine.Adapter.Info().Name, Mode: mode,
		Trace: rp.tracePath, Streaming: c.Streaming, Start: start, Version: versionString()}
	rp.engine.Counter = rp.tok
	rcfg := engine.RunConfig{
		Engine: rp.engine, Replay: c.Replay, Rows: rp.rows, Plan: rp.plan,
		Synthetic: engine.Synthetic{ISL: c.ISL, ISLStd: c.ISLStd, OSL: c.OSL, OSLStd: c.OSLStd, Seed: c.Replay.Seed},
		Prompts:   rp.prompts, Context: engine.ContextMode(c.ContextMode), Streaming: c.Streaming, MaxTokensFromTrace: c.MaxTokensFromTrace, Sink: run.Records(),
		Summary: summary.Options{Streaming: c.Streaming, UseServerTokenCount: c.UseServerTokenCount, Goodput: rp.slos,
			LateThreshold: c.Replay.LateThreshold},
		Info: info, Grace: c.Replay.Grace, Abort: a.abort.Done(), Log: a.log, QuietGC: true,
	}
	if !c.Quiet {
		rcfg.Progress = a.stderr
		rcfg.TTY = isTerminal(a.stderr)
		if rp.loadNote != "" && rp.tracePath != "" {
			fmt.Fprintf(a.stderr, "reprise: note: the %d rows of the trace are held in memory (%s); sorted traces of independent requests are read while the run goes\n",
				rp.nRows, rp.loadNote)
		}
		if n := rp.stats.DefaultedOutput; n > 0 {
			fmt.Fprintf(a.stderr, "reprise: note: %d rows of the trace have no output length: they ask for --osl %d output tokens\n", n, int(c.OSL))
		}
		fmt.Fprintf(a.stderr, "reprise: replaying %s against %s (%s, %s mode, %s) → %s\n",
			orSynthetic(rp.tracePath), endpointURL(rp.url, rp.engine.Adapter.Info().Path), info.Endpoint, mode,
			plannedText(rp.plan.Requests(), c.Replay.Duration), dir)
	}
	if err := writeManifest(run, c, rp, start); err != nil {
		return err
	}
	if c.CPUProfile != "" {
		f, err := os.Create(c.CPUProfile)
		if err != nil {
			return fmt.Errorf("--cpuprofile: %w", err)
		}
		defer f.Close()
		if err := pprof.StartCPUProfile(f); err != nil {
			return fmt.Errorf("--cpuprofile: %w", err)
		}
		defer pprof.StopCPUProfile()
	}
	res, runErr := engine.Run(runCtx, rcfg)
	if runErr == nil && runCtx.Err() != nil && ctx.Err() == nil {
		runErr = context.Cause(runCtx) // a telemetry table failed
	}
	if c.MemProfile != "" {
		if err := writeHeapProfile(c.MemProfile); err != nil {
			return err
		}
	}
	tel.stop(a.abort, a.log)
	aborted := a.abort.Err() != nil
	if res == nil {
		return fmt.Errorf("replay: %w", runErr)
	}
	if tel != nil {
		servers, gpu := tel.summaries(res.Summary.WindowStartNS, res.Summary.WindowEndNS, res.Summary.TotalOSL)
		res.Summary.Telemetry = &summary.Telemetry{Servers: servers, GPU: gpu}
	}
	writer := run.Records().Report()
	// Atomic: a full disk leaves no summary.json rather than a cut one. A
	// failure here still lets the summary reach stderr below.
	sumErr := run.WriteSummary(res.Summary, writer)
	if c.Export == "aiperf" && aborted {
		// It reads every record back: not now. Worth a line with --quiet.
		fmt.Fprintf(a.stderr, "reprise: note: --export aiperf skipped (interrupted twice); reprise summarize --export aiperf %s writes it\n", dir)
	} else if c.Export == "aiperf" && runErr == nil && sumErr == nil {
		if err := run.ExportAIPerf(res.Summary); err != nil {
			return fmt.Errorf("--export aiperf: %w", err)
		}
	}
	if !c.Quiet {
		res.Summary.WriteTable(a.stderr)
		st := res.Stats
		fmt.Fprintf(a.stderr, "%-34s late %d, waited for a sender %d, shifted %d, skipped %d; p99 %v; stop: %s\n",
			"Dispatcher", st.Late, st.Waited, st.Shifted, st.Skipped, st.Lateness.P99, st.StopReason)
		fmt.Fprint(a.stderr, writerNote(writer))
		if res.InlineBuilds > 0 {
			fmt.Fprintf(a.stderr, "note: %d requests were built on the send path (lookahead behind)\n", res.InlineBuilds)
		}
		if res.ClosesAfterStream {
			fmt.Fprintf(a.stderr, "note: the server closes the connection after every streamed response; once that was seen, streams were sent with Connection: close\n")
		}
		if n := readLagNote(res.Summary); n != "" {
			fmt.Fprintln(a.stderr, n)
		}
		fmt.Fprintf(a.stderr, "results: %s\n", dir)
	} else if writer.Dropped > 0 || writer.Error != "" {
		fmt.Fprint(a.stderr, writerNote(writer)) // lost rows are worth a line even with --quiet
	}
	if s := res.Summary; s.WarmupCount > 0 && s.RequestCount+s.ErrorRequestCount == 0 {
		// Worth a line even with --quiet: the summary is empty.
		fmt.Fprintf(a.stderr, "reprise: note: all %d requests were warmup, so nothing was measured; lower --warmup-requests or --warmup-duration\n", s.WarmupCount)
	}
	if runErr != nil {
		if sumErr != nil {
			return fmt.Errorf("replay: %w; %w (partial results in %s)", runErr, sumErr, dir)
		}
		return fmt.Errorf("replay: %w (partial results in %s)", runErr, dir)
	}
	if sumErr != nil {
		return sumErr
	}
	if res.Interrupted && aborted {
		return &exitcode.Error{Code: exitcode.RunError,
			Err: fmt.Errorf("interrupted twice: in-flight requests were cancelled at once; partial results written to %s", dir)}
	}
	if res.Interrupted {
		return &exitcode.Error{Code: exitcode.RunError, Err: fmt.Errorf("interrupted; partial results written to %s", dir)}
	}
	return verdict(c, res)
}

// partInterval maps --part-interval to arrowio's PartInterval, in which 0
// means the default and a negative value none.
func partInterval(d time.Duration) time.Duration {
	if d == 0 {
		return -1
	}
	return d
}

// createRun creates the run directory: --out, refused when it holds files
// (unless --overwrite, which clears an earlier run from it), or a new
// runs/<UTC time>-<model>-<mode>/, with a -2, -3, … suffix when a run
// started in the same second has that name.
func createRun(c *replayConfig, start time.Time, mode string, tables arrowio.Config) (*arrowio.Run, error) {
	if c.Out == "" {
		return arrowio.Create(filepath.Join("runs", fmt.Sprintf("%s-%s-%s", start.Format("20060102T150405Z"), safeName(c.Model), mode)),
			arrowio.CreateConfig{Tables: tables, Unique: true})
	}
	run, err := arrowio.Create(c.Out, arrowio.CreateConfig{Tables: tables, Overwrite: c.Overwrite})
	if err != nil {
		if !errors.Is(err, arrowio.ErrRunDirInUse) {
			return nil, err
		}
		hint := "choose a new or empty --out directory, or add --overwrite to replace the earlier run in it"
		if c.Overwrite {
			hint = "choose a new or empty --out directory, or move the files reprise did not write out of it"
		}
		return nil, exitcode.UsageError(fmt.Errorf("--out %w", err), hint)
	}
	return run, nil
}

// readLagNote warns when at least a tenth of the requests had a read that
// waited in the socket longer than the median gap between tokens: tokens
// that waited together were read together and share the later one's
// arrival time (the kernel keeps one time per read), so first tokens come
// out late and gaps short. Empty otherwise.
func readLagNote(s *summary.Summary) string {
	lag, itl := s.Metrics["client_read_lag"], s.Metrics["inter_token_latency"]
	if lag == nil || itl == nil || itl.P50 <= 0 || lag.P90 <= itl.P50 {
		return ""
	}
	return fmt.Sprintf("note: in over 10%% of requests a read waited longer (client read lag p90 %.2f ms) than the median gap between tokens (%.2f ms):\n"+
		"      tokens that waited together were stamped together, at the later arrival (read_lag_ns in the records says which requests)", lag.P90, itl.P50)
}

// verdict maps a completed run to exit codes 4 (lateness; checked first:
// a late client makes the other verdicts unreliable), 1 (not one request
// succeeded: nothing was measured, whatever --max-error-rate allows),
// 3 (--max-error-rate) and 3 (goodput).
func verdict(c *replayConfig, res *engine.Result) error {
	if err := res.Stats.Check(); err != nil {
		return &exitcode.Error{Code: exitcode.Lateness, Err: flagSpelled(err),
			Hint: "the client could not keep the schedule: lower the load, add --senders, or raise --max-lateness"}
	}
	s := res.Summary
	if s.RequestCount == 0 && s.ErrorRequestCount > 0 {
		// Nothing reached an answer: there is no measurement to judge.
		msg := ""
		if len(s.Errors) > 0 {
			msg = fmt.Sprintf("; e.g. %s: %s", s.Errors[0].Kind, s.Errors[0].Message)
		}
		return &exitcode.Error{Code: exitcode.RunError,
			Err:  fmt.Errorf("no request succeeded (%d failed%s)", s.ErrorRequestCount, msg),
			Hint: "check --url, --model and --endpoint, and that the server is up; every failure is in the records"}
	}
	if s.ErrorRate() > c.MaxErrorRate {
		return &exitcode.Error{Code: exitcode.SLOBreach,
			Err: fmt.Errorf("error rate %.4f > --max-error-rate %v (%d of %d requests failed)", s.ErrorRate(), c.MaxErrorRate,
				s.ErrorRequestCount, s.ErrorRequestCount+s.RequestCount),
			Hint: "every failure is in the records (error_kind, error_message); --max-error-rate 1 accepts any error rate"}
	}
	if len(s.Options.Goodput) > 0 && s.GoodRequestFraction < c.MinGoodFraction {
		return &exitcode.Error{Code: exitcode.SLOBreach,
			Err: fmt.Errorf("goodput: %.4f of requests met every SLO < --min-good-fraction %v", s.GoodRequestFraction, c.MinGoodFraction)}
	}
	return nil
}

// plannedText says how much a run will send: requests planned (-1 =
// unknown, as for a synthetic load with --duration alone) and the
// --duration limit (0 = none).
func plannedText(requests int, d time.Duration) string {
	switch {
	case requests >= 0 && d > 0:
		return fmt.Sprintf("%d requests planned, for at most %v", requests, d)
	case requests >= 0:
		return fmt.Sprintf("%d requests planned", requests)
	case d > 0:
		return fmt.Sprintf("requests for %v", d)
	}
	return "requests until stopped"
}

func orSynthetic(p string) string {
	switch p {
	case "":
		return "a synthetic load"
	case "-":
		return "standard input"
	}
	return p
}

// endpointURL is where requests go: the base URL, then the adapter's path.
func endpointURL(base, path string) string {
	return strings.TrimRight(base, "/") + path
}

// urlNote warns when the base URL already ends in the first segment of the
// endpoint path, as OpenAI clients' base URLs do (http://host:8000/v1 with
// /v1/chat/completions): the requests would go to /v1/v1/chat/completions,
// which servers answer with 404. Empty otherwise.
func urlNote(base, path string) string {
	u, err := url.Parse(base)
	if err != nil {
		return ""
	}
	p := strings.TrimRight(u.Path, "/")
	if p == "" {
		return ""
	}
	last := p[strings.LastIndex(p, "/"):]
	if !strings.HasPrefix(path, last+"/") {
		return ""
	}
	root := *u
	root.Path = strings.TrimSuffix(p, last)
	return fmt.Sprintf("--url %s ends in %s and the endpoint path %s is appended to it, so requests go to %s; "+
		"--url is the server's base URL (%s) unless that path is meant", base, last, path, endpointURL(base, path), root.String())
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

// writeManifest records the effective configuration (secrets redacted)
// and the run's provenance: docs/format/manifest.md.
func writeManifest(run *arrowio.Run, c *replayConfig, rp *replayPlan, start time.Time) error {
	var traceSHA256, traceBytes any // null without a trace
	if rp.digest != nil {
		traceSHA256, traceBytes = rp.digest.Sum(), rp.digest.n
	}
	headers := make([]string, 0, len(c.Headers))
	for _, h := range c.Headers {
		headers = append(headers, headerForFiles(h))
	}
	m := map[string]any{
		"reprise_version":        versionString(),
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
		"model":                  c.Model,
		"endpoint":               c.Endpoint,
		"adapter":                adapterManifest(rp),
		"streaming":              c.Streaming,
		"ignore_eos":             c.IgnoreEOS,
		"max_tokens_from_trace":  c.MaxTokensFromTrace,
		"extra_body":             extraBodyForFiles(c.ExtraBody),
		"headers":                headers,
		"api_key_set":            c.APIKey != "",
		"timeout":                c.Timeout.String(),
		"max_response_events":    c.Caps.Events,
		"max_event_bytes":        c.Caps.EventBytes,
		"max_response_bytes":     c.Caps.Bytes,
		"http2":                  c.HTTP2,
		"kernel_timestamps":      !c.NoKernelStamps && !c.HTTP2,
		"max_connections":        c.MaxConnections,
		"nice":                   processNice(),
		"tokenizer":              rp.tok.Name(),
		"use_server_token_count": c.UseServerTokenCount,
		"goodput":                c.Goodput,
		"format":                 c.Format,
		"single_file":            c.SingleFile,
		"part_interval":          c.PartInterval.String(),
		"part_rows":              c.PartRows,
		"export_level":           c.ExportLevel,
		"export":                 c.Export,
		"synthetic":              map[string]float64{"isl": c.ISL, "isl_stddev": c.ISLStd, "osl": c.OSL, "osl_stddev": c.OSLStd},
		"replay":                 c.Replay.Manifest(),
		"mode":                   string(rp.plan.Mode()),
		"planned_requests":       rp.plan.Requests(),
		"context_mode":           c.ContextMode,
	}
	return run.WriteManifest(m)
}

// processNice is the nice value reprise's threads run at (--nice, or the
// one it was started with), nil where it cannot be read.
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
	f, err := os.Create(path)
	if err != nil {
		return fmt.Errorf("--memprofile: %w", err)
	}
	defer f.Close()
	runtime.GC()
	if err := pprof.WriteHeapProfile(f); err != nil {
		return fmt.Errorf("--memprofile: %w", err)
	}
	return nil
}
