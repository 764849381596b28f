package flagmap

import (
	"encoding/json"
	"errors"
	"fmt"
	"math"
	"path/filepath"
	"slices"
	"strconv"
	"strings"
	"time"

	"github.com/reprise-bench/reprise"
	"github.com/reprise-bench/reprise/arrowio"
	"github.com/reprise-bench/reprise/engine/adapter/native"
	"github.com/reprise-bench/reprise/replay"
	"github.com/reprise-bench/reprise/trace"
)

// aiperfEndpoints maps AIPerf's --endpoint-type names to reprise's
// endpoints where they differ.
var aiperfEndpoints = map[string]string{
	"nim_embeddings": "nim-embeddings", "hf_tei_rankings": "rerank-tei", "cohere_rankings": "rerank-cohere",
	"nim_rankings":    "ranking-nim",
	"chat_embeddings": "chat-embeddings", // vLLM's chat-form embeddings (design 0022)
}

// endpointForPath returns the native endpoint that AIPerf's --endpoint
// PATH names: kind itself when PATH is its path, else (kind not given
// explicitly) the first native endpoint served at PATH. reprise sends to
// an endpoint's own path, so any other PATH is an error.
func endpointForPath(path, kind string, explicit bool) (string, error) {
	path = "/" + strings.TrimLeft(path, "/")
	var at []string
	for _, e := range native.List() {
		if e.Adapter.Info().Path == path {
			if e.Name == kind {
				return kind, nil
			}
			at = append(at, e.Name)
		}
	}
	const how = "for another path or body shape, write a Wasm adapter (reprise adapters new) and pass it as --endpoint-type FILE.wasm"
	switch {
	case len(at) == 0:
		return kind, fmt.Errorf("--endpoint %s: no native endpoint is served at that path; %s", path, how)
	case explicit:
		return kind, fmt.Errorf("--endpoint %s is the path of %s, not of --endpoint-type %s; give one of them", path, strings.Join(at, " or "), kind)
	}
	return at[0], nil
}

// A Hook maps more options onto o and rc during [Profile]: after
// AIPerf's own options, before the defaults that depend on what the run
// reads (AIPerf's 10 requests, one request in flight, the artifact
// directory). A problem is returned (Profile joins them all).
type Hook func(v Values, o *reprise.Options, rc *replay.Config) error

// Profile maps `reprise profile`'s options — AIPerf's names, over the
// options base that replay's flags give — to reprise.Options, with
// AIPerf's defaults. quiet is AIPerf's --ui-type none or --quiet. Every
// problem is reported at once; Profile reads no file but the first row
// of --input-file (whether it has timestamps).
func Profile(v Values, base reprise.Options, hooks ...Hook) (o reprise.Options, quiet bool, err error) {
	var errs []error
	rc, err := Timing(v)
	if err != nil && strings.Contains(err.Error(), "--rate-series: ") {
		// AIPerf's spelling of replay's --rate-series.
		err = errors.New(strings.ReplaceAll(err.Error(), "--rate-series: ", "--request-rate-series: "))
	}
	errs = append(errs, err)
	o = base
	// The flags that take a comma list (profile_sweep.go): a single
	// value, or a list's first, is the base run's.
	_, vals, err := ProfileSweep(v)
	errs = append(errs, err)
	applyValues(&o, &rc, vals)
	// AIPerf's tokenizer is the model's unless one is named.
	o.TokenizerFromModel = !v.IsSet("tokenizer")
	quiet = v.Bool("quiet")
	switch ui := v.String("ui-type"); ui {
	case "none":
		quiet, o.UI = true, reprise.UILine
	case "", "simple":
		o.UI = reprise.UILine
	case "dashboard":
		o.UI = reprise.UIDashboard
	default:
		errs = append(errs, fmt.Errorf("--ui-type %q: want none, simple or dashboard", ui))
	}

	profileRequest(v, &o, &rc, &errs)
	profileTiming(v, &o, &rc, &errs)
	profileWire(v, &o, &errs)
	for _, h := range hooks {
		errs = append(errs, h(v, &o, &rc))
	}
	profileDefaults(&o, &rc)
	o.Replay = rc
	profileWarmup(v, &o, &errs)
	profileTelemetry(v, &o, &errs)
	if models := CommaList([]string{o.Model}); len(models) > 1 {
		mo, err := reprise.WithModels(o, models, v.String("model-selection-strategy"))
		if err != nil {
			errs = append(errs, fmt.Errorf("--model %s: %w", o.Model, err))
		} else {
			o = mo
		}
	}
	if o.Output.Dir == "" {
		o.Output.Dir = filepath.Join("artifacts", ArtifactName(&o))
	}
	if !v.IsSet("overwrite") {
		o.Output.Overwrite = true // AIPerf writes over its artifact directory
	}
	return o, quiet, errors.Join(errs...)
}

// profileRequest maps AIPerf's endpoint, input and output options.
func profileRequest(v Values, o *reprise.Options, rc *replay.Config, errs *[]error) {
	o.Endpoint = v.String("endpoint-type")
	if e, ok := aiperfEndpoints[o.Endpoint]; ok {
		o.Endpoint = e
	}
	if path := v.String("endpoint"); path != "" {
		e, err := endpointForPath(path, o.Endpoint, v.IsSet("endpoint-type"))
		*errs = append(*errs, err)
		o.Endpoint = e
	}
	o.Streaming = v.Bool("streaming")
	o.Trace.Path = v.String("input-file")
	o.Trace.PublicDataset = v.String("public-dataset")
	o.Trace.PublicSubset, o.Trace.PublicFilters = v.String("hf-subset"), v.StringSlice("dataset-filter")
	if t := v.String("custom-dataset-type"); t != "" {
		if o.Trace.Path == "" {
			*errs = append(*errs, errors.New("--custom-dataset-type needs --input-file"))
		}
		o.Trace.Format = t
	}
	if v.IsSet("random-seed") {
		rc.Seed = v.Uint64("random-seed")
		o.Prompts.Seed = rc.Seed
	}
	if v.IsSet("request-timeout-seconds") {
		o.Timeout = Seconds(errs, "request-timeout-seconds", v.Float("request-timeout-seconds"))
	}
	extra, err := extraInputs(v.String("extra-body"), v.StringSlice("extra-inputs"))
	*errs = append(*errs, err)
	o.ExtraBody = extra
	switch lvl := v.String("export-level"); lvl {
	case "summary", "records":
		o.Output.ExportLevel = "records"
	case "raw", "events":
		o.Output.ExportLevel = "events"
	default:
		*errs = append(*errs, fmt.Errorf("--export-level %q: want summary, records or raw", lvl))
	}
	switch exp := v.String("export"); exp {
	case "aiperf":
		o.Output.Export = "aiperf"
	case "none", "":
		o.Output.Export = ""
	default:
		*errs = append(*errs, fmt.Errorf("--export %q: want aiperf or none", exp))
	}
	if v.IsSet("slice-duration") {
		if s := v.Float("slice-duration"); !(s > 0) {
			*errs = append(*errs, fmt.Errorf("--slice-duration %v: want seconds > 0", s))
		} else {
			o.Output.SliceDuration = Seconds(errs, "slice-duration", s)
		}
	}
	if p := v.String("profile-export-prefix"); p != "" {
		// GenAI-Perf's --profile-export-file names a file (x.json): its
		// stem is the prefix, as AIPerf takes it.
		o.Output.ExportPrefix = strings.TrimSuffix(strings.TrimSuffix(strings.TrimSuffix(p, ".jsonl"), ".json"), ".csv")
	}
	o.Output.ServerMetricsFormats = nil
	for _, f := range CommaList(v.StringSlice("server-metrics-formats")) {
		if !slices.Contains(arrowio.ServerMetricsFormats, f) {
			*errs = append(*errs, fmt.Errorf("--server-metrics-formats %q: want json, csv, jsonl or parquet", f))
		} else if !slices.Contains(o.Output.ServerMetricsFormats, f) {
			o.Output.ServerMetricsFormats = append(o.Output.ServerMetricsFormats, f)
		}
	}
}

// profileTiming maps AIPerf's load options: its mode selection (fixed
// schedule, then user-centric, then rate, then concurrency) where no
// --mode says otherwise, durations in float seconds, cancellation and
// the server's wait and reset.
func profileTiming(v Values, o *reprise.Options, rc *replay.Config, errs *[]error) {
	// Timing: AIPerf's mode selection (fixed schedule, then user-centric,
	// then rate, then concurrency) where no --mode says otherwise.
	fixed, noFixed := v.Bool("fixed-schedule"), v.Bool("no-fixed-schedule")
	switch {
	case fixed && noFixed:
		*errs = append(*errs, errors.New("--fixed-schedule and --no-fixed-schedule exclude each other"))
	case fixed:
		rc.Mode = replay.ModeFixed
	case noFixed && rc.Mode == replay.ModeAuto:
		switch {
		case rc.UserCentricRate > 0:
			rc.Mode = replay.ModeUserCentric
		case rc.RequestRate > 0 || len(rc.RateSeries) > 0:
			rc.Mode = replay.ModeRate
		default:
			rc.Mode = replay.ModeConcurrency
		}
	}
	rc.AutoOffset = v.Bool("fixed-schedule-auto-offset")
	if ms := v.Int("fixed-schedule-start-offset"); ms > 0 {
		rc.StartOffset = time.Duration(ms) * time.Millisecond
	}
	if ms := v.Int("fixed-schedule-end-offset"); ms > 0 {
		rc.EndOffset = time.Duration(ms) * time.Millisecond
	}
	if v.IsSet("benchmark-duration") {
		rc.Duration = Seconds(errs, "benchmark-duration", v.Float("benchmark-duration"))
	}
	if g := v.String("benchmark-grace-period"); g != "" {
		if !v.IsSet("benchmark-duration") {
			*errs = append(*errs, errors.New("--benchmark-grace-period needs --benchmark-duration (as in AIPerf)"))
		}
		if strings.EqualFold(g, "inf") {
			rc.Grace = 365 * 24 * time.Hour
		} else if s, err := strconv.ParseFloat(g, 64); err != nil || s < 0 || math.IsNaN(s) {
			*errs = append(*errs, fmt.Errorf("--benchmark-grace-period %q: want seconds ≥ 0 or inf", g))
		} else {
			rc.Grace = Seconds(errs, "benchmark-grace-period", s)
		}
	} else if !v.IsSet("grace") {
		rc.Grace = 30 * time.Second // AIPerf's default
	}
	if v.IsSet("concurrency-ramp-duration") {
		rc.ConcurrencyRamp = Seconds(errs, "concurrency-ramp-duration", v.Float("concurrency-ramp-duration"))
	}
	if v.IsSet("request-rate-ramp-duration") {
		rc.RateRamp = Seconds(errs, "request-rate-ramp-duration", v.Float("request-rate-ramp-duration"))
	}
	ratio := v.Float("session-delay-ratio")
	if ratio < 0 || math.IsNaN(ratio) {
		*errs = append(*errs, fmt.Errorf("--session-delay-ratio %v: want a factor ≥ 0", ratio))
	}
	if v.IsSet("session-turn-delay-mean") {
		o.Synthetic.TurnDelay = Seconds(errs, "session-turn-delay-mean", v.Float("session-turn-delay-mean")/1000*ratio)
	}
	if v.IsSet("session-turn-delay-stddev") {
		o.Synthetic.TurnDelayStdDev = Seconds(errs, "session-turn-delay-stddev", v.Float("session-turn-delay-stddev")/1000*ratio)
	}
	if v.IsSet("request-cancellation-rate") {
		pct := v.Float("request-cancellation-rate")
		if pct <= 0 || pct > 100 || math.IsNaN(pct) {
			*errs = append(*errs, fmt.Errorf("--request-cancellation-rate %v: want a percentage in (0, 100]", pct))
		}
		o.CancelRate = pct / 100
	}
	if v.IsSet("request-cancellation-delay") {
		o.CancelAfter = Seconds(errs, "request-cancellation-delay", v.Float("request-cancellation-delay"))
	}
	if v.IsSet("warmup-duration") {
		rc.WarmupDuration = Seconds(errs, "warmup-duration", v.Float("warmup-duration"))
	}
	if v.IsSet("prefill-concurrency-ramp-duration") {
		rc.PrefillConcurrencyRamp = Seconds(errs, "prefill-concurrency-ramp-duration", v.Float("prefill-concurrency-ramp-duration"))
	}
	// AIPerf's gamma shape alone picks the gamma pattern.
	if v.IsSet("smoothness") && !v.IsSet("arrival") {
		rc.Arrival = replay.ArrivalGamma
	}
	if v.IsSet("inter-turn-delay-cap-seconds") {
		rc.MaxTurnDelay = Seconds(errs, "inter-turn-delay-cap-seconds", v.Float("inter-turn-delay-cap-seconds"))
	}
	if v.IsSet("wait-for-model-timeout") {
		o.Server.WaitForModel = Seconds(errs, "wait-for-model-timeout", v.Float("wait-for-model-timeout"))
	}
	if v.IsSet("wait-for-model-interval") {
		o.Server.WaitInterval = Seconds(errs, "wait-for-model-interval", v.Float("wait-for-model-interval"))
	}
	if v.IsSet("reset-kv-cache-timeout-seconds") {
		o.Server.ResetCacheTimeout = Seconds(errs, "reset-kv-cache-timeout-seconds", v.Float("reset-kv-cache-timeout-seconds"))
	}
	switch us := v.String("url-strategy"); us {
	case "":
	case "round_robin", reprise.URLPolicyRoundRobin:
		o.URLPolicy = reprise.URLPolicyRoundRobin
	case reprise.URLPolicyLeastInFlight, "least_in_flight", reprise.URLPolicyFanOut, "fan_out":
		o.URLPolicy = strings.ReplaceAll(us, "_", "-")
	default:
		*errs = append(*errs, fmt.Errorf("--url-strategy %q: want round_robin (or least-in-flight, fan-out)", us))
	}
}

// profileDefaults sets AIPerf's defaults that depend on what the run
// reads.
func profileDefaults(o *reprise.Options, rc *replay.Config) {
	// AIPerf sends 10 requests when nothing else (a stability stop
	// included) bounds a run that is not a fixed schedule: a synthetic load, or a file paced by a load model
	// named outright. A file (or a public dataset) in the auto mode is
	// sent once, whole.
	if rc.RequestCount == 0 && rc.Duration == 0 && o.Stability == nil && rc.Mode != replay.ModeFixed && o.Accuracy.Mix == 0 && o.Accuracy.Benchmark == "" && o.Accuracy.File == "" &&
		(o.Trace.Path == "" && o.Trace.PublicDataset == "" || rc.Mode != replay.ModeAuto) && o.Synthetic.Sessions == 0 && o.Trace.Sessions == 0 {
		rc.RequestCount = 10
	}
	// Without a load model AIPerf runs one request at a time (its
	// concurrency burst), unless a file's timestamps make a fixed schedule.
	if rc.Mode == replay.ModeAuto && rc.RequestRate == 0 && len(rc.RateSeries) == 0 && rc.UserCentricRate == 0 && rc.Concurrency == 0 &&
		(o.Trace.Path == "" || !fileHasTimestamps(o.Trace.Path, o.Trace.Format, o.Trace.Columns)) {
		rc.Concurrency = 1
	}
}

// profileWarmup maps AIPerf's warmup options.
func profileWarmup(v Values, o *reprise.Options, errs *[]error) {
	Warmup(v, o)
	for _, f := range []struct {
		flag string
		to   *time.Duration
	}{{"warmup-grace-period", &o.Warmup.Grace}, {"warmup-concurrency-ramp-duration", &o.Warmup.ConcurrencyRamp},
		{"warmup-request-rate-ramp-duration", &o.Warmup.RateRamp}, {"warmup-prefill-concurrency-ramp-duration", &o.Warmup.PrefillConcurrencyRamp}} {
		if v.IsSet(f.flag) {
			*f.to = Seconds(errs, f.flag, v.Float(f.flag))
		}
	}
	if v.IsSet("num-warmup-sessions") {
		o.Replay.WarmupRequests = v.Int("num-warmup-sessions")
	}
	WarmupPhase(o)
}

// profileTelemetry maps replay's telemetry flags and AIPerf's
// --gpu-telemetry.
func profileTelemetry(v Values, o *reprise.Options, errs *[]error) {
	tc, err := Telemetry(v)
	*errs = append(*errs, err)
	if !v.Bool("no-gpu-telemetry") {
		for _, g := range v.StringSlice("gpu-telemetry") {
			switch {
			case g == "pynvml" || g == "nvml":
				tc.GPU = "nvml"
			case g == "dcgm":
				tc.GPU, tc.DCGMURL = "dcgm", reprise.DefaultDCGMURL
			case strings.HasPrefix(g, "http://") || strings.HasPrefix(g, "https://"):
				tc.GPU, tc.DCGMURL = "dcgm", g
			case g == "dashboard":
			default:
				*errs = append(*errs, fmt.Errorf("--gpu-telemetry %q: want pynvml, dcgm or a DCGM exporter URL (amdsmi and custom metric files are not read)", g))
			}
		}
	}
	o.Telemetry = tc
}

// ArtifactName is AIPerf's artifact subdirectory:
// {model, / → _}-openai-{endpoint type}-{stimulus}.
func ArtifactName(o *reprise.Options) string {
	stim := "concurrency" + strconv.Itoa(max(o.Replay.Concurrency, 1))
	switch {
	case o.Replay.Mode == replay.ModeFixed:
		stim = "fixed_schedule"
	case o.Replay.UserCentricRate > 0:
		stim = fmt.Sprintf("user_centric-users%d-qps%s", o.Replay.NumUsers, strconv.FormatFloat(o.Replay.UserCentricRate, 'f', -1, 64))
	case o.Replay.RequestRate > 0:
		stim = "request_rate" + strconv.FormatFloat(o.Replay.RequestRate, 'f', -1, 64)
	case len(o.Replay.RateSeries) > 0:
		stim = "request_rate_series"
	}
	model := strings.ReplaceAll(o.Model, "/", "_")
	if model == "" {
		model = "model"
	}
	return model + "-openai-" + filepath.Base(o.Endpoint) + "-" + stim
}

// extraInputs merges --extra-body (a JSON object) and AIPerf's
// --extra-inputs (KEY:VALUE pairs, values typed as AIPerf does, or JSON
// objects) into one JSON object; "" when both are empty.
func extraInputs(body string, pairs []string) (string, error) {
	if len(pairs) == 0 {
		return body, nil
	}
	m := map[string]any{}
	if body != "" {
		if err := json.Unmarshal([]byte(body), &m); err != nil {
			return "", fmt.Errorf("--extra-body: want a JSON object: %v", err)
		}
	}
	for _, p := range pairs {
		p = strings.TrimSpace(p)
		if strings.HasPrefix(p, "{") {
			var obj map[string]any
			if err := json.Unmarshal([]byte(p), &obj); err != nil {
				return "", fmt.Errorf("--extra-inputs %q: want KEY:VALUE or a JSON object: %v", p, err)
			}
			for k, v := range obj {
				m[k] = v
			}
			continue
		}
		k, v, ok := strings.Cut(p, ":")
		if !ok || strings.TrimSpace(k) == "" {
			return "", fmt.Errorf("--extra-inputs %q: want KEY:VALUE or a JSON object", p)
		}
		m[strings.TrimSpace(k)] = typedValue(strings.TrimSpace(v))
	}
	b, err := json.Marshal(m)
	return string(b), err
}

// typedValue types an --extra-inputs value as AIPerf does: true/false,
// none/null, an integer, a float, else a string.
func typedValue(v string) any {
	switch strings.ToLower(v) {
	case "true":
		return true
	case "false":
		return false
	case "none", "null":
		return nil
	}
	if i, err := strconv.ParseInt(v, 10, 64); err == nil {
		return i
	}
	if f, err := strconv.ParseFloat(v, 64); err == nil && !math.IsInf(f, 0) && !math.IsNaN(f) {
		return f
	}
	return v
}

// fileHasTimestamps reports whether the first row of the trace or dataset
// at path has an arrival time (then the run is a fixed schedule, as AIPerf
// auto-enables it); false when it cannot be read (the run reports why).
func fileHasTimestamps(path, format string, cols trace.Columns) bool {
	if path == "-" {
		return true // standard input is read once, by the run
	}
	f, err := trace.ParseFormat(format)
	if err != nil {
		return false
	}
	r, err := trace.Open(path, trace.Options{Format: f, Columns: cols, SkipInvalid: true, MaxRows: 1})
	if err != nil {
		return false
	}
	defer r.Close()
	var row trace.Row
	return r.Next(&row) == nil && row.HasOffset
}
