package analyze

import (
	"bytes"
	"context"
	"errors"
	"io"
	"os"
	"path/filepath"
	"testing"

	"github.com/reprise-bench/reprise/internal/testfiles"
	"github.com/reprise-bench/reprise/trace"
)

// repeatedRows is the row count of BenchmarkAnalyzeRepeated: the
// conversation trace ten times (testfiles.Repeated).
const repeatedRows = 10 * 12031

// decodeAll reads every row of data, each cloned.
func decodeAll(tb testing.TB, data []byte) []trace.Row {
	tb.Helper()
	rd, err := trace.NewReader("bench.jsonl", bytes.NewReader(data), trace.Options{})
	if err != nil {
		tb.Fatal(err)
	}
	defer rd.Close()
	var rows []trace.Row
	var row trace.Row
	for {
		err := rd.Next(&row)
		if errors.Is(err, io.EOF) {
			return rows
		}
		if err != nil {
			tb.Fatal(err)
		}
		rows = append(rows, row.Clone())
	}
}

// BenchmarkAnalyzeRepeated is BenchmarkAnalyzeMooncake on the shape of
// the 1M-row file of BenchmarkAnalyzeTraceCLI (../../cmd/reprise): the
// conversation trace repeated ten times, shifted in time, so that most
// rows reuse blocks last used about an hour (12,031 rows) before. Its
// parts: "file" = File on the trace in a file (reading, hashing, decoding
// and both statistics: what analyze-trace runs before its report),
// "decode" = the reader alone, "both" = the Analyzer and the AIPerf
// statistics on decoded rows, "stats" = the Analyzer alone.
func BenchmarkAnalyzeRepeated(b *testing.B) {
	data := testfiles.Repeated(b, "mooncake/conversation_trace.jsonl", repeatedRows)
	var cpu0 = cpuTime()
	perRows := func(b *testing.B, n int) {
		if c := cpuTime() - cpu0; c > 0 {
			b.ReportMetric(float64(n)*float64(b.N)/c.Seconds(), "rows/cpu-s")
		}
	}
	b.Run("file", func(b *testing.B) {
		path := filepath.Join(b.TempDir(), "repeated.jsonl")
		if err := os.WriteFile(path, data, 0o644); err != nil {
			b.Fatal(err)
		}
		b.SetBytes(int64(len(data)))
		b.ReportAllocs()
		cpu0 = cpuTime()
		for b.Loop() {
			if _, err := File(context.Background(), path, FileConfig{}); err != nil {
				b.Fatal(err)
			}
		}
		perRows(b, repeatedRows)
	})
	b.Run("decode", func(b *testing.B) {
		b.SetBytes(int64(len(data)))
		b.ReportAllocs()
		cpu0 = cpuTime()
		for b.Loop() {
			if _, err := analyzeBytes(data, nil, nil); err != nil {
				b.Fatal(err)
			}
		}
		perRows(b, repeatedRows)
	})
	rows := decodeAll(b, data)
	b.Run("both", func(b *testing.B) {
		b.ReportAllocs()
		cpu0 = cpuTime()
		for b.Loop() {
			a, p := New(Config{}), NewAIPerf(512)
			for i := range rows {
				a.Add(&rows[i])
				p.addInterned(&rows[i], a)
			}
		}
		perRows(b, len(rows))
	})
	b.Run("stats", func(b *testing.B) {
		b.ReportAllocs()
		cpu0 = cpuTime()
		for b.Loop() {
			a := New(Config{})
			for i := range rows {
				a.Add(&rows[i])
			}
		}
		perRows(b, len(rows))
	})
}

// TestBenchmarkAnalyzeRepeated checks the benchmarked parts: File, and the
// Analyzer and AIPerf fed decoded rows, give one report, with every row.
func TestBenchmarkAnalyzeRepeated(t *testing.T) {
	data := testfiles.Repeated(t, "mooncake/conversation_trace.jsonl", 2*12031)
	path := filepath.Join(t.TempDir(), "repeated.jsonl")
	if err := os.WriteFile(path, data, 0o644); err != nil {
		t.Fatal(err)
	}
	rep, err := File(context.Background(), path, FileConfig{})
	if err != nil {
		t.Fatal(err)
	}
	rows := decodeAll(t, data)
	a, p := New(Config{}), NewAIPerf(512)
	for i := range rows {
		a.Add(&rows[i])
		p.addInterned(&rows[i], a)
	}
	got := a.Report()
	got.AIPerf, got.Source = p.Report(), rep.Source
	if rep.Rows != 2*12031 || len(rows) != 2*12031 {
		t.Fatalf("File read %d rows, decodeAll %d; want %d", rep.Rows, len(rows), 2*12031)
	}
	var w1, w2 bytes.Buffer
	if err := WriteJSON(&w1, rep); err != nil {
		t.Fatal(err)
	}
	if err := WriteJSON(&w2, got); err != nil {
		t.Fatal(err)
	}
	if w1.String() != w2.String() {
		t.Errorf("File and the decoded rows' report differ:\n%s\n%s", w1.String(), w2.String())
	}
}
