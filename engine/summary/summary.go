// Package summary computes a run's summary from its request records: the
// AIPerf statistics (avg, min, max, p1…p99, population std, count) of every
// per-request metric, throughputs, goodput, errors by kind, schedule
// lateness, achieved vs intended rate and cache fidelity.
//
// It is a pure function of []record.Request plus run information, so the
// live run and `reprise summarize` (reading records back from Parquet)
// print the same numbers. [Accumulator] is the streaming form: it keeps
// the metric values, not the records, and its memory is bounded: up to
// [ExactValues] values per metric (about 200 bytes per request), then a
// fixed-size quantile sketch per metric.
//
// Estimators: percentiles are exact, with numpy's default linear
// interpolation (r = (n−1)·p/100), for metrics with at most [ExactValues]
// values, and within [SketchRelativeAccuracy] beyond ([Stats.Approximate]);
// avg, min, max, sum and std are always exact; std is the population
// standard deviation (ddof = 0), as AIPerf computes it.
package summary

import (
	"time"

	"github.com/reprise-bench/reprise/engine/record"
)

// SchemaVersion is the version of summary.json (docs/format/summary.md).
const SchemaVersion = "2"

// SLO is one goodput objective: the metric Tag must be ≤ Value (≥ for
// larger-is-better metrics), in the metric's display unit.
type SLO struct {
	Tag   string
	Value float64
}

// AccuracySLO is the goodput tag of a minimum accuracy
// (docs/design/0021-accuracy.md): a graded request answered wrong is not
// good, and a run whose accuracy is below the value fails its SLOs.
const AccuracySLO = "accuracy"

// Options select how records are read.
type Options struct {
	// Streaming: streaming-only metrics are reported.
	Streaming bool
	// UseServerTokenCount takes output lengths from the server's usage
	// for records that do not say where theirs came from (files written
	// before record.Request.OutputTokensSource); newer records carry
	// their source.
	UseServerTokenCount bool
	// Goodput lists the SLOs a request must meet to be good.
	Goodput []SLO
	// LateThreshold counts requests later than this (0 = 1 ms). It is
	// also the lateness budget of [Summary.Quality].
	LateThreshold time.Duration
	// Calibration, when not nil, is the machine's calibration the run
	// applied: [Summary.Quality] judges the run's load against its safe
	// load, and the table shows its errors beside TTFT, ITL and E2E.
	Calibration *Calibration
	// ISLCorrection is the tokens the server counts in every prompt
	// beyond the client's (a chat template's; Options.Prompts.ISLCorrection
	// of the run): the table's check of server against client prompt
	// tokens allows for it.
	ISLCorrection int
	// HTTPTiming computes the HTTP timing metrics (http_req_dns_lookup,
	// http_req_sending, http_req_receiving, http_req_duration) and
	// [Summary.WriteHTTPTable] prints them with the connection wait,
	// connect and waiting times (AIPerf's --show-trace-timing). HTTPTrace
	// adds each request's HTTP timestamps and phases to AIPerf's
	// profile_export.jsonl as trace_data (--export-http-trace).
	HTTPTiming bool
	HTTPTrace  bool
	// Targets, with two or more, describe the run's targets: the summary
	// then also reports each target on its own ([Summary.Targets]), by
	// the records' Target.
	Targets []TargetInfo
}

// TargetInfo names one target of a run with several.
type TargetInfo struct {
	URL   string `json:"url"`
	Model string `json:"model"`
}

// RunInfo describes the run the records come from.
type RunInfo struct {
	Model     string    `json:"model"`
	URL       string    `json:"url"`
	Endpoint  string    `json:"endpoint"`
	Mode      string    `json:"mode"`
	Trace     string    `json:"trace,omitempty"`
	Streaming bool      `json:"streaming"`
	Start     time.Time `json:"start_time"`
	End       time.Time `json:"end_time"`
	Cancelled bool      `json:"was_cancelled"`
	// Stopped says why a run that was not interrupted stopped before its
	// schedule ended (its first requests all failed to connect); "" when
	// it did not.
	Stopped string `json:"stopped,omitempty"`
	// EndpointKind is the endpoint's kind (adapter.Kind's name) when it
	// is not text generation: "embeddings" or "rankings"; "" = generate.
	EndpointKind string `json:"endpoint_kind,omitempty"`
	// InputsPerRequest is the batch of an embeddings endpoint (inputs per
	// request) or a rankings endpoint (passages per request); 0 for text
	// generation.
	InputsPerRequest int `json:"inputs_per_request,omitempty"`
	// Planned is the number of measured requests the schedule planned
	// (0 = unknown).
	Planned int `json:"planned_requests,omitempty"`
	// Version is reprise's version.
	Version string `json:"reprise_version,omitempty"`
	// NetworkRTT is the network round trip the summary subtracts from
	// the latencies that start at the send (network_adjusted_*); nil for
	// none.
	NetworkRTT *NetworkRTT `json:"network_rtt,omitempty"`
	// Stability is the stability stop's windows (GenAI-Perf's
	// --measurement-interval and --stability-percentage); nil without it.
	Stability *Stability `json:"stability,omitempty"`
}

// Stability is a run measured in windows of IntervalNS that stops when
// the last three agree within Percentage (throughput and mean latency,
// max / min ≤ 1 + Percentage/100) or after MaxWindows windows. Stable
// says which: true when the last three windows agreed.
type Stability struct {
	IntervalNS int64             `json:"interval_ns"`
	Percentage float64           `json:"percentage"`
	MaxWindows int               `json:"max_windows"`
	Stable     bool              `json:"stable"`
	Windows    []StabilityWindow `json:"windows"`
}

// StabilityWindow is one window: the measured requests that completed
// in it, their rate (requests/s) and mean end-to-end latency of the
// successful ones.
type StabilityWindow struct {
	StartNS    int64   `json:"start_ns"`
	EndNS      int64   `json:"end_ns"`
	Completed  int     `json:"completed"`
	Throughput float64 `json:"throughput"`
	LatencyNS  float64 `json:"latency_ns"`
}

// ErrorCount is one row of the error summary.
type ErrorCount struct {
	Kind    record.ErrorKind `json:"kind"`
	Status  int32            `json:"status_code,omitempty"`
	Message string           `json:"message"` // the first message seen
	Count   int              `json:"count"`
}

// Summary is a run's summary.
type Summary struct {
	Run RunInfo
	// TimeSlices are the run's summaries per time slice (AIPerf's
	// --slice-duration), in time order; empty unless asked for.
	TimeSlices []TimeSlice
	// Metrics holds the statistics of every metric with at least one value,
	// keyed by tag.
	Metrics map[string]*Stats

	RequestCount      int // valid (successful) measured requests
	ErrorRequestCount int
	WarmupCount       int
	// CancelledRequestCount counts the measured requests cancelled as the
	// run planned (record.Request.PlannedCancel: --cancel-rate): neither
	// valid nor errors, so they are in no latency metric and not in the
	// error rate.
	CancelledRequestCount int
	TotalISL              int64
	TotalOSL              int64
	TotalReasoning        int64
	// OSLSources counts the ok measured requests by where their output
	// length (OSL, and so ITL) came from, indexed by record.TokenSource
	// (records without a source count as what the run's
	// UseServerTokenCount made of them).
	OSLSources [4]int
	// BenchmarkDuration spans the first send to the last response end of
	// any outcome, ok or failed (grace tail included). AIPerf ends it at
	// the last successful response instead, which shortens a run whose
	// server stopped answering (docs/format/summary.md).
	BenchmarkDuration     time.Duration
	RequestThroughput     float64 // valid requests / s
	OutputTokenThroughput float64 // output (+reasoning) tokens / s
	TotalTokenThroughput  float64
	// InputThroughput and InputTokenThroughput are the inputs (embeddings)
	// or passages (rankings) per second and the input tokens per second of
	// the valid requests of an embeddings or rankings endpoint
	// (RunInfo.InputsPerRequest > 0); 0 otherwise.
	InputThroughput      float64
	InputTokenThroughput float64
	// Generation endpoints (design 0023), over the valid requests: the
	// final media items (images, speech outputs, downloaded videos),
	// their decoded bytes and the audio made or transcribed, in total and
	// per second of the benchmark duration (MediaThroughput: images/s;
	// AudioThroughput: audio seconds per second).
	TotalMediaItems int64
	TotalMediaBytes int64
	TotalAudio      time.Duration
	MediaThroughput float64
	// TotalInputImages and TotalInputAudio are the images and the seconds
	// of audio the valid requests carried as inputs (design 0022);
	// InputImageThroughput (images/s) and InputAudioThroughput (audio
	// seconds/s) are them per second of the benchmark duration; 0 for a
	// text-only run.
	TotalInputImages     int64
	TotalInputAudio      time.Duration
	InputImageThroughput float64
	InputAudioThroughput float64
	AudioThroughput      float64
	// Goodput.
	GoodRequestCount    int
	Goodput             float64 // good requests / s
	GoodRequestFraction float64 // good / (valid + errors)
	// Rates over the measured requests: what the schedule intended vs what
	// was sent (requests / s).
	IntendedRate float64
	AchievedRate float64
	LateCount    int // requests later than Options.LateThreshold
	Retries      int64
	ConnReused   int
	// Cache fidelity: server-reported cached tokens vs what the trace's
	// prefix structure predicts, over requests where both are known.
	ServerCachedTokens   int64
	ExpectedCachedTokens int64
	CacheFidelity        float64 // server / expected; NaN when expected is 0
	// Sent is what the run sent and received over all its phases, warmup
	// included, for comparing with the server's own counters
	// ([Summary.Comparability]).
	Sent Sent
	// Fresh counts the ok measured requests of fresh prompts: those the
	// trace expects nothing cached of (expected_cached_tokens 0), with
	// the server's prompt and cached tokens.
	Fresh Fresh

	ErrorsByKind map[record.ErrorKind]int
	// Errors has one entry per (kind, status), at most [MaxErrorEntries];
	// the failed requests of further pairs are counted in ErrorsOmitted
	// (and in ErrorsByKind).
	Errors        []ErrorCount
	ErrorsOmitted int
	Options       Options

	// Targets are the summaries of each target of a run with several
	// (Options.Targets), by index; nil otherwise. Their Run names the
	// target's URL and model.
	Targets []*Summary

	// WindowStartNS and WindowEndNS bound the profile window: the first
	// measured send and the last measured response end, of any outcome
	// (Unix ns).
	WindowStartNS, WindowEndNS int64
	// Telemetry is the server's and GPUs' view of the window, when collected.
	Telemetry *Telemetry
	// Tasks holds the per-task statistics of a trace with dependent
	// requests; nil otherwise.
	Tasks *Tasks
	// Load is what the run asked of the client ([Load]), which
	// [Summary.Quality] judges against a calibration.
	Load Load
	// Accuracy is the accuracy of the graded requests; nil when none
	// was graded.
	Accuracy *Accuracy
}

// MinAccuracy returns the goodput's minimum accuracy (AccuracySLO), and
// whether it has one.
func (o Options) MinAccuracy() (float64, bool) {
	for _, slo := range o.Goodput {
		if slo.Tag == AccuracySLO {
			return slo.Value, true
		}
	}
	return 0, false
}

// ErrorRate is errors / (valid + errors), 0 for an empty run.
func (s *Summary) ErrorRate() float64 {
	n := s.RequestCount + s.ErrorRequestCount
	if n == 0 {
		return 0
	}
	return float64(s.ErrorRequestCount) / float64(n)
}

// noOutput reports whether the run's endpoint generates no output
// (embeddings, rankings).
func (s *Summary) noOutput() bool { return s.Run.EndpointKind != "" || s.Run.InputsPerRequest > 0 }

// MaxErrorEntries bounds [Summary.Errors]: the first this many distinct
// (kind, status) pairs get an entry.
const MaxErrorEntries = 100

// TimeSlice is the summary of the measured requests sent in one window
// of a run (AIPerf's --slice-duration): [StartNS, EndNS) on the records'
// clock, Index counting from 0 at the first measured request's send.
type TimeSlice struct {
	Index          int
	StartNS, EndNS int64
	Summary        *Summary
}

// Accuracy is the accuracy of a run's graded requests
// (docs/design/0021-accuracy.md): overall and per task, each with its
// Wilson 95 % interval. A failed graded request is graded wrong (it gave
// no answer) and also counted in Failed.
type Accuracy struct {
	All   AccuracyStat
	Tasks []AccuracyStat // by task name
	// Settings are the run's accuracy settings (benchmark, n-shots,
	// temperature, …) as summary.json records them; set by the run.
	Settings map[string]any
}

// AccuracyStat is the accuracy of one task (Task "" for all).
type AccuracyStat struct {
	Task string `json:"task,omitempty"`
	// Graded counts the measured graded requests; Correct those graded
	// right; Unanswered those whose response held no answer the grader
	// could extract; Failed those whose request failed.
	Graded     int `json:"graded"`
	Correct    int `json:"correct"`
	Unanswered int `json:"unanswered"`
	Failed     int `json:"failed"`
	// Accuracy is Correct / Graded; Low and High its Wilson 95 % interval.
	Accuracy float64 `json:"accuracy"`
	Low      float64 `json:"ci_low"`
	High     float64 `json:"ci_high"`
}

// Sent is what a run sent a server and received from it, over every
// phase (warmup and priming included): the numbers the server's own
// counters are checked against.
type Sent struct {
	// Requests counts the requests written to the server (a request
	// never sent, --late skip's, is not counted).
	Requests int64
	// PromptTokens sums the requests' prompt tokens: the server's count
	// (usage.prompt_tokens) where it answered one, else the client's.
	PromptTokens int64
	// OutputTokens sums the output tokens received: the server's
	// completion tokens where reported, else the client's count.
	OutputTokens int64
	// Unfinished counts the requests that failed or were cancelled: the
	// server may have generated tokens for them that the client never
	// received.
	Unfinished int64
}

// Fresh counts the ok measured requests of fresh prompts (the trace
// expects nothing of them cached) with the server's prompt and cached
// tokens: a cold cache serves them next to nothing.
type Fresh struct {
	Requests     int64
	PromptTokens int64
	CachedTokens int64
}

// Load is how much work a run gave the client, in the three measures a
// calibration bounds. Each is computed from the measured requests' send
// times and latencies, over the time from the first send to the last send
// plus the mean request latency: a closed loop of N streams then has N in
// flight however few rounds it ran, and one slow last response does not
// stretch it (as it would the benchmark duration).
type Load struct {
	// Streams is the mean number of requests in flight by Little's law:
	// the rate below times the mean request_latency.
	Streams float64 `json:"streams"`
	// EventsPerSec is that rate times the mean output length, for a
	// streamed run (one event per token); 0 otherwise.
	EventsPerSec float64 `json:"events_per_sec"`
	// RequestsPerSec is the requests sent over the span of send times
	// plus the mean request latency.
	RequestsPerSec float64 `json:"requests_per_sec"`
}

// Calibration is what `reprise selftest` measured on this machine, as a
// run applies it (summary.json's calibration): the largest load at which
// the client's timing errors stayed under MaxErrorMS, and those errors.
type Calibration struct {
	// File is the calibration file the run read.
	File string `json:"file"`
	// Host is the host it was measured on; Created when.
	Host    string    `json:"host"`
	Created time.Time `json:"created"`
	// MaxErrorMS is the bound the safe load kept the p99 errors under.
	MaxErrorMS float64 `json:"max_error_ms"`
	// SafeLoad is the largest load measured within the bound.
	SafeLoad Load `json:"safe_load"`
	// Errors are the timing errors at SafeLoad, keyed by metric tag
	// (time_to_first_token, inter_token_latency, request_latency).
	Errors map[string]ErrorBar `json:"errors"`
}

// ErrorBar is the distribution of a client timestamp's error against the
// server's own log, in ms.
type ErrorBar struct {
	P50 float64 `json:"p50_ms"`
	P99 float64 `json:"p99_ms"`
}

// Tasks are the per-task statistics of a run whose trace has dependent
// requests (design 0008; records with a task_id): a task is one
// connected part of the dependency graph, e.g. an agent's request with
// its sub-agents. Times are in ms.
type Tasks struct {
	// Count is the number of tasks with a measured request; Completed
	// those whose every measured request succeeded.
	Count     int
	Completed int
	// Completion is first send to last response end of each task.
	Completion Stats
	// CriticalServer is the server's share of each task's critical path:
	// the sum of sent-to-end times of the chain of requests that released
	// one another (parent_request_id) up to the task's last response.
	// CriticalWait is the rest of the completion time: dependencies'
	// delays, think and tool time, and the client's scheduling.
	CriticalServer Stats
	CriticalWait   Stats
	// TTFTByDepth holds the TTFT of the successful requests of each depth
	// (0 = roots).
	TTFTByDepth map[int32]*Stats
}

// Telemetry is the server's and the GPUs' view of the profile window, put
// next to the client's numbers (docs/format/telemetry.md).
type Telemetry struct {
	Servers []ServerSummary `json:"servers,omitempty"`
	GPU     *GPUSummary     `json:"gpu,omitempty"`
}

// NetworkRTT is the network round trip subtracted from the latencies that
// start at the request's send (AIPerf's network latency calibration,
// --network-latency-mean or --network-latency-automatic): [Summary]
// reports each such metric again, less MeanNS, as network_adjusted_<tag>,
// and the round trip itself as network_rtt.
type NetworkRTT struct {
	// Source is "mean" for a round trip given by the user, "probe" for
	// one measured by TCP handshakes to the server during the run.
	Source string `json:"source"`
	// MeanNS is the round trip subtracted: the given one, or the mean of
	// SamplesNS (0 when no probe succeeded: nothing is subtracted).
	MeanNS int64 `json:"mean_ns"`
	// SamplesNS are the probes' handshake times in order, FailedProbes
	// the probes that failed.
	SamplesNS    []int64 `json:"samples_ns,omitempty"`
	FailedProbes int     `json:"failed_probes,omitempty"`
}
