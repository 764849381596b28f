package arrowio_test

import (
	"fmt"
	"os"

	"github.com/apache/arrow/go/v17/arrow"
	"github.com/apache/arrow/go/v17/arrow/array"
	"github.com/apache/arrow/go/v17/arrow/memory"

	"github.com/reprise-bench/reprise/arrowio"
	"github.com/reprise-bench/reprise/engine/record"
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

// The engine's sink: batches go to a writer goroutine; Close completes the
// files; ReadRequests reads them back.
func ExampleRunWriter() {
	dir, _ := os.MkdirTemp("", "run")
	defer os.RemoveAll(dir)

	cfg := arrowio.NewConfig()
	cfg.Block = true // wait for queue space instead of dropping (and counting) batches
	w, err := arrowio.NewRunWriter(dir, cfg)
	if err != nil {
		panic(err)
	}
	batch := []record.Request{
		{RequestID: 0, TraceRow: 0, SentNS: 1_763_700_000_000_000_001, TTFTNS: 52_000_001,
			ServerPromptTokens: -1, ServerCompletionTokens: -1, ServerReasoningTokens: -1, ServerCachedTokens: -1, ExpectedCachedTokens: -1},
		{RequestID: 1, TraceRow: 1, ErrorKind: record.ErrTimeout, ErrorMessage: "timeout after 60s",
			ServerPromptTokens: -1, ServerCompletionTokens: -1, ServerReasoningTokens: -1, ServerCachedTokens: -1, ExpectedCachedTokens: -1},
	}
	if err := w.WriteRequests(batch); err != nil { // w owns batch now
		panic(err)
	}
	if err := w.Close(); err != nil {
		panic(err)
	}
	reqs, err := arrowio.ReadRequests(dir)
	fmt.Println(len(reqs), reqs[0].TTFTNS, reqs[1].ErrorKind, w.Stats().Files, w.Dropped(), err)
	// Output: 2 52000001 timeout 1 0 <nil>
}
