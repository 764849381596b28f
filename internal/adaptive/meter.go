package adaptive

import (
	"sync"

	"github.com/reprise-bench/reprise/engine/record"
	"github.com/reprise-bench/reprise/engine/summary"
	"github.com/reprise-bench/reprise/internal/search"
)

// Meter collects the measured requests of the current window. Its
// statistics are engine/summary's, over the window's records, so a
// window's request_latency:p95 is what a run of those requests would
// report. It is safe for concurrent use.
type Meter struct {
	opts summary.Options
	slas []search.Constraint

	mu      sync.Mutex
	acc     *summary.Accumulator
	start   int64 // the window's start
	n, errs int
	maxLat  int64
}

// NewMeter returns a meter whose windows are summarized with opts and
// give the values of slas' metrics; the first window starts at startNS.
func NewMeter(opts summary.Options, slas []search.Constraint, startNS int64) *Meter {
	return &Meter{opts: opts, slas: slas, acc: summary.NewAccumulator(opts), start: startNS}
}

// Observe adds a completed request; warmup requests are left out.
// Allocates only what summary.Accumulator.Add does.
func (m *Meter) Observe(r *record.Request) {
	if r.Phase != record.PhaseProfile {
		return
	}
	m.mu.Lock()
	defer m.mu.Unlock()
	m.acc.Add(r)
	m.n++
	if !r.OK() {
		m.errs++
	}
	m.maxLat = max(m.maxLat, r.E2ENS)
}

// Take ends the window at nowNS and returns it: the requests that
// completed in it. The next window starts at nowNS.
func (m *Meter) Take(nowNS int64) Window {
	m.mu.Lock()
	acc, w := m.acc, Window{StartNS: m.start, EndNS: nowNS, Completed: m.n, Errors: m.errs, MaxLatencyNS: m.maxLat}
	m.acc, m.start, m.n, m.errs, m.maxLat = summary.NewAccumulator(m.opts), nowNS, 0, 0, 0
	m.mu.Unlock()
	w.Values = map[string]float64{}
	if w.Completed == 0 {
		return w
	}
	s := acc.Summary(summary.RunInfo{})
	for _, sla := range m.slas {
		key, err := metricKey(sla.Metric)
		if err != nil {
			continue
		}
		if v, ok := summary.RunMetricValue(s, key); ok {
			w.Values[sla.Metric] = v
		}
	}
	return w
}
