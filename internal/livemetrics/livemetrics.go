package livemetrics

import (
	"net/http"
	"sync/atomic"

	"github.com/prometheus/client_golang/prometheus"
	"github.com/prometheus/client_golang/prometheus/collectors"
	"github.com/prometheus/client_golang/prometheus/promhttp"

	"github.com/reprise-bench/reprise/engine/record"
)

// FormatVersion is the version of the metric set (names, types, units,
// labels and buckets) that docs/format/live-metrics.md specifies; it is
// the version label of reprise_run_info.
const FormatVersion = "1"

// The metric names (docs/format/live-metrics.md).
const (
	NameTTFT         = "reprise_time_to_first_token_seconds"
	NameTTFO         = "reprise_time_to_first_output_token_seconds"
	NameITL          = "reprise_inter_token_latency_seconds"
	NameE2E          = "reprise_request_latency_seconds"
	NameLateness     = "reprise_schedule_lateness_seconds"
	NameRequests     = "reprise_requests_total"
	NameInputTokens  = "reprise_input_tokens_total"
	NameOutputTokens = "reprise_output_tokens_total"
	NameInFlight     = "reprise_requests_in_flight"
	NameIntendedRate = "reprise_intended_request_rate"
	NameRunInfo      = "reprise_run_info"
)

// Buckets of the histograms, in seconds: 1-2-5 steps over the range each
// quantity takes on LLM servers.
var (
	// LatencyBuckets are TTFT's, TTFO's and E2E latency's: 1 ms to 500 s.
	LatencyBuckets = []float64{0.001, 0.002, 0.005, 0.01, 0.02, 0.05, 0.1, 0.2, 0.5, 1, 2, 5, 10, 20, 50, 100, 200, 500}
	// ITLBuckets are the inter-token latency's: 0.5 ms to 2 s.
	ITLBuckets = []float64{0.0005, 0.001, 0.002, 0.005, 0.01, 0.02, 0.05, 0.1, 0.2, 0.5, 1, 2}
	// LatenessBuckets are schedule lateness's: 10 µs to 10 s.
	LatenessBuckets = []float64{0.00001, 0.00002, 0.00005, 0.0001, 0.0002, 0.0005, 0.001, 0.002, 0.005, 0.01, 0.02, 0.05, 0.1, 0.2, 0.5, 1, 2, 5, 10}
)

// Outcomes, the outcome label of reprise_requests_total.
const (
	OutcomeOK        = "ok"
	OutcomeError     = "error"
	OutcomeCancelled = "cancelled" // a cancellation the run planned (--cancel-rate)
)

// errorKinds are the error kinds resolved in New, in record's order; a
// kind not listed (none today) is resolved at its first use.
var errorKinds = []record.ErrorKind{
	record.ErrHTTPStatus, record.ErrConnect, record.ErrReset, record.ErrTimeout, record.ErrStreamError,
	record.ErrMalformed, record.ErrNoContent, record.ErrAdapter, record.ErrCancelled, record.ErrBuild,
	record.ErrNotDelivered, record.ErrTooLarge,
}

// kindIndex is k's index in errorKinds, or -1.
func kindIndex(k record.ErrorKind) int {
	for i, e := range errorKinds {
		if e == k {
			return i
		}
	}
	return -1
}

// Target is one server of the run, as its labels name it.
type Target struct {
	URL   string // base URL, without user info
	Model string
}

// Config says what a run's metrics are labelled with and where its
// gauges read from. Every field is optional.
type Config struct {
	// RunID is the run_id label of every series of the run: the
	// manifest's run_id, which every shard of a run shares.
	RunID string
	// Targets are the run's servers, by record.Request.Target (at
	// least one is assumed).
	Targets []Target
	// Streaming says whether the run streams: TTFT, TTFO and ITL are
	// observed only then, as the summary counts them.
	Streaming bool
	// Mode, Shard and Version go into reprise_run_info's labels.
	Mode, Shard, Version string
	// Go adds the Go runtime's and the process's collectors (go_*,
	// process_*: the client's CPU and memory), labelled with the run id
	// too.
	Go bool
}

// Metrics is one run's metrics. It is safe for concurrent use.
type Metrics struct {
	reg       *prometheus.Registry
	streaming bool
	targets   []targetMetrics
	requests  *prometheus.CounterVec
	inFlight  atomic.Pointer[func(target int) int64]
	rate      atomic.Pointer[func() (float64, bool)]
}

// targetMetrics are one target's series, resolved once.
type targetMetrics struct {
	ttft, ttfo, itl, e2e, lateness prometheus.Observer
	input, output                  prometheus.Counter
	// By phase (record.Phase): ok, planned cancels, and errors by kind.
	ok, cancelled [2]prometheus.Counter
	errs          [2][]prometheus.Counter
	labels        prometheus.Labels
}

// New returns the metrics of a run labelled as cfg says.
func New(cfg Config) *Metrics {
	m := &Metrics{reg: prometheus.NewRegistry(), streaming: cfg.Streaming}
	reg := prometheus.WrapRegistererWith(prometheus.Labels{"run_id": cfg.RunID}, m.reg)
	if cfg.Go {
		reg.MustRegister(collectors.NewGoCollector(), collectors.NewProcessCollector(collectors.ProcessCollectorOpts{}))
	}
	tl := []string{"target", "model"}
	hist := func(name, help string, b []float64) *prometheus.HistogramVec {
		h := prometheus.NewHistogramVec(prometheus.HistogramOpts{Name: name, Help: help, Buckets: b}, tl)
		reg.MustRegister(h)
		return h
	}
	counter := func(name, help string, labels ...string) *prometheus.CounterVec {
		c := prometheus.NewCounterVec(prometheus.CounterOpts{Name: name, Help: help}, append(tl, labels...))
		reg.MustRegister(c)
		return c
	}
	ttft := hist(NameTTFT, "Time to first token (content or reasoning) of the measured requests that succeeded, from the send.", LatencyBuckets)
	ttfo := hist(NameTTFO, "Time to first output (non-reasoning) token of the measured requests that succeeded, from the send.", LatencyBuckets)
	itl := hist(NameITL, "Mean inter-token latency of each measured request that succeeded with two tokens or more.", ITLBuckets)
	e2e := hist(NameE2E, "End-to-end latency (send to last token) of the measured requests that succeeded.", LatencyBuckets)
	late := hist(NameLateness, "How late the dispatcher handed each measured request to a sender, after its intended time.", LatenessBuckets)
	m.requests = counter(NameRequests, "Requests ended, by phase, outcome and error kind.", "phase", "outcome", "error_kind")
	in := counter(NameInputTokens, "Input tokens of the measured requests that succeeded.")
	out := counter(NameOutputTokens, "Output tokens (reasoning included) of the measured requests that succeeded, as the summary counts them: the server's count where it reports one.")

	targets := cfg.Targets
	if len(targets) == 0 {
		targets = []Target{{}}
	}
	for _, t := range targets {
		l := prometheus.Labels{"target": t.URL, "model": t.Model}
		tm := targetMetrics{ttft: ttft.With(l), ttfo: ttfo.With(l), itl: itl.With(l), e2e: e2e.With(l), lateness: late.With(l),
			input: in.With(l), output: out.With(l), labels: l}
		for p := range 2 {
			ph := record.Phase(p).String()
			tm.ok[p] = m.requests.WithLabelValues(t.URL, t.Model, ph, OutcomeOK, "")
			tm.cancelled[p] = m.requests.WithLabelValues(t.URL, t.Model, ph, OutcomeCancelled, string(record.ErrCancelled))
			tm.errs[p] = make([]prometheus.Counter, len(errorKinds))
			for i, k := range errorKinds {
				tm.errs[p][i] = m.requests.WithLabelValues(t.URL, t.Model, ph, OutcomeError, string(k))
			}
		}
		m.targets = append(m.targets, tm)
	}
	for i, t := range targets {
		reg.MustRegister(prometheus.NewGaugeFunc(prometheus.GaugeOpts{Name: NameInFlight, Help: "Requests in flight now.",
			ConstLabels: prometheus.Labels{"target": t.URL, "model": t.Model}}, func() float64 {
			if f := m.inFlight.Load(); f != nil {
				return float64((*f)(i))
			}
			return 0
		}))
	}
	reg.MustRegister(&rateCollector{m: m, desc: prometheus.NewDesc(NameIntendedRate,
		"The request rate (per second) the schedule aims at: --request-rate or --user-centric-rate, this process's share; absent when the schedule has none (trace timestamps, closed loop).",
		nil, nil)})
	info := prometheus.NewGauge(prometheus.GaugeOpts{Name: NameRunInfo, Help: "Always 1; the run's mode, shard, reprise version and metric format version as labels.",
		ConstLabels: prometheus.Labels{"mode": cfg.Mode, "shard": cfg.Shard, "version": cfg.Version, "format_version": FormatVersion}})
	info.Set(1)
	reg.MustRegister(info)
	return m
}

// rateCollector exports the intended rate only when the schedule has one.
type rateCollector struct {
	m    *Metrics
	desc *prometheus.Desc
}

func (c *rateCollector) Describe(ch chan<- *prometheus.Desc) { ch <- c.desc }

func (c *rateCollector) Collect(ch chan<- prometheus.Metric) {
	f := c.m.rate.Load()
	if f == nil {
		return
	}
	if v, ok := (*f)(); ok {
		ch <- prometheus.MustNewConstMetric(c.desc, prometheus.GaugeValue, v)
	}
}

// SetInFlight makes reprise_requests_in_flight read f(target) at each
// scrape; f must be safe for concurrent use. Before it is called the
// gauges read 0.
func (m *Metrics) SetInFlight(f func(target int) int64) { m.inFlight.Store(&f) }

// SetIntendedRate makes reprise_intended_request_rate read f at each
// scrape (absent while f returns false); f must be safe for concurrent
// use.
func (m *Metrics) SetIntendedRate(f func() (float64, bool)) { m.rate.Store(&f) }

// Observe counts a batch of finished records, as the run's summary
// counts them: warmup requests only in reprise_requests_total; latencies,
// tokens and lateness of the measured ones (a failed request only in
// lateness). It allocates nothing. The caller keeps the batch.
func (m *Metrics) Observe(batch []record.Request) {
	for i := range batch {
		m.observe(&batch[i])
	}
}

func (m *Metrics) observe(r *record.Request) {
	t := int(r.Target)
	if t < 0 || t >= len(m.targets) {
		t = 0
	}
	tm := &m.targets[t]
	p := int(r.Phase)
	if p > 1 {
		p = 0
	}
	ok, cancel := r.OK(), r.PlannedCancel()
	switch {
	case cancel:
		tm.cancelled[p].Inc()
	case ok:
		tm.ok[p].Inc()
	default:
		if k := kindIndex(r.ErrorKind); k >= 0 {
			tm.errs[p][k].Inc()
		} else {
			m.requests.WithLabelValues(tm.labels["target"], tm.labels["model"], r.Phase.String(), OutcomeError, string(r.ErrorKind)).Inc()
		}
	}
	if r.Phase != record.PhaseProfile {
		return
	}
	// The rules of engine/summary's metrics table: lateness over every
	// measured request, the rest over those that succeeded.
	if r.IntendedNS != 0 {
		tm.lateness.Observe(seconds(r.LatenessNS))
	}
	if !ok || cancel {
		return
	}
	if m.streaming && r.FirstTokenNS != 0 {
		tm.ttft.Observe(seconds(r.TTFTNS))
		if r.OutputLength() >= 2 {
			tm.itl.Observe(r.ITLNS / 1e9)
		}
	}
	if m.streaming && r.FirstOutputTokenNS != 0 {
		tm.ttfo.Observe(seconds(r.TTFONS))
	}
	if r.E2ENS > 0 {
		tm.e2e.Observe(seconds(r.E2ENS))
	}
	tm.input.Add(float64(r.InputTokens))
	tm.output.Add(float64(r.OutputLength()))
}

func seconds(ns int64) float64 { return float64(ns) / 1e9 }

// Handler serves the metrics in the exposition format Prometheus asks
// for (text, or OpenMetrics when it prefers it).
func (m *Metrics) Handler() http.Handler {
	return promhttp.HandlerFor(m.reg, promhttp.HandlerOpts{EnableOpenMetrics: true})
}

// Gatherer is the metrics' registry, for tests and for a caller that
// serves it itself.
func (m *Metrics) Gatherer() prometheus.Gatherer { return m.reg }
