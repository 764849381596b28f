package config

import "strings"

// aiperfSections are the keys of each section of AIPerf's config file:
// each entry is the flag (AIPerf's primary long name) and then the other
// spellings a key may take, AIPerf's aliases and its config field names
// (src/aiperf/config/flags/_section_fields.py at ai-dynamo/aiperf
// 0314074, which groups the fields into endpoint, input, output,
// tokenizer, loadgen, sweeping and accuracy). The telemetry and service
// sections hold the flags that grouping leaves out. Every key is written
// with dashes here; a file may use dashes or underscores.
var aiperfSections = map[string][]string{
	"endpoint": {
		"model|model-names|models",
		"model-selection-strategy",
		"endpoint-type|type",
		"endpoint|custom-endpoint",
		"url|urls",
		"streaming",
		"request-timeout-seconds|timeout-seconds|timeout",
		"api-key",
		"url-strategy|url-selection-strategy",
		"transport|transport-type",
		"use-legacy-max-tokens",
		"use-server-token-count",
		"connection-reuse-strategy",
		"request-content-type",
		"download-video-content",
		"session-header",
		"wait-for-model-timeout",
		"wait-for-model-mode",
		"wait-for-model-interval",
		"reset-kv-cache",
		"reset-kv-cache-path",
		"reset-kv-cache-timeout-seconds",
		"server-profiler",
	},
	"input": {
		"extra-inputs",
		"header|headers",
		"input-file|file",
		"custom-dataset-type",
		"public-dataset",
		"hf-subset|hf-dataset-subset",
		"dataset-filter|dataset-filters",
		"dataset-sampling-strategy",
		"random-seed",
		"fixed-schedule",
		"no-fixed-schedule",
		"fixed-schedule-auto-offset",
		"fixed-schedule-start-offset",
		"fixed-schedule-end-offset",
		"goodput",
		"num-sessions|conversation-num|num-conversations",
		"num-dataset-entries|num-prompts|conversation-num-dataset-entries",
		"conversation-turn-mean|session-turns-mean",
		"conversation-turn-stddev|session-turns-stddev",
		"conversation-turn-delay-mean|session-turn-delay-mean",
		"conversation-turn-delay-stddev|session-turn-delay-stddev",
		"conversation-turn-delay-ratio|session-delay-ratio",
		"inter-turn-delay-cap-seconds",
		"isl|synthetic-input-tokens-mean|prompt-input-tokens-mean",
		"isl-stddev|synthetic-input-tokens-stddev|prompt-input-tokens-stddev",
		"isl-block-size|synthetic-input-tokens-block-size|prompt-input-tokens-block-size",
		"osl|output-tokens-mean|prompt-output-tokens-mean",
		"osl-stddev|output-tokens-stddev|prompt-output-tokens-stddev",
		"seq-dist|sequence-distribution|prompt-sequence-distribution",
		"prompt-batch-size|batch-size|batch-size-text",
		"prompt-prefix-pool-size|prefix-prompt-pool-size|num-prefix-prompts",
		"prompt-prefix-length|prefix-prompt-length",
		"shared-system-prompt-length|prompt-prefix-shared-system-length",
		"user-context-prompt-length|prompt-prefix-user-context-length",
		"rankings-passages-mean",
		"rankings-passages-stddev",
		"rankings-passages-prompt-token-mean",
		"rankings-passages-prompt-token-stddev",
		"rankings-query-prompt-token-mean",
		"rankings-query-prompt-token-stddev",
		"synthesis-speedup-ratio",
		"synthesis-prefix-len-multiplier",
		"synthesis-prefix-root-multiplier",
		"synthesis-prompt-len-multiplier",
		"synthesis-output-len-multiplier",
		"synthesis-max-isl",
		"synthesis-max-osl",
		"image-batch-size|batch-size-image",
		"image-width-mean", "image-width-stddev", "image-height-mean", "image-height-stddev",
		"image-format", "image-source", "image-source-sampling",
		"audio-batch-size|batch-size-audio",
		"audio-length-mean", "audio-length-stddev", "audio-format", "audio-depths", "audio-sample-rates",
		"audio-num-channels",
		"video-batch-size|batch-size-video",
		"video-duration", "video-fps", "video-width", "video-height", "video-synth-type", "video-format",
		"video-codec", "video-audio-sample-rate", "video-audio-num-channels|video-audio-channels",
		"video-audio-codec", "video-audio-depth",
		"prompt-corpus",
		"cache-bust",
		"apply-chat-template",
		"ignore-trace-delays",
	},
	"loadgen": {
		"arrival-pattern|request-rate-mode",
		"arrival-smoothness|vllm-burstiness",
		"benchmark-duration",
		"benchmark-grace-period",
		"concurrency|session-concurrency",
		"concurrency-ramp-duration",
		"num-users",
		"prefill-concurrency",
		"prefill-concurrency-ramp-duration",
		"request-cancellation-delay",
		"request-cancellation-rate",
		"request-count|num-requests",
		"request-rate",
		"request-rate-ramp-duration",
		"request-rate-series",
		"user-centric-rate",
		"warmup-arrival-pattern",
		"warmup-concurrency",
		"warmup-concurrency-ramp-duration",
		"warmup-duration",
		"warmup-grace-period",
		"num-warmup-sessions|warmup-num-sessions",
		"warmup-prefill-concurrency",
		"warmup-prefill-concurrency-ramp-duration",
		"warmup-request-count|num-warmup-requests",
		"warmup-request-rate",
		"warmup-request-rate-ramp-duration",
		"failed-request-threshold",
		"adaptive-scale", "adaptive-sustain-duration", "adaptive-assessment-period|adaptive-scale-assessment-period", "adaptive-scale-sla",
		"adaptive-scale-control",
		"measurement-interval", "stability-percentage", "max-trials",
	},
	"output": {
		"artifact-dir|artifact-directory|output-artifact-dir",
		"auto-plot",
		"export-http-trace",
		"export-level|profile-export-level",
		"plot-required",
		"profile-export-prefix|profile-export-file",
		"show-trace-timing",
		"slice-duration",
		"export-outputs-json",
	},
	"tokenizer": {
		"tokenizer|name|tokenizer-name",
		"tokenizer-revision|revision",
		"tokenizer-trust-remote-code|trust-remote-code",
	},
	"telemetry": {
		"server-metrics|server-metrics-url|server-metrics-urls",
		"no-server-metrics",
		"server-metrics-formats",
		"gpu-telemetry",
		"no-gpu-telemetry",
		"network-latency-automatic",
		"network-latency-mean",
		"network-latency-ping-interval",
		"otel-url", "stream", "otel-resource-attributes", "gen-ai-provider",
		"mlflow-tracking-uri", "mlflow-experiment", "mlflow-run-name", "mlflow-parent-run-id", "mlflow-tag", "mlflow-artifact-glob",
		"wandb-project", "wandb-entity", "wandb-run-name", "wandb-tag",
	},
	"multi-run": {
		"num-profile-runs",
		"profile-run-cooldown-seconds",
		"confidence-level",
		"profile-run-disable-warmup-after-first",
		"set-consistent-seed",
		"vary-seed-per-trial",
		"convergence-metric",
		"convergence-stat",
		"convergence-threshold",
		"convergence-mode",
		"parameter-sweep-cooldown-seconds",
		"parameter-sweep-same-seed",
		"parameter-sweep-mode",
		"no-sweep-table",
	},
	"service": {
		"ui-type|ui",
		"log-level",
		"verbose",
		"extra-verbose",
		"workers-max|max-workers",
		"record-processor-service-count|record-processors",
		"api-port", "api-host",
		"zmq-host", "zmq-ipc-path", "zmq-dual-bind",
		"stats-interval",
	},
	"accuracy": {
		"accuracy-benchmark|benchmark", "accuracy-tasks|tasks", "accuracy-n-shots|n-shots",
		"accuracy-enable-cot|enable-cot", "accuracy-grader|grader",
		"accuracy-system-prompt|system-prompt", "accuracy-verbose",
	},
}

// aiperfRepeatable are AIPerf's flags given once per value: a list in
// the file is the flag repeated. Every other flag takes a list as one
// comma-separated value, as AIPerf's sweepable flags do.
var aiperfRepeatable = []string{
	"model", "url", "header", "extra-inputs", "dataset-filter", "gpu-telemetry", "server-metrics",
	"server-metrics-formats", "variant", "sweep-dimension", "adaptive-scale-sla", "otel-resource-attributes",
	"mlflow-tag", "mlflow-artifact-glob", "wandb-tag",
}

// AIPerf is the schema of AIPerf's sectioned config file (see
// aiperfSections), with a sweep section and a reprise section whose keys
// are names (and aliases) of reprise's profile flags, given in own; own's
// repeatable flags are repeatable there too.
func AIPerf(own, ownRepeatable []string) *Schema {
	s := Flat(own, ownRepeatable)
	s.sweep = true
	for _, r := range aiperfRepeatable {
		s.repeatable[r] = true
	}
	s.sections = map[string]map[string]string{}
	for sec, entries := range aiperfSections {
		keys := map[string]string{}
		for _, e := range entries {
			names := strings.Split(e, "|")
			for _, n := range names {
				keys[n] = names[0]
			}
		}
		s.sections[strings.ReplaceAll(sec, "-", "_")] = keys
	}
	return s
}

// AIPerfFlags returns every AIPerf flag name the sectioned schema knows
// (each section's primary names), for tests that check the schema against
// AIPerf's reference.
func AIPerfFlags() []string {
	var out []string
	for _, entries := range aiperfSections {
		for _, e := range entries {
			out = append(out, strings.Split(e, "|")[0])
		}
	}
	return out
}
