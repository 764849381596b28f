package arrowio

import (
	"bytes"
	"context"
	"fmt"
	"math"
	"strings"
	"testing"

	"github.com/apache/arrow/go/v17/arrow/array"
	"github.com/apache/arrow/go/v17/arrow/memory"
	"github.com/apache/arrow/go/v17/parquet/pqarrow"

	"github.com/reprise-bench/reprise/engine/record"
)

// smSamples are three scrapes of one target around a window starting at
// 10: a baseline at 5 (counter a=10, gauge g=1, histogram h), a failed
// scrape at 12 (reprise's own series only), and one at 20 with counter b
// created since the baseline, a summary and an _info gauge.
func smSamples() []record.MetricSample {
	const tg = "http://srv/metrics"
	nan := math.NaN()
	s := func(t int64, metric, typ, labels, part string, bound, v float64) record.MetricSample {
		return record.MetricSample{TimeNS: t, Target: tg, Metric: metric, Type: typ, Labels: labels, Part: part, Bound: bound, Value: v}
	}
	hist := func(t int64, n, sum float64) []record.MetricSample {
		return []record.MetricSample{s(t, "h", "histogram", `m="x"`, "bucket", 0.1, n/2), s(t, "h", "histogram", `m="x"`, "bucket", math.Inf(1), n),
			s(t, "h", "histogram", `m="x"`, "sum", nan, sum), s(t, "h", "histogram", `m="x"`, "count", nan, n)}
	}
	out := []record.MetricSample{s(5, "a", "counter", `m="x"`, "", nan, 10), s(5, "g", "gauge", "", "", nan, 1)}
	out = append(out, hist(5, 2, 0.2)...)
	out = append(out, s(5, "reprise:scrape_up", "gauge", "", "", nan, 1), s(5, "reprise:scrape_duration_seconds", "gauge", "", "", nan, 0.002))
	out = append(out, s(12, "reprise:scrape_up", "gauge", "", "", nan, 0))
	out = append(out, s(20, "a", "counter", `m="x"`, "", nan, 12), s(20, "b", "counter", `m="y"`, "", nan, 5), s(20, "g", "gauge", "", "", nan, 3),
		s(20, "rpc", "summary", "", "quantile", 0.5, 1), s(20, "build_info", "gauge", `version="1"`, "", nan, 1))
	out = append(out, hist(20, 6, 0.9)...)
	return append(out, s(20, "reprise:scrape_up", "gauge", "", "", nan, 1))
}

// TestServerMetricsParquet reads the Parquet export back with arrow:
// rows from the window's start, counters and histograms as increases
// from the baseline (a counter created since it from 0), a label column
// per label name, no summary, _info or reprise series.
func TestServerMetricsParquet(t *testing.T) {
	b, err := serverMetricsParquet(smSamples(), 10)
	if err != nil {
		t.Fatal(err)
	}
	tbl, err := pqarrow.ReadTable(context.Background(), bytes.NewReader(b), nil, pqarrow.ArrowReadProperties{}, memory.DefaultAllocator)
	if err != nil {
		t.Fatal(err)
	}
	defer tbl.Release()
	var cols []string
	for _, f := range tbl.Schema().Fields() {
		cols = append(cols, f.Name)
	}
	if got, want := strings.Join(cols, ","), "endpoint_url,metric_name,metric_type,unit,description,timestamp_ns,m,value,sum,count,bucket_le,bucket_count"; got != want {
		t.Errorf("columns %s, want %s", got, want)
	}
	rd := array.NewTableReader(tbl, -1)
	defer rd.Release()
	var rows []string
	for rd.Next() {
		rec := rd.Record()
		cell := func(c, i int) string {
			switch a := rec.Column(c).(type) {
			case *array.String:
				if a.IsNull(i) {
					return "-"
				}
				return a.Value(i)
			case *array.Float64:
				if a.IsNull(i) {
					return "-"
				}
				return fmt.Sprint(a.Value(i))
			case *array.Int64:
				return fmt.Sprint(a.Value(i))
			}
			return "?"
		}
		for i := 0; i < int(rec.NumRows()); i++ {
			var r []string
			for _, c := range []int{1, 2, 5, 6, 7, 8, 9, 10, 11} {
				r = append(r, cell(c, i))
			}
			rows = append(rows, strings.Join(r, " "))
		}
	}
	want := []string{
		"a counter 20 x 2 - - - -",
		"b counter 20 y 5 - - - -",
		"g gauge 20 - 3 - - - -",
		"h histogram 20 x - 0.7 4 0.1 2",
		"h histogram 20 x - 0.7 4 +Inf 4",
	}
	if got := strings.Join(rows, "\n"); got != strings.Join(want, "\n") {
		t.Errorf("rows\n%s\nwant\n%s", got, strings.Join(want, "\n"))
	}
}

// TestServerMetricsJSONL: one line per successful scrape, with its
// latency; the failed scrape has none; summaries, _info and reprise's own
// series are left out.
func TestServerMetricsJSONL(t *testing.T) {
	b, err := serverMetricsJSONL(smSamples())
	if err != nil {
		t.Fatal(err)
	}
	want := `{"endpoint_url":"http://srv/metrics","timestamp_ns":5,"endpoint_latency_ns":2000000,"metrics":{"a":[{"labels":{"m":"x"},"value":10}],"g":[{"value":1}],"h":[{"labels":{"m":"x"},"buckets":{"0.1":1,"+Inf":2},"sum":0.2,"count":2}]}}
{"endpoint_url":"http://srv/metrics","timestamp_ns":20,"endpoint_latency_ns":0,"metrics":{"a":[{"labels":{"m":"x"},"value":12}],"b":[{"labels":{"m":"y"},"value":5}],"g":[{"value":3}],"h":[{"labels":{"m":"x"},"buckets":{"0.1":3,"+Inf":6},"sum":0.9,"count":6}]}}
`
	if string(b) != want {
		t.Errorf("got\n%s\nwant\n%s", b, want)
	}
}
