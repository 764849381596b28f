package mockserver

import (
	"math"
	"strconv"
	"sync/atomic"
)

func (s *Server) appendMetrics(b []byte) []byte {
	running, waiting := s.adm.counts()
	m := s.met
	if s.cfg.Flavor == FlavorLlamaCPP {
		return s.appendLlamaMetrics(b, running, waiting)
	}
	model := s.cfg.Models[0]
	lbl := `{model_name="` + model + `"}`
	if s.cache != nil {
		b = append(b, "# HELP vllm:cache_config_info Information of the LLMEngine CacheConfig.\n# TYPE vllm:cache_config_info gauge\n"...)
		b = append(b, `vllm:cache_config_info{block_size="`...)
		b = strconv.AppendInt(b, int64(s.cfg.BlockSize), 10)
		b = append(b, `",num_gpu_blocks="`...)
		b = strconv.AppendInt(b, int64(s.cfg.PrefixCacheTokens/s.cfg.BlockSize), 10)
		b = append(b, "\"} 1\n"...)
	}
	b = appendHistogram(b, "vllm:e2e_request_latency_seconds", "Histogram of end to end request latency in seconds.", model, m.e2e)
	b = appendSample(b, "vllm:generation_tokens_total", "counter", "Total number of generated tokens.", lbl, float64(m.generationTokens.Load()))
	b = appendHistogram(b, "vllm:inter_token_latency_seconds", "Histogram of inter-token latency in seconds.", model, m.itl)
	b = appendSample(b, "vllm:kv_cache_usage_perc", "gauge",
		"Prometheus metric for the fraction of KV-cache blocks currently in use (from 0 to 1).", lbl, s.kvUsage())
	b = appendSample(b, "vllm:num_requests_running", "gauge", "Number of requests currently running on GPU.", lbl, float64(running))
	b = appendSample(b, "vllm:num_requests_waiting", "gauge", "Prometheus metric for the number of queued requests.", lbl, float64(waiting))
	if s.cache != nil {
		b = appendSample(b, "vllm:prefix_cache_hits_total", "counter", "Prefix cache hits, in terms of number of cached tokens.", lbl, float64(m.cacheHits.Load()))
		b = appendSample(b, "vllm:prefix_cache_queries_total", "counter", "Prefix cache queries, in terms of number of queried tokens.", lbl, float64(m.cacheQueries.Load()))
	}
	b = appendSample(b, "vllm:prompt_tokens_total", "counter", "Total number of prompt tokens processed.", lbl, float64(m.promptTokens.Load()))
	b = append(b, "# HELP vllm:request_success_total Count of successfully processed requests.\n# TYPE vllm:request_success_total counter\n"...)
	for _, f := range [...]struct {
		reason string
		n      *atomic.Int64
	}{{"abort", &m.finishedAbort}, {"length", &m.finishedLength}, {"stop", &m.finishedStop}} {
		b = append(b, `vllm:request_success_total{finish_reason="`...)
		b = append(b, f.reason...)
		b = append(b, `",model_name="`...)
		b = append(b, model...)
		b = append(b, `"} `...)
		b = strconv.AppendInt(b, f.n.Load(), 10)
		b = append(b, '\n')
	}
	b = appendHistogram(b, "vllm:time_to_first_token_seconds", "Histogram of time to first token in seconds.", model, m.ttft)
	return b
}

func (s *Server) appendLlamaMetrics(b []byte, running, waiting int) []byte {
	m := s.met
	prefill := float64(m.prefillNS.Load()) / 1e9
	decode := float64(m.decodeNS.Load()) / 1e9
	evaluated := float64(m.evaluatedTokens.Load())
	generated := float64(m.generationTokens.Load())
	rate := func(n, secs float64) float64 {
		if secs <= 0 {
			return 0
		}
		return n / secs
	}
	// Current llama-server: prompt_tokens_total leaves out the cached
	// tokens, which prompt_tokens_cached_total counts; there is no KV-cache
	// gauge any more.
	b = appendSample(b, "llamacpp:prompt_tokens_total", "counter", "Number of prompt tokens processed, excluding cached tokens", "", evaluated)
	b = appendSample(b, "llamacpp:prompt_tokens_cached_total", "counter", "Number of prompt tokens reused from the cache", "",
		float64(m.cacheHits.Load()))
	b = appendSample(b, "llamacpp:prompt_seconds_total", "counter", "Prompt process time", "", prefill)
	b = appendSample(b, "llamacpp:tokens_predicted_total", "counter", "Number of generation tokens processed.", "", generated)
	b = appendSample(b, "llamacpp:tokens_predicted_seconds_total", "counter", "Predict process time", "", decode)
	b = appendSample(b, "llamacpp:n_decode_total", "counter", "Total number of llama_decode() calls", "", generated)
	b = appendSample(b, "llamacpp:n_tokens_max", "counter", "Largest observed n_tokens.", "", float64(m.maxTokensSeen.Load()))
	b = appendSample(b, "llamacpp:prompt_tokens_seconds", "gauge", "Average prompt throughput in tokens/s.", "", rate(evaluated, prefill))
	b = appendSample(b, "llamacpp:predicted_tokens_seconds", "gauge", "Average generation throughput in tokens/s.", "", rate(generated, decode))
	b = appendSample(b, "llamacpp:requests_processing", "gauge", "Number of requests processing.", "", float64(running))
	b = appendSample(b, "llamacpp:requests_deferred", "gauge", "Number of requests deferred.", "", float64(waiting))
	busy := 0.0
	if running > 0 {
		busy = float64(running)
	}
	return appendSample(b, "llamacpp:n_busy_slots_per_decode", "gauge", "Average number of busy slots per llama_decode() call", "", busy)
}

// kvUsage is the share of KV capacity held by running requests: their
// prompt plus requested output tokens over the prefix-cache capacity (or
// max-num-seqs × max-model-len without a cache), at most 1.
func (s *Server) kvUsage() float64 {
	capTokens := float64(s.cfg.PrefixCacheTokens)
	if capTokens <= 0 {
		capTokens = float64(s.cfg.MaxNumSeqs) * float64(s.cfg.MaxModelLen)
	}
	return min(float64(s.met.runningTokens.Load())/capTokens, 1)
}

func appendSample(b []byte, name, typ, help, labels string, v float64) []byte {
	b = append(b, "# HELP "...)
	b = append(b, name...)
	b = append(b, ' ')
	b = append(b, help...)
	b = append(b, "\n# TYPE "...)
	b = append(b, name...)
	b = append(b, ' ')
	b = append(b, typ...)
	b = append(b, '\n')
	b = append(b, name...)
	b = append(b, labels...)
	b = append(b, ' ')
	b = appendFloat(b, v)
	return append(b, '\n')
}

func appendFloat(b []byte, v float64) []byte {
	if v == math.Trunc(v) && math.Abs(v) < 1e15 {
		return strconv.AppendInt(b, int64(v), 10)
	}
	return strconv.AppendFloat(b, v, 'g', -1, 64)
}

func appendHistogram(b []byte, name, help, model string, h *histogram) []byte {
	b = append(b, "# HELP "...)
	b = append(b, name...)
	b = append(b, ' ')
	b = append(b, help...)
	b = append(b, "\n# TYPE "...)
	b = append(b, name...)
	b = append(b, " histogram\n"...)
	var cum uint64
	for i, bound := range h.bounds {
		cum += h.counts[i].Load()
		b = append(b, name...)
		b = append(b, `_bucket{model_name="`...)
		b = append(b, model...)
		b = append(b, `",le="`...)
		b = appendFloat(b, bound)
		b = append(b, `"} `...)
		b = strconv.AppendUint(b, cum, 10)
		b = append(b, '\n')
	}
	cum += h.inf.Load()
	b = append(b, name...)
	b = append(b, `_bucket{model_name="`...)
	b = append(b, model...)
	b = append(b, `",le="+Inf"} `...)
	b = strconv.AppendUint(b, cum, 10)
	b = append(b, '\n')
	b = append(b, name...)
	b = append(b, `_sum{model_name="`...)
	b = append(b, model...)
	b = append(b, `"} `...)
	b = appendFloat(b, float64(h.sumNS.Load())/1e9)
	b = append(b, '\n')
	b = append(b, name...)
	b = append(b, `_count{model_name="`...)
	b = append(b, model...)
	b = append(b, `"} `...)
	b = strconv.AppendUint(b, cum, 10)
	return append(b, '\n')
}
