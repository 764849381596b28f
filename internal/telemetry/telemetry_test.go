package telemetry

import (
	"bytes"
	"context"
	"encoding/json"
	"fmt"
	"math"
	"net/http"
	"net/http/httptest"
	"os"
	"path/filepath"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/reprise-bench/reprise/engine/record"
	"github.com/reprise-bench/reprise/internal/testfiles"
)

// fixture returns the body of a recorded /metrics response in the
// repository's testdata/servers (the .http file is headers, a blank line,
// body).
func fixture(t testing.TB, server, name string) []byte {
	t.Helper()
	raw, err := os.ReadFile(filepath.Join(testfiles.Servers(t), server, name+".http"))
	if err != nil {
		t.Fatalf("fixture: %v", err)
	}
	_, body, ok := bytes.Cut(raw, []byte("\r\n\r\n"))
	if !ok {
		t.Fatalf("fixture %s/%s: no header/body separator", server, name)
	}
	return body
}

func parse(t testing.TB, page []byte, timeNS int64) []record.MetricSample {
	t.Helper()
	s, err := ParsePage(bytes.NewReader(page), "http://srv/metrics", timeNS, nil)
	if err != nil {
		t.Fatalf("ParsePage: %v", err)
	}
	return s
}

func TestParsePageFixtures(t *testing.T) {
	for _, tc := range []struct{ server, name string }{
		{"vllm-sim", "metrics"}, {"vllm-sim", "metrics_after_timing"}, {"vllm-sim", "metrics_no_prefix_cache"},
		{"vllm-sim", "metrics_under_load"}, {"llamacpp", "metrics"}, {"llamacpp", "metrics_under_load"},
		{"llamacpp", "metrics_counters_before"}, {"llamacpp", "metrics_counters_after"},
	} {
		t.Run(tc.server+"/"+tc.name, func(t *testing.T) {
			samples := parse(t, fixture(t, tc.server, tc.name), 42)
			if len(samples) == 0 {
				t.Fatal("no samples")
			}
			// Every histogram series ends with a +Inf bucket equal to its count.
			inf := map[string]float64{}
			for _, s := range samples {
				if s.TimeNS != 42 || s.Target == "" || s.Metric == "" {
					t.Fatalf("bad sample %+v", s)
				}
				if s.Type == "histogram" && s.Part == "bucket" && math.IsInf(s.Bound, 1) {
					inf[s.Metric+s.Labels] = s.Value
				}
				if s.Type == "histogram" && s.Part == "count" && inf[s.Metric+s.Labels] != s.Value {
					t.Errorf("%s{%s}: +Inf bucket %v != count %v", s.Metric, s.Labels, inf[s.Metric+s.Labels], s.Value)
				}
			}
		})
	}
}

func TestCanonicalLabelsAndLabelValue(t *testing.T) {
	page := "# TYPE m counter\nm{z=\"1\",a=\"x\\\"y\",m=\"line\\nbreak\"} 3\n"
	s := parse(t, []byte(page), 0)
	if len(s) != 1 {
		t.Fatalf("got %d samples", len(s))
	}
	if want := `a="x\"y",m="line\nbreak",z="1"`; s[0].Labels != want {
		t.Errorf("labels %q, want %q", s[0].Labels, want)
	}
	for name, want := range map[string]string{"a": `x"y`, "m": "line\nbreak", "z": "1", "nope": ""} {
		if got := LabelValue(s[0].Labels, name); got != want {
			t.Errorf("LabelValue(%q) = %q, want %q", name, got, want)
		}
	}
}

// The vLLM simulator's page after exactly three streams (TTFT 50 ms, ITL
// 10 ms configured): the server-side view must say so.
func TestSummarizeVLLMFixture(t *testing.T) {
	acc := NewAccumulator()
	// The simulator was fresh: its page before the streams had none of
	// the series yet (a successful scrape of an empty page).
	acc.Add([]record.MetricSample{
		{TimeNS: 0, Target: "http://srv/metrics", Metric: MetricScrapeUp, Value: 1},
		{TimeNS: 0, Target: "http://srv/metrics", Metric: MetricScrapeSamples, Value: 0},
	})
	acc.Add(append(parse(t, fixture(t, "vllm-sim", "metrics_after_timing"), 100),
		record.MetricSample{TimeNS: 100, Target: "http://srv/metrics", Metric: MetricScrapeUp, Value: 1}))
	sums := acc.Summarize(0, 200)
	if len(sums) != 1 {
		t.Fatalf("%d summaries", len(sums))
	}
	s := sums[0]
	if s.Family != "vllm" || s.Scrapes != 2 || s.Failed != 0 || s.NoBaseline {
		t.Errorf("family %q scrapes %d failed %d", s.Family, s.Scrapes, s.Failed)
	}
	if s.TTFT == nil || s.TTFT.Count != 3 || math.Abs(s.TTFT.MeanMS-50) > 1e-9 {
		t.Fatalf("TTFT %+v, want 3 observations with mean 50 ms", s.TTFT)
	}
	if s.ITL == nil || s.ITL.Count != 93 || math.Abs(s.ITL.MeanMS-10) > 1e-9 {
		t.Fatalf("ITL %+v, want 93 observations with mean 10 ms", s.ITL)
	}
	if s.TTFT.P50MS == nil || s.TTFT.P99MS == nil || *s.TTFT.P50MS <= 0 || *s.TTFT.P50MS > *s.TTFT.P99MS {
		t.Errorf("TTFT quantiles not ordered: %+v", s.TTFT)
	}
	if s.RunningRequests == nil || s.RunningRequests.Max != 0 {
		t.Errorf("running %+v", s.RunningRequests)
	}
	// request_success_total, summed over its finish reasons.
	if s.Requests == nil || *s.Requests != 3 {
		t.Errorf("requests %v, want 3", s.Requests)
	}
}

func TestSummarizeLlamaCppUnderLoad(t *testing.T) {
	acc := NewAccumulator()
	acc.Add(parse(t, fixture(t, "llamacpp", "metrics_under_load"), 10))
	s := acc.Summarize(0, 20)[0]
	if s.Family != "llamacpp" || s.RunningRequests == nil || s.RunningRequests.Last != 8 ||
		s.WaitingRequests == nil || s.WaitingRequests.Last != 4 {
		t.Fatalf("summary %+v", s)
	}
	if s.TTFT != nil {
		t.Errorf("llama.cpp has no histograms, got %+v", s.TTFT)
	}
}

// page renders a small vLLM-shaped page for the window arithmetic tests.
func page(hits, queries, prompt, running float64, ttftBuckets [3]float64, ttftSum float64) []byte {
	return fmt.Appendf(nil, `# TYPE vllm:prefix_cache_hits_total counter
vllm:prefix_cache_hits_total{model_name="m"} %g
# TYPE vllm:prefix_cache_queries_total counter
vllm:prefix_cache_queries_total{model_name="m"} %g
# TYPE vllm:prompt_tokens_total counter
vllm:prompt_tokens_total{model_name="m",engine="0"} %g
vllm:prompt_tokens_total{model_name="m",engine="1"} %g
# TYPE vllm:num_requests_running gauge
vllm:num_requests_running{model_name="m"} %g
# TYPE vllm:time_to_first_token_seconds histogram
vllm:time_to_first_token_seconds_bucket{model_name="m",le="0.1"} %g
vllm:time_to_first_token_seconds_bucket{model_name="m",le="0.2"} %g
vllm:time_to_first_token_seconds_bucket{model_name="m",le="+Inf"} %g
vllm:time_to_first_token_seconds_sum{model_name="m"} %g
vllm:time_to_first_token_seconds_count{model_name="m"} %g
`, hits, queries, prompt, prompt, running, ttftBuckets[0], ttftBuckets[1], ttftBuckets[2], ttftSum, ttftBuckets[2])
}

func TestSummarizeWindow(t *testing.T) {
	acc := NewAccumulator()
	// t=0 (warmup), t=10 and t=20 in the profile window, t=30 the final
	// scrape after it: counters count up to it, gauges stop at the window.
	acc.Add(parse(t, page(100, 400, 1000, 1, [3]float64{1, 1, 1}, 0.05), 0))
	acc.Add(parse(t, page(150, 500, 1500, 4, [3]float64{2, 5, 5}, 0.75), 10e9))
	// A counter reset (server restart) between 10 s and 20 s: hits restart at 30.
	acc.Add(parse(t, page(30, 100, 100, 2, [3]float64{1, 2, 2}, 0.3), 20e9))
	acc.Add(parse(t, page(40, 150, 300, 99, [3]float64{1, 3, 3}, 0.4), 30e9))
	s := acc.Summarize(5e9, 25e9)[0]
	// hits: +50 (100→150), reset to 30, +10 → 90; queries: +100, +100, +50 → 250.
	if s.PrefixCacheHitRatio == nil || math.Abs(*s.PrefixCacheHitRatio-0.36) > 1e-12 {
		t.Errorf("hit ratio %v, want 0.36", ptr(s.PrefixCacheHitRatio))
	}
	// prompt tokens are summed over both engines: 2000 → 3000 (+1000),
	// reset to 200 (+200), 600 (+400).
	if s.PromptTokens == nil || *s.PromptTokens != 1600 {
		t.Errorf("prompt tokens %v, want 1600", ptr(s.PromptTokens))
	}
	if s.PromptTokensPerSec == nil || *s.PromptTokensPerSec != 80 {
		t.Errorf("prompt tokens/s %v, want 80", ptr(s.PromptTokensPerSec))
	}
	if s.RunningRequests == nil || s.RunningRequests.Mean != 3 || s.RunningRequests.Max != 4 || s.RunningRequests.Last != 2 {
		t.Errorf("running %+v, want mean 3 max 4 last 2", s.RunningRequests)
	}
	// TTFT: +[1,4,4] (sum +0.7) from t=0 to t=10, then a reset: +[1,2,2]
	// (sum 0.3), then +[0,1,1] (sum 0.1) → 7 observations, 2 ≤ 0.1 s,
	// mean 1.1/7 s.
	if s.TTFT == nil || s.TTFT.Count != 7 || math.Abs(s.TTFT.MeanMS-1100.0/7) > 1e-9 {
		t.Fatalf("TTFT %+v", s.TTFT)
	}
	// p50: rank 3.5 falls in (0.1, 0.2] holding 5 observations after 2: 0.1 + 0.1·1.5/5.
	if s.TTFT.P50MS == nil || math.Abs(*s.TTFT.P50MS-130) > 1e-9 {
		t.Errorf("TTFT p50 %v ms, want 130", ptr(s.TTFT.P50MS))
	}
}

// TestSummarizeHistogramWithoutBuckets: a server may export a histogram
// as _sum and _count alone. Its count and mean are known, its quantiles
// are not: they are left out, and the summary still encodes as JSON
// (NaN quantiles once made summary.json and reprise merge fail).
func TestSummarizeHistogramWithoutBuckets(t *testing.T) {
	page := func(sum, count float64) []byte {
		return fmt.Appendf(nil, `# TYPE vllm:time_to_first_token_seconds histogram
vllm:time_to_first_token_seconds_sum{model_name="m"} %g
vllm:time_to_first_token_seconds_count{model_name="m"} %g
`, sum, count)
	}
	acc := NewAccumulator()
	acc.Add(parse(t, page(1, 10), 0))
	acc.Add(parse(t, page(1.5, 14), 10e9))
	s := acc.Summarize(5e9, 15e9)[0]
	if s.TTFT == nil || s.TTFT.Count != 4 || math.Abs(s.TTFT.MeanMS-125) > 1e-9 {
		t.Fatalf("TTFT %+v, want 4 observations with mean 125 ms", s.TTFT)
	}
	if s.TTFT.P50MS != nil || s.TTFT.P90MS != nil || s.TTFT.P99MS != nil {
		t.Errorf("quantiles %v %v %v without buckets, want none", ptr(s.TTFT.P50MS), ptr(s.TTFT.P90MS), ptr(s.TTFT.P99MS))
	}
	b, err := json.Marshal(s)
	if err != nil {
		t.Fatalf("the summary does not encode: %v", err)
	}
	if !strings.Contains(string(b), `"time_to_first_token":{"metric":"vllm:time_to_first_token_seconds","count":4,"mean_ms":125}`) {
		t.Errorf("encoded %s", b)
	}
}

func TestBucketQuantile(t *testing.T) {
	inf := math.Inf(1)
	tests := []struct {
		q      float64
		bounds []float64
		cum    []float64
		want   float64
	}{
		{0.5, []float64{1, 2, inf}, []float64{0, 10, 10}, 1.5},  // all in (1,2]
		{0.5, []float64{1, 2, inf}, []float64{10, 10, 10}, 0.5}, // first bucket starts at 0
		{0.99, []float64{1, 2, inf}, []float64{0, 0, 10}, 2},    // +Inf bucket → highest finite bound
		{0.5, []float64{1, inf}, []float64{0, 0}, math.NaN()},   // no observations
	}
	for _, tt := range tests {
		got := bucketQuantile(tt.q, tt.bounds, tt.cum)
		if !(got == tt.want || math.IsNaN(got) && math.IsNaN(tt.want)) {
			t.Errorf("bucketQuantile(%v, %v, %v) = %v, want %v", tt.q, tt.bounds, tt.cum, got, tt.want)
		}
	}
}

// collect is a Sink that keeps everything, for tests.
type collect struct {
	mu      sync.Mutex
	samples []record.MetricSample
}

func (c *collect) sink(s []record.MetricSample) {
	c.mu.Lock()
	c.samples = append(c.samples, s...)
	c.mu.Unlock()
}

func (c *collect) up() (ok, failed int) {
	c.mu.Lock()
	defer c.mu.Unlock()
	for _, s := range c.samples {
		if s.Metric == MetricScrapeUp {
			if s.Value == 1 {
				ok++
			} else {
				failed++
			}
		}
	}
	return ok, failed
}

// A slow, failing or garbage endpoint is recorded as failed scrapes next to
// a healthy one, and never blocks it.
func TestScraperResilience(t *testing.T) {
	good := fixture(t, "vllm-sim", "metrics")
	hang := make(chan struct{})
	defer close(hang)
	mux := http.NewServeMux()
	mux.HandleFunc("/good", func(w http.ResponseWriter, _ *http.Request) { w.Write(good) })
	mux.HandleFunc("/hang", func(w http.ResponseWriter, r *http.Request) {
		select {
		case <-hang:
		case <-r.Context().Done():
		}
	})
	mux.HandleFunc("/garbage", func(w http.ResponseWriter, _ *http.Request) { w.Write([]byte("{\"not\": prometheus}\n\x00\x01")) })
	mux.HandleFunc("/500", func(w http.ResponseWriter, _ *http.Request) { http.Error(w, "boom", 500) })
	mux.HandleFunc("/huge", func(w http.ResponseWriter, _ *http.Request) {
		w.Write([]byte("# TYPE x gauge\n"))
		w.Write(bytes.Repeat([]byte("x 1\n"), 1<<16))
	})
	srv := httptest.NewServer(mux)
	defer srv.Close()

	var c collect
	// Only the hanging target gets a short timeout, so a loaded machine
	// (-race, parallel packages) cannot turn the others into timeouts.
	cfg := NewScrapeConfig(srv.URL+"/good", srv.URL+"/garbage", srv.URL+"/500", srv.URL+"/huge")
	cfg.Timeout = time.Minute
	cfg.MaxPageBytes = 64 << 10
	s, err := NewScraper(cfg, c.sink)
	if err != nil {
		t.Fatal(err)
	}
	hcfg := NewScrapeConfig(srv.URL + "/hang")
	hcfg.Timeout = 100 * time.Millisecond
	hs, err := NewScraper(hcfg, c.sink)
	if err != nil {
		t.Fatal(err)
	}
	s.ScrapeAll(context.Background())
	hs.ScrapeAll(context.Background())
	ok, failed := c.up()
	if ok != 1 || failed != 4 {
		t.Fatalf("up: %d ok, %d failed; want 1 and 4", ok, failed)
	}
	scrapes, nfailed, errs := s.Stats()
	_, _, herrs := hs.Stats()
	errs = append(errs, herrs...)
	if scrapes != 4 || nfailed != 3 || len(errs) != 4 {
		t.Fatalf("stats %d %d %v", scrapes, nfailed, errs)
	}
	var msgs []string
	for _, e := range errs {
		msgs = append(msgs, e.Err)
	}
	all := strings.Join(msgs, "\n")
	for _, want := range []string{"HTTP 500", "larger than 65536 bytes", "parse metrics page", "no answer within 100ms"} {
		if !strings.Contains(all, want) {
			t.Errorf("errors lack %q:\n%s", want, all)
		}
	}
}

func TestScrapeConfigValidate(t *testing.T) {
	cfg := ScrapeConfig{Targets: []string{""}}
	err := cfg.Validate()
	if err == nil {
		t.Fatal("want errors")
	}
	for _, want := range []string{"empty target", "--metrics-interval", "timeout", "page limit"} {
		if !strings.Contains(err.Error(), want) {
			t.Errorf("%q lacks %q", err, want)
		}
	}
}

func FuzzParsePage(f *testing.F) {
	f.Add([]byte("# TYPE a counter\na_total 1\n"))
	f.Add([]byte("# TYPE h histogram\nh_bucket{le=\"1\"} 1\nh_bucket{le=\"+Inf\"} 2\nh_sum 3\nh_count 2\n"))
	f.Add([]byte("# TYPE s summary\ns{quantile=\"0.5\"} 1\ns_sum 1\ns_count 1\n"))
	f.Add([]byte("vllm:x{model_name=\"a\\\"b\"} NaN\n"))
	f.Fuzz(func(t *testing.T, page []byte) {
		samples, err := ParsePage(bytes.NewReader(page), "t", 1, nil)
		if err != nil {
			return
		}
		for _, s := range samples {
			switch s.Type {
			case "counter", "gauge", "histogram", "summary", "untyped":
			default:
				t.Fatalf("type %q", s.Type)
			}
			if s.Metric == "" || s.TimeNS != 1 {
				t.Fatalf("sample %+v", s)
			}
		}
		acc := NewAccumulator()
		acc.Add(samples)
		acc.Summarize(0, 2)
	})
}

func BenchmarkParsePageVLLM(b *testing.B) {
	page := fixture(b, "vllm-sim", "metrics")
	b.SetBytes(int64(len(page)))
	b.ReportAllocs()
	var dst []record.MetricSample
	for b.Loop() {
		var err error
		dst, err = ParsePage(bytes.NewReader(page), "t", 1, dst[:0])
		if err != nil {
			b.Fatal(err)
		}
	}
}

func TestRole(t *testing.T) {
	for _, c := range []struct {
		metric, role string
		rank         int
	}{
		{"vllm:num_requests_running", "running", 0},
		{"vllm:gpu_cache_usage_perc", "kv_usage", 1}, // the v0 name of kv_cache_usage_perc
		{"sglang:cache_hit_rate", "hit_rate", 0},
		{"llamacpp:prompt_tokens_cached_total", "prompt_cached_tokens", 0},
		{"vllm:time_to_first_token_seconds", "ttft", 0},
		{"vllm:request_success_total", "requests", 0},
		{"process_cpu_seconds_total", "", 0},
	} {
		if role, rank := Role(c.metric); role != c.role || rank != c.rank {
			t.Errorf("Role(%q) = %q, %d; want %q, %d", c.metric, role, rank, c.role, c.rank)
		}
	}
	for r, name := range roleNames {
		if name == "" {
			t.Errorf("role %d has no name", r)
		}
	}
}

// TestQuantileBuckets: a constant 10 ms ITL in the bucket (0, 10] has
// an interpolated p50 of 5 ms, which no request took; the summary keeps
// the bucket the quantile is in beside it, so it is not read as a
// measured value.
func TestQuantileBuckets(t *testing.T) {
	page := func(n float64) []byte {
		return fmt.Appendf(nil, `# TYPE vllm:inter_token_latency_seconds histogram
vllm:inter_token_latency_seconds_bucket{model_name="m",le="0.01"} %g
vllm:inter_token_latency_seconds_bucket{model_name="m",le="0.025"} %g
vllm:inter_token_latency_seconds_bucket{model_name="m",le="+Inf"} %g
vllm:inter_token_latency_seconds_sum{model_name="m"} %g
vllm:inter_token_latency_seconds_count{model_name="m"} %g
`, n, n, n, n*0.01, n)
	}
	acc := NewAccumulator()
	acc.Add(parse(t, page(0), 0))
	acc.Add(parse(t, page(100), 10e9))
	s := acc.Summarize(5e9, 15e9)[0]
	itl := s.ITL
	if itl == nil || itl.P50MS == nil || math.Abs(*itl.P50MS-5) > 1e-9 || math.Abs(itl.MeanMS-10) > 1e-9 {
		t.Fatalf("ITL %+v: want the interpolated p50 5 ms and the mean 10 ms", itl)
	}
	for name, b := range map[string]*Bucket{"p50": itl.P50Bucket, "p90": itl.P90Bucket, "p99": itl.P99Bucket} {
		if b == nil || b.LowMS != 0 || b.HighMS == nil || math.Abs(*b.HighMS-10) > 1e-9 || b.String() != "(0, 10]" {
			t.Errorf("%s bucket %+v, want (0, 10]", name, b)
		}
	}
	// In the +Inf bucket the quantile is its lower end and the bucket is
	// open.
	b, ok := quantileBucket(0.99, []float64{0.01, math.Inf(1)}, []float64{0, 10})
	if !ok || b.LowMS != 10 || b.HighMS != nil || b.String() != "(10, +Inf)" {
		t.Errorf("+Inf bucket %+v %v", b, ok)
	}
	js, err := json.Marshal(itl)
	if err != nil {
		t.Fatal(err)
	}
	if !strings.Contains(string(js), `"p50_bucket":{"low_ms":0,"high_ms":10}`) {
		t.Errorf("summary.json's histogram: %s", js)
	}
}

// Current llama-server's counters over three completions whose usage is
// known (testdata/servers/llamacpp/metrics_counters_after.json): prompt tokens
// are evaluated plus cached, so they add up to the usage's 160+166+161,
// and there is no request counter.
func TestSummarizeLlamaCppCounters(t *testing.T) {
	acc := NewAccumulator()
	up := record.MetricSample{Target: "http://srv/metrics", Metric: MetricScrapeUp, Value: 1}
	before, after := up, up
	before.TimeNS, after.TimeNS = 10, 30
	acc.Add(append(parse(t, fixture(t, "llamacpp", "metrics_counters_before"), 10), before))
	acc.Add(append(parse(t, fixture(t, "llamacpp", "metrics_counters_after"), 30), after))
	s := acc.Summarize(20, 25)[0]
	f := func(p *float64) float64 {
		if p == nil {
			return math.NaN()
		}
		return *p
	}
	if s.Family != "llamacpp" || s.NoBaseline || f(s.PromptTokens) != 487 || f(s.CachedPromptTokens) != 160 ||
		f(s.GenerationTokens) != 24 || s.Requests != nil {
		t.Errorf("family %q no_baseline %v prompt %v cached %v generation %v requests %v; want llamacpp, false, 487, 160, 24, nil",
			s.Family, s.NoBaseline, f(s.PromptTokens), f(s.CachedPromptTokens), f(s.GenerationTokens), s.Requests)
	}
	if r := f(s.PrefixCacheHitRatio); math.Abs(r-160.0/487) > 1e-12 {
		t.Errorf("hit ratio %v, want 160/487", r)
	}
}
