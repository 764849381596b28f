package arrowio

import (
	"os"
	"path/filepath"
	"reflect"
	"testing"
	"time"

	"github.com/reprise-bench/reprise/engine/record"
	"github.com/reprise-bench/reprise/engine/summary"
	"github.com/reprise-bench/reprise/internal/memstat"
)

func dirSize(dir string) int64 {
	var n int64
	filepath.WalkDir(dir, func(p string, d os.DirEntry, err error) error {
		if err == nil && !d.IsDir() {
			if st, err := d.Info(); err == nil {
				n += st.Size()
			}
		}
		return nil
	})
	return n
}

// feedRequests writes total rows through w in batches of 256 (the engine's
// collector size), cycling through tmpl so the input stays small, as it is
// in a real run where batches are freed once written. Request ids are
// unique only per template pass: fine for a benchmark.
func feedRequests(tb testing.TB, w *RunWriter, tmpl []record.Request, total int) {
	for done := 0; done < total; {
		i := done % len(tmpl)
		n := min(256, len(tmpl)-i, total-done)
		if err := w.WriteRequests(tmpl[i : i+n]); err != nil {
			tb.Fatal(err)
		}
		done += n
	}
}

// benchWriteRequests writes total requests through a RunWriter and reports
// CPU seconds, peak heap (live objects including not yet collected
// garbage, minus the heap before the run) and bytes per million rows.
func benchWriteRequests(b *testing.B, cfg Config, tmpl []record.Request, total int) {
	b.ReportAllocs()
	var cpu time.Duration
	var peak uint64
	var size int64
	for b.Loop() {
		dir := b.TempDir()
		base := memstat.LiveHeap()
		h := memstat.StartPeakHeap()
		c0 := memstat.CPUTime()
		w, err := NewRunWriter(dir, cfg)
		if err != nil {
			b.Fatal(err)
		}
		feedRequests(b, w, tmpl, total)
		if err := w.Close(); err != nil {
			b.Fatal(err)
		}
		cpu += memstat.CPUTime() - c0
		peak = max(peak, h.Stop()-base)
		size = dirSize(dir)
		os.RemoveAll(dir)
	}
	n := float64(b.N)
	b.ReportMetric(cpu.Seconds()/n, "cpu-s/op")
	b.ReportMetric(float64(peak)/(1<<20), "peak-heap-MiB")
	b.ReportMetric(float64(size)/(1<<20)*1e6/float64(total), "MiB/1M-rows")
}

// BenchmarkWriteRequests1M writes one million requests; budget ≤ 2 s CPU
// and ≤ 150 MB peak heap. TestFeedRequests checks the files it
// writes.
func BenchmarkWriteRequests1M(b *testing.B) {
	tmpl := genRequests(64*1024, 42)
	b.Run("parquet", func(b *testing.B) { benchWriteRequests(b, Config{}, tmpl, 1_000_000) })
	b.Run("arrow", func(b *testing.B) { benchWriteRequests(b, Config{Format: FormatArrow}, tmpl, 1_000_000) })
}

// BenchmarkWriteEvents writes one million events; the budget is 1M
// events/s sustained, i.e. ≤ 1 s per op.
func BenchmarkWriteEvents(b *testing.B) {
	evs := genEvents(1_000_000, 43)
	b.ReportAllocs()
	var cpu time.Duration
	var size int64
	for b.Loop() {
		dir := b.TempDir()
		c0 := memstat.CPUTime()
		writeRun(b, dir, Config{}, nil, evs, 4096)
		cpu += memstat.CPUTime() - c0
		size = dirSize(dir)
		os.RemoveAll(dir)
	}
	b.ReportMetric(cpu.Seconds()/float64(b.N), "cpu-s/op")
	b.ReportMetric(float64(size)/(1<<20), "MiB/1M-events")
}

// TestBenchmarkWrite checks what the benchmarks measure, at a small size:
// feedRequests through a RunWriter writes every row of every template pass,
// in order, and the events path writes every event.
func TestBenchmarkWrite(t *testing.T) {
	tmpl := genRequests(1000, 42)
	for _, f := range []Format{FormatParquet, FormatArrow} {
		dir := t.TempDir()
		w, err := NewRunWriter(dir, Config{Format: f, RowGroupRows: 512})
		if err != nil {
			t.Fatal(err)
		}
		feedRequests(t, w, tmpl, 2500)
		if err := w.Close(); err != nil {
			t.Fatal(err)
		}
		got, err := ReadRequests(dir)
		if err != nil {
			t.Fatal(err)
		}
		if len(got) != 2500 {
			t.Fatalf("%s: %d rows, want 2500", f, len(got))
		}
		for i := range got {
			if !reflect.DeepEqual(got[i], tmpl[i%len(tmpl)]) {
				t.Fatalf("%s: row %d differs from template row %d", f, i, i%len(tmpl))
			}
		}
	}
	dir := t.TempDir()
	evs := genEvents(10_000, 43)
	writeRun(t, dir, Config{}, nil, evs, 4096)
	got, err := ReadEvents(dir)
	if err != nil || len(got) != len(evs) || got[9999] != evs[9999] {
		t.Errorf("events: %d rows, %v", len(got), err)
	}
}

// BenchmarkSummarize10M writes a run of ten million requests (the rows of
// a 10M-request replay; REPRISE_BENCH_ROWS changes the count) and then
// measures what `reprise summarize` does with it: RunReader.Summarize
// reading every row back and recomputing the summary. It reports the
// summarize's CPU seconds, wall seconds and peak live heap (the targets:
// under a minute and under 1 GB), and the write's CPU seconds.
func BenchmarkSummarize10M(b *testing.B) {
	total := memstat.BenchRows(10_000_000)
	tmpl := genRequests(64*1024, 44)
	dir := b.TempDir()
	c0 := memstat.CPUTime()
	w, err := NewRunWriter(dir, Config{})
	if err != nil {
		b.Fatal(err)
	}
	feedRequests(b, w, tmpl, total)
	if err := w.Close(); err != nil {
		b.Fatal(err)
	}
	writeCPU := memstat.CPUTime() - c0
	var cpu, wall time.Duration
	var peak uint64
	for b.Loop() {
		rd, err := Open(dir)
		if err != nil {
			b.Fatal(err)
		}
		base := memstat.LiveHeap()
		h := memstat.StartPeakHeap()
		c1, t1 := memstat.CPUTime(), time.Now()
		s, err := rd.Summarize(summary.RunInfo{}, summary.Options{Streaming: true})
		if err != nil {
			b.Fatal(err)
		}
		cpu += memstat.CPUTime() - c1
		wall += time.Since(t1)
		peak = max(peak, h.Stop()-base)
		if s.RequestCount+s.ErrorRequestCount+s.WarmupCount == 0 {
			b.Fatal("no requests summarized")
		}
	}
	n := float64(b.N)
	b.ReportMetric(cpu.Seconds()/n, "summarize-cpu-s")
	b.ReportMetric(wall.Seconds()/n, "summarize-wall-s")
	b.ReportMetric(float64(peak)/(1<<20), "summarize-peak-heap-MiB")
	b.ReportMetric(writeCPU.Seconds(), "write-cpu-s")
	b.ReportMetric(float64(total), "rows")
}
