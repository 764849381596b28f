package arrowio

import (
	"bytes"
	"encoding/csv"
	"encoding/json"
	"errors"
	"fmt"
	"maps"
	"os"
	"path/filepath"
	"slices"
	"strconv"
	"strings"
	"time"

	"github.com/reprise-bench/reprise/engine/record"
	"github.com/reprise-bench/reprise/engine/summary"
)

// AIPerf's server_metrics_export files (docs/format/telemetry.md).
const (
	ServerMetricsExportJSON    = "server_metrics_export.json"
	ServerMetricsExportCSV     = "server_metrics_export.csv"
	ServerMetricsExportJSONL   = "server_metrics_export.jsonl"
	ServerMetricsExportParquet = "server_metrics_export.parquet"
	// ServerMetricsExportVersion is the schema_version of the files,
	// AIPerf's.
	ServerMetricsExportVersion = "1.0"
)

// ServerMetricsFormats are the formats of the server_metrics_export
// files, as AIPerf's --server-metrics-formats names them.
var ServerMetricsFormats = []string{"json", "csv", "jsonl", "parquet"}

// The statistics of each metric type in AIPerf's order (its CSV columns).
var (
	gaugeStatKeys     = []string{"avg", "min", "max", "std", "p1", "p5", "p10", "p25", "p50", "p75", "p90", "p95", "p99"}
	counterStatKeys   = []string{"total", "rate", "rate_avg", "rate_min", "rate_max", "rate_std"}
	histogramStatKeys = []string{"count", "count_rate", "sum", "sum_rate", "avg", "p1_estimate", "p5_estimate",
		"p10_estimate", "p25_estimate", "p50_estimate", "p75_estimate", "p90_estimate", "p95_estimate", "p99_estimate"}
)

// ServerMetricsExport is what the server_metrics_export files are made of.
type ServerMetricsExport struct {
	// Summary is the run's: its start and end, and its telemetry's
	// servers (the endpoints scraped, and whether any scrape succeeded).
	Summary *summary.Summary
	// Series are the statistics of every series over the window
	// (telemetry.SeriesStats), for json and csv.
	Series []summary.MetricSeries
	// Samples are the server_metrics table's rows, for jsonl and parquet.
	Samples []record.MetricSample
}

// WriteServerMetricsExport writes AIPerf's server_metrics_export files of
// formats (ServerMetricsFormats) to the run directory dir, each
// atomically. The statistics are e.Series', only renamed and laid out as
// AIPerf does; nothing is computed here but the per-scrape layout of the
// samples.
func WriteServerMetricsExport(dir string, formats []string, e *ServerMetricsExport) error {
	var errs []error
	for _, f := range formats {
		var name string
		var b []byte
		var err error
		switch f {
		case "json":
			name = ServerMetricsExportJSON
			b, err = serverMetricsJSON(dir, e)
		case "csv":
			name = ServerMetricsExportCSV
			b, err = serverMetricsCSV(e)
		case "jsonl":
			name = ServerMetricsExportJSONL
			b, err = serverMetricsJSONL(e.Samples)
		case "parquet":
			name = ServerMetricsExportParquet
			b, err = serverMetricsParquet(e.Samples, e.Summary.WindowStartNS)
		default:
			errs = append(errs, fmt.Errorf("server metrics format %q: want json, csv, jsonl or parquet", f))
			continue
		}
		if err != nil {
			errs = append(errs, fmt.Errorf("encode %s: %w", name, err))
			continue
		}
		errs = append(errs, writeFileAtomic(filepath.Join(dir, name), b))
	}
	return errors.Join(errs...)
}

type smSeries struct {
	EndpointURL string             `json:"endpoint_url"`
	Labels      map[string]string  `json:"labels,omitempty"`
	Stats       map[string]float64 `json:"stats"`
	Buckets     orderedCounts      `json:"buckets,omitempty"`
}

type smMetric struct {
	Type        string     `json:"type"`
	Description string     `json:"description"`
	Series      []smSeries `json:"series"`
}

// serverMetricsJSON is server_metrics_export.json: AIPerf's hybrid layout,
// metrics keyed by name, each with its series' stats.
func serverMetricsJSON(dir string, e *ServerMetricsExport) ([]byte, error) {
	s := e.Summary
	configured, successful := []string{}, []string{}
	if s.Telemetry != nil {
		for _, sv := range s.Telemetry.Servers {
			configured = append(configured, sv.Target)
			if sv.Scrapes > sv.Failed {
				successful = append(successful, sv.Target)
			}
		}
	}
	metrics := map[string]*smMetric{}
	for _, ms := range e.Series {
		m := metrics[ms.Metric]
		if m == nil {
			m = &smMetric{Type: ms.Type}
			metrics[ms.Metric] = m
		}
		m.Series = append(m.Series, smSeries{EndpointURL: ms.Target, Labels: ms.Labels, Stats: ms.Stats, Buckets: ms.Buckets})
	}
	manifest, err := readRunFile(filepath.Join(dir, ManifestFile), MaxJSONFileBytes)
	switch {
	case errors.Is(err, os.ErrNotExist):
		manifest = []byte("{}")
	case err != nil:
		return nil, err
	case !json.Valid(manifest):
		return nil, fmt.Errorf("%s is not valid JSON", filepath.Join(dir, ManifestFile))
	}
	out := map[string]any{
		"schema_version": ServerMetricsExportVersion,
		"aiperf_version": "reprise",
		"benchmark_id":   aiperfBenchmarkID(s),
		"summary": map[string]any{
			"endpoints_configured": configured,
			"endpoints_successful": successful,
			"start_time":           s.Run.Start.UTC().Format(time.RFC3339Nano),
			"end_time":             s.Run.End.UTC().Format(time.RFC3339Nano),
		},
		"metrics":      metrics,
		"input_config": json.RawMessage(manifest),
	}
	b, err := json.MarshalIndent(out, "", "  ")
	if err != nil {
		return nil, err
	}
	return append(b, '\n'), nil
}

// endpointDisplay is AIPerf's display name of a scrape URL: host:port and
// the path without /metrics.
func endpointDisplay(u string) string {
	rest := u
	if _, after, ok := strings.Cut(u, "://"); ok {
		rest = after
	}
	return strings.TrimSuffix(rest, "/metrics")
}

// serverMetricsCSV is server_metrics_export.csv: comment lines, then a
// section per type (gauge, counter, histogram) with its statistics and a
// column per label, then the _info gauges transposed (one row per label).
// Numbers are %.4f, counts (a histogram's count and buckets) integers.
func serverMetricsCSV(e *ServerMetricsExport) ([]byte, error) {
	var buf bytes.Buffer
	fmt.Fprintf(&buf, "# AIPerf Server Metrics Export (CSV)\n# aiperf_version: reprise\n# schema_version: %s\n# benchmark_id: %s\n"+
		"# Note: Same benchmark_id and version appear in JSON and Parquet exports\n#\n",
		ServerMetricsExportVersion, aiperfBenchmarkID(e.Summary))
	w := csv.NewWriter(&buf)
	byType := map[string][]summary.MetricSeries{}
	var info []summary.MetricSeries
	for _, ms := range e.Series {
		if ms.Type == "gauge" && strings.HasSuffix(ms.Metric, "_info") {
			info = append(info, ms)
			continue
		}
		byType[ms.Type] = append(byType[ms.Type], ms)
	}
	first := true
	for _, t := range []struct {
		typ  string
		keys []string
	}{{"gauge", gaugeStatKeys}, {"counter", counterStatKeys}, {"histogram", histogramStatKeys}} {
		if len(byType[t.typ]) == 0 {
			continue
		}
		if !first {
			w.Write(nil)
		}
		first = false
		csvSection(w, t.typ, t.keys, byType[t.typ])
	}
	if len(info) > 0 {
		if !first {
			w.Write(nil)
		}
		w.Write([]string{"Endpoint", "Metric", "Key", "Value", "Description"})
		slices.SortStableFunc(info, func(a, b summary.MetricSeries) int {
			return strings.Compare(a.Metric+"\x00"+endpointDisplay(a.Target), b.Metric+"\x00"+endpointDisplay(b.Target))
		})
		for _, ms := range info {
			for _, k := range slices.Sorted(maps.Keys(ms.Labels)) {
				w.Write([]string{endpointDisplay(ms.Target), ms.Metric, k, ms.Labels[k], ""})
			}
		}
	}
	w.Flush()
	return buf.Bytes(), w.Error()
}

func csvSection(w *csv.Writer, typ string, keys []string, series []summary.MetricSeries) {
	labelCols := labelOrder(series)
	header := append(append(append([]string{"Endpoint", "Type", "Metric", "Unit"}, keys...), labelCols...), "Description")
	if typ == "histogram" {
		header = append(header, "buckets")
	}
	w.Write(header)
	pattern := func(ms summary.MetricSeries) string {
		var b strings.Builder
		for _, c := range labelCols {
			if _, ok := ms.Labels[c]; ok {
				b.WriteByte('1')
			} else {
				b.WriteByte('0')
			}
		}
		return b.String()
	}
	rows := slices.Clone(series)
	slices.SortStableFunc(rows, func(a, b summary.MetricSeries) int {
		ka := []string{pattern(a), a.Metric, endpointDisplay(a.Target), labelString(a.Labels)}
		kb := []string{pattern(b), b.Metric, endpointDisplay(b.Target), labelString(b.Labels)}
		return slices.Compare(ka, kb)
	})
	for _, ms := range rows {
		row := []string{endpointDisplay(ms.Target), typ, ms.Metric, ""}
		for _, k := range keys {
			v, ok := ms.Stats[k]
			switch {
			case !ok:
				row = append(row, "")
			case typ == "histogram" && k == "count":
				row = append(row, strconv.FormatFloat(v, 'f', 0, 64))
			default:
				row = append(row, strconv.FormatFloat(v, 'f', 4, 64))
			}
		}
		for _, c := range labelCols {
			row = append(row, ms.Labels[c])
		}
		row = append(row, "")
		if typ == "histogram" {
			var bs []string
			for _, b := range ms.Buckets {
				bs = append(bs, boundKey(b.LE)+"="+strconv.FormatFloat(b.Count, 'f', 0, 64))
			}
			row = append(row, strings.Join(bs, ";"))
		}
		w.Write(row)
	}
}

// labelOrder is AIPerf's order of a section's label columns: labels that
// occur together form a family (families ordered by their smallest
// label); in each, the labels of one label set only come first, then
// those several label sets share, each group sorted.
func labelOrder(series []summary.MetricSeries) []string {
	parent := map[string]string{}
	var find func(string) string
	find = func(x string) string {
		p, ok := parent[x]
		if !ok {
			parent[x] = x
			return x
		}
		if p == x {
			return x
		}
		return find(p)
	}
	uses := map[string]int{}
	for _, ms := range series {
		ls := slices.Sorted(maps.Keys(ms.Labels))
		for _, l := range ls {
			find(l)
			uses[l]++
		}
		for i := 1; i < len(ls); i++ {
			parent[find(ls[i])] = find(ls[i-1])
		}
	}
	families := map[string][]string{}
	for l := range uses {
		families[find(l)] = append(families[find(l)], l)
	}
	fams := make([][]string, 0, len(families))
	for _, f := range families {
		slices.Sort(f)
		fams = append(fams, f)
	}
	slices.SortFunc(fams, func(a, b []string) int { return strings.Compare(a[0], b[0]) })
	var out []string
	for _, f := range fams {
		for _, l := range f {
			if uses[l] == 1 {
				out = append(out, l)
			}
		}
		for _, l := range f {
			if uses[l] > 1 {
				out = append(out, l)
			}
		}
	}
	return out
}

func labelString(m map[string]string) string {
	var b strings.Builder
	for _, k := range slices.Sorted(maps.Keys(m)) {
		fmt.Fprintf(&b, "%s=%q,", k, m[k])
	}
	return b.String()
}
