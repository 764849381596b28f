package report

import (
	"io"
	"os"
	"path/filepath"
	"testing"
	"time"

	"github.com/reprise-bench/reprise/arrowio"
	"github.com/reprise-bench/reprise/internal/memstat"
)

// BenchmarkBuild10M measures the report of a run of ten million requests
// (REPRISE_BENCH_ROWS changes the count), the size of a 10M-request
// replay, with telemetry: the build's CPU seconds, wall seconds and peak
// live heap (the targets: under a minute and under 1 GB). The run is
// written once, into REPRISE_BENCH_RUN_DIR when set (and kept there, for
// measuring `reprise report` on it; an existing run there is reused),
// else into a temporary directory.
func BenchmarkBuild10M(b *testing.B) {
	total := memstat.BenchRows(10_000_000)
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
		base := memstat.LiveHeap()
		h := memstat.StartPeakHeap()
		c0, t0 := memstat.CPUTime(), time.Now()
		if err := Build(io.Discard, []*arrowio.RunReader{run}, Options{}); err != nil {
			b.Fatal(err)
		}
		cpu += memstat.CPUTime() - c0
		wall += time.Since(t0)
		peak = max(peak, h.Stop()-base)
	}
	n := float64(b.N)
	b.ReportMetric(cpu.Seconds()/n, "cpu-s/op")
	b.ReportMetric(wall.Seconds()/n, "wall-s/op")
	b.ReportMetric(float64(peak)/(1<<20), "peak-heap-MiB")
	b.ReportMetric(float64(total), "rows")
}
