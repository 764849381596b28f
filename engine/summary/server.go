package summary

import (
	"fmt"
	"net/url"
	"strconv"
)

// The server's and the GPUs' view of the profile window (summary.json's
// telemetry.servers and telemetry.gpu; docs/format/telemetry.md), as the
// scraper and the GPU sampler summarise them.

// GaugeStats summarises a gauge over the window.
type GaugeStats struct {
	Mean float64 `json:"mean"`
	Max  float64 `json:"max"`
	Last float64 `json:"last"`
}

// HistogramStats summarises a server-side latency histogram over the window,
// in milliseconds. Quantiles are interpolated linearly inside buckets, as
// Prometheus' histogram_quantile does, so they are only as precise as the
// server's buckets.
type HistogramStats struct {
	Metric string  `json:"metric"`
	Count  float64 `json:"count"`
	MeanMS float64 `json:"mean_ms"`
	// The quantiles are nil when the histogram has no finite bucket (a
	// server may export only _sum and _count).
	P50MS *float64 `json:"p50_ms,omitempty"`
	P90MS *float64 `json:"p90_ms,omitempty"`
	P99MS *float64 `json:"p99_ms,omitempty"`
	// P50Bucket, P90Bucket and P99Bucket are the buckets the quantiles
	// fall in: a quantile is interpolated inside its bucket, not
	// measured (a constant 10 ms in the bucket (0, 10] has p50 5 ms), so
	// what the histogram says is that the quantile is in the bucket. Nil
	// with the quantile.
	P50Bucket *Bucket `json:"p50_bucket,omitempty"`
	P90Bucket *Bucket `json:"p90_bucket,omitempty"`
	P99Bucket *Bucket `json:"p99_bucket,omitempty"`
}

// Bucket is one bucket of a server histogram, (LowMS, HighMS] in ms;
// HighMS is nil for the +Inf bucket (the quantile is then the highest
// finite bound, LowMS, and the truth is anything above it).
type Bucket struct {
	LowMS  float64  `json:"low_ms"`
	HighMS *float64 `json:"high_ms"`
}

// String is "(5, 10]" or "(25, +Inf)".
func (b Bucket) String() string {
	if b.HighMS == nil {
		return fmt.Sprintf("(%s, +Inf)", strconv.FormatFloat(b.LowMS, 'g', 4, 64))
	}
	return fmt.Sprintf("(%s, %s]", strconv.FormatFloat(b.LowMS, 'g', 4, 64), strconv.FormatFloat(*b.HighMS, 'g', 4, 64))
}

// ServerSummary is the server's view of the profile window, from one target.
// Pointers are nil when the server does not expose the metric.
type ServerSummary struct {
	Target  string `json:"target"`
	Family  string `json:"family,omitempty"` // vllm, sglang, trtllm, llamacpp, dynamo
	Scrapes int    `json:"scrapes"`
	Failed  int    `json:"failed_scrapes"`
	// NoBaseline reports that no scrape succeeded before the window: its
	// counters and histograms are measured from their first value in the
	// window, so they miss what happened before that scrape.
	NoBaseline bool `json:"no_baseline,omitempty"`

	RunningRequests *GaugeStats `json:"running_requests,omitempty"`
	WaitingRequests *GaugeStats `json:"waiting_requests,omitempty"`
	KVCacheUsage    *GaugeStats `json:"kv_cache_usage,omitempty"`
	// PrefixCacheHitRatio is Δhits/Δqueries over the window (tokens, vLLM),
	// Δcached/Δprompt tokens (llama.cpp), or the mean of the server's own
	// hit-rate gauge where it only has that (SGLang).
	PrefixCacheHitRatio *float64 `json:"prefix_cache_hit_ratio,omitempty"`
	// PromptTokens counts every prompt token the server received, cached
	// ones included (llama.cpp: evaluated plus cached).
	PromptTokens *float64 `json:"prompt_tokens,omitempty"`
	// CachedPromptTokens are the prompt tokens served from the cache
	// (llama.cpp's prompt_tokens_cached_total), where the server says.
	CachedPromptTokens *float64 `json:"cached_prompt_tokens,omitempty"`
	GenerationTokens   *float64 `json:"generation_tokens,omitempty"`
	// Requests counts the requests the server finished over the window
	// (vLLM's request_success_total over its finish reasons, SGLang's
	// num_requests_total); nil where the server has no such counter
	// (llama.cpp).
	Requests           *float64 `json:"requests,omitempty"`
	PromptTokensPerSec *float64 `json:"prompt_tokens_per_second,omitempty"`
	GenTokensPerSec    *float64 `json:"generation_tokens_per_second,omitempty"`

	TTFT      *HistogramStats `json:"time_to_first_token,omitempty"`
	ITL       *HistogramStats `json:"inter_token_latency,omitempty"`
	E2E       *HistogramStats `json:"request_latency,omitempty"`
	QueueTime *HistogramStats `json:"queue_time,omitempty"`
}

// GPUSummary is the GPUs' view of the profile window.
type GPUSummary struct {
	Source string `json:"source"`
	GPUs   int    `json:"gpus"`
	// AvgPowerW is the sum over GPUs of each GPU's mean power.
	AvgPowerW float64 `json:"avg_power_w"`
	// EnergyJ is the energy used over the window, from the cumulative energy
	// counters where present, else power integrated over time (trapezoids).
	EnergyJ float64 `json:"energy_j"`
	// EnergyFromCounter tells which of the two EnergyJ came from.
	EnergyFromCounter bool `json:"energy_from_counter"`
	// EnergyPerOutputTokenJ is EnergyJ / output tokens (0 when no tokens).
	EnergyPerOutputTokenJ float64 `json:"energy_per_output_token_j"`
	AvgUtilPct            float64 `json:"avg_util_pct"`
	MaxMemUsedBytes       float64 `json:"max_mem_used_bytes"`
	Samples               int     `json:"samples"`
}

// MetricsURL is the /metrics page of the server behind an endpoint URL:
// same scheme and host, path /metrics. It is how a run names the page it
// scrapes for each target, so a summary pairs a target with its server.
func MetricsURL(base string) (string, error) {
	u, err := url.Parse(base)
	if err != nil || u.Host == "" {
		return "", fmt.Errorf("URL %q: not an absolute URL", base)
	}
	return (&url.URL{Scheme: u.Scheme, Host: u.Host, Path: "/metrics"}).String(), nil
}
