package main

import (
	"encoding/json"
	"io"
	"math"
	"net/http"
	"net/http/httptest"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/reprise-bench/reprise/arrowio"
	"github.com/reprise-bench/reprise/engine/record"
	"github.com/reprise-bench/reprise/internal/mockserver"
)

// counterAt returns the last value of counter metric at or before timeNS
// (0 when it has not appeared yet), summed over label sets.
func counterAt(samples []record.MetricSample, target, metric string, timeNS int64) float64 {
	last := map[string]record.MetricSample{}
	for _, s := range samples {
		if s.Target == target && s.Metric == metric && s.TimeNS <= timeNS {
			if prev, ok := last[s.Labels]; !ok || s.TimeNS >= prev.TimeNS {
				last[s.Labels] = s
			}
		}
	}
	var sum float64
	for _, s := range last {
		sum += s.Value
	}
	return sum
}

// TestReplayTelemetryAgreesWithRecords replays against the mock server with
// its /metrics scraped (the default) plus a second target that hangs, and a
// DCGM exporter. The server's counters over the run must equal the client's
// own counts, the hanging target must be recorded as failed scrapes without
// failing the run, and every table must be in the run directory.
func TestReplayTelemetryAgreesWithRecords(t *testing.T) {
	srv := startMockServer(t, func(c *mockserver.Config) { c.MaxNumSeqs = 1024; c.PrefixCacheTokens = 1 << 30 })
	hang := make(chan struct{})
	defer close(hang)
	dcgmPage, err := os.ReadFile("../../internal/telemetry/testdata/dcgm-exporter.txt")
	if err != nil {
		t.Fatal(err)
	}
	aux := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		if r.URL.Path == "/dcgm" {
			w.Write(dcgmPage)
			return
		}
		select { // a metrics endpoint that never answers
		case <-hang:
		case <-r.Context().Done():
		}
	}))
	defer aux.Close()

	out := t.TempDir()
	code, _, stderr := runCLI(t, "", "replay", "../../traces/mooncake-sample.jsonl", "--url", srv.URL(),
		"--model", "reprise-mock", "--speedup", "1000", "--request-count", "60", "--out", out, "--quiet",
		"--metrics-interval", "50ms", "--server-metrics", aux.URL+"/hang",
		"--gpu-telemetry", "dcgm="+aux.URL+"/dcgm", "--max-error-rate", "0")
	if code != 0 {
		t.Fatalf("exit %d: %s", code, stderr)
	}
	reqs, err := arrowio.ReadRequests(out)
	if err != nil {
		t.Fatal(err)
	}
	samples, err := arrowio.ReadMetricSamples(out)
	if err != nil {
		t.Fatal(err)
	}
	var prompt, completion, cached float64
	for _, r := range reqs {
		prompt += float64(r.ServerPromptTokens)
		completion += float64(r.ServerCompletionTokens)
		cached += float64(r.ServerCachedTokens)
	}
	target := srv.URL() + "/metrics"
	end := int64(math.MaxInt64)
	for _, c := range []struct {
		metric string
		want   float64
	}{
		{"vllm:prompt_tokens_total", prompt},
		{"vllm:generation_tokens_total", completion},
		{"vllm:prefix_cache_hits_total", cached},
		{"vllm:prefix_cache_queries_total", prompt},
	} {
		// The final scrape comes after the last request: the counters' last
		// values are the run's totals (the server started from zero).
		if got := counterAt(samples, target, c.metric, end); got != c.want {
			t.Errorf("%s = %v, client counted %v", c.metric, got, c.want)
		}
	}
	var upHang, failedHang int
	for _, s := range samples {
		if s.Target == aux.URL+"/hang" && s.Metric == "reprise:scrape_up" {
			upHang++
			if s.Value == 0 {
				failedHang++
			}
		}
	}
	if upHang == 0 || failedHang != upHang {
		t.Errorf("hanging target: %d scrapes, %d failed; want all failed", upHang, failedHang)
	}
	gpus, err := arrowio.ReadGPUSamples(out)
	if err != nil {
		t.Fatal(err)
	}
	if len(gpus) < 2 || gpus[0].Source != "dcgm" {
		t.Fatalf("gpu table: %d rows", len(gpus))
	}
	js, err := os.ReadFile(filepath.Join(out, "summary.json"))
	if err != nil {
		t.Fatal(err)
	}
	for _, want := range []string{`"telemetry"`, `"family": "vllm"`, `"client_vs_server_mean"`, `"energy_per_output_token_j"`} {
		if !strings.Contains(string(js), want) {
			t.Errorf("summary.json lacks %s", want)
		}
	}
}

func TestReplayTelemetryFlagErrors(t *testing.T) {
	code, _, stderr := runCLI(t, "", "replay", "--url", "http://127.0.0.1:1", "--model", "m", "--isl", "8", "--osl", "8",
		"--gpu-telemetry", "rocm", "--server-metrics", "not a url", "--metrics-interval", "-1s")
	if code != 2 {
		t.Fatalf("exit %d, want 2: %s", code, stderr)
	}
	for _, want := range []string{"--gpu-telemetry \"rocm\"", "--server-metrics \"not a url\"", "--metrics-interval"} {
		if !strings.Contains(stderr, want) {
			t.Errorf("stderr lacks %q:\n%s", want, stderr)
		}
	}
}

// Without the NVIDIA driver (or in a build without cgo), --gpu-telemetry
// nvml is a configuration error before any request, naming the way out.
func TestReplayNVMLUnavailable(t *testing.T) {
	srv := startMockServer(t, nil)
	code, _, stderr := runCLI(t, "", "replay", "--url", srv.URL(), "--model", "reprise-mock", "--isl", "8", "--osl", "2",
		"--request-count", "1", "--concurrency", "1", "--out", t.TempDir(), "--quiet", "--gpu-telemetry", "nvml")
	if code == 0 {
		t.Skip("this machine has a working NVIDIA driver")
	}
	if code != 2 || !strings.Contains(stderr, "NVML is not available") || !strings.Contains(stderr, "dcgm") {
		t.Fatalf("exit %d, stderr:\n%s", code, stderr)
	}
	if n := len(srv.Log()); n != 0 {
		t.Errorf("%d requests sent before the configuration error", n)
	}
}

// lazyMetrics serves the mock server's /metrics without the
// vllm:generation_tokens_total family while it is 0, as servers that
// create a series at its first increment do.
func lazyMetrics(t *testing.T, srv *mockserver.Server) string {
	t.Helper()
	proxy := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		resp, err := http.Get(srv.URL() + "/metrics")
		if err != nil {
			http.Error(w, err.Error(), http.StatusBadGateway)
			return
		}
		defer resp.Body.Close()
		page, err := io.ReadAll(resp.Body)
		if err != nil {
			http.Error(w, err.Error(), http.StatusBadGateway)
			return
		}
		const fam = "vllm:generation_tokens_total"
		var out []string
		lines := strings.Split(string(page), "\n")
		zero := false
		for _, l := range lines {
			if strings.HasPrefix(l, fam+"{") && strings.HasSuffix(l, "} 0") {
				zero = true
			}
		}
		for _, l := range lines {
			if zero && strings.Contains(l, fam) {
				continue
			}
			out = append(out, l)
		}
		io.WriteString(w, strings.Join(out, "\n"))
	}))
	t.Cleanup(proxy.Close)
	return proxy.URL + "/metrics"
}

// TestReplayServerTotalsEqualClientTotals: the server's view of a run
// (summary.json's telemetry) counts exactly the tokens and requests the
// client's records report: on a fresh server whose generation counter
// appears only after the first scrape, on a server that already served a
// run (the counters are measured from the scrape before the first send to
// the one after the last response), and on llama.cpp, whose prompt token
// counter leaves out the cached tokens it counts apart.
func TestReplayServerTotalsEqualClientTotals(t *testing.T) {
	vllm := startMockServer(t, func(c *mockserver.Config) { c.MaxNumSeqs = 1024; c.PrefixCacheTokens = 1 << 30 })
	lazy := lazyMetrics(t, vllm)
	llama := startMockServer(t, func(c *mockserver.Config) {
		c.Flavor = mockserver.FlavorLlamaCPP
		c.MaxNumSeqs = 1024
		c.PrefixCacheTokens = 1 << 30
	})
	for _, run := range []struct {
		name, url, metrics string
		ttft               bool // the server has a TTFT histogram
	}{
		{"fresh server", vllm.URL(), lazy, true},
		{"warm server", vllm.URL(), lazy, true},
		{"llama.cpp", llama.URL(), llama.URL() + "/metrics", false},
	} {
		t.Run(run.name, func(t *testing.T) {
			out := t.TempDir()
			code, _, stderr := runCLI(t, "", "replay", "../../traces/mooncake-sample.jsonl", "--url", run.url,
				"--model", "reprise-mock", "--speedup", "1000", "--request-count", "40", "--out", out, "--quiet",
				"--metrics-interval", "20ms", "--no-server-metrics", "--server-metrics", run.metrics, "--max-error-rate", "0")
			if code != 0 {
				t.Fatalf("exit %d: %s", code, stderr)
			}
			reqs, err := arrowio.ReadRequests(out)
			if err != nil {
				t.Fatal(err)
			}
			var prompt, completion, cached float64
			for _, r := range reqs {
				prompt += float64(r.ServerPromptTokens)
				completion += float64(r.ServerCompletionTokens)
				cached += float64(r.ServerCachedTokens)
			}
			if cached == 0 {
				t.Fatal("no cached prompt tokens: the test needs a prefix cache")
			}
			js, err := os.ReadFile(filepath.Join(out, "summary.json"))
			if err != nil {
				t.Fatal(err)
			}
			var sum struct {
				Telemetry struct {
					Servers []struct {
						Server struct {
							NoBaseline       bool     `json:"no_baseline"`
							PromptTokens     *float64 `json:"prompt_tokens"`
							GenerationTokens *float64 `json:"generation_tokens"`
							HitRatio         *float64 `json:"prefix_cache_hit_ratio"`
							TTFT             *struct {
								Count float64 `json:"count"`
							} `json:"time_to_first_token"`
						} `json:"server"`
					} `json:"servers"`
				} `json:"telemetry"`
			}
			if err := json.Unmarshal(js, &sum); err != nil {
				t.Fatal(err)
			}
			if len(sum.Telemetry.Servers) != 1 {
				t.Fatalf("%d servers in summary.json", len(sum.Telemetry.Servers))
			}
			sv := sum.Telemetry.Servers[0].Server
			if sv.NoBaseline {
				t.Error("no_baseline: the scrape before the first send is missing")
			}
			for _, c := range []struct {
				name string
				got  *float64
				want float64
			}{
				{"prompt_tokens", sv.PromptTokens, prompt},
				{"generation_tokens", sv.GenerationTokens, completion},
				{"prefix_cache_hit_ratio", sv.HitRatio, cached / prompt},
			} {
				if c.got == nil || *c.got != c.want {
					t.Errorf("server %s %v, client records %v", c.name, ptrVal(c.got), c.want)
				}
			}
			if run.ttft && (sv.TTFT == nil || sv.TTFT.Count != float64(len(reqs))) {
				t.Errorf("server TTFT histogram %+v, want %d observations", sv.TTFT, len(reqs))
			}
		})
	}
}

func ptrVal(p *float64) any {
	if p == nil {
		return "absent"
	}
	return *p
}
