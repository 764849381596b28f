// The server's counters and latency histograms, which metrics.go exposes.

package mockserver

import (
	"math"
	"sync/atomic"
	"time"
)

// histogram is a Prometheus histogram with fixed bounds, observed with
// atomics (no lock on the per-token path). Safe for concurrent use.
type histogram struct {
	bounds []float64 // seconds, ascending, without +Inf
	ns     []int64   // the same bounds in ns
	counts []atomic.Uint64
	inf    atomic.Uint64
	sumNS  atomic.Int64
}

func newHistogram(bounds []float64) *histogram {
	h := &histogram{bounds: bounds, ns: make([]int64, len(bounds)), counts: make([]atomic.Uint64, len(bounds))}
	for i, b := range bounds {
		h.ns[i] = int64(math.Round(b * 1e9))
	}
	return h
}

func (h *histogram) observe(d time.Duration) {
	v := int64(d)
	h.sumNS.Add(v)
	for i, b := range h.ns {
		if v <= b {
			h.counts[i].Add(1)
			return
		}
	}
	h.inf.Add(1)
}

// vLLM's bucket bounds, as in the recorded /metrics.
var (
	ttftBuckets = []float64{0.001, 0.005, 0.01, 0.02, 0.04, 0.06, 0.08, 0.1, 0.25, 0.5, 0.75, 1, 2.5, 5, 7.5,
		10, 20, 40, 80, 160, 640, 2560}
	itlBuckets = []float64{0.01, 0.025, 0.05, 0.075, 0.1, 0.15, 0.2, 0.3, 0.4, 0.5, 0.75, 1, 2.5, 5, 7.5, 10,
		20, 40, 80}
	e2eBuckets = []float64{0.3, 0.5, 0.8, 1, 1.5, 2, 2.5, 5, 10, 15, 20, 30, 40, 50, 60, 120, 240, 480, 960,
		1920, 7680}
)

// metrics are the server's counters. The TTFT and ITL histograms observe the
// latency model's scheduled values (as llm-d-inference-sim does), TTFT from
// the time the request was received, so it includes queueing; E2E observes
// the measured time from receipt to the last write.
type metrics struct {
	promptTokens     atomic.Int64 // all prompt tokens of accepted requests
	evaluatedTokens  atomic.Int64 // uncached prompt tokens
	generationTokens atomic.Int64
	cacheHits        atomic.Int64 // tokens (cached prompt tokens; 0 without a cache)
	cacheQueries     atomic.Int64 // tokens
	finishedLength   atomic.Int64
	finishedStop     atomic.Int64
	finishedAbort    atomic.Int64
	runningTokens    atomic.Int64 // prompt + max output of running requests
	prefillNS        atomic.Int64 // scheduled prefill time, for llama.cpp's prompt_seconds_total
	decodeNS         atomic.Int64 // scheduled decode time
	maxTokensSeen    atomic.Int64
	ttft, itl, e2e   *histogram
}

func newMetrics() *metrics {
	return &metrics{ttft: newHistogram(ttftBuckets), itl: newHistogram(itlBuckets), e2e: newHistogram(e2eBuckets)}
}
