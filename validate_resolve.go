package reprise

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"log/slog"
	"net/http"
	"net/url"
	"slices"
	"strings"
	"time"

	"github.com/reprise-bench/reprise/engine"
	"github.com/reprise-bench/reprise/engine/adapter"
	"github.com/reprise-bench/reprise/engine/adapter/native"
	"github.com/reprise-bench/reprise/engine/adapter/openai"
	"github.com/reprise-bench/reprise/engine/summary"
	"github.com/reprise-bench/reprise/internal/servertok"
	"github.com/reprise-bench/reprise/internal/tokenizer"
	"github.com/reprise-bench/reprise/selftest/calibration"
	"github.com/reprise-bench/reprise/wasm"
)

// validation is one validate call's state: the options, the plan being
// filled, and the problems found so far.
type validation struct {
	ctx  context.Context
	o    *Options
	log  *slog.Logger
	rp   *replayPlan
	errs []*FieldError
	// base is Options.URL without its user info, basicAuth that as an
	// Authorization value, urlOK whether the URL could be split.
	base, basicAuth string
	urlOK           bool
	// fixedISL is whether Options.Prompts.ISLCorrection was given (not
	// learned from the server's chat template).
	fixedISL bool
}

func newValidation(ctx context.Context, o *Options, log *slog.Logger, rp *replayPlan) *validation {
	v := &validation{ctx: ctx, o: o, log: log, rp: rp, fixedISL: o.Prompts.ISLCorrection != 0}
	base, basicAuth, urlErr := splitUserInfo(o.URL)
	v.base, v.basicAuth, v.urlOK = base, basicAuth, urlErr == nil
	rp.url, rp.userInfo = urlForFiles(o.URL), basicAuth != ""
	return v
}

func (v *validation) bad(path, format string, args ...any) {
	v.errs = append(v.errs, fieldError(path, format, args...))
}

// resolveInputs is validate's second step: what the options name outside
// the process that the tokenizer and the adapter depend on: the public
// dataset (o.Trace then names its cached file), the calibration file,
// and the endpoint a recorded trace names (when o.Endpoint is empty).
func (v *validation) resolveInputs() {
	o := v.o
	if o.Trace.PublicDataset != "" || o.Trace.PublicSubset != "" || len(o.Trace.PublicFilters) > 0 {
		resolvePublicDataset(v.ctx, o, v.log, v.bad)
	}
	switch o.Calibration {
	case "":
	case AutoCalibration:
		f, path, err := calibration.Auto(time.Now())
		switch {
		case err == nil:
			v.rp.calibration = f.Applied(path)
		case !errors.Is(err, calibration.ErrNone):
			v.bad("Calibration", "{Calibration} %s: %w; run reprise selftest again, or give {Calibration} a file or none", AutoCalibration, err)
		}
	default:
		f, err := calibration.Read(o.Calibration)
		if err != nil {
			v.bad("Calibration", "{Calibration}: %w", err)
		} else {
			v.rp.calibration = f.Applied(o.Calibration)
		}
	}
	if o.Endpoint == "" {
		// A recorded trace says which endpoint its requests went to.
		if e := traceEndpoint(v.ctx, o); e != "" {
			o.Endpoint = e
			v.log.Info("endpoint from the trace", slog.String("endpoint", e), slog.String("trace", o.Trace.Path))
		} else {
			o.Endpoint = DefaultEndpoint
		}
	}
}

// resolveTokenizer is validate's third step: one tokenizer for prompts,
// output counts and Wasm adapters' token_count (rp.tok; nil when it
// cannot be had, and a problem says why).
func (v *validation) resolveTokenizer() {
	o := v.o
	if o.Tokenizer != TokenizerServer {
		v.rp.tok = loadTokenizer(v.ctx, o, v.log, v.bad)
		return
	}
	if !v.urlOK || o.Model == "" {
		return
	}
	st, info, err := servertok.Load(v.ctx, servertok.Config{BaseURL: serverRoot(v.base), Model: o.Model,
		Header: tokenizeHeader(o, v.basicAuth)})
	switch {
	case err != nil && v.ctx.Err() != nil:
		v.bad("Tokenizer", "{Tokenizer} %s: %w", TokenizerServer, err)
	case err != nil:
		// No /tokenize, a placeholder tokenizer, or one reprise cannot
		// learn from: the run goes on with the builtin tokenizer, and
		// says what that costs.
		v.log.Warn("--tokenizer server: the server's tokenizer cannot be learned; counting with the builtin tokenizer (o200k_base), so input lengths are estimates, not exact (give --tokenizer a tokenizer.json, a GGUF file or the model's Hugging Face id for exact lengths)",
			slog.String("reason", err.Error()))
		if v.rp.tok, err = tokenizer.Builtin(); err != nil {
			v.bad("Tokenizer", "{Tokenizer}: %w", err)
		}
	default:
		v.rp.tok = st
		v.log.Info("server tokenizer", slog.String("name", st.Name()), slog.Int("words", st.Words()),
			slog.String("shape", info.Shape), slog.Bool("cached", info.Cached), slog.Int("requests", info.Requests),
			slog.Bool("counts only", info.CountOnly), slog.String("cache", info.CachePath))
		if (o.Endpoint == "" || o.Endpoint == "chat") && o.Prompts.ISLCorrection == 0 {
			// A chat request's prompt tokens include the template's: take
			// them off the synthesized prompts, as
			// {Prompts.ISLCorrection} would, when the server says how many
			// they are.
			if n, ok := st.ChatTemplateTokens(); ok && n > 0 {
				o.Prompts.ISLCorrection = n
				v.log.Info("server chat template", slog.Int("tokens", n), slog.String("applied as", "isl correction"))
			}
		}
	}
}

// applyChatTemplate carries out {Prompts.ApplyChatTemplate}: it measures
// the tokens the model's chat template adds to a user message and takes
// them off every synthesized prompt ({Prompts.ISLCorrection}); with a
// template of its own, chatFit refits each prompt to the asked length.
func (v *validation) applyChatTemplate() {
	o := v.o
	if !o.Prompts.ApplyChatTemplate {
		return
	}
	switch {
	case v.fixedISL:
		v.bad("Prompts.ApplyChatTemplate", "{Prompts.ApplyChatTemplate} and {Prompts.ISLCorrection} %d both say how many tokens the chat template adds: give one", o.Prompts.ISLCorrection)
		return
	case o.Endpoint != "" && o.Endpoint != "chat":
		v.bad("Prompts.ApplyChatTemplate", "{Prompts.ApplyChatTemplate}: endpoint %s sends no chat messages, so the server applies no chat template (use the chat endpoint, or drop the flag)", o.Endpoint)
		return
	case v.rp.tok == nil:
		return // resolveTokenizer reported why
	}
	n, tmpl, source, err := chatTemplateTokens(v.rp.tok)
	if err != nil {
		v.bad("Prompts.ApplyChatTemplate", "{Prompts.ApplyChatTemplate}: %w", err)
		return
	}
	// The builder takes a row's template_tokens over the correction
	// (fixedISL false): chatFit sets them where a prompt needs its own.
	o.Prompts.ISLCorrection = n
	if tmpl != nil {
		v.rp.chat = &chatFit{tmpl: tmpl, count: v.rp.tok.Count, corr: n}
	}
	v.log.Info("chat template", slog.String("source", source), slog.Int("tokens", n), slog.String("applied as", "isl correction"))
}

// resolveEngine ends validate's third step: the endpoint's adapter
// (native, a template or a Wasm module), the request settings made for
// it, the targets, the graded items, and the checks that depend on the
// endpoint's kind.
func (v *validation) resolveEngine() {
	o, rp := v.o, v.rp
	ec := engineConfig(o, v.base)
	isNative := v.resolveAdapter(&ec)
	rp.streaming = o.Streaming
	if ec.Adapter != nil {
		rp.kind = ec.Adapter.Info().Kind
	}
	if !rp.kind.Generates() || rp.kind == adapter.KindVideo {
		rp.streaming = false // embeddings, rankings and video jobs answer with one body
	}
	ac := v.adapterConfig(isNative, ec.Adapter != nil)
	ec.Adapter = generationSetup(o, ec.Adapter, &ec, &ac, v.bad) // generation.go
	ec.AdapterConfig = ac
	if rp.wasm != nil {
		// The adapter checks its configuration before anything is created.
		if in, err := rp.wasm.NewInstance(&ac); err != nil {
			v.errs = append(v.errs, endpointError(o, err))
		} else {
			in.Release()
		}
	}
	ec.Header = requestHeaders(o, v.basicAuth)
	rp.engine = ec
	v.errs = append(v.errs, rp.addTargets(o)...)
	rp.slos, _ = summary.ParseGoodput(o.Goodput) // checkOptions reported its problem
	for _, slo := range rp.slos {
		if !rp.streaming && summary.StreamingOnly(slo.Tag) {
			v.bad("Goodput", "{Goodput} %s: this metric exists only for streamed responses; drop {Streaming=false} or the SLO", slo.Tag)
		}
	}
	v.syntheticForKind()
	if o.Accuracy.enabled() && rp.tok != nil {
		rp.acc = newAccPlan(v.ctx, o, rp.tok.Count, v.log, v.bad)
	}
}

// engineConfig is the engine's settings from o, for base (Options.URL
// without its user info); the adapter and headers are added by
// resolveEngine.
func engineConfig(o *Options, base string) engine.Config {
	ec := engine.NewConfig()
	ec.BaseURL = base
	ec.Timeout = o.Timeout
	ec.MaxResponseEvents, ec.MaxEventBytes, ec.MaxResponseBytes = o.MaxResponseEvents, o.MaxEventBytes, o.MaxResponseBytes
	ec.HTTP2 = o.HTTP2
	ec.NoKernelStamps = o.NoKernelTimestamps
	ec.MaxConnections = o.MaxConnections
	ec.ConnReuse, _ = o.connReuse() // Validate refused a bad one
	ec.UseServerTokenCount = o.UseServerTokenCount
	ec.Events = o.Output.ExportLevel == "events"
	return ec
}

// resolveAdapter sets ec.Adapter from o.Endpoint: a native endpoint, a
// declarative template (docs/format/template.md) or a Wasm adapter (a
// .wasm file or a shipped adapter's name, also kept as rp.wasm). It
// reports whether the adapter takes native options (a JSON object of
// strings).
func (v *validation) resolveAdapter(ec *engine.Config) (isNative bool) {
	o := v.o
	nat, isNative := native.Lookup(o.Endpoint)
	if o.Endpoint == "" {
		nat, isNative = native.Lookup(DefaultEndpoint)
	}
	switch {
	case isNative:
		ec.Adapter = nat.Adapter
	case strings.HasSuffix(o.Endpoint, ".json"):
		isNative = true
		if t, err := openai.LoadTemplate(o.Endpoint); err != nil {
			v.bad("Endpoint", "{Endpoint}: %v", err)
		} else {
			ec.Adapter = t
		}
	default:
		sandbox, _ := wasm.ParseInterrupt(o.Adapter.Sandbox) // checkOptions reported its problem
		wc := wasm.Config{AdapterConfig: json.RawMessage(o.Adapter.Config), SHA256: o.Adapter.SHA256, Interrupt: sandbox, Log: v.log,
			MemoryBudget: int64(o.Adapter.MemoryMiB) << 20}
		if o.Adapter.Config == "" {
			wc.AdapterConfig = nil
		}
		if v.rp.tok != nil {
			wc.Tokenizer = v.rp.tok
		}
		wa, err := wasm.Load(context.Background(), o.Endpoint, wc)
		if err != nil {
			v.errs = append(v.errs, endpointError(o, err))
		} else {
			ec.Adapter = wa
			v.rp.wasm = wa
		}
	}
	return isNative
}

// adapterConfig is the adapter's request settings from o, and the checks
// of those that depend on the endpoint: batches for embeddings and
// rankings only, native options a JSON object of strings. resolved is
// whether an adapter was had.
func (v *validation) adapterConfig(isNative, resolved bool) adapter.Config {
	o, rp := v.o, v.rp
	if o.BatchSize > 1 && rp.kind == adapter.KindGenerate && resolved {
		v.bad("BatchSize", "{BatchSize} %d: only embeddings and rankings endpoints take batches; {Endpoint} %q generates text", o.BatchSize, o.Endpoint)
	}
	if o.Rankings != (RankingsVariation{}) && rp.kind != adapter.KindRankings && resolved {
		v.bad("Rankings", "{Rankings}: only a rankings endpoint varies its passages and query; {Endpoint} %q is %s", o.Endpoint, rp.kind)
	}
	ac := adapter.Config{Model: o.Model, Stream: rp.streaming, IgnoreEOS: o.IgnoreEOS, MinTokens: o.MinTokens, IncludeUsage: true, Seed: o.Replay.Seed}
	if isNative && o.Adapter.Config != "" {
		if err := json.Unmarshal([]byte(o.Adapter.Config), &ac.Options); err != nil {
			v.bad("Adapter.Config", "{Adapter.Config} %q: a native endpoint takes a JSON object of strings, e.g. '%s': %v",
				o.Adapter.Config, `{"max_tokens_field":"max_completion_tokens"}`, err)
		}
	}
	var m map[string]json.RawMessage
	if o.ExtraBody != "" && json.Unmarshal([]byte(o.ExtraBody), &m) == nil { // else checkOptions reported it
		ac.ExtraBody = json.RawMessage(o.ExtraBody)
	}
	return ac
}

// syntheticForKind reports a synthetic load without the lengths the
// endpoint's kind needs: embeddings and rankings answer with vectors or
// scores, so an input length is the whole load; generation needs both.
func (v *validation) syntheticForKind() {
	o := v.o
	if !syntheticLoad(o) {
		return
	}
	switch {
	case v.rp.kind != adapter.KindGenerate:
		if o.Synthetic.ISL < 1 {
			v.bad("Synthetic", "without a {Trace.Path}, give a synthetic load: {Synthetic.ISL=N} (tokens per input, ≥ 1)")
		}
	case o.Synthetic.ISL < 1 || (o.Synthetic.OSL < 1 && !o.ServerOutputLength):
		v.bad("Synthetic", "without a {Trace.Path}, give a synthetic load: {Synthetic.ISL=N} and {Synthetic.OSL=N} (tokens, ≥ 1)")
	case o.Synthetic.OSL < 1 && len(o.Synthetic.SeqDist) == 0:
		v.rp.serverOutput = true
	}
}

// requestHeaders is every request's headers: the well-formed Headers
// (checkOptions reported the others), the API key as a bearer token,
// and the URL's user info as Basic authorization unless a header gives
// one (as net/http does for a URL with user info, over both protocols).
func requestHeaders(o *Options, basicAuth string) []adapter.Header {
	var hs []adapter.Header
	for _, h := range o.Headers {
		if x, ok := parseHeader(h); ok {
			hs = append(hs, x)
		}
	}
	if o.APIKey != "" {
		hs = append(hs, adapter.Header{Name: "Authorization", Value: "Bearer " + o.APIKey})
	}
	if basicAuth != "" && !slices.ContainsFunc(hs, func(h adapter.Header) bool { return strings.EqualFold(h.Name, "Authorization") }) {
		hs = append(hs, adapter.Header{Name: "Authorization", Value: basicAuth})
	}
	return hs
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
			x, ok := parseHeader(h)
			if !ok {
				bad(path+".Headers", "{"+path+".Headers} %q: want NAME:VALUE, e.g. X-Tenant: a", h)
				continue
			}
			ec.Header = slices.DeleteFunc(ec.Header, func(y adapter.Header) bool { return strings.EqualFold(y.Name, x.Name) })
			ec.Header = append(ec.Header, x)
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

// connReuse returns o.ConnReuse's strategy ("" is pooled).
func (o *Options) connReuse() (engine.ConnReuse, error) {
	if o.ConnReuse == "" {
		return engine.ConnPooled, nil
	}
	return engine.ParseConnReuse(o.ConnReuse)
}

// connReuseName is o's strategy as the manifest names it.
func connReuseName(o *Options) string {
	r, _ := o.connReuse()
	return r.String()
}
