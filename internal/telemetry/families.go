package telemetry

// role is what a known server metric tells about the server.
type role uint8

const (
	roleRunning          role = iota // gauge: requests being processed
	roleWaiting                      // gauge: requests queued
	roleKVUsage                      // gauge: KV-cache usage, fraction 0..1
	roleHitRateGauge                 // gauge: the server's own prefix-cache hit rate, 0..1
	rolePrefixHits                   // counter: prefix-cache hits, tokens
	rolePrefixQueries                // counter: prefix-cache lookups, tokens
	rolePromptTokens                 // counter (or histogram sum): prompt tokens
	roleGenerationTokens             // counter (or histogram sum): generated tokens
	// rolePromptCachedExtra: counter of prompt tokens served from the
	// cache that rolePromptTokens does not count (llama.cpp counts only
	// evaluated tokens in prompt_tokens_total).
	rolePromptCachedExtra
	roleTTFT      // histogram, seconds
	roleITL       // histogram, seconds
	roleE2E       // histogram, seconds
	roleQueueTime // histogram, seconds
	// roleRequests: counter of the requests the server finished (summed
	// over its label sets: vLLM counts them per finish reason).
	roleRequests
	numRoles
)

// knownMetric maps a metric family to its role. When several families of a
// server fill one role (a renamed metric kept as a deprecated alias), the
// one with the lowest rank present in the window wins.
type knownMetric struct {
	family string
	role   role
	rank   uint8
}

// knownMetrics lists the families reprise summarises, per server:
//   - vLLM (v0 and v1 names), from its /metrics and the fixtures;
//   - SGLang (`sglang:`), from its production-metrics documentation;
//   - TensorRT-LLM as exposed by trtllm-serve or Dynamo (`trtllm_` or `trtllm:`);
//   - llama.cpp (`llamacpp:`, no labels, no histograms), from the fixtures
//     and current llama-server's /metrics (testdata/llamacpp-metrics.txt),
//     which has no KV-cache gauge any more, counts cached prompt tokens
//     apart (prompt_tokens_cached_total) and has no request counter;
//   - NVIDIA Dynamo's frontend (`dynamo_frontend_`).
var knownMetrics = map[string]knownMetric{
	"vllm:num_requests_running":          {"vllm", roleRunning, 0},
	"vllm:num_requests_waiting":          {"vllm", roleWaiting, 0},
	"vllm:kv_cache_usage_perc":           {"vllm", roleKVUsage, 0},
	"vllm:gpu_cache_usage_perc":          {"vllm", roleKVUsage, 1},
	"vllm:prefix_cache_hits_total":       {"vllm", rolePrefixHits, 0},
	"vllm:prefix_cache_queries_total":    {"vllm", rolePrefixQueries, 0},
	"vllm:gpu_prefix_cache_hit_rate":     {"vllm", roleHitRateGauge, 1},
	"vllm:prompt_tokens_total":           {"vllm", rolePromptTokens, 0},
	"vllm:generation_tokens_total":       {"vllm", roleGenerationTokens, 0},
	"vllm:time_to_first_token_seconds":   {"vllm", roleTTFT, 0},
	"vllm:inter_token_latency_seconds":   {"vllm", roleITL, 0},
	"vllm:time_per_output_token_seconds": {"vllm", roleITL, 1},
	"vllm:e2e_request_latency_seconds":   {"vllm", roleE2E, 0},
	"vllm:request_queue_time_seconds":    {"vllm", roleQueueTime, 0},
	"vllm:request_success_total":         {"vllm", roleRequests, 0},

	"sglang:num_running_reqs":              {"sglang", roleRunning, 0},
	"sglang:num_queue_reqs":                {"sglang", roleWaiting, 0},
	"sglang:token_usage":                   {"sglang", roleKVUsage, 0},
	"sglang:cache_hit_rate":                {"sglang", roleHitRateGauge, 0},
	"sglang:prompt_tokens_total":           {"sglang", rolePromptTokens, 0},
	"sglang:generation_tokens_total":       {"sglang", roleGenerationTokens, 0},
	"sglang:time_to_first_token_seconds":   {"sglang", roleTTFT, 0},
	"sglang:inter_token_latency_seconds":   {"sglang", roleITL, 0},
	"sglang:time_per_output_token_seconds": {"sglang", roleITL, 1},
	"sglang:e2e_request_latency_seconds":   {"sglang", roleE2E, 0},
	"sglang:queue_time_seconds":            {"sglang", roleQueueTime, 0},
	"sglang:num_requests_total":            {"sglang", roleRequests, 0},

	"trtllm_time_to_first_token_seconds":   {"trtllm", roleTTFT, 0},
	"trtllm:time_to_first_token_seconds":   {"trtllm", roleTTFT, 0},
	"trtllm_time_per_output_token_seconds": {"trtllm", roleITL, 0},
	"trtllm:time_per_output_token_seconds": {"trtllm", roleITL, 0},
	"trtllm_e2e_request_latency_seconds":   {"trtllm", roleE2E, 0},
	"trtllm:e2e_request_latency_seconds":   {"trtllm", roleE2E, 0},
	"trtllm_request_queue_time_seconds":    {"trtllm", roleQueueTime, 0},
	"trtllm:request_queue_time_seconds":    {"trtllm", roleQueueTime, 0},

	"llamacpp:requests_processing":        {"llamacpp", roleRunning, 0},
	"llamacpp:requests_deferred":          {"llamacpp", roleWaiting, 0},
	"llamacpp:kv_cache_usage_ratio":       {"llamacpp", roleKVUsage, 0}, // older builds only
	"llamacpp:prompt_tokens_total":        {"llamacpp", rolePromptTokens, 0},
	"llamacpp:prompt_tokens_cached_total": {"llamacpp", rolePromptCachedExtra, 0},
	"llamacpp:tokens_predicted_total":     {"llamacpp", roleGenerationTokens, 0},

	"dynamo_frontend_inflight_requests":           {"dynamo", roleRunning, 0},
	"dynamo_frontend_queued_requests":             {"dynamo", roleWaiting, 0},
	"dynamo_frontend_input_sequence_tokens":       {"dynamo", rolePromptTokens, 1},
	"dynamo_frontend_output_sequence_tokens":      {"dynamo", roleGenerationTokens, 1},
	"dynamo_frontend_time_to_first_token_seconds": {"dynamo", roleTTFT, 0},
	"dynamo_frontend_inter_token_latency_seconds": {"dynamo", roleITL, 0},
	"dynamo_frontend_request_duration_seconds":    {"dynamo", roleE2E, 0},
	"dynamo_frontend_requests_total":              {"dynamo", roleRequests, 0},
}

// roleNames are the names [Role] gives the roles.
var roleNames = [numRoles]string{
	roleRunning:           "running",
	roleWaiting:           "waiting",
	roleKVUsage:           "kv_usage",
	roleHitRateGauge:      "hit_rate",
	rolePrefixHits:        "prefix_hits",
	rolePrefixQueries:     "prefix_queries",
	rolePromptTokens:      "prompt_tokens",
	roleGenerationTokens:  "generation_tokens",
	rolePromptCachedExtra: "prompt_cached_tokens",
	roleTTFT:              "ttft",
	roleITL:               "itl",
	roleE2E:               "e2e",
	roleQueueTime:         "queue_time",
	roleRequests:          "requests",
}

// Role says what a server metric family that reprise knows tells, for
// plotting it over time: "running" and "waiting" (request gauges),
// "kv_usage" (a 0..1 gauge), "hit_rate" (the server's own prefix-cache
// hit-rate gauge, 0..1), "prefix_hits" and "prefix_queries" (token
// counters), "prompt_tokens", "generation_tokens" and
// "prompt_cached_tokens" (token counters), "ttft", "itl", "e2e" and
// "queue_time" (latency histograms in seconds), "requests" (a counter of
// the requests the server finished; llama.cpp has none). It returns "" for a
// family reprise does not know. Where a server has two families for one
// role (a renamed metric kept as an alias), Rank orders them: the lower
// is the current name.
func Role(metric string) (role string, rank int) {
	km, ok := knownMetrics[metric]
	if !ok {
		return "", 0
	}
	return roleNames[km.role], int(km.rank)
}
