package arrowio

import (
	"bytes"
	"encoding/json"
	"math"
	"slices"
	"strconv"
	"strings"

	"github.com/apache/arrow/go/v17/arrow"
	"github.com/apache/arrow/go/v17/arrow/array"
	"github.com/apache/arrow/go/v17/arrow/memory"
	"github.com/apache/arrow/go/v17/parquet/pqarrow"

	"github.com/reprise-bench/reprise/engine/record"
	"github.com/reprise-bench/reprise/engine/summary"
)

// The series of reprise's own the scraper adds to every scrape
// (internal/telemetry): left out of the exports, but for the latency.
const (
	ownSeriesPrefix   = "reprise:"
	ownScrapeDuration = "reprise:scrape_duration_seconds"
)

// orderedCounts is a JSON object of bucket bounds to counts in bound
// order (as AIPerf writes them), not sorted by key.
type orderedCounts []summary.BucketCount

func (o orderedCounts) MarshalJSON() ([]byte, error) {
	var b bytes.Buffer
	b.WriteByte('{')
	for i, c := range o {
		if i > 0 {
			b.WriteByte(',')
		}
		k, _ := json.Marshal(boundKey(c.LE))
		b.Write(k)
		b.WriteByte(':')
		b.WriteString(strconv.FormatFloat(c.Count, 'f', -1, 64))
	}
	b.WriteByte('}')
	return b.Bytes(), nil
}

// boundKey is a bucket bound as Prometheus writes le: "0.005", "+Inf".
func boundKey(le float64) string {
	if math.IsInf(le, 1) {
		return "+Inf"
	}
	return strconv.FormatFloat(le, 'g', -1, 64)
}

// scrapes calls f with each scrape of samples: each run of consecutive
// samples with one target and one time, as the scraper wrote them.
func scrapes(samples []record.MetricSample, f func([]record.MetricSample)) {
	for start := 0; start < len(samples); {
		end := start + 1
		for end < len(samples) && samples[end].Target == samples[start].Target && samples[end].TimeNS == samples[start].TimeNS {
			end++
		}
		f(samples[start:end])
		start = end
	}
}

// exported reports whether s is in the time-series exports: a page's
// sample, not reprise's own, not a summary's, not an _info gauge's.
func exported(s *record.MetricSample) bool {
	return !strings.HasPrefix(s.Metric, ownSeriesPrefix) && s.Type != "summary" && !strings.HasSuffix(s.Metric, "_info")
}

type jsonlSample struct {
	Labels  map[string]string `json:"labels,omitempty"`
	Value   *float64          `json:"value,omitempty"`
	Buckets orderedCounts     `json:"buckets,omitempty"`
	Sum     *float64          `json:"sum,omitempty"`
	Count   *float64          `json:"count,omitempty"`
}

type jsonlFamily struct {
	name    string
	samples []*jsonlSample
}

// jsonlMetrics is a record's metrics object, families in page order.
type jsonlMetrics []*jsonlFamily

func (m jsonlMetrics) MarshalJSON() ([]byte, error) {
	var b bytes.Buffer
	b.WriteByte('{')
	for i, f := range m {
		if i > 0 {
			b.WriteByte(',')
		}
		k, _ := json.Marshal(f.name)
		v, err := json.Marshal(f.samples)
		if err != nil {
			return nil, err
		}
		b.Write(k)
		b.WriteByte(':')
		b.Write(v)
	}
	b.WriteByte('}')
	return b.Bytes(), nil
}

type jsonlRecord struct {
	EndpointURL       string       `json:"endpoint_url"`
	TimestampNS       int64        `json:"timestamp_ns"`
	EndpointLatencyNS int64        `json:"endpoint_latency_ns"`
	Metrics           jsonlMetrics `json:"metrics"`
}

// serverMetricsJSONL is server_metrics_export.jsonl: one line per
// successful scrape (AIPerf's slim record), every family's samples as the
// page had them (histograms with their cumulative buckets, sum and
// count); a failed scrape has no line.
func serverMetricsJSONL(samples []record.MetricSample) ([]byte, error) {
	var buf bytes.Buffer
	enc := json.NewEncoder(&buf)
	var err error
	scrapes(samples, func(sc []record.MetricSample) {
		rec := jsonlRecord{EndpointURL: sc[0].Target, TimestampNS: sc[0].TimeNS, Metrics: jsonlMetrics{}}
		fams := map[string]*jsonlFamily{}
		series := map[[2]string]*jsonlSample{}
		for i := range sc {
			s := &sc[i]
			if s.Metric == ownScrapeDuration {
				rec.EndpointLatencyNS = int64(math.Round(s.Value * 1e9))
			}
			if !exported(s) {
				continue
			}
			f := fams[s.Metric]
			if f == nil {
				f = &jsonlFamily{name: s.Metric}
				fams[s.Metric] = f
				rec.Metrics = append(rec.Metrics, f)
			}
			key := [2]string{s.Metric, s.Labels}
			js := series[key]
			if js == nil {
				js = &jsonlSample{Labels: record.LabelMap(s.Labels)}
				series[key] = js
				f.samples = append(f.samples, js)
			}
			v := s.Value
			switch s.Part {
			case "bucket":
				js.Buckets = append(js.Buckets, summary.BucketCount{LE: s.Bound, Count: v})
			case "sum":
				js.Sum = &v
			case "count":
				js.Count = &v
			default:
				js.Value = &v
			}
		}
		if len(rec.Metrics) > 0 && err == nil {
			err = enc.Encode(rec)
		}
	})
	return buf.Bytes(), err
}

// smRow is one row of server_metrics_export.parquet.
type smRow struct {
	target, metric, typ string
	timeNS              int64
	labels              map[string]string
	value, sum, count   *float64
	le                  string
	bucketCount         *float64
}

// serverMetricsParquet is server_metrics_export.parquet: AIPerf's
// normalized rows from the window's start on (startNS, the first send):
// a gauge's value; a counter's increase since its reference (its value at
// the last scrape at or before startNS; 0 for a series that scrape
// lacked, as the summary counts it; its first value when the target has
// no page before startNS; never below 0); a histogram's one row per bucket, with the increases of
// the bucket, the sum and the count. One nullable string column per label
// name.
func serverMetricsParquet(samples []record.MetricSample, startNS int64) ([]byte, error) {
	ref := map[string]float64{}
	baseline := map[string]bool{} // targets with a page scraped at or before startNS
	delta := func(s *record.MetricSample) float64 {
		key := s.Target + "\x00" + s.Metric + "\x00" + s.Labels + "\x00" + s.Part + "\x00" + boundKey(s.Bound)
		r, ok := ref[key]
		switch {
		case s.TimeNS <= startNS:
			ref[key], r = s.Value, s.Value
		case !ok && baseline[s.Target]:
			ref[key], r = 0, 0 // absent from the baseline: created since, from 0
		case !ok:
			ref[key], r = s.Value, s.Value
		}
		return max(s.Value-r, 0)
	}
	var rows []smRow
	labelNames := map[string]bool{}
	scrapes(samples, func(sc []record.MetricSample) {
		if sc[0].TimeNS <= startNS && slices.ContainsFunc(sc, func(s record.MetricSample) bool { return !strings.HasPrefix(s.Metric, ownSeriesPrefix) }) {
			baseline[sc[0].Target] = true
		}
		// A histogram's bucket rows get its sum and count once the
		// scrape's parts are all read.
		type hist struct {
			sum, count *float64
			buckets    []smRow
		}
		hists := map[string]*hist{}
		var order []*hist
		for i := range sc {
			s := &sc[i]
			if !exported(s) {
				continue
			}
			v := s.Value
			if s.Type == "counter" || s.Type == "histogram" {
				v = delta(s)
			}
			if s.TimeNS < startNS {
				continue
			}
			row := smRow{target: s.Target, metric: s.Metric, typ: s.Type, timeNS: s.TimeNS, labels: record.LabelMap(s.Labels)}
			for k := range row.labels {
				labelNames[k] = true
			}
			if s.Type != "histogram" {
				if row.typ != "counter" {
					row.typ = "gauge"
				}
				row.value = &v
				rows = append(rows, row)
				continue
			}
			h := hists[s.Metric+"\x00"+s.Labels]
			if h == nil {
				h = &hist{}
				hists[s.Metric+"\x00"+s.Labels] = h
				order = append(order, h)
			}
			switch s.Part {
			case "sum":
				h.sum = &v
			case "count":
				h.count = &v
			case "bucket":
				row.le, row.bucketCount = boundKey(s.Bound), &v
				h.buckets = append(h.buckets, row)
			}
		}
		for _, h := range order {
			for _, r := range h.buckets {
				r.sum, r.count = h.sum, h.count
				rows = append(rows, r)
			}
		}
	})
	return parquetRows(rows, slices.Sorted(func(yield func(string) bool) {
		for k := range labelNames {
			if !yield(k) {
				return
			}
		}
	}))
}

func parquetRows(rows []smRow, labels []string) ([]byte, error) {
	str := func(n string) arrow.Field {
		return arrow.Field{Name: n, Type: arrow.BinaryTypes.String, Nullable: true}
	}
	f64 := func(n string) arrow.Field {
		return arrow.Field{Name: n, Type: arrow.PrimitiveTypes.Float64, Nullable: true}
	}
	fields := []arrow.Field{str("endpoint_url"), str("metric_name"), str("metric_type"), str("unit"), str("description"),
		{Name: "timestamp_ns", Type: arrow.PrimitiveTypes.Int64}}
	for _, l := range labels {
		fields = append(fields, str(l))
	}
	fields = append(fields, f64("value"), f64("sum"), f64("count"), str("bucket_le"), f64("bucket_count"))
	schema := arrow.NewSchema(fields, nil)
	b := array.NewRecordBuilder(memory.DefaultAllocator, schema)
	defer b.Release()
	appendStr := func(i int, v string, ok bool) {
		sb := b.Field(i).(*array.StringBuilder)
		if ok {
			sb.Append(v)
		} else {
			sb.AppendNull()
		}
	}
	appendF := func(i int, v *float64) {
		fb := b.Field(i).(*array.Float64Builder)
		if v != nil {
			fb.Append(*v)
		} else {
			fb.AppendNull()
		}
	}
	for _, r := range rows {
		appendStr(0, r.target, true)
		appendStr(1, r.metric, true)
		appendStr(2, r.typ, true)
		appendStr(3, "", false)
		appendStr(4, "", false)
		b.Field(5).(*array.Int64Builder).Append(r.timeNS)
		for j, l := range labels {
			v, ok := r.labels[l]
			appendStr(6+j, v, ok)
		}
		n := 6 + len(labels)
		appendF(n, r.value)
		appendF(n+1, r.sum)
		appendF(n+2, r.count)
		appendStr(n+3, r.le, r.le != "")
		appendF(n+4, r.bucketCount)
	}
	rec := b.NewRecord()
	defer rec.Release()
	tbl := array.NewTableFromRecords(schema, []arrow.Record{rec})
	defer tbl.Release()
	var buf bytes.Buffer
	if err := pqarrow.WriteTable(tbl, &buf, max(1, tbl.NumRows()), nil, pqarrow.DefaultWriterProps()); err != nil {
		return nil, err
	}
	return buf.Bytes(), nil
}
