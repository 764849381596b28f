package telemetry

import (
	"fmt"
	"math"
	"os"
	"path/filepath"
	"testing"

	dto "github.com/prometheus/client_model/go"

	"github.com/reprise-bench/reprise/engine/record"
)

// TestSeriesStatsWindow: the pages of TestSummarizeWindow, per series:
// each engine's prompt tokens apart, with Summarize's baseline and
// resets; the gauge's scrapes inside the window; the histogram's
// increases, quantiles and buckets in its own unit. Reprise's own series
// and summaries are left out.
func TestSeriesStatsWindow(t *testing.T) {
	var samples []record.MetricSample
	for i, p := range [][]byte{
		page(100, 400, 1000, 1, [3]float64{1, 1, 1}, 0.05),
		page(150, 500, 1500, 4, [3]float64{2, 5, 5}, 0.75),
		page(30, 100, 100, 2, [3]float64{1, 2, 2}, 0.3),
		page(40, 150, 300, 99, [3]float64{1, 3, 3}, 0.4),
	} {
		at := int64(i) * 10e9
		samples = append(samples, parse(t, p, at)...)
		samples = append(samples,
			record.MetricSample{TimeNS: at, Target: "http://srv/metrics", Metric: "rpc_seconds", Type: "summary", Part: "quantile", Bound: 0.5, Value: 1},
			record.MetricSample{TimeNS: at, Target: "http://srv/metrics", Metric: MetricScrapeUp, Type: "gauge", Value: 1})
	}
	got := map[string]map[string]float64{}
	var ttftBuckets string
	for _, s := range SeriesStats(samples, 5e9, 25e9) {
		key := fmt.Sprintf("%s %s %v", s.Type, s.Metric, s.Labels)
		got[key] = s.Stats
		if s.Metric == "vllm:time_to_first_token_seconds" {
			ttftBuckets = fmt.Sprint(s.Buckets)
		}
	}
	if len(got) != 6 {
		t.Errorf("%d series, want 6 (hits, queries, 2 prompt engines, running, TTFT): %v", len(got), got)
	}
	for _, c := range []struct {
		key, stat string
		want      float64
	}{
		{"counter vllm:prefix_cache_hits_total map[model_name:m]", "total", 90},
		{"counter vllm:prefix_cache_queries_total map[model_name:m]", "total", 250},
		{"counter vllm:prompt_tokens_total map[engine:0 model_name:m]", "total", 800},
		{"counter vllm:prompt_tokens_total map[engine:1 model_name:m]", "rate", 40},
		{"gauge vllm:num_requests_running map[model_name:m]", "avg", 3},
		{"gauge vllm:num_requests_running map[model_name:m]", "min", 2},
		{"gauge vllm:num_requests_running map[model_name:m]", "max", 4},
		{"gauge vllm:num_requests_running map[model_name:m]", "std", 1},
		{"gauge vllm:num_requests_running map[model_name:m]", "p25", 2.5},
		{"gauge vllm:num_requests_running map[model_name:m]", "p99", 3.98},
		{"histogram vllm:time_to_first_token_seconds map[model_name:m]", "count", 7},
		{"histogram vllm:time_to_first_token_seconds map[model_name:m]", "sum", 1.1},
		{"histogram vllm:time_to_first_token_seconds map[model_name:m]", "avg", 1.1 / 7},
		{"histogram vllm:time_to_first_token_seconds map[model_name:m]", "count_rate", 7.0 / 20},
		{"histogram vllm:time_to_first_token_seconds map[model_name:m]", "p50_estimate", 0.13},
	} {
		if v, ok := got[c.key][c.stat]; !ok || math.Abs(v-c.want) > 1e-12 {
			t.Errorf("%s %s = %v (%v), want %v", c.key, c.stat, v, ok, c.want)
		}
	}
	if want := "[{0.1 2} {0.2 7} {+Inf 7}]"; ttftBuckets != want {
		t.Errorf("TTFT buckets %s, want %s", ttftBuckets, want)
	}
}

// FuzzLabelMap: record.LabelMap undoes canonicalLabels for any values
// (names are Prometheus names), and reads any string without panicking.
func FuzzLabelMap(f *testing.F) {
	f.Add("a", "x", "b", `q"uo\te`+"\n", `a="1",b="2\"3"`)
	f.Add("model_name", "", "le", ",=", `broken="`)
	f.Fuzz(func(t *testing.T, n1, v1, n2, v2, raw string) {
		record.LabelMap(raw) // any string: no panic
		if !promName(n1) || !promName(n2) || n1 == n2 {
			return
		}
		canon := canonicalLabels([]*dto.LabelPair{{Name: &n1, Value: &v1}, {Name: &n2, Value: &v2}})
		m := record.LabelMap(canon)
		if len(m) != 2 || m[n1] != v1 || m[n2] != v2 {
			t.Errorf("LabelMap(%q) = %q, want %s=%q %s=%q", canon, m, n1, v1, n2, v2)
		}
	})
}

func promName(s string) bool {
	for i, c := range s {
		if !(c == '_' || c >= 'a' && c <= 'z' || c >= 'A' && c <= 'Z' || i > 0 && c >= '0' && c <= '9') {
			return false
		}
	}
	return s != ""
}

// TestSeriesStatsRealPages: two real servers' pages (testdata/real),
// scraped before and after 12 requests of 40 prompt and 10 output tokens,
// give the counters' increases the requests made: what the
// server_metrics_export files report as each series' total.
func TestSeriesStatsRealPages(t *testing.T) {
	for _, c := range []struct {
		server string
		want   map[string]float64 // counter metric → total over the window
	}{
		{"sim", map[string]float64{"vllm:generation_tokens_total": 120, "vllm:prompt_tokens_total": 480, "vllm:request_success_total": 12}},
		{"llamacpp", map[string]float64{"llamacpp:tokens_predicted_total": 120}},
	} {
		var samples []record.MetricSample
		for i, name := range []string{"before", "after"} {
			b, err := os.ReadFile(filepath.Join("testdata", "real", c.server+"-"+name+".txt"))
			if err != nil {
				t.Fatal(err)
			}
			samples = append(samples, parse(t, b, int64(i)*10e9)...)
		}
		got := map[string]float64{}
		for _, s := range SeriesStats(samples, 0, 10e9) {
			if s.Type == "counter" {
				got[s.Metric] += s.Stats["total"]
			}
		}
		for m, want := range c.want {
			if got[m] != want {
				t.Errorf("%s: %s total %g; the requests made %g", c.server, m, got[m], want)
			}
		}
	}
}
