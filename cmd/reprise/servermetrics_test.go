package main

import (
	"bufio"
	"bytes"
	"context"
	"encoding/csv"
	"encoding/json"
	"fmt"
	"math"
	"os"
	"path/filepath"
	"slices"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/apache/arrow/go/v17/arrow/array"
	"github.com/apache/arrow/go/v17/arrow/memory"
	"github.com/apache/arrow/go/v17/parquet/pqarrow"

	"github.com/reprise-bench/reprise/arrowio"
	"github.com/reprise-bench/reprise/internal/mockserver"
)

// smExport is server_metrics_export.json as the test reads it.
type smExport struct {
	SchemaVersion string `json:"schema_version"`
	Summary       struct {
		Configured []string `json:"endpoints_configured"`
		Successful []string `json:"endpoints_successful"`
	} `json:"summary"`
	Metrics map[string]struct {
		Type   string `json:"type"`
		Series []struct {
			EndpointURL string             `json:"endpoint_url"`
			Labels      map[string]string  `json:"labels"`
			Stats       map[string]float64 `json:"stats"`
			Buckets     map[string]float64 `json:"buckets"`
		} `json:"series"`
	} `json:"metrics"`
}

// stat is the statistic of metric's series with labels want (a subset).
func (e *smExport) stat(t *testing.T, metric, name string, want map[string]string) float64 {
	t.Helper()
	for _, s := range e.Metrics[metric].Series {
		match := true
		for k, v := range want {
			match = match && s.Labels[k] == v
		}
		if v, ok := s.Stats[name]; match && ok {
			return v
		}
	}
	t.Fatalf("%s: no series %v with %s", metric, want, name)
	return 0
}

func near(a, b float64) bool { return math.Abs(a-b) <= 1e-9*max(1, math.Abs(a), math.Abs(b)) }

// TestProfileServerMetricsExport runs profile against the mock server
// with every --server-metrics-formats: the files' layouts are AIPerf's
// (golden: key names, sections, columns), their numbers are summary.json's
// telemetry and the mock server's oracle log (prompt and output tokens,
// requests), the JSON Lines file has one line per successful scrape, and
// the Parquet file's counters end at the run's totals.
func TestProfileServerMetricsExport(t *testing.T) {
	// About 200 ms of load: scrapes every 20 ms see the gauges inside the window.
	srv := startMockServer(t, func(c *mockserver.Config) { c.TTFT, c.ITL = 20*time.Millisecond, 2*time.Millisecond })
	out := filepath.Join(t.TempDir(), "run")
	code, _, stderr := runCLI(t, "", "profile", "-m", mockserver.DefaultModel, "--url", srv.URL(), "--streaming",
		"--isl", "16", "--osl", "8", "--concurrency", "4", "--request-count", "24", "--metrics-interval", "20ms",
		"--server-metrics-formats", "json,csv", "--server-metrics-formats", "jsonl", "--server-metrics-formats", "parquet",
		"--artifact-dir", out, "--quiet")
	if code != 0 {
		t.Fatalf("exit %d: %s", code, stderr)
	}
	var sum struct {
		Telemetry struct {
			Servers []struct {
				Server struct {
					Target           string                      `json:"target"`
					Scrapes          int                         `json:"scrapes"`
					Failed           int                         `json:"failed_scrapes"`
					PromptTokens     float64                     `json:"prompt_tokens"`
					GenerationTokens float64                     `json:"generation_tokens"`
					Requests         float64                     `json:"requests"`
					PromptPerSec     float64                     `json:"prompt_tokens_per_second"`
					Running          struct{ Mean, Max float64 } `json:"running_requests"`
					TTFT             struct {
						Count  float64 `json:"count"`
						MeanMS float64 `json:"mean_ms"`
						P50MS  float64 `json:"p50_ms"`
						P99MS  float64 `json:"p99_ms"`
					} `json:"time_to_first_token"`
				} `json:"server"`
			} `json:"servers"`
		} `json:"telemetry"`
	}
	readJSON(t, filepath.Join(out, "summary.json"), &sum)
	if len(sum.Telemetry.Servers) != 1 {
		t.Fatalf("%d servers in summary.json, want 1", len(sum.Telemetry.Servers))
	}
	sv := sum.Telemetry.Servers[0].Server
	var prompt, output float64
	for _, l := range srv.Log() {
		prompt += float64(l.PromptTokens)
		output += float64(l.OutputTokens)
	}
	var structure strings.Builder

	var e smExport
	readJSON(t, filepath.Join(out, arrowio.ServerMetricsExportJSON), &e)
	fmt.Fprintf(&structure, "== json\n%s\n", jsonShape(t, filepath.Join(out, arrowio.ServerMetricsExportJSON)))
	if e.SchemaVersion != arrowio.ServerMetricsExportVersion || !slices.Equal(e.Summary.Configured, []string{sv.Target}) ||
		!slices.Equal(e.Summary.Successful, []string{sv.Target}) {
		t.Errorf("header: schema %q, endpoints %v and %v; want %s and [%s]", e.SchemaVersion, e.Summary.Configured, e.Summary.Successful,
			arrowio.ServerMetricsExportVersion, sv.Target)
	}
	for _, c := range []struct {
		metric, stat string
		labels       map[string]string
		want         float64
	}{
		{"vllm:prompt_tokens_total", "total", nil, sv.PromptTokens},
		{"vllm:prompt_tokens_total", "total", nil, prompt},
		{"vllm:prompt_tokens_total", "rate", nil, sv.PromptPerSec},
		{"vllm:generation_tokens_total", "total", nil, sv.GenerationTokens},
		{"vllm:generation_tokens_total", "total", nil, output},
		{"vllm:request_success_total", "total", map[string]string{"finish_reason": "length"}, sv.Requests},
		{"vllm:request_success_total", "total", map[string]string{"finish_reason": "length"}, float64(len(srv.Log()))},
		{"vllm:num_requests_running", "avg", nil, sv.Running.Mean},
		{"vllm:num_requests_running", "max", nil, sv.Running.Max},
		{"vllm:time_to_first_token_seconds", "count", nil, sv.TTFT.Count},
		{"vllm:time_to_first_token_seconds", "avg", nil, sv.TTFT.MeanMS / 1e3},
		{"vllm:time_to_first_token_seconds", "p50_estimate", nil, sv.TTFT.P50MS / 1e3},
		{"vllm:time_to_first_token_seconds", "p99_estimate", nil, sv.TTFT.P99MS / 1e3},
	} {
		if got := e.stat(t, c.metric, c.stat, c.labels); !near(got, c.want) {
			t.Errorf("json %s %v %s = %v, want %v", c.metric, c.labels, c.stat, got, c.want)
		}
	}
	if got := e.Metrics["vllm:time_to_first_token_seconds"].Series[0].Buckets["+Inf"]; got != sv.TTFT.Count {
		t.Errorf("json TTFT bucket +Inf = %v, want the count %v", got, sv.TTFT.Count)
	}

	structure.WriteString("== csv\n")
	total := csvShape(t, filepath.Join(out, arrowio.ServerMetricsExportCSV), &structure)
	if !near(total, prompt) {
		t.Errorf("csv vllm:prompt_tokens_total total = %v, want %v", total, prompt)
	}

	lines := 0
	f, err := os.Open(filepath.Join(out, arrowio.ServerMetricsExportJSONL))
	if err != nil {
		t.Fatal(err)
	}
	defer f.Close()
	sc := bufio.NewScanner(f)
	sc.Buffer(nil, 1<<24)
	for sc.Scan() {
		var rec struct {
			EndpointURL string                       `json:"endpoint_url"`
			TimestampNS int64                        `json:"timestamp_ns"`
			LatencyNS   int64                        `json:"endpoint_latency_ns"`
			Metrics     map[string][]json.RawMessage `json:"metrics"`
		}
		if err := json.Unmarshal(sc.Bytes(), &rec); err != nil {
			t.Fatalf("jsonl line %d: %v", lines+1, err)
		}
		if lines == 0 {
			var m map[string]json.RawMessage
			json.Unmarshal(sc.Bytes(), &m)
			fmt.Fprintf(&structure, "== jsonl\n%s\n", strings.Join(slices.Sorted(mapKeysOf(m)), ","))
			fmt.Fprintf(&structure, "%s\n%s\n", rec.Metrics["vllm:prompt_tokens_total"][0], rec.Metrics["vllm:time_to_first_token_seconds"][0][:40])
		}
		if rec.EndpointURL != sv.Target || rec.TimestampNS == 0 || rec.LatencyNS <= 0 || len(rec.Metrics) == 0 {
			t.Errorf("jsonl line %d: %s", lines+1, sc.Bytes()[:min(200, len(sc.Bytes()))])
		}
		if _, ok := rec.Metrics["vllm:cache_config_info"]; ok {
			t.Errorf("jsonl line %d has the _info gauge", lines+1)
		}
		lines++
	}
	if lines != sv.Scrapes-sv.Failed {
		t.Errorf("%d jsonl lines, want one per successful scrape (%d)", lines, sv.Scrapes-sv.Failed)
	}

	structure.WriteString("== parquet\n")
	last := parquetShape(t, filepath.Join(out, arrowio.ServerMetricsExportParquet), &structure)
	if !near(last, prompt) {
		t.Errorf("parquet vllm:prompt_tokens_total at the last scrape = %v, want the run's %v", last, prompt)
	}
	golden(t, structure.String())
}

func readJSON(t *testing.T, path string, v any) {
	t.Helper()
	b, err := os.ReadFile(path)
	if err != nil {
		t.Fatal(err)
	}
	if err := json.Unmarshal(b, v); err != nil {
		t.Fatalf("%s: %v", path, err)
	}
}

func mapKeysOf[V any](m map[string]V) func(func(string) bool) {
	return func(yield func(string) bool) {
		for k := range m {
			if !yield(k) {
				return
			}
		}
	}
}

// jsonShape lists the JSON file's key paths (objects' keys, arrays'
// first elements; metrics and buckets by one example), without values.
func jsonShape(t *testing.T, path string) string {
	t.Helper()
	var v any
	readJSON(t, path, &v)
	var paths []string
	var walk func(p string, v any)
	walk = func(p string, v any) {
		switch x := v.(type) {
		case map[string]any:
			for k, c := range x {
				switch {
				case strings.HasSuffix(p, ".input_config"):
					continue
				case strings.HasSuffix(p, ".metrics") && k != "vllm:time_to_first_token_seconds" && k != "vllm:prompt_tokens_total" &&
					k != "vllm:num_requests_running":
					continue
				case strings.HasSuffix(p, ".buckets") && k != "+Inf":
					continue
				}
				walk(p+"."+k, c)
			}
		case []any:
			if len(x) > 0 {
				walk(p+"[0]", x[0])
			}
		}
		paths = append(paths, p)
	}
	walk("", v)
	slices.Sort(paths)
	return strings.Join(paths, "\n")
}

// csvShape writes the CSV file's comment lines (the benchmark id blanked),
// section headers and each row's Type, Metric and labels, and returns
// vllm:prompt_tokens_total's total.
func csvShape(t *testing.T, path string, w *strings.Builder) float64 {
	t.Helper()
	b, err := os.ReadFile(path)
	if err != nil {
		t.Fatal(err)
	}
	var body bytes.Buffer
	for _, l := range strings.SplitAfter(string(b), "\n") {
		if strings.HasPrefix(l, "#") {
			if strings.HasPrefix(l, "# benchmark_id: ") {
				l = "# benchmark_id: ID\n"
			}
			w.WriteString(l)
			continue
		}
		body.WriteString(l)
	}
	r := csv.NewReader(&body)
	r.FieldsPerRecord = -1
	rows, err := r.ReadAll()
	if err != nil {
		t.Fatal(err)
	}
	var header []string
	total := math.NaN()
	for _, row := range rows {
		if row[0] == "Endpoint" {
			header = row
			fmt.Fprintln(w, strings.Join(row, ","))
			continue
		}
		if len(row) != len(header) {
			t.Errorf("csv row %q has %d cells, its header %d", row, len(row), len(header))
			continue
		}
		if header[1] == "Metric" { // the _info section
			fmt.Fprintln(w, row[1], row[2], row[3])
			continue
		}
		var labels []string
		for i := slices.Index(header, "Description") - 1; header[i] != "p99" && header[i] != "rate_std" && header[i] != "p99_estimate"; i-- {
			if row[i] != "" {
				labels = append(labels, header[i]+"="+row[i])
			}
		}
		fmt.Fprintln(w, row[1], row[2], labels)
		if row[2] == "vllm:prompt_tokens_total" {
			total, _ = strconv.ParseFloat(row[slices.Index(header, "total")], 64)
		}
	}
	return total
}

// parquetShape writes the Parquet file's columns and its metric types,
// and returns vllm:prompt_tokens_total's value at its last row.
func parquetShape(t *testing.T, path string, w *strings.Builder) float64 {
	t.Helper()
	b, err := os.ReadFile(path)
	if err != nil {
		t.Fatal(err)
	}
	tbl, err := pqarrow.ReadTable(context.Background(), bytes.NewReader(b), nil, pqarrow.ArrowReadProperties{}, memory.DefaultAllocator)
	if err != nil {
		t.Fatal(err)
	}
	defer tbl.Release()
	rd := array.NewTableReader(tbl, -1)
	defer rd.Release()
	var cols []string
	for _, f := range tbl.Schema().Fields() {
		cols = append(cols, f.Name+":"+f.Type.String())
	}
	fmt.Fprintln(w, strings.Join(cols, ","))
	types := map[string]string{}
	last := math.NaN()
	for rd.Next() {
		rec := rd.Record()
		s := tbl.Schema()
		col := func(n string) int { return s.FieldIndices(n)[0] }
		name, typ := rec.Column(col("metric_name")).(*array.String), rec.Column(col("metric_type")).(*array.String)
		value := rec.Column(col("value")).(*array.Float64)
		le := rec.Column(col("bucket_le")).(*array.String)
		for i := 0; i < int(rec.NumRows()); i++ {
			types[name.Value(i)] = typ.Value(i)
			if typ.Value(i) == "histogram" && (le.IsNull(i) || !value.IsNull(i)) {
				t.Errorf("parquet row %d: a histogram row without its bucket, or with a value", i)
			}
			if name.Value(i) == "vllm:prompt_tokens_total" {
				last = value.Value(i)
			}
		}
	}
	for _, k := range slices.Sorted(mapKeysOf(types)) {
		fmt.Fprintln(w, k, types[k])
	}
	return last
}

// TestProfileServerMetricsFormatsDefault: without the flag profile writes
// AIPerf's default json and csv files, and none without scraped server
// metrics or without AIPerf's exports; a format it does not know exits 2
// naming the flag and the formats, before any request.
func TestProfileServerMetricsFormatsDefault(t *testing.T) {
	srv := startMockServer(t, nil)
	all := []string{arrowio.ServerMetricsExportJSON, arrowio.ServerMetricsExportCSV, arrowio.ServerMetricsExportJSONL, arrowio.ServerMetricsExportParquet}
	for _, c := range []struct {
		args []string
		want []string
	}{
		{nil, all[:2]},
		{[]string{"--no-server-metrics"}, nil},
		{[]string{"--export", "none"}, nil},
		{[]string{"--server-metrics-formats", "parquet", "--format", "jsonl"}, all[3:]},
	} {
		out := filepath.Join(t.TempDir(), "run")
		args := append([]string{"profile", "-m", mockserver.DefaultModel, "--url", srv.URL(), "--isl", "16", "--osl", "2",
			"--request-count", "3", "--artifact-dir", out, "--quiet"}, c.args...)
		if code, _, stderr := runCLI(t, "", args...); code != 0 {
			t.Fatalf("%q: exit %d: %s", c.args, code, stderr)
		}
		var got []string
		for _, name := range all {
			if _, err := os.Stat(filepath.Join(out, name)); err == nil {
				got = append(got, name)
			}
		}
		if !slices.Equal(got, c.want) {
			t.Errorf("%q: wrote %v, want %v", c.args, got, c.want)
		}
	}
	n := len(srv.Log())
	code, _, stderr := runCLI(t, "", "profile", "-m", mockserver.DefaultModel, "--url", srv.URL(), "--request-count", "3",
		"--artifact-dir", filepath.Join(t.TempDir(), "run"), "--server-metrics-formats", "json,xml")
	if want := `--server-metrics-formats "xml": want json, csv, jsonl or parquet`; code != 2 || !strings.Contains(stderr, want) {
		t.Errorf("exit %d, stderr %q; want 2 and %q", code, stderr, want)
	}
	if len(srv.Log()) != n {
		t.Errorf("%d requests reached the server after the bad flag", len(srv.Log())-n)
	}
}
