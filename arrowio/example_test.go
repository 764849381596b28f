package arrowio_test

import (
	"fmt"
	"os"
	"path/filepath"

	"github.com/apache/arrow/go/v17/arrow"
	"github.com/apache/arrow/go/v17/arrow/array"
	"github.com/apache/arrow/go/v17/arrow/memory"

	"github.com/reprise-bench/reprise/arrowio"
	"github.com/reprise-bench/reprise/engine/record"
	"github.com/reprise-bench/reprise/engine/summary"
)

// A telemetry table written through arrowio: any Arrow schema, rows
// appended as record batches of any size, parts completed as they fill.
func ExampleTableWriter() {
	dir, _ := os.MkdirTemp("", "run")
	defer os.RemoveAll(dir)

	md := arrow.NewMetadata([]string{arrowio.SchemaKey}, []string{"gpu/v1"})
	schema := arrow.NewSchema([]arrow.Field{
		{Name: "time_ns", Type: arrow.PrimitiveTypes.Int64},
		{Name: "time_at", Type: arrowio.TimestampNS},
		{Name: "gpu", Type: arrow.PrimitiveTypes.Int32},
		{Name: "util_pct", Type: arrow.PrimitiveTypes.Float64, Nullable: true},
	}, &md)
	w, err := arrowio.NewTableWriter(dir, "gpu", schema, arrowio.NewConfig())
	if err != nil {
		panic(err)
	}
	b := array.NewRecordBuilder(memory.DefaultAllocator, schema)
	defer b.Release()
	for i := 0; i < 3; i++ {
		t := int64(1_763_700_000_000_000_000 + i*333_000_000)
		b.Field(0).(*array.Int64Builder).Append(t)
		b.Field(1).(*array.TimestampBuilder).Append(arrow.Timestamp(t))
		b.Field(2).(*array.Int32Builder).Append(0)
		b.Field(3).(*array.Float64Builder).Append(float64(90 + i))
	}
	rec := b.NewRecord()
	defer rec.Release()
	if err := w.Write(rec); err != nil {
		panic(err)
	}
	if err := w.Close(); err != nil { // always: completes the file
		panic(err)
	}

	files, _ := arrowio.TableFiles(dir, "gpu")
	fmt.Println(len(files), "file,", w.Stats().Rows, "rows")
	err = arrowio.ReadTable(dir, "gpu", func(path string, rec arrow.Record) error {
		fmt.Println(rec.Column(3))
		return nil
	})
	fmt.Println(err)
	// Output:
	// 1 file, 3 rows
	// [90 91 92]
	// <nil>
}

// A run directory: Create opens it and its records table (the engine's
// sink), the summary is written beside the records, and Open reads
// everything back, recomputing the same summary from the files.
func ExampleCreate() {
	parent, _ := os.MkdirTemp("", "runs")
	defer os.RemoveAll(parent)
	dir := filepath.Join(parent, "run")

	run, err := arrowio.Create(dir, arrowio.CreateConfig{Tables: arrowio.Config{Format: arrowio.FormatJSONL}})
	if err != nil {
		panic(err)
	}
	batch := []record.Request{
		{RequestID: 0, TraceRow: 0, SentNS: 1_763_700_000_000_000_001, E2ENS: 52_000_001, StatusCode: 200,
			ServerPromptTokens: -1, ServerCompletionTokens: -1, ServerReasoningTokens: -1, ServerCachedTokens: -1, ExpectedCachedTokens: -1},
		{RequestID: 1, TraceRow: 1, ErrorKind: record.ErrTimeout, ErrorMessage: "timeout after 60s",
			ServerPromptTokens: -1, ServerCompletionTokens: -1, ServerReasoningTokens: -1, ServerCachedTokens: -1, ExpectedCachedTokens: -1},
	}
	if err := run.Records().WriteRequests(batch); err != nil { // the rows are copied
		panic(err)
	}
	if err := run.Close(); err != nil {
		panic(err)
	}
	info := summary.RunInfo{Model: "m", Mode: "fixed"}
	if err := run.WriteSummary(summary.Summarize(batch, info, summary.Options{}), run.Records().Report()); err != nil {
		panic(err)
	}

	rr, err := arrowio.Open(dir)
	if err != nil {
		panic(err)
	}
	for r, err := range rr.Requests() {
		if err != nil {
			panic(err)
		}
		fmt.Printf("%d %d %q\n", r.RequestID, r.E2ENS, r.ErrorKind)
	}
	set, _ := rr.Settings()
	s, err := rr.Summarize(set.Info, set.Options)
	if err != nil {
		panic(err)
	}
	fmt.Println(s.RequestCount, s.ErrorRequestCount, s.Metrics["request_latency"].Avg)
	// Output:
	// 0 52000001 ""
	// 1 0 "timeout"
	// 1 1 52.000001
}
