package summary

import (
	"errors"
	"fmt"
	"math"
	"strconv"
	"strings"

	"github.com/reprise-bench/reprise/engine/record"
)

// metric is one per-request metric: its tag (AIPerf's where one exists),
// display unit, and how to read it from a record. get returns false when
// the metric is undefined for that record (absent, not zero).
type metric struct {
	tag      string
	header   string // table label
	unit     string
	stream   bool // streaming only
	larger   bool // larger is better (goodput direction)
	onErrors bool // computed over every record (not only valid ones)
	trace    bool // HTTP timing: only with Options.HTTPTiming, in its own table (WriteHTTPTable)
	get      func(r *record.Request, o *Options) (float64, bool)
}

const nsPerMS = 1e6

func ms(ns int64) float64 { return float64(ns) / nsPerMS }

// osl is the output sequence length the record's ITL was computed with
// (record.Request.OutputLength). Records written before they said which
// count that was follow the run's UseServerTokenCount.
func osl(r *record.Request, o *Options) int64 {
	if r.OutputTokensSource == record.TokensUnknown && o.UseServerTokenCount && r.ServerCompletionTokens >= 0 {
		return int64(r.ServerCompletionTokens)
	}
	return r.OutputLength()
}

// sendingNS is the time the request took to write once its connection
// was ready: SentNS is before the pool wait, the DNS lookup and the
// connect.
func sendingNS(r *record.Request) int64 {
	return max(r.WroteNS-r.SentNS-r.BlockedNS-r.DNSNS-r.ConnectNS, 0)
}

// metrics lists every per-request metric in display order.
var metrics = []metric{
	{tag: "time_to_first_token", header: "Time to first token", unit: "ms", stream: true,
		get: func(r *record.Request, _ *Options) (float64, bool) { return ms(r.TTFTNS), r.FirstTokenNS != 0 }},
	{tag: "time_to_first_output_token", header: "Time to first output token", unit: "ms", stream: true,
		get: func(r *record.Request, _ *Options) (float64, bool) { return ms(r.TTFONS), r.FirstOutputTokenNS != 0 }},
	{tag: "time_to_second_token", header: "Time to second token", unit: "ms", stream: true,
		get: func(r *record.Request, _ *Options) (float64, bool) { return ms(r.TTSTNS), r.SecondTokenNS != 0 }},
	{tag: "inter_token_latency", header: "Inter token latency", unit: "ms", stream: true,
		get: func(r *record.Request, o *Options) (float64, bool) {
			return r.ITLNS / nsPerMS, r.FirstTokenNS != 0 && osl(r, o) >= 2
		}},
	{tag: "request_latency", header: "Request latency", unit: "ms",
		get: func(r *record.Request, _ *Options) (float64, bool) { return ms(r.E2ENS), r.E2ENS > 0 }},
	{tag: "output_token_throughput_per_user", header: "Output token throughput per user", unit: "tokens/sec/user", stream: true, larger: true,
		get: func(r *record.Request, o *Options) (float64, bool) {
			return 1e9 / r.ITLNS, r.FirstTokenNS != 0 && osl(r, o) >= 2 && r.ITLNS > 0
		}},
	{tag: "prefill_throughput_per_user", header: "Prefill throughput per user", unit: "tokens/sec", stream: true, larger: true,
		get: func(r *record.Request, _ *Options) (float64, bool) {
			return float64(r.InputTokens) / (float64(r.TTFTNS) / 1e9), r.FirstTokenNS != 0 && r.TTFTNS > 0
		}},
	{tag: "e2e_output_token_throughput", header: "E2E output token throughput", unit: "tokens/sec", larger: true,
		get: func(r *record.Request, o *Options) (float64, bool) {
			return float64(osl(r, o)) / (float64(r.E2ENS) / 1e9), r.E2ENS > 0
		}},
	{tag: "output_sequence_length", header: "Output sequence length", unit: "tokens",
		get: func(r *record.Request, o *Options) (float64, bool) { return float64(osl(r, o)), true }},
	{tag: "input_sequence_length", header: "Input sequence length", unit: "tokens",
		get: func(r *record.Request, _ *Options) (float64, bool) { return float64(r.InputTokens), true }},
	{tag: "reasoning_token_count", header: "Reasoning token count", unit: "tokens",
		get: func(r *record.Request, _ *Options) (float64, bool) {
			return float64(r.ReasoningTokens), r.ReasoningTokens > 0
		}},
	{tag: "stream_setup_latency", header: "Stream setup latency", unit: "ms", stream: true,
		get: func(r *record.Request, _ *Options) (float64, bool) {
			return ms(r.HeadersNS - r.SentNS), r.HeadersNS != 0
		}},
	{tag: "usage_prompt_tokens", header: "Server prompt tokens", unit: "tokens",
		get: func(r *record.Request, _ *Options) (float64, bool) {
			return float64(r.ServerPromptTokens), r.ServerPromptTokens >= 0
		}},
	{tag: "usage_completion_tokens", header: "Server completion tokens", unit: "tokens",
		get: func(r *record.Request, _ *Options) (float64, bool) {
			return float64(r.ServerCompletionTokens), r.ServerCompletionTokens >= 0
		}},
	{tag: "usage_prompt_cached_tokens", header: "Server cached tokens", unit: "tokens",
		get: func(r *record.Request, _ *Options) (float64, bool) {
			return float64(r.ServerCachedTokens), r.ServerCachedTokens >= 0
		}},
	// reprise's own.
	{tag: "schedule_lateness", header: "Schedule lateness", unit: "ms", onErrors: true,
		get: func(r *record.Request, _ *Options) (float64, bool) { return ms(r.LatenessNS), r.IntendedNS != 0 }},
	{tag: "latency_from_intended", header: "Latency from intended time", unit: "ms",
		get: func(r *record.Request, _ *Options) (float64, bool) {
			return ms(r.LatencyFromIntendedNS), r.IntendedNS != 0 && r.LatencyFromIntendedNS != 0
		}},
	{tag: "session_delay", header: "Session-induced delay", unit: "ms",
		get: func(r *record.Request, _ *Options) (float64, bool) {
			return ms(r.SessionDelayNS), r.SessionDelayNS != 0
		}},
	{tag: "input_length_error", header: "Server minus client input tokens", unit: "tokens",
		get: func(r *record.Request, _ *Options) (float64, bool) {
			return float64(r.ServerPromptTokens) - float64(r.InputTokens), r.ServerPromptTokens >= 0 && r.InputTokens > 0
		}},
	{tag: "output_length_error", header: "Server minus client output tokens", unit: "tokens",
		get: func(r *record.Request, _ *Options) (float64, bool) {
			return float64(r.ServerMinusClientOutputTokens),
				r.ServerMinusClientOutputTokens != record.NoTokenDiff && r.OutputTokensSource != record.TokensUnknown
		}},
	{tag: "cached_tokens_error", header: "Server minus expected cached tokens", unit: "tokens",
		get: func(r *record.Request, _ *Options) (float64, bool) {
			return float64(r.ServerCachedTokens) - float64(r.ExpectedCachedTokens), r.ServerCachedTokens >= 0 && r.ExpectedCachedTokens >= 0
		}},
	{tag: "http_req_blocked", header: "HTTP connection wait", unit: "ms", onErrors: true,
		get: func(r *record.Request, _ *Options) (float64, bool) { return ms(r.BlockedNS), r.SentNS != 0 }},
	{tag: "http_req_connecting", header: "HTTP connect", unit: "ms", onErrors: true,
		get: func(r *record.Request, _ *Options) (float64, bool) { return ms(r.ConnectNS), r.ConnectNS > 0 }},
	{tag: "http_req_waiting", header: "HTTP waiting (sent → headers)", unit: "ms",
		get: func(r *record.Request, _ *Options) (float64, bool) {
			return ms(r.HeadersNS - r.WroteNS), r.WroteNS != 0 && r.HeadersNS >= r.WroteNS
		}},
	// HTTP timing (AIPerf's --show-trace-timing, k6's names): with
	// Options.HTTPTiming only.
	{tag: "http_req_dns_lookup", header: "DNS lookup", unit: "ms", onErrors: true, trace: true,
		get: func(r *record.Request, _ *Options) (float64, bool) { return ms(r.DNSNS), r.SentNS != 0 }},
	{tag: "http_req_sending", header: "Sending (connection to request written)", unit: "ms", trace: true,
		get: func(r *record.Request, _ *Options) (float64, bool) { return ms(sendingNS(r)), r.WroteNS != 0 }},
	{tag: "http_req_receiving", header: "Receiving (headers to end)", unit: "ms", trace: true,
		get: func(r *record.Request, _ *Options) (float64, bool) {
			return ms(r.EndNS - r.HeadersNS), r.HeadersNS != 0 && r.EndNS >= r.HeadersNS
		}},
	{tag: "http_req_duration", header: "Duration (request written to end, no connection set-up)", unit: "ms", trace: true,
		get: func(r *record.Request, _ *Options) (float64, bool) {
			return ms(sendingNS(r) + r.EndNS - r.WroteNS), r.WroteNS != 0 && r.EndNS >= r.WroteNS
		}},
	{tag: "events_per_read_max", header: "Events per read (max)", unit: "events", stream: true,
		get: func(r *record.Request, _ *Options) (float64, bool) { return float64(r.MaxEventsRead), r.Reads > 0 }},
	{tag: "client_read_lag", header: "Client read lag (max per request)", unit: "ms",
		get: func(r *record.Request, _ *Options) (float64, bool) { return ms(r.ReadLagNS), r.ReadLagNS > 0 }},
	{tag: "adapter_time", header: "Adapter time", unit: "ms",
		get: func(r *record.Request, _ *Options) (float64, bool) { return ms(r.AdapterNS), true }},
	// Generation endpoints (design 0023).
	{tag: "time_to_first_media", header: "Time to first media (partial image, audio byte)", unit: "ms",
		get: func(r *record.Request, _ *Options) (float64, bool) { return ms(r.FirstMediaNS), r.FirstMediaNS > 0 }},
	{tag: "media_items", header: "Media items per request", unit: "items",
		get: func(r *record.Request, _ *Options) (float64, bool) { return float64(r.MediaItems), r.MediaItems > 0 }},
	{tag: "partial_images", header: "Partial images per request", unit: "images",
		get: func(r *record.Request, _ *Options) (float64, bool) {
			return float64(r.MediaPartials), r.MediaPartials > 0
		}},
	{tag: "media_bytes", header: "Media bytes per request", unit: "bytes",
		get: func(r *record.Request, _ *Options) (float64, bool) { return float64(r.MediaBytes), r.MediaBytes > 0 }},
	{tag: "audio_duration", header: "Audio per request", unit: "s",
		get: func(r *record.Request, _ *Options) (float64, bool) { return float64(r.AudioNS) / 1e9, r.AudioNS > 0 }},
	{tag: "real_time_factor", header: "Real-time factor (latency / audio)", unit: "ratio",
		get: func(r *record.Request, _ *Options) (float64, bool) {
			return float64(r.E2ENS) / float64(r.AudioNS), r.AudioNS > 0 && r.E2ENS > 0
		}},
	{tag: "video_queue_time", header: "Video job queue time", unit: "ms",
		get: func(r *record.Request, _ *Options) (float64, bool) {
			return ms(r.JobQueueNS), r.JobPolls > 0 || r.JobQueueNS > 0
		}},
	{tag: "video_generation_time", header: "Video job generation time", unit: "ms",
		get: func(r *record.Request, _ *Options) (float64, bool) {
			return ms(r.JobGenerationNS), r.JobPolls > 0 || r.JobGenerationNS > 0
		}},
	{tag: "video_download_time", header: "Video download time", unit: "ms",
		get: func(r *record.Request, _ *Options) (float64, bool) { return ms(r.JobDownloadNS), r.JobDownloadNS > 0 }},
	{tag: "video_polls", header: "Video job status polls", unit: "requests",
		get: func(r *record.Request, _ *Options) (float64, bool) { return float64(r.JobPolls), r.JobPolls > 0 }},
}

// aliases maps the short goodput names to tags.
var aliases = map[string]string{
	"ttft":    "time_to_first_token",
	"ttfo":    "time_to_first_output_token",
	"ttst":    "time_to_second_token",
	"itl":     "inter_token_latency",
	"tpot":    "inter_token_latency",
	"e2e":     "request_latency",
	"latency": "request_latency",
	"tps":     "output_token_throughput_per_user",
}

func metricByTag(tag string) (int, bool) {
	for i := range metrics {
		if metrics[i].tag == tag {
			return i, true
		}
	}
	return 0, false
}

// StreamingOnly reports whether the metric tag exists only for streamed
// responses (TTFT, ITL, …).
func StreamingOnly(tag string) bool {
	i, ok := metricByTag(tag)
	return ok && metrics[i].stream
}

// EachValue calls fn with every per-request metric that r contributes to
// a summary with options o, in display order: its tag, display unit and
// value, exactly as the summary counts it. A metric undefined for r is
// skipped (absent, not zero), as are streaming-only metrics without
// o.Streaming and, for a failed request, the metrics computed over valid
// requests only. Exports that write per-request values (AIPerf's
// profile_export.jsonl) take them from here.
func EachValue(r *record.Request, o Options, fn func(tag, unit string, v float64)) {
	eachValue(r, &o, func(i int, v float64) { fn(metrics[i].tag, metrics[i].unit, v) })
}

// eachValue calls fn with the index in metrics and the value of every
// metric r contributes to a summary with options o.
func eachValue(r *record.Request, o *Options, fn func(i int, v float64)) {
	ok := r.OK()
	for i := range metrics {
		m := &metrics[i]
		if (!ok && !m.onErrors) || (m.stream && !o.Streaming) || (m.trace && !o.HTTPTiming) {
			continue
		}
		if v, has := m.get(r, o); has && !math.IsNaN(v) && !math.IsInf(v, 0) {
			fn(i, v)
		}
	}
}

// ParseGoodput parses "ttft:250 itl:10 e2e:2000": space- or comma-separated
// tag:value pairs; tags are AIPerf's (time_to_first_token, …) or the short
// names ttft, ttfo, ttst, itl (tpot), e2e (latency), tps. Values are in the
// metric's display unit (ms for latencies).
func ParseGoodput(s string) ([]SLO, error) {
	var out []SLO
	var errs []error
	for _, f := range strings.FieldsFunc(s, func(r rune) bool { return r == ' ' || r == ',' || r == '\t' }) {
		k, v, ok := strings.Cut(f, ":")
		if !ok {
			k, v, ok = strings.Cut(f, "=")
		}
		if !ok {
			errs = append(errs, fmt.Errorf("goodput %q: want tag:value", f))
			continue
		}
		tag := strings.ToLower(strings.TrimSpace(k))
		if a, ok := aliases[tag]; ok {
			tag = a
		}
		if tag == AccuracySLO {
			x, err := strconv.ParseFloat(strings.TrimSpace(v), 64)
			if x > 1 && x <= 100 {
				x /= 100 // a percentage
			}
			if err != nil || !(x > 0 && x <= 1) {
				errs = append(errs, fmt.Errorf("goodput %q: minimum accuracy %q must be a fraction in (0, 1] or a percentage", f, v))
				continue
			}
			out = append(out, SLO{Tag: tag, Value: x})
			continue
		}
		i, known := metricByTag(tag)
		if !known || metrics[i].onErrors && tag != "schedule_lateness" || metrics[i].trace {
			errs = append(errs, fmt.Errorf("goodput %q: unknown metric %q (use ttft, ttfo, ttst, itl, e2e, tps or an AIPerf tag such as time_to_first_token)", f, k))
			continue
		}
		x, err := strconv.ParseFloat(strings.TrimSpace(v), 64)
		if err != nil || x <= 0 || math.IsInf(x, 0) || math.IsNaN(x) {
			errs = append(errs, fmt.Errorf("goodput %q: value %q must be a positive number in %s", f, v, metrics[i].unit))
			continue
		}
		out = append(out, SLO{Tag: tag, Value: x})
	}
	if err := errors.Join(errs...); err != nil {
		return nil, err
	}
	return out, nil
}
