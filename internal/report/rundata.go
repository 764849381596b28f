// What the report keeps of one run (what both passes found), and its
// times in seconds since the run's start.

package report

import (
	"encoding/json"
	"math"
	"time"

	"github.com/reprise-bench/reprise/arrowio"
	"github.com/reprise-bench/reprise/engine/record"
	"github.com/reprise-bench/reprise/engine/summary"
)

// runData is what the charts of one run are made from: its summary, its
// manifest, what a first pass over its requests found (the time origin,
// span and warmup, the counts that set the scatters' strides, the range
// of each latency) and what the second pass binned and sampled for the
// charts ([runData.scan]). Neither pass keeps a request: memory does not
// grow with the run's length beyond the summary's own.
type runData struct {
	label, color, dir string
	views             *spill         // the first pass's reqViews, for the second
	manifest          map[string]any // nil when the run has none
	manifestRaw       json.RawMessage
	summaryJSON       map[string]any // summary.json as written; nil when absent
	set               arrowio.Settings
	sum               *summary.Summary

	t0 int64 // Unix ns: the earliest intended or sent time; x = 0 on time axes

	kinds   []record.ErrorKind // kinds[0] = ErrNone
	kindIdx map[record.ErrorKind]uint8

	// From the first pass.
	n, nOK, nErr, nCache int       // requests; ok; failed; with a cached-tokens error
	last                 int64     // the latest end, sent or intended time
	warmLo, warmHi       int64     // the warmup's first send and last end
	latLo, latHi         []float64 // per latencyMetrics: least and largest CDF value (hi 0: none)

	// From the second pass ([runData.scan]).
	sc *scanned

	metrics []record.MetricSample // the server_metrics rows reprise knows
	gpu     []record.GPUSample
}

// seconds converts a Unix ns time to seconds since the run's start
// (NaN for 0: did not happen).
func (d *runData) seconds(ns int64) float64 {
	if ns == 0 {
		return math.NaN()
	}
	return float64(ns-d.t0) / 1e9
}

// span is the run's length in seconds: from t0 to the last end.
func (d *runData) span() float64 {
	last := d.last
	for i := range d.metrics {
		if t := d.metrics[i].TimeNS; t <= last+int64(time.Minute) {
			last = max(last, t)
		}
	}
	if last <= d.t0 {
		return 0
	}
	return float64(last-d.t0) / 1e9
}

// warmup is the run's warmup span in seconds since t0 (sent of the first
// warmup request to the last warmup end), ok false without warmup.
func (d *runData) warmup() (Span, bool) {
	lo, hi := d.warmLo, d.warmHi
	if hi == 0 || lo == math.MaxInt64 {
		return Span{}, false
	}
	return Span{From: d.seconds(lo), To: d.seconds(max(hi, lo)), Label: "warmup"}, true
}

// scanned is what the second pass over a run's requests ([runData.scan])
// keeps for the charts: counts per CDF point, per time bucket, and the
// strided samples of the scatters. Its size depends on the buckets, the
// CDF points and MaxPoints, never on the number of requests.
type scanned struct {
	cdf  [][]float64 // per latencyMetrics: requests at or below each grid point (nil: no grid)
	cdfN []int

	// Scatters: TTFT against send time, ISL against TTFT, OSL against
	// E2E (ok requests), and the failed requests by kind.
	ttftX, ttftY, islX, islY, oslX, oslY []float64
	errX, errY                           map[uint8][]float64
	cacheX, cacheY                       []float64

	// Per bucket.
	intended, sent, done, ended, toks []float64
	lateMax, lateMean, lateN, lag     []float64
	anyLag                            bool
	client                            [2][2][]float64 // TTFT, ITL: sums, counts
	errKind                           [][]float64     // per kind index (0 unused)
	// Per bucket of send time, the TTFT and ITL values of the ok
	// requests (nil: none), for their percentiles over time.
	byTime [2][]*summary.Values
	// Per bucket of end (never sent: intended) time, requests that ended
	// and those of them that failed, for the error rate over time.
	outcomes, failed []float64
}
