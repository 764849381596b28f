package sweep

import (
	"bytes"
	"fmt"
	"strings"

	"github.com/apache/arrow/go/v17/arrow"
	"github.com/apache/arrow/go/v17/arrow/array"
	"github.com/apache/arrow/go/v17/arrow/memory"
	"github.com/apache/arrow/go/v17/parquet"
	"github.com/apache/arrow/go/v17/parquet/pqarrow"
)

// column is one column of sweep.parquet after the point and settings
// columns (docs/format/sweep.md).
type column struct {
	name string
	f64  func(r *Row) float64
	i64  func(r *Row) int64
	b    func(r *Row) bool
}

var columns = []column{
	{name: "runs", i64: func(r *Row) int64 { return int64(r.Runs) }},
	{name: "requests", i64: func(r *Row) int64 { return int64(r.Requests) }},
	{name: "errors", i64: func(r *Row) int64 { return int64(r.Errors) }},
	{name: "error_rate", f64: func(r *Row) float64 { return r.ErrorRate }},
	{name: "intended_rate", f64: func(r *Row) float64 { return r.IntendedRate }},
	{name: "sent_rate", f64: func(r *Row) float64 { return r.SentRate }},
	{name: "throughput", f64: func(r *Row) float64 { return r.Throughput }},
	{name: "output_throughput", f64: func(r *Row) float64 { return r.OutputThroughput }},
	{name: "goodput", f64: func(r *Row) float64 { return r.Goodput }},
	{name: "good", i64: func(r *Row) int64 { return int64(r.Good) }},
	{name: "good_fraction", f64: func(r *Row) float64 { return r.GoodFraction }},
	{name: "good_low", f64: func(r *Row) float64 { return r.GoodLow }},
	{name: "good_high", f64: func(r *Row) float64 { return r.GoodHigh }},
	{name: "slo_met", b: func(r *Row) bool { return r.SLOMet }},
	{name: "ttft_p50_ms", f64: func(r *Row) float64 { return r.TTFTP50 }},
	{name: "ttft_p99_ms", f64: func(r *Row) float64 { return r.TTFTP99 }},
	{name: "itl_p50_ms", f64: func(r *Row) float64 { return r.ITLP50 }},
	{name: "itl_p99_ms", f64: func(r *Row) float64 { return r.ITLP99 }},
	{name: "e2e_p50_ms", f64: func(r *Row) float64 { return r.E2EP50 }},
	{name: "e2e_p99_ms", f64: func(r *Row) float64 { return r.E2EP99 }},
	{name: "per_user_tps", f64: func(r *Row) float64 { return r.PerUserTPS }},
	{name: "lateness_p99_ms", f64: func(r *Row) float64 { return r.LatenessP99 }},
	{name: "total_isl", i64: func(r *Row) int64 { return r.TotalISL }},
	{name: "total_osl", i64: func(r *Row) int64 { return r.TotalOSL }},
	{name: "rate_ratio", f64: func(r *Row) float64 { return r.Saturation.RateRatio }},
	{name: "backlog_growth", f64: func(r *Row) float64 { return r.Saturation.BacklogGrowth }},
	{name: "ttft_first_quarter_ms", f64: func(r *Row) float64 { return r.Saturation.TTFTFirst }},
	{name: "ttft_last_quarter_ms", f64: func(r *Row) float64 { return r.Saturation.TTFTLast }},
	{name: "saturated", b: func(r *Row) bool { return r.Saturated }},
	{name: "graded", i64: func(r *Row) int64 { return int64(r.Graded) }},
	{name: "correct", i64: func(r *Row) int64 { return int64(r.Correct) }},
	{name: "accuracy", f64: func(r *Row) float64 { return r.Accuracy }},
	{name: "accuracy_low", f64: func(r *Row) float64 { return r.AccuracyLow }},
	{name: "accuracy_high", f64: func(r *Row) float64 { return r.AccuracyHigh }},
}

// settingColumn is the column of a swept setting: its name with
// underscores ("request_rate").
func settingColumn(name string) string { return strings.ReplaceAll(name, "-", "_") }

// writeParquet writes the rows as sweep.parquet: "point", one float64
// column per swept setting, then columns. The file carries
// schema_version in its metadata.
func writeParquet(path string, settings []string, rows []Row) error {
	fields := []arrow.Field{{Name: "point", Type: arrow.BinaryTypes.String}}
	for _, s := range settings {
		fields = append(fields, arrow.Field{Name: settingColumn(s), Type: arrow.PrimitiveTypes.Float64})
	}
	for _, c := range columns {
		t := arrow.DataType(arrow.PrimitiveTypes.Float64)
		switch {
		case c.i64 != nil:
			t = arrow.PrimitiveTypes.Int64
		case c.b != nil:
			t = arrow.FixedWidthTypes.Boolean
		}
		fields = append(fields, arrow.Field{Name: c.name, Type: t})
	}
	md := arrow.NewMetadata([]string{"reprise.sweep.schema_version"}, []string{SchemaVersion})
	schema := arrow.NewSchema(fields, &md)
	mem := memory.DefaultAllocator
	b := array.NewRecordBuilder(mem, schema)
	defer b.Release()
	for i := range rows {
		r := &rows[i]
		b.Field(0).(*array.StringBuilder).Append(r.Point)
		for j, s := range settings {
			b.Field(1 + j).(*array.Float64Builder).Append(r.Settings[s])
		}
		for j, c := range columns {
			f := b.Field(1 + len(settings) + j)
			switch {
			case c.i64 != nil:
				f.(*array.Int64Builder).Append(c.i64(r))
			case c.b != nil:
				f.(*array.BooleanBuilder).Append(c.b(r))
			default:
				f.(*array.Float64Builder).Append(c.f64(r))
			}
		}
	}
	rec := b.NewRecord()
	defer rec.Release()
	var buf bytes.Buffer
	fw, err := pqarrow.NewFileWriter(schema, &buf, parquet.NewWriterProperties(parquet.WithAllocator(mem)),
		pqarrow.NewArrowWriterProperties(pqarrow.WithStoreSchema()))
	if err != nil {
		return fmt.Errorf("write %s: %w", path, err)
	}
	if err := fw.Write(rec); err != nil {
		fw.Close()
		return fmt.Errorf("write %s: %w", path, err)
	}
	if err := fw.Close(); err != nil {
		return fmt.Errorf("write %s: %w", path, err)
	}
	return writeFileAtomic(path, buf.Bytes())
}
