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
	"errors"
	"fmt"
	"math"
	"slices"
	"sort"
	"strconv"
	"strings"
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

// Stats are the statistics of one metric. Values are in Unit.
type Stats struct {
	Unit  string  `json:"unit"`
	Avg   float64 `json:"avg"`
	Min   float64 `json:"min"`
	Max   float64 `json:"max"`
	Sum   float64 `json:"sum"`
	P1    float64 `json:"p1"`
	P5    float64 `json:"p5"`
	P10   float64 `json:"p10"`
	P25   float64 `json:"p25"`
	P50   float64 `json:"p50"`
	P75   float64 `json:"p75"`
	P90   float64 `json:"p90"`
	P95   float64 `json:"p95"`
	P99   float64 `json:"p99"`
	Std   float64 `json:"std"`
	Count int     `json:"count"`
	// Approximate reports that the percentiles come from a quantile sketch
	// (the metric had more than [ExactValues] values); each is then within
	// RelativeError of the exact one (see [SketchRelativeAccuracy]). Both
	// are omitted from JSON when the percentiles are exact.
	Approximate   bool    `json:"approximate,omitempty"`
	RelativeError float64 `json:"relative_error,omitempty"`
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

// MaxErrorEntries bounds [Summary.Errors]: the first this many distinct
// (kind, status) pairs get an entry.
const MaxErrorEntries = 100

// Accumulator builds a Summary from records added one at a time. It keeps
// the metric values, not the records: at most [ExactValues] per metric,
// then a sketch of bounded size, so its memory does not grow with the run
// beyond about 25 MiB. It is not safe for concurrent use.
type Accumulator struct {
	opts    Options
	vals    []series
	exact   int // values kept exactly per metric: ExactValues (tests lower it)
	s       Summary
	errIdx  map[errKey]int
	minSent int64
	maxEnd  int64
	minInt  int64
	maxInt  int64
	maxSent int64
	nInt    int
	nSent   int
	good    []int // metric indexes of the goodput SLOs
	// Tasks of dependent requests (tasks.go); nil until a record has one.
	tasks     map[int64]*taskAcc
	taskNodes map[int64]taskNode
	ttftDepth map[int32][]float64
	// targets are the per-target accumulators of a run with several
	// targets (nil otherwise).
	targets []*Accumulator
	// acc holds the graded requests' counts (accuracy.go); nil until a
	// record is graded.
	acc *accAcc
}

type errKey struct {
	kind   record.ErrorKind
	status int32
}

// NewAccumulator returns an empty accumulator.
func NewAccumulator(opts Options) *Accumulator {
	a := &Accumulator{opts: opts, vals: make([]series, len(metrics)), exact: ExactValues, errIdx: map[errKey]int{}}
	if a.opts.LateThreshold == 0 {
		a.opts.LateThreshold = time.Millisecond
	}
	a.s.ErrorsByKind = map[record.ErrorKind]int{}
	for _, slo := range opts.Goodput {
		i, ok := metricByTag(slo.Tag)
		if !ok {
			i = -1 // accuracy
		}
		a.good = append(a.good, i)
	}
	if len(opts.Targets) > 1 {
		one := opts
		one.Targets = nil
		for range opts.Targets {
			a.targets = append(a.targets, NewAccumulator(one))
		}
	}
	return a
}

// Add adds one record. Warmup records are only counted.
func (a *Accumulator) Add(r *record.Request) {
	if t := int(r.Target); t >= 0 && t < len(a.targets) {
		a.targets[t].Add(r)
	}
	s := &a.s
	s.Sent.add(r)
	if r.Phase == record.PhaseWarmup {
		s.WarmupCount++
		return
	}
	o := &a.opts
	if r.Task > 0 && !r.PlannedCancel() {
		a.addTask(r)
	}
	if r.Graded && !r.PlannedCancel() {
		a.addAccuracy(r)
	}
	if r.IntendedNS != 0 {
		if a.nInt == 0 || r.IntendedNS < a.minInt {
			a.minInt = r.IntendedNS
		}
		a.maxInt = max(a.maxInt, r.IntendedNS)
		a.nInt++
		if r.LatenessNS > int64(o.LateThreshold) {
			s.LateCount++
		}
	}
	if r.SentNS != 0 && r.ErrorKind != record.ErrNotDelivered {
		if a.nSent == 0 || r.SentNS < a.minSent {
			a.minSent = r.SentNS
		}
		a.maxSent = max(a.maxSent, r.SentNS)
		a.nSent++
		// The span ends at the last response of any outcome: a failed
		// request ends at its error (EndNS), an ok one at its last token.
		end := r.EndNS
		if r.OK() {
			end = r.SentNS + r.E2ENS
		}
		a.maxEnd = max(a.maxEnd, end)
	}
	s.Retries += int64(r.Retries)
	if r.ConnReused {
		s.ConnReused++
	}
	eachValue(r, o, func(i int, v float64) { a.vals[i].add(v, a.exact) })
	if r.PlannedCancel() {
		s.CancelledRequestCount++
		return
	}
	if !r.OK() {
		s.ErrorRequestCount++
		s.ErrorsByKind[r.ErrorKind]++
		k := errKey{r.ErrorKind, r.StatusCode}
		if j, seen := a.errIdx[k]; seen {
			s.Errors[j].Count++
		} else if len(s.Errors) >= MaxErrorEntries {
			s.ErrorsOmitted++
		} else {
			a.errIdx[k] = len(s.Errors)
			s.Errors = append(s.Errors, ErrorCount{Kind: r.ErrorKind, Status: r.StatusCode, Message: r.ErrorMessage, Count: 1})
		}
		return
	}
	s.RequestCount++
	s.TotalISL += int64(r.InputTokens)
	s.TotalInputImages += int64(r.InputImages)
	s.TotalInputAudio += time.Duration(r.InputAudioNS)
	n := osl(r, o)
	s.TotalOSL += n
	src := r.OutputTokensSource
	if src == record.TokensUnknown || int(src) >= len(s.OSLSources) {
		src = record.TokensClient
		if o.UseServerTokenCount && r.ServerCompletionTokens >= 0 {
			src = record.TokensServer
		}
	}
	s.OSLSources[src]++
	s.TotalReasoning += int64(r.ReasoningTokens)
	s.TotalMediaItems += int64(r.MediaItems)
	s.TotalMediaBytes += r.MediaBytes
	s.TotalAudio += time.Duration(r.AudioNS)
	if r.ServerCachedTokens >= 0 && r.ExpectedCachedTokens >= 0 {
		s.ServerCachedTokens += int64(r.ServerCachedTokens)
		s.ExpectedCachedTokens += int64(r.ExpectedCachedTokens)
		if r.ExpectedCachedTokens == 0 && r.ServerPromptTokens > 0 {
			s.Fresh.Requests++
			s.Fresh.PromptTokens += int64(r.ServerPromptTokens)
			s.Fresh.CachedTokens += int64(r.ServerCachedTokens)
		}
	}
	if len(a.good) > 0 && a.isGood(r) {
		s.GoodRequestCount++
	}
}

func (a *Accumulator) isGood(r *record.Request) bool {
	for j, i := range a.good {
		if i < 0 {
			if r.Graded && !r.AccuracyCorrect {
				return false
			}
			continue
		}
		m := &metrics[i]
		v, has := m.get(r, &a.opts)
		if !has || (m.stream && !a.opts.Streaming) {
			return false
		}
		lim := a.opts.Goodput[j].Value
		if m.larger && v < lim || !m.larger && v > lim {
			return false
		}
	}
	return true
}

// Good reports whether r is a good request under o's goodput SLOs, as the
// summary counts it in good_request_count: a successful measured request
// meeting every SLO. It is false when o has no SLOs or r is a warmup
// request.
func Good(r *record.Request, o Options) bool {
	if len(o.Goodput) == 0 || r.Phase == record.PhaseWarmup || !r.OK() {
		return false
	}
	a := Accumulator{opts: o}
	for _, slo := range o.Goodput {
		i, ok := metricByTag(slo.Tag)
		if !ok {
			i = -1 // accuracy
		}
		a.good = append(a.good, i)
	}
	return a.isGood(r)
}

// Summary computes the summary of everything added so far. It may be
// called more than once.
func (a *Accumulator) Summary(info RunInfo) *Summary {
	s := a.s // copy
	s.Run = info
	s.Options = a.opts
	s.ErrorsByKind = maps(a.s.ErrorsByKind)
	s.Errors = slices.Clone(a.s.Errors)
	sort.SliceStable(s.Errors, func(i, j int) bool { return s.Errors[i].Count > s.Errors[j].Count })
	s.Metrics = map[string]*Stats{}
	for i := range metrics {
		if a.vals[i].count() == 0 {
			continue
		}
		st := a.vals[i].stats()
		st.Unit = metrics[i].unit
		s.Metrics[metrics[i].tag] = &st
	}
	s.adjustForNetwork()
	s.WindowStartNS, s.WindowEndNS = a.minSent, a.maxEnd
	if a.maxEnd > a.minSent {
		s.BenchmarkDuration = time.Duration(a.maxEnd - a.minSent)
	}
	if s.BenchmarkDuration > 0 && s.RequestCount > 0 {
		sec := s.BenchmarkDuration.Seconds()
		s.RequestThroughput = float64(s.RequestCount) / sec
		s.OutputTokenThroughput = float64(s.TotalOSL) / sec
		s.TotalTokenThroughput = float64(s.TotalISL+s.TotalOSL) / sec
		s.InputImageThroughput = float64(s.TotalInputImages) / sec
		s.InputAudioThroughput = s.TotalInputAudio.Seconds() / sec
		s.Goodput = float64(s.GoodRequestCount) / sec
		s.MediaThroughput = float64(s.TotalMediaItems) / sec
		s.AudioThroughput = s.TotalAudio.Seconds() / sec
		if info.InputsPerRequest > 0 {
			s.InputThroughput = float64(s.RequestCount*info.InputsPerRequest) / sec
			s.InputTokenThroughput = float64(s.TotalISL) / sec
		}
	}
	if n := s.RequestCount + s.ErrorRequestCount; n > 0 && len(a.good) > 0 {
		s.GoodRequestFraction = float64(s.GoodRequestCount) / float64(n)
	}
	if a.nInt > 1 && a.maxInt > a.minInt {
		s.IntendedRate = float64(a.nInt-1) / (float64(a.maxInt-a.minInt) / 1e9)
	}
	if a.nSent > 1 && a.maxSent > a.minSent {
		s.AchievedRate = float64(a.nSent-1) / (float64(a.maxSent-a.minSent) / 1e9)
	}
	s.Tasks = a.taskSummary()
	s.Accuracy = a.accuracySummary()
	s.Load = s.load(a.nSent, a.minSent, a.maxSent)
	s.CacheFidelity = math.NaN()
	if s.ExpectedCachedTokens > 0 {
		s.CacheFidelity = float64(s.ServerCachedTokens) / float64(s.ExpectedCachedTokens)
	}
	if len(a.targets) > 0 {
		s.Targets = make([]*Summary, len(a.targets))
		for t, ta := range a.targets {
			ti := info
			ti.URL, ti.Model = a.opts.Targets[t].URL, a.opts.Targets[t].Model
			s.Targets[t] = ta.Summary(ti)
		}
	}
	return &s
}

func maps(m map[record.ErrorKind]int) map[record.ErrorKind]int {
	out := make(map[record.ErrorKind]int, len(m))
	for k, v := range m {
		out[k] = v
	}
	return out
}

// Summarize computes the summary of reqs.
func Summarize(reqs []record.Request, info RunInfo, opts Options) *Summary {
	a := NewAccumulator(opts)
	for i := range reqs {
		a.Add(&reqs[i])
	}
	return a.Summary(info)
}

// Compute returns the statistics of vals (which it sorts in place). Unit
// is left empty.
func Compute(vals []float64) Stats {
	n := len(vals)
	if n == 0 {
		return Stats{}
	}
	slices.Sort(vals)
	var sum float64
	for _, v := range vals {
		sum += v
	}
	mean := sum / float64(n)
	var ss float64
	for _, v := range vals {
		d := v - mean
		ss += d * d
	}
	return Stats{
		Avg: mean, Min: vals[0], Max: vals[n-1], Sum: sum,
		P1: Percentile(vals, 1), P5: Percentile(vals, 5), P10: Percentile(vals, 10),
		P25: Percentile(vals, 25), P50: Percentile(vals, 50), P75: Percentile(vals, 75),
		P90: Percentile(vals, 90), P95: Percentile(vals, 95), P99: Percentile(vals, 99),
		Std: math.Sqrt(ss / float64(n)), Count: n,
	}
}

// Percentile returns the p-th percentile of sorted values with numpy's
// default linear interpolation: r = (n−1)·p/100, then interpolate between
// the neighbours of r.
func Percentile(sorted []float64, p float64) float64 {
	n := len(sorted)
	if n == 0 {
		return math.NaN()
	}
	r := float64(n-1) * p / 100
	lo := int(math.Floor(r))
	hi := int(math.Ceil(r))
	if hi >= n {
		hi = n - 1
	}
	return sorted[lo] + (sorted[hi]-sorted[lo])*(r-float64(lo))
}
