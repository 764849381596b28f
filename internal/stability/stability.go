package stability

import (
	"sync"
	"time"

	"github.com/reprise-bench/reprise/engine/record"
	"github.com/reprise-bench/reprise/engine/summary"
)

const (
	// Windows is how many of the last windows must agree (perf_analyzer's 3).
	Windows = 3
	// DefaultPercentage is GenAI-Perf's --stability-percentage: 999, so
	// that any three windows agree and the run lasts three windows.
	DefaultPercentage = 999
	// DefaultMaxWindows is perf_analyzer's --max-trials.
	DefaultMaxWindows = 10
)

// Window is the requests of the measured phase that completed in one
// window. Latency is the mean end-to-end latency of its successful
// requests (0 when none succeeded).
type Window struct {
	StartNS, EndNS int64
	Completed      int
	LatencyNS      float64
}

// Throughput is the window's completed requests per second (0 for an
// empty or zero-length window).
func (w Window) Throughput() float64 {
	if w.EndNS <= w.StartNS {
		return 0
	}
	return float64(w.Completed) / (float64(w.EndNS-w.StartNS) / 1e9)
}

// Stable reports whether the last [Windows] of ws agree within pct
// percent: for throughput and for latency, max / min ≤ 1 + pct/100. A
// window in which no request succeeded is never stable, nor are fewer
// than [Windows] windows.
func Stable(ws []Window, pct float64) bool {
	if len(ws) < Windows {
		return false
	}
	last := ws[len(ws)-Windows:]
	tput := make([]float64, len(last))
	lat := make([]float64, len(last))
	for i, w := range last {
		tput[i], lat[i] = w.Throughput(), w.LatencyNS
	}
	return within(tput, pct) && within(lat, pct)
}

// within reports whether max / min of vs is at most 1 + pct/100 (every
// value above 0).
func within(vs []float64, pct float64) bool {
	lo, hi := vs[0], vs[0]
	for _, v := range vs {
		lo, hi = min(lo, v), max(hi, v)
	}
	return lo > 0 && hi/lo <= 1+pct/100
}

// Watch collects the measured requests of the current window and
// decides, at each window's end, whether the run stops. It is safe for
// concurrent use.
type Watch struct {
	pct        float64
	maxWindows int
	period     time.Duration

	mu      sync.Mutex
	start   int64
	n, ok   int
	latSum  float64
	windows []Window
	stable  bool
}

// NewWatch returns a watch stopping when the last windows agree within
// pct percent, or after maxWindows windows of period each.
func NewWatch(pct float64, maxWindows int, period time.Duration) *Watch {
	return &Watch{pct: pct, maxWindows: maxWindows, period: period}
}

// Observe adds a completed request; warmup requests are left out.
func (w *Watch) Observe(r *record.Request) {
	if r.Phase != record.PhaseProfile {
		return
	}
	w.mu.Lock()
	defer w.mu.Unlock()
	w.n++
	if r.OK() {
		w.ok++
		w.latSum += float64(r.E2ENS)
	}
}

// Check ends the window at nowNS and reports whether the run stops, and
// why: "stable" or "max windows". The first window began a period
// before the first Check (the run's time zero).
func (w *Watch) Check(nowNS int64) (stop bool, reason string) {
	w.mu.Lock()
	defer w.mu.Unlock()
	if len(w.windows) == 0 {
		w.start = nowNS - int64(w.period)
	}
	win := Window{StartNS: w.start, EndNS: nowNS, Completed: w.n}
	if w.ok > 0 {
		win.LatencyNS = w.latSum / float64(w.ok)
	}
	w.windows = append(w.windows, win)
	w.start, w.n, w.ok, w.latSum = nowNS, 0, 0, 0
	if Stable(w.windows, w.pct) {
		w.stable = true
		return true, "stable"
	}
	if len(w.windows) >= w.maxWindows {
		return true, "max windows"
	}
	return false, ""
}

// Report is the windows so far, as summary.json's run_info.stability.
func (w *Watch) Report() *summary.Stability {
	w.mu.Lock()
	defer w.mu.Unlock()
	s := &summary.Stability{IntervalNS: int64(w.period), Percentage: w.pct, MaxWindows: w.maxWindows, Stable: w.stable}
	for _, win := range w.windows {
		s.Windows = append(s.Windows, summary.StabilityWindow{StartNS: win.StartNS, EndNS: win.EndNS,
			Completed: win.Completed, Throughput: win.Throughput(), LatencyNS: win.LatencyNS})
	}
	return s
}
