package reprise

import (
	"encoding/base64"
	"encoding/json"
	"math"
	"net"
	"net/url"
	"reflect"
	"slices"
	"strings"

	"github.com/reprise-bench/reprise/arrowio"
	"github.com/reprise-bench/reprise/engine"
	"github.com/reprise-bench/reprise/engine/adapter"
	"github.com/reprise-bench/reprise/engine/summary"
	"github.com/reprise-bench/reprise/internal/adaptive"
	"github.com/reprise-bench/reprise/internal/httpfield"
	"github.com/reprise-bench/reprise/internal/prio"
	"github.com/reprise-bench/reprise/internal/prompt"
	"github.com/reprise-bench/reprise/internal/search"
	"github.com/reprise-bench/reprise/internal/stability"
	"github.com/reprise-bench/reprise/trace"
	"github.com/reprise-bench/reprise/wasm"
)

// checkOptions is validate's first step: the problems of o alone, found
// without reading a file or asking a server (what the options name is
// resolved later, by resolveInputs, resolveTokenizer and resolveEngine).
// It never changes o.
func checkOptions(o *Options) []*FieldError {
	var errs []*FieldError
	bad := func(path, format string, args ...any) { errs = append(errs, fieldError(path, format, args...)) }
	if o.Model == "" {
		bad("Model", "{Model} is required: the model name to put in every request")
	}
	nonFinite(reflect.ValueOf(o).Elem(), "", bad)
	if o.Nice != nil {
		if err := prio.Check(*o.Nice); err != nil {
			bad("Nice", "{Nice}: %w", err)
		}
	}
	base, _, urlErr := splitUserInfo(o.URL)
	if urlErr != nil {
		errs = append(errs, urlErr)
	}
	errs = append(errs, requestProblems(base, o)...)
	checkRequestBody(o, bad)
	if _, err := summary.ParseGoodput(o.Goodput); err != nil {
		bad("Goodput", "{Goodput}: %w", err)
	}
	if o.MaxErrorRate < 0 || o.MaxErrorRate > 1 {
		bad("MaxErrorRate", "{MaxErrorRate} %v: want a fraction between 0 and 1", o.MaxErrorRate)
	}
	if o.MinGoodFraction < 0 || o.MinGoodFraction > 1 {
		bad("MinGoodFraction", "{MinGoodFraction} %v: want a fraction between 0 and 1", o.MinGoodFraction)
	}
	checkOutput(o, bad)
	checkExports(o, bad)
	checkTraceOptions(o, bad)
	checkSynthetic(o, bad)
	checkPrompts(o, bad)
	errs = append(errs, fieldErrors(o.Replay.Validate(), "Replay")...)
	errs = append(errs, validateServerControl(&o.Server)...)
	errs = append(errs, validateWarmup(o)...)
	checkAdaptive(o, bad)
	checkStability(o, bad)
	if o.Replay.PrefillConcurrency > 0 && !o.Streaming {
		bad("Replay.PrefillConcurrency", "{Replay.PrefillConcurrency} needs {Streaming}: a response's first token is known only when it is streamed")
	}
	return errs
}

// checkRequestBody reports the problems of what shapes each request: the
// adapter's limits, the batch and query sizes, the extra body and the
// headers. (What depends on the endpoint's kind is resolveEngine's.)
func checkRequestBody(o *Options, bad func(path, format string, args ...any)) {
	if least := wasm.DefaultMemoryLimitPages >> 4; o.Adapter.MemoryMiB < least {
		bad("Adapter.MemoryMiB", "{Adapter.MemoryMiB} %d: want at least %d (one adapter instance's memory limit, MiB)", o.Adapter.MemoryMiB, least)
	}
	if _, err := wasm.ParseInterrupt(o.Adapter.Sandbox); err != nil {
		bad("Adapter.Sandbox", "{Adapter.Sandbox}: %w", err)
	}
	if o.BatchSize < 1 {
		bad("BatchSize", "{BatchSize} %d: want at least 1 input per request", o.BatchSize)
	}
	if o.QueryTokens < 1 {
		bad("QueryTokens", "{QueryTokens} %d: want a query of at least 1 token", o.QueryTokens)
	}
	if r := o.Rankings; !(stddevOK(r.PassagesStdDev) && stddevOK(r.PassageTokensStdDev) && stddevOK(r.QueryTokensStdDev)) {
		bad("Rankings", "{Rankings.PassagesStdDev} %v, {Rankings.PassageTokensStdDev} %v, {Rankings.QueryTokensStdDev} %v: want standard deviations ≥ 0",
			r.PassagesStdDev, r.PassageTokensStdDev, r.QueryTokensStdDev)
	}
	if o.ExtraBody != "" {
		var m map[string]json.RawMessage
		if err := json.Unmarshal([]byte(o.ExtraBody), &m); err != nil {
			if json.Valid([]byte(o.ExtraBody)) {
				bad("ExtraBody", "{ExtraBody} %q: want a JSON object, e.g. '%s'", o.ExtraBody, `{"temperature":0}`)
			} else {
				bad("ExtraBody", "{ExtraBody} %q: want a JSON object, e.g. '%s': %v", o.ExtraBody, `{"temperature":0}`, err)
			}
		}
	}
	for _, h := range o.Headers {
		if _, ok := parseHeader(h); !ok {
			bad("Headers", "{Headers} %q: want NAME:VALUE, e.g. {Headers=X-Tenant: a}", h)
		}
	}
}

// parseHeader parses a NAME:VALUE header of Options.Headers (or of a
// target's), trimmed; ok is false when it is not one.
func parseHeader(h string) (adapter.Header, bool) {
	k, v, ok := strings.Cut(h, ":")
	k, v = strings.TrimSpace(k), strings.TrimSpace(v)
	if !ok || !headerName.MatchString(k) || httpfield.CheckValue(v) != nil {
		return adapter.Header{}, false
	}
	return adapter.Header{Name: k, Value: v}, true
}

// checkOutput reports the problems of o.Output, o.Telemetry and o.UI.
func checkOutput(o *Options, bad func(path, format string, args ...any)) {
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
	for _, f := range o.Output.ServerMetricsFormats {
		if !slices.Contains(arrowio.ServerMetricsFormats, f) {
			bad("Output.ServerMetricsFormats", "{Output.ServerMetricsFormats} %q: want json, csv, jsonl or parquet", f)
		}
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
}

// checkTraceOptions reports the problems of o.Trace's settings (the
// trace itself is read by readTrace) and of o.Media.
func checkTraceOptions(o *Options, bad func(path, format string, args ...any)) {
	if _, err := trace.ParseFormat(o.Trace.Format); err != nil {
		bad("Trace.Format", "{Trace.Format}: %w", err)
	}
	if _, err := trace.ParseSampling(o.Trace.Sampling); err != nil {
		bad("Trace.Sampling", "{Trace.Sampling}: %w", err)
	}
	if o.Trace.BlockSize < 0 {
		bad("Trace.BlockSize", "{Trace.BlockSize} %d: want a positive number of tokens (0 = the format's default)", o.Trace.BlockSize)
	}
	if o.Trace.MaxInputTokens < 1 {
		bad("Trace.MaxInputTokens", "{Trace.MaxInputTokens} %d: want a positive number of tokens", o.Trace.MaxInputTokens)
	}
	if o.Trace.SpoolMiB < 1 {
		bad("Trace.SpoolMiB", "{Trace.SpoolMiB} %d: want a positive number of MiB", o.Trace.SpoolMiB)
	}
	checkSynthesis(o, bad)
	mediaProblems(&o.Media, bad)
	preambleProblems(o, bad)
	entriesProblems(o, bad)
}

// syntheticLoad reports whether o's load is synthetic: no trace, no
// public dataset, and no graded items that are the whole load.
func syntheticLoad(o *Options) bool {
	return !hasTrace(o) && o.Trace.PublicDataset == "" && !o.Accuracy.itemsLoad()
}

// checkSynthetic reports the problems of o.Synthetic, with a trace or
// without (the lengths an endpoint's kind needs are resolveEngine's).
func checkSynthetic(o *Options, bad func(path, format string, args ...any)) {
	s := &o.Synthetic
	// A public dataset that could not be had is its own error, not a
	// missing synthetic load.
	syntheticProblems(s, !syntheticLoad(o), bad)
	if !syntheticLoad(o) {
		if s.ISL > 0 || s.ISLStdDev > 0 || s.OSLStdDev > 0 {
			bad("Synthetic", "{Synthetic.ISL}, {Synthetic.ISLStdDev} and {Synthetic.OSLStdDev} describe a synthetic load; with a {Trace.Path} the lengths come from the trace")
		}
		if s.OSL != 0 && (s.OSL < 1 || s.OSL != math.Trunc(s.OSL) || s.OSL > math.MaxInt32) {
			bad("Synthetic.OSL", "{Synthetic.OSL} %v: with a {Trace.Path}, the output length of rows that have none: want a whole number of tokens ≥ 1", s.OSL)
		}
		return
	}
	if s.ISLStdDev < 0 || s.OSLStdDev < 0 {
		bad("Synthetic", "{Synthetic.ISLStdDev} and {Synthetic.OSLStdDev} must not be negative")
	}
	// The cap on a trace row's input applies to every synthetic length,
	// checked before any prompt is built: a first turn is the shared
	// prefix, the session's context and ISL tokens. (Draws of ISL ±
	// ISLStdDev are clamped to it: synthLength.)
	if max := o.Trace.MaxInputTokens; max > 0 {
		first := float64(s.SharedPrefix) + float64(s.UserContext) + math.Round(s.ISL)
		switch {
		case s.ISL > float64(max):
			bad("Synthetic.ISL", "{Synthetic.ISL} %v: over the cap of %d input tokens ({Trace.MaxInputTokens}); lower it, or raise {Trace.MaxInputTokens}", s.ISL, max)
		case s.SharedPrefix > max || s.UserContext > max || first > float64(max):
			bad("Synthetic.SharedPrefix", "{Synthetic.SharedPrefix} %d + {Synthetic.UserContext} %d + {Synthetic.ISL} %v: a first turn of %.0f input tokens, over the cap of %d ({Trace.MaxInputTokens}); lower them, or raise {Trace.MaxInputTokens}",
				s.SharedPrefix, s.UserContext, s.ISL, first, max)
		}
	}
	if s.OSL > math.MaxInt32 {
		bad("Synthetic.OSL", "{Synthetic.OSL} %v: want at most %d output tokens", s.OSL, math.MaxInt32)
	}
}

// checkPrompts reports the problems of o.Prompts.
func checkPrompts(o *Options, bad func(path, format string, args ...any)) {
	switch m := prompt.Mismatch(o.Prompts.HashMismatch); m {
	case prompt.MismatchError, prompt.MismatchFit:
	default:
		bad("Prompts.HashMismatch", "{Prompts.HashMismatch} %q: want %q or %q", m, prompt.MismatchError, prompt.MismatchFit)
	}
	switch f := prompt.Format(o.Prompts.Format); f {
	case prompt.FormatText, prompt.FormatTokenIDs:
	default:
		bad("Prompts.Format", "{Prompts.Format} %q: want %q or %q", f, prompt.FormatText, prompt.FormatTokenIDs)
	}
	if c := o.Prompts.Corpus; c != "" && c != prompt.CorpusSonnet && c != prompt.CorpusCoding {
		bad("Prompts.Corpus", "{Prompts.Corpus} %q: want %s or %s", c, prompt.CorpusSonnet, prompt.CorpusCoding)
	}
	switch o.Prompts.CacheBust {
	case "", "none", "system_prefix", "system_suffix", "first_turn_prefix", "first_turn_suffix":
	default:
		bad("Prompts.CacheBust", "{Prompts.CacheBust} %q: want none, system_prefix, system_suffix, first_turn_prefix or first_turn_suffix", o.Prompts.CacheBust)
	}
	if o.Prompts.ISLCorrection < 0 {
		bad("Prompts.ISLCorrection", "{Prompts.ISLCorrection} %d: want ≥ 0 tokens", o.Prompts.ISLCorrection)
	}
	if err := engine.ContextMode(o.Prompts.ContextMode).Validate(); err != nil {
		bad("Prompts.ContextMode", "{Prompts.ContextMode} %q: want %s, %s or %s", o.Prompts.ContextMode,
			engine.ContextAuto, engine.ContextHistory, engine.ContextSelfContained)
	}
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
	networkProblems(o, bad)
	if r, err := o.connReuse(); err != nil {
		bad("ConnReuse", "{ConnReuse}: %v", err)
	} else if r != engine.ConnPooled && o.HTTP2 {
		bad("ConnReuse", "{ConnReuse} %s needs HTTP/1.1: HTTP/2 multiplexes requests on shared connections; drop {HTTP2}", r)
	}
	if o.Preflight.Timeout < 0 {
		bad("Preflight.Timeout", "{Preflight.Timeout} %v: must not be negative (0 = %v)", o.Preflight.Timeout, DefaultPreflightTimeout)
	}
	if o.AbortAfterConnectFailures < 0 {
		bad("AbortAfterConnectFailures", "{AbortAfterConnectFailures} %d: must not be negative (0 = never stop)", o.AbortAfterConnectFailures)
	}
	if o.ProgressInterval < 0 {
		bad("ProgressInterval", "{ProgressInterval} %v: must not be negative (0 = the default)", o.ProgressInterval)
	}
	if t := o.FailedRequestThreshold; t != nil && !(*t >= 0 && *t <= 1) {
		bad("FailedRequestThreshold", "{FailedRequestThreshold} %v: want a fraction between 0 and 1", *t)
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

// stddevOK reports whether v is a standard deviation reprise can draw with:
// finite, ≥ 0 and below 2^31.
func stddevOK(v float64) bool { return v >= 0 && v < math.MaxInt32 }

// adaptiveConfig is o.Adaptive as the controller takes it: the ceiling
// resolved, the SLAs parsed (search.ParseConstraint, --search-sla's
// parser). Problems go to bad.
func adaptiveConfig(o *Options, bad func(path, format string, args ...any)) adaptive.Config {
	a := o.Adaptive
	c := adaptive.Config{Min: a.Min, Max: a.Max, Period: a.Period, Sustain: a.Sustain, MinCompleted: a.MinCompleted}
	if c.Max == 0 {
		c.Max = o.Replay.Concurrency
	}
	for _, s := range a.SLAs {
		k, err := search.ParseConstraint(s)
		if err != nil {
			bad("Adaptive.SLAs", "{Adaptive.SLAs}: %w", err)
			continue
		}
		c.SLAs = append(c.SLAs, k)
	}
	return c
}

// checkAdaptive reports o.Adaptive's problems and those of the run it
// needs (a closed loop with a ceiling and a duration).
func checkAdaptive(o *Options, bad func(path, format string, args ...any)) {
	if o.Adaptive == nil {
		return
	}
	c := adaptiveConfig(o, bad)
	if err := c.Validate(); err != nil && len(o.Adaptive.SLAs) == len(c.SLAs) {
		bad("Adaptive", "{Adaptive}: %w", err)
	}
	if o.Replay.Duration <= 0 {
		bad("Replay.Duration", "{Adaptive} needs {Replay.Duration}: the run's length bounds the search and the sustain")
	}
	if o.Replay.Concurrency < 1 {
		bad("Replay.Concurrency", "{Adaptive} needs {Replay.Concurrency}: the ceiling of the concurrency it moves")
	} else if c.Max > o.Replay.Concurrency {
		bad("Adaptive.Max", "{Adaptive.Max} %d exceeds {Replay.Concurrency} %d, the ceiling", c.Max, o.Replay.Concurrency)
	}
}

// checkStability reports o.Stability's problems.
func checkStability(o *Options, bad func(path, format string, args ...any)) {
	st := o.Stability
	if st == nil {
		return
	}
	if st.Interval <= 0 {
		bad("Stability.Interval", "{Stability.Interval} %v: want > 0", st.Interval)
	}
	if st.Percentage <= 0 {
		bad("Stability.Percentage", "{Stability.Percentage} %v: want > 0", st.Percentage)
	}
	if st.MaxWindows < stability.Windows {
		bad("Stability.MaxWindows", "{Stability.MaxWindows} %d: want ≥ %d, the windows that must agree", st.MaxWindows, stability.Windows)
	}
	if o.Adaptive != nil {
		bad("Stability", "{Stability} and {Adaptive} both end the run by their windows: use one")
	}
}
