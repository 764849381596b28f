package report

import (
	"io"
	"os"
	"path/filepath"
	"runtime"
	"runtime/metrics"
	"strconv"
	"sync/atomic"
	"syscall"
	"testing"
	"time"

	"github.com/reprise-bench/reprise/arrowio"
)

// BenchmarkBuild10M measures the report of a run of ten million requests
// (REPRISE_BENCH_ROWS changes the count), the size of a 10M-request
// replay, with telemetry: the build's CPU seconds, wall seconds and peak
// live heap (the targets: under a minute and under 1 GB). The run is
// written once, into REPRISE_BENCH_RUN_DIR when set (and kept there, for
// measuring `reprise report` on it; an existing run there is reused),
// else into a temporary directory.
func BenchmarkBuild10M(b *testing.B) {
	total := 10_000_000
	if v, err := strconv.Atoi(os.Getenv("REPRISE_BENCH_ROWS")); err == nil && v > 0 {
		total = v
	}
	dir := os.Getenv("REPRISE_BENCH_RUN_DIR")
	if dir == "" {
		dir = filepath.Join(b.TempDir(), "run")
	}
	if _, err := os.Stat(filepath.Join(dir, arrowio.SummaryFile)); err != nil {
		synthRun{n: total, rate: 5000, ttft: 30 * time.Millisecond, itl: 8 * time.Millisecond, errEvery: 1000,
			warmup: total / 100, telemetry: true, seed: 10}.write(b, dir)
	}
	run, err := arrowio.Open(dir)
	if err != nil {
		b.Fatal(err)
	}
	var cpu, wall time.Duration
	var peak uint64
	for b.Loop() {
		base := liveHeap()
		h := startPeakHeap()
		c0, t0 := cpuNow(), time.Now()
		if err := Build(io.Discard, []*arrowio.RunReader{run}, Options{}); err != nil {
			b.Fatal(err)
		}
		cpu += cpuNow() - c0
		wall += time.Since(t0)
		peak = max(peak, h.stop()-base)
	}
	n := float64(b.N)
	b.ReportMetric(cpu.Seconds()/n, "cpu-s/op")
	b.ReportMetric(wall.Seconds()/n, "wall-s/op")
	b.ReportMetric(float64(peak)/(1<<20), "peak-heap-MiB")
	b.ReportMetric(float64(total), "rows")
}

// peakHeap records the peak of the live heap (runtime/metrics
// /memory/classes/heap/objects:bytes, collected garbage not yet
// excluded) sampled every millisecond.
type peakHeap struct {
	peak atomic.Uint64
	done chan struct{}
	quit chan struct{}
}

func startPeakHeap() *peakHeap {
	h := &peakHeap{done: make(chan struct{}), quit: make(chan struct{})}
	go func() {
		defer close(h.done)
		s := []metrics.Sample{{Name: "/memory/classes/heap/objects:bytes"}}
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

func (h *peakHeap) stop() uint64 { close(h.quit); <-h.done; return h.peak.Load() }

func liveHeap() uint64 {
	runtime.GC()
	s := []metrics.Sample{{Name: "/memory/classes/heap/objects:bytes"}}
	metrics.Read(s)
	return s[0].Value.Uint64()
}

func cpuNow() time.Duration {
	var ru syscall.Rusage
	syscall.Getrusage(syscall.RUSAGE_SELF, &ru)
	return time.Duration(ru.Utime.Nano() + ru.Stime.Nano())
}
