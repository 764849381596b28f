//go:build unix

// Package memstat measures a process's own memory and CPU for the
// benchmarks that report peak heap and CPU time of a whole operation
// (summarize, report and merge of 10M-request runs): a sampler of the
// live heap's peak, the live heap after a collection, and the process's
// CPU time.
package memstat

import (
	"os"
	"runtime"
	"runtime/metrics"
	"strconv"
	"sync/atomic"
	"syscall"
	"time"
)

const heapObjects = "/memory/classes/heap/objects:bytes"

// PeakHeap records the peak of the heap's objects (runtime/metrics
// /memory/classes/heap/objects:bytes, garbage not yet collected
// included), sampled every millisecond until Stop.
type PeakHeap struct {
	peak       atomic.Uint64
	quit, done chan struct{}
}

// StartPeakHeap starts sampling.
func StartPeakHeap() *PeakHeap {
	h := &PeakHeap{quit: make(chan struct{}), done: make(chan struct{})}
	go func() {
		defer close(h.done)
		s := []metrics.Sample{{Name: heapObjects}}
		tk := time.NewTicker(time.Millisecond)
		defer tk.Stop()
		for {
			metrics.Read(s)
			if v := s[0].Value.Uint64(); v > h.peak.Load() {
				h.peak.Store(v)
			}
			select {
			case <-h.quit:
				return
			case <-tk.C:
			}
		}
	}()
	return h
}

// Stop ends sampling and returns the peak in bytes.
func (h *PeakHeap) Stop() uint64 { close(h.quit); <-h.done; return h.peak.Load() }

// LiveHeap collects garbage and returns the heap's live objects in bytes.
func LiveHeap() uint64 {
	runtime.GC()
	s := []metrics.Sample{{Name: heapObjects}}
	metrics.Read(s)
	return s[0].Value.Uint64()
}

// CPUTime returns the process's CPU time so far, user and system.
func CPUTime() time.Duration {
	var ru syscall.Rusage
	_ = syscall.Getrusage(syscall.RUSAGE_SELF, &ru)
	return time.Duration(ru.Utime.Nano() + ru.Stime.Nano())
}

// BenchRows returns the row count a whole-run benchmark uses:
// $REPRISE_BENCH_ROWS when it is a positive integer, else def.
func BenchRows(def int) int {
	if v, err := strconv.Atoi(os.Getenv("REPRISE_BENCH_ROWS")); err == nil && v > 0 {
		return v
	}
	return def
}
