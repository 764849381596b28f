package synth

import (
	"errors"
	"io"
	"os"
	"path/filepath"
	"runtime"
	"testing"

	"github.com/reprise-bench/reprise/trace"
)

// benchConfigs are the generation workloads of BenchmarkGenerateTo: one
// request per session (every block new), streamed with the analyzer's
// measure of the rows (single) and without it (single-quiet, as
// `synthesize --quiet`), and multi-turn sessions on shared prefix trees
// solved for a hit-ratio target (multi: every session drawn first).
func benchConfigs(rows int) map[string]GenerateConfig {
	single := NewGenerateConfig()
	single.Rate, single.Requests = 1000, rows
	single.ISL, single.OSL = Dist{Kind: DistFixed, Mean: 2000}, Dist{Kind: DistFixed, Mean: 200}
	quiet := single
	quiet.SkipAnalysis = true
	multi := single
	multi.Rate, multi.Turns = 100, 4
	multi.PrefixRoots, multi.TargetHitRatio = 100, 0.8
	multi.ISL = Dist{Kind: DistFixed, Mean: 1000}
	return map[string]GenerateConfig{"single": single, "single-quiet": quiet, "multi": multi}
}

// BenchmarkGenerateTo measures `reprise synthesize` generation through
// the trace writer (to io.Discard) in rows/s, its live heap at the last
// row in bytes per row, and how much the live heap grew per row from a
// quarter of the rows to the last (0 for constant memory).
func BenchmarkGenerateTo(b *testing.B) {
	const rows = 200_000
	for _, name := range []string{"single", "single-quiet", "multi"} {
		cfg := benchConfigs(rows)[name]
		b.Run(name, func(b *testing.B) {
			b.ReportAllocs()
			var h heapProbe
			for b.Loop() {
				st, err := GenerateTo(cfg, h.writer(b, rows))
				if err != nil {
					b.Fatal(err)
				}
				if st.Rows != rows {
					b.Fatalf("%d rows, want %d", st.Rows, rows)
				}
			}
			h.report(b, rows)
		})
	}
}

// TestGenerateToStreams checks that GenerateTo hands rows over as it builds
// them — the rows equal Generate's, and an error from the writer stops the
// generation at once and is returned as it is.
func TestGenerateToStreams(t *testing.T) {
	cfg := benchConfigs(2000)["multi"]
	res, err := Generate(cfg)
	if err != nil {
		t.Fatal(err)
	}
	var got []trace.Row
	st, err := GenerateTo(cfg, func(r *trace.Row) error {
		row := *r
		row.HashIDs = append([]uint64(nil), r.HashIDs...)
		got = append(got, row)
		return nil
	})
	if err != nil {
		t.Fatal(err)
	}
	if len(got) != len(res.Rows) || st.Rows != len(got) {
		t.Fatalf("GenerateTo gave %d rows (stats %d), Generate %d", len(got), st.Rows, len(res.Rows))
	}
	for i := range got {
		if got[i].InputTokens != res.Rows[i].InputTokens || len(got[i].HashIDs) != len(res.Rows[i].HashIDs) || got[i].SessionID != res.Rows[i].SessionID {
			t.Fatalf("row %d differs: %+v vs %+v", i, got[i], res.Rows[i])
		}
	}
	if st.Written == nil || st.Written.Rows != int64(len(got)) {
		t.Fatalf("Written report = %+v, want %d rows", st.Written, len(got))
	}

	stop := errors.New("disk full")
	n := 0
	_, err = GenerateTo(cfg, func(*trace.Row) error {
		if n++; n == 10 {
			return stop
		}
		return nil
	})
	if err != stop || n != 10 {
		t.Fatalf("writer error on row 10: got %v after %d rows, want %v after 10", err, n, stop)
	}
}

// BenchmarkDeriveTo measures `reprise synthesize --from` with --speedup 2
// on a single-turn Mooncake file through the trace writer (to io.Discard):
// streamed (CanStream's validating pass, then DeriveTo) and read whole
// (ReadAll, Derive, Write), in rows/s, with the live heap at the last row
// in bytes per row and its growth per row from a quarter of the rows to
// the last (0 for constant memory; read whole, the heap is measured once
// Derive returned).
func BenchmarkDeriveTo(b *testing.B) {
	const rows = 200_000
	path := filepath.Join(b.TempDir(), "in.jsonl")
	f, err := os.Create(path)
	if err != nil {
		b.Fatal(err)
	}
	tw, err := trace.NewWriter(f, trace.FormatMooncake)
	if err != nil {
		b.Fatal(err)
	}
	if _, err := GenerateTo(benchConfigs(rows)["single-quiet"], tw.Write); err != nil {
		b.Fatal(err)
	}
	if err := errors.Join(tw.Flush(), f.Close()); err != nil {
		b.Fatal(err)
	}
	cfg := NewDeriveConfig()
	cfg.Speedup = 2
	b.Run("streamed", func(b *testing.B) {
		b.ReportAllocs()
		var h heapProbe
		for b.Loop() {
			ok, why, err := CanStream(path, trace.Options{}, cfg)
			if err != nil || !ok {
				b.Fatal(why, err)
			}
			st, err := DeriveTo(path, trace.Options{}, cfg, h.writer(b, rows))
			if err != nil || st.RowsOut != rows {
				b.Fatal(err, st)
			}
		}
		h.report(b, rows)
	})
	b.Run("in-memory", func(b *testing.B) {
		b.ReportAllocs()
		var h heapProbe
		for b.Loop() {
			in, _, err := trace.ReadAll(path, trace.Options{})
			if err != nil {
				b.Fatal(err)
			}
			res, err := Derive(in, cfg)
			if err != nil {
				b.Fatal(err)
			}
			h.last = liveHeap()
			if err := Write(io.Discard, res); err != nil || len(res.Rows) != rows {
				b.Fatal(err, len(res.Rows))
			}
		}
		b.ReportMetric(float64(rows)*float64(b.N)/b.Elapsed().Seconds(), "rows/s")
		b.ReportMetric(float64(h.last)/rows, "heap-B/row")
	})
}

// heapProbe samples the live heap as a benchmark's rows are written: at a
// quarter of them and at the last.
type heapProbe struct{ quarter, last uint64 }

// writer returns a row callback that writes Mooncake rows to io.Discard
// and samples the live heap at rows/4 and at rows.
func (h *heapProbe) writer(b *testing.B, rows int) func(*trace.Row) error {
	tw, err := trace.NewWriter(io.Discard, trace.FormatMooncake)
	if err != nil {
		b.Fatal(err)
	}
	n := 0
	return func(r *trace.Row) error {
		switch n++; n {
		case rows / 4:
			h.quarter = liveHeap()
		case rows:
			h.last = liveHeap()
		}
		return tw.Write(r)
	}
}

// report reports rows/s, the live heap at the last row per row, and its
// growth per row from a quarter of the rows to the last (0 for constant
// memory).
func (h *heapProbe) report(b *testing.B, rows int) {
	b.ReportMetric(float64(rows)*float64(b.N)/b.Elapsed().Seconds(), "rows/s")
	b.ReportMetric(float64(h.last)/float64(rows), "heap-B/row")
	b.ReportMetric((float64(h.last)-float64(h.quarter))/float64(rows-rows/4), "heap-growth-B/row")
}

// liveHeap collects garbage and returns the live heap in bytes.
func liveHeap() uint64 {
	runtime.GC()
	var m runtime.MemStats
	runtime.ReadMemStats(&m)
	return m.HeapAlloc
}
