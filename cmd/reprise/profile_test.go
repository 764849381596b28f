package main

import (
	"encoding/json"
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"testing"
)

// aiperfFlags are the flag names of `aiperf profile` (and of the
// GenAI-Perf flags it replaced) as the AIPerf CLI reference lists them:
// ai-dynamo/aiperf 0.11.0's 274 flags by their names and aliases, the
// later docs' additions, and GenAI-Perf's.
var aiperfFlags = strings.Fields(`H accuracy-benchmark accuracy-enable-cot accuracy-grader accuracy-n-shots accuracy-system-prompt
accuracy-tasks accuracy-verbose adaptive-assessment-period adaptive-scale adaptive-scale-sla adaptive-sustain-duration api-host
api-key api-port apply-chat-template arrival-pattern arrival-smoothness artifact-dir audio-batch-size audio-depths audio-format
audio-length-mean audio-length-stddev audio-num-channels audio-sample-rates auto-plot b backend batch-size batch-size-audio
batch-size-image batch-size-text batch-size-video benchmark-duration benchmark-grace-period bo-constraint-mode cache-bust
checkpoint-dir concurrency concurrency-max concurrency-min concurrency-ramp-duration concurrency-steps confidence-level config
connection-reuse-strategy convergence-metric convergence-mode convergence-stat convergence-threshold conversation-num
conversation-turn-delay-mean conversation-turn-delay-ratio conversation-turn-delay-stddev conversation-turn-mean
conversation-turn-stddev custom-dataset-type custom-endpoint dataset-filter dataset-sampling-strategy download-video-content
enable-checkpointing endpoint endpoint-type error-rate-sla export-http-trace export-level export-outputs-json extra-inputs
extra-verbose f failed-request-threshold fixed-schedule fixed-schedule-auto-offset fixed-schedule-end-offset
fixed-schedule-start-offset g gen-ai-provider generate-plots goodput gpu-telemetry grpc-method header hf-subset
ignore-trace-delays image-batch-size image-format image-height-mean image-height-stddev image-source image-source-sampling
image-width-mean image-width-stddev input-file inter-turn-delay-cap-seconds isl isl-block-size isl-max isl-min isl-osl-pairs
isl-stddev isl-steps log-level m max-threads max-workers measurement-interval model model-names model-selection-strategy
network-latency-automatic network-latency-mean network-latency-ping-interval no-auto-plot no-fixed-schedule no-gpu-telemetry
no-profile-run-disable-warmup-after-first no-server-metrics no-set-consistent-seed no-sweep-table no-vary-seed-per-trial
num-conversations num-dataset-entries num-prefix-prompts num-profile-runs num-prompts num-requests num-sessions num-users
num-warmup-requests num-warmup-sessions osl osl-max osl-min osl-stddev osl-steps otel-resource-attributes otel-url
output-artifact-dir output-tokens-mean output-tokens-mean-deterministic output-tokens-stddev p parameter-sweep-cooldown-seconds
parameter-sweep-mode parameter-sweep-same-seed plot-required prefill-concurrency prefill-concurrency-ramp-duration
prefix-prompt-length prefix-prompt-pool-size profile-export-file profile-export-level profile-export-prefix
profile-run-cooldown-seconds profile-run-disable-warmup-after-first prompt-batch-size prompt-corpus
prompt-input-tokens-block-size prompt-input-tokens-mean prompt-input-tokens-stddev prompt-output-tokens-mean
prompt-output-tokens-stddev prompt-prefix-length prompt-prefix-pool-size public-dataset random-seed rankings-passages-mean
rankings-passages-prompt-token-mean rankings-passages-prompt-token-stddev rankings-passages-stddev
rankings-query-prompt-token-mean rankings-query-prompt-token-stddev record-processor-service-count record-processors
request-cancellation-delay request-cancellation-rate request-content-type request-count request-rate request-rate-mode
request-rate-ramp-duration request-rate-series request-timeout-seconds reset-kv-cache reset-kv-cache-path
reset-kv-cache-timeout-seconds s scenario seq-dist sequence-distribution server-metrics server-metrics-formats server-profiler
session-concurrency session-delay-ratio session-header session-turn-delay-mean session-turn-delay-stddev session-turns-mean
session-turns-stddev set-consistent-seed shared-system-prompt-length show-trace-timing slice-duration slo-attainment-fraction
stability-percentage stats-interval stream streaming sweep-type sweep-variant synthesis-max-isl synthesis-max-osl
synthesis-output-len-multiplier synthesis-prefix-len-multiplier synthesis-prefix-root-multiplier synthesis-prompt-len-multiplier
synthesis-speedup-ratio synthetic-input-tokens-block-size synthetic-input-tokens-mean synthetic-input-tokens-stddev tokenizer
tokenizer-revision tokenizer-trust-remote-code transport transport-type u ui ui-type unsafe-override url url-strategy
use-legacy-max-tokens use-server-token-count user-centric-rate user-context-prompt-length v variant vary-seed-per-trial verbose
video-audio-codec video-audio-depth video-audio-num-channels video-audio-sample-rate video-batch-size video-codec video-duration
video-format video-fps video-height video-synth-type video-width vllm-burstiness wait-for-model-interval wait-for-model-mode
wait-for-model-timeout warmup-arrival-pattern warmup-concurrency warmup-concurrency-ramp-duration warmup-duration
warmup-grace-period warmup-prefill-concurrency warmup-prefill-concurrency-ramp-duration warmup-request-count
warmup-request-rate warmup-request-rate-ramp-duration workers-max zmq-dual-bind zmq-host zmq-ipc-path`)

// TestEveryAIPerfFlagKnown: every flag of aiperf profile is a flag of
// reprise profile or exits 2 with a sentence saying what to do; none
// reads "unknown flag".
func TestEveryAIPerfFlagKnown(t *testing.T) {
	flags := map[string]bool{}
	root := newRoot(&app{})
	for _, f := range append(root.Flags, root.Command("profile").Flags...) { // the global flags too (--log-level)
		for _, n := range f.Names() {
			flags[n] = true
		}
	}
	for _, name := range aiperfFlags {
		if flags[name] {
			if aiperfWhy(name) != "" {
				t.Errorf("--%s is a profile flag and also in the unsupported table", name)
			}
			continue
		}
		why := aiperfWhy(name)
		if why == "" {
			t.Errorf("aiperf's %s is neither a profile flag nor explained", dashed(name))
			continue
		}
		code, _, stderr := runCLI(t, "", "profile", "-m", "m", dashed(name), "1")
		if code != 2 || !strings.Contains(stderr, "aiperf's "+dashed(name)+" is not supported: "+why) {
			t.Errorf("%s: exit %d, want 2 with its sentence:\n%s", dashed(name), code, stderr)
		}
	}
}

// TestProfileCommands runs `aiperf profile` command lines (the reference's
// modes, datasets and options, each with "aiperf" changed to "reprise")
// against the mock server: each runs, writes AIPerf's files into its
// --artifact-dir, and sends what the flags ask. Commands with a flag
// reprise does not take exit 2 with a sentence saying what to use.
func TestProfileCommands(t *testing.T) {
	dir := t.TempDir()
	srv := startMockServer(t, nil)
	sharegpt, pq, prompts := writeDatasets(t, dir)
	imageSource := writeImageSource(t, dir)
	write := func(name, content string) string {
		p := filepath.Join(dir, name)
		if err := os.WriteFile(p, []byte(content), 0o644); err != nil {
			t.Fatal(err)
		}
		return p
	}
	mooncake := write("mooncake.jsonl", `{"timestamp": 0, "input_length": 40, "output_length": 8, "hash_ids": [1, 2, 3]}
{"timestamp": 10, "input_length": 40, "output_length": 8, "hash_ids": [1, 2, 4]}
{"timestamp": 20, "input_length": 20, "output_length": 4, "hash_ids": [5, 6]}
`)
	single := write("single.jsonl", `{"text": "What is a KV cache?", "output_length": 8}
{"text": "Define TTFT.", "output_length": 6}
`)
	multi := write("multi.jsonl", `{"session_id": "a", "turns": [{"text": "Hello", "output_length": 5}, {"text": "And then?", "output_length": 5}]}
{"session_id": "b", "turns": [{"text": "Hi", "output_length": 5}, {"text": "Go on", "output_length": 5}]}
`)
	inputs := write("inputs.json", `{
  "data": [
    {"session_id": "x", "payloads": [
      {"messages": [{"role": "user", "content": "Hello"}], "model": "reprise-mock", "max_tokens": 6}]}
  ]
}
`)
	m := []string{"-m", "reprise-mock", "--url", srv.URL()}
	tests := []struct {
		name     string
		args     []string
		requests int    // records expected; 0 = the run must fail; -N = N repeated runs
		want     string // in stderr when it fails
	}{
		{"synthetic concurrency", []string{"--endpoint-type", "chat", "--streaming", "--isl", "64", "--osl", "16", "--concurrency", "2", "--request-count", "6"}, 6, ""},
		{"synthetic default count", []string{"--synthetic-input-tokens-mean", "32", "--output-tokens-mean", "8"}, 10, ""},
		{"rate constant", []string{"--request-rate", "200", "--arrival-pattern", "constant", "--num-requests", "5", "--prompt-input-tokens-mean", "32", "--prompt-output-tokens-mean", "8"}, 5, ""},
		{"rate gamma", []string{"--request-rate", "200", "--arrival-pattern", "gamma", "--arrival-smoothness", "2", "--request-count", "4", "--isl", "32", "--osl", "8", "--random-seed", "7"}, 4, ""},
		{"duration", []string{"--benchmark-duration", "0.2", "--benchmark-grace-period", "1", "--concurrency", "1", "--isl", "16", "--osl", "4", "--request-count", "3"}, 3, ""},
		{"warmup", []string{"--warmup-request-count", "2", "--request-count", "4", "--isl", "16", "--osl", "4"}, 4, ""},
		{"options", []string{"--goodput", "time_to_first_token:1000 request_latency:5000", "--extra-inputs", "temperature:0", "--extra-inputs", "top_p:0.9",
			"-H", "X-Test:1", "--tokenizer", "builtin", "--streaming", "--isl", "16", "--osl", "4", "--request-count", "3", "--request-timeout-seconds", "30",
			"--use-server-token-count", "--use-legacy-max-tokens", "--export-level", "raw", "--ui-type", "none", "--server-metrics", srv.URL() + "/metrics", "--gpu-telemetry", srv.URL() + "/metrics"}, 3, ""},
		{"sessions shared prefix", []string{"--num-sessions", "3", "--session-turns-mean", "2", "--session-turn-delay-mean", "1", "--shared-system-prompt-length", "64",
			"--user-context-prompt-length", "32", "--isl", "16", "--osl", "4", "--streaming", "--concurrency", "2"}, 6, ""},
		{"user-centric", []string{"--user-centric-rate", "100", "--num-users", "2", "--session-turns-mean", "2", "--num-sessions", "4", "--isl", "16", "--osl", "4", "--request-count", "6"}, 6, ""},
		{"fixed schedule mooncake", []string{"--input-file", mooncake, "--custom-dataset-type", "mooncake_trace", "--fixed-schedule", "--fixed-schedule-auto-offset", "--isl-block-size", "16"}, 3, ""},
		{"no fixed schedule", []string{"--input-file", mooncake, "--no-fixed-schedule", "--concurrency", "2", "--request-count", "5", "--isl-block-size", "16"}, 5, ""},
		{"single_turn", []string{"--input-file", single, "--custom-dataset-type", "single_turn", "--request-rate", "100", "--request-count", "4"}, 4, ""},
		{"random_pool", []string{"--input-file", single, "--custom-dataset-type", "random_pool", "--dataset-sampling-strategy", "random", "--concurrency", "2", "--request-count", "5"}, 5, ""},
		{"multi_turn user-centric", []string{"--input-file", multi, "--custom-dataset-type", "multi_turn", "--user-centric-rate", "100", "--num-users", "2", "--request-count", "4"}, 4, ""},
		{"inputs_json", []string{"--input-file", inputs, "--custom-dataset-type", "inputs_json"}, 1, ""},
		{"sharegpt", []string{"--input-file", sharegpt, "--concurrency", "2", "--request-count", "4"}, 4, ""},
		{"parquet", []string{"--input-file", pq, "--prompt-column", "text", "--output-len-column", "max_new_tokens", "--request-rate", "100", "--request-count", "4"}, 4, ""},
		{"prompts", []string{"--input-file", prompts, "--osl", "8", "--concurrency", "1"}, 3, ""},
		{"embeddings", []string{"--endpoint-type", "nim_embeddings", "-b", "2", "--isl", "16", "--osl", "1", "--request-count", "2"}, 2, ""},
		{"rankings", []string{"--endpoint-type", "hf_tei_rankings", "--rankings-passages-mean", "3", "--rankings-passages-prompt-token-mean", "12",
			"--rankings-query-prompt-token-mean", "8", "--osl", "1", "--request-count", "2"}, 2, ""},
		{"sweep with the dashboard", []string{"--concurrency", "10,20", "--isl", "16", "--osl", "4", "--ui-type", "dashboard"}, 0, "dashboard"},
		// AIPerf's multimodal recipes (its vision tutorial; TensorRT-LLM's
		// examples/serve/aiperf_client_for_multimodal.sh with a faster rate),
		// and the audio flags; design 0022.
		{"vision recipe", []string{"--endpoint-type", "chat", "--image-width-mean", "512", "--image-height-mean", "512", "--synthetic-input-tokens-mean", "100", "--output-tokens-mean", "16", // profile needs an output length
			"--streaming", "--request-count", "4", "--concurrency", "4"}, 4, ""},
		{"trtllm multimodal recipe", []string{"--endpoint-type", "chat", "--random-seed", "123", "--image-width-mean", "64", "--image-height-mean", "64",
			"--image-format", "png", "--synthetic-input-tokens-mean", "128", "--synthetic-input-tokens-stddev", "0", "--output-tokens-mean", "128",
			"--output-tokens-stddev", "0", "--request-count", "5", "--request-rate", "50", "--streaming"}, 5, ""},
		{"audio", []string{"--audio-length-mean", "1", "--audio-format", "wav", "--audio-sample-rates", "16", "--audio-depths", "16",
			"--audio-num-channels", "1", "--audio-batch-size", "2", "--image-batch-size", "2", "--image-width-mean", "32", "--image-height-mean", "32",
			"--isl", "16", "--osl", "4", "--request-count", "3"}, 3, ""},
		// AIPerf's own video+audio mux test (tests/…/test_video_audio), smaller.
		{"video with audio", []string{"--endpoint-type", "chat", "--video-width", "64", "--video-height", "48", "--video-duration", "1", "--video-fps", "4",
			"--video-format", "webm", "--video-codec", "libvpx-vp9", "--video-audio-sample-rate", "44.1", "--video-audio-num-channels", "1",
			"--isl", "16", "--osl", "4", "--request-count", "2"}, 2, ""},
		{"video audio codec in the wrong container", []string{"--video-duration", "1", "--video-width", "64", "--video-height", "48", "--video-format", "webm",
			"--video-audio-num-channels", "2", "--video-audio-codec", "aac", "--isl", "16", "--osl", "4"}, 0, "--video-audio-codec"},
		{"image source", []string{"--image-source", imageSource, "--image-source-sampling", "random", "--image-width-mean", "32", "--image-height-mean", "32", "--isl", "16", "--osl", "4", "--request-count", "2"}, 2, ""},
		{"chat embeddings with images", []string{"--endpoint-type", "chat_embeddings", "--image-width-mean", "32", "--image-height-mean", "32", "--isl", "16", "--osl", "1", "--request-count", "2"}, 2, ""},
		{"image source missing", []string{"--image-source", "assets", "--isl", "16", "--osl", "4"}, 0, "image source"},
		{"profile runs", []string{"--num-profile-runs", "2", "--confidence-level", "0.9", "--warmup-request-count", "1", "--request-count", "3", "--isl", "16", "--osl", "4"}, -2, ""},
		{"profile run cooldown", []string{"--num-profile-runs", "2", "--profile-run-cooldown-seconds", "0.1", "--warmup-request-count", "1", "--request-count", "3", "--isl", "16", "--osl", "4"}, -2, ""},
		{"prefill concurrency", []string{"--prefill-concurrency", "2", "--prefill-concurrency-ramp-duration", "0.05", "--concurrency", "4", "--streaming", "--request-count", "6", "--isl", "16", "--osl", "4"}, 6, ""},
		{"prefill over concurrency", []string{"--prefill-concurrency", "2", "--streaming", "--isl", "16", "--osl", "4"}, 0, "--prefill-concurrency 2 exceeds --concurrency 1"},
		{"prefill without streaming", []string{"--prefill-concurrency", "2", "--concurrency", "2", "--isl", "16", "--osl", "4"}, 0, "--prefill-concurrency needs --streaming"},
		{"server control", []string{"--wait-for-model-timeout", "5", "--wait-for-model-mode", "models", "--wait-for-model-interval", "0.1", "--reset-kv-cache",
			"--reset-kv-cache-timeout-seconds", "2", "--server-profiler", "--request-count", "2", "--isl", "16", "--osl", "4"}, 2, ""},
		{"model selection", []string{"-m", "reprise-mock,reprise-mock", "--model-selection-strategy", "random", "--request-count", "4", "--isl", "16", "--osl", "4"}, 4, ""},
		{"model selection unknown", []string{"-m", "reprise-mock,reprise-mock", "--model-selection-strategy", "weighted", "--isl", "16", "--osl", "4"}, 0, "want round_robin or random"},
		{"ignore trace delays", []string{"--input-file", multi, "--custom-dataset-type", "multi_turn", "--ignore-trace-delays", "--concurrency", "1", "--request-count", "4"}, 4, ""},
		{"turn delay cap", []string{"--input-file", multi, "--custom-dataset-type", "multi_turn", "--inter-turn-delay-cap-seconds", "0.01", "--concurrency", "1", "--request-count", "4"}, 4, ""},
		{"warmup own load", []string{"--warmup-request-count", "3", "--warmup-concurrency", "1", "--warmup-arrival-pattern", "constant", "--concurrency", "2", "--request-count", "4", "--isl", "16", "--osl", "4"}, 4, ""},
		{"warmup grace without duration", []string{"--warmup-request-count", "2", "--warmup-grace-period", "1", "--isl", "16", "--osl", "4"}, 0, "--warmup-grace needs --warmup-duration"},
		{"url strategy", []string{"--url-strategy", "round_robin", "--arrival-smoothness", "2", "--request-rate", "200", "--request-count", "2", "--isl", "16", "--osl", "4"}, 2, ""},
		{"grace without duration", []string{"--benchmark-grace-period", "5", "--isl", "16", "--osl", "4"}, 0, "--benchmark-grace-period needs --benchmark-duration"},
	}
	for i, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			out := filepath.Join(dir, "artifacts", strings.ReplaceAll(tt.name, " ", "_"))
			args := append(append([]string{"profile"}, m...), tt.args...)
			args = append(args, "--artifact-dir", out, "--format", "jsonl")
			if i%2 == 0 {
				args = append(args, "--quiet")
			}
			code, _, stderr := runCLI(t, "", args...)
			if tt.requests == 0 {
				if code != 2 || !strings.Contains(stderr, tt.want) {
					t.Fatalf("exit %d, want 2 with %q:\n%s", code, tt.want, stderr)
				}
				return
			}
			if code != 0 {
				t.Fatalf("exit %d: %s", code, stderr)
			}
			if tt.requests < 0 {
				// Repeated runs: run-1 … run-N, each with AIPerf's files,
				// warmup in the first only, and runs.json across them.
				for k := 1; k <= -tt.requests; k++ {
					run := filepath.Join(out, fmt.Sprintf("run-%d", k))
					recs := readRecords(t, run)
					if want := 3 + map[bool]int{true: 1}[k == 1]; len(recs) != want {
						t.Errorf("run %d: %d records, want %d (warmup in the first run only)", k, len(recs), want)
					}
					if _, err := os.Stat(filepath.Join(run, "profile_export_aiperf.json")); err != nil {
						t.Errorf("run %d: %v", k, err)
					}
				}
				b, err := os.ReadFile(filepath.Join(out, "runs.json"))
				if err != nil || !strings.Contains(string(b), `"confidence_level": 0.9`) {
					t.Errorf("runs.json at level 0.9: %v %.200s", err, b)
				}
				return
			}
			recs := readRecords(t, out)
			measured := 0
			for _, r := range recs {
				if r["phase"] == "profile" {
					measured++
				}
				if k, _ := r["error_kind"].(string); k != "" {
					t.Errorf("request failed: %s %v", k, r["error_message"])
				}
			}
			if measured != tt.requests {
				t.Errorf("%d measured requests, want %d", measured, tt.requests)
			}
			for _, f := range []string{"profile_export.jsonl", "profile_export_aiperf.json", "profile_export_aiperf.csv", "inputs.json"} {
				if _, err := os.Stat(filepath.Join(out, f)); err != nil {
					t.Errorf("AIPerf file: %v", err)
				}
			}
		})
	}
}

// TestProfileSharedPrefix: AIPerf's shared system prompt and user context
// prompt reach the server as shared prefixes whose cached tokens reprise
// expected: with one group and two turns per session, every first turn
// after the first shares the system prompt and every second turn its
// session's whole first prompt.
func TestProfileSharedPrefix(t *testing.T) {
	srv := startMockServer(t, nil)
	out := filepath.Join(t.TempDir(), "run")
	code, _, stderr := runCLI(t, "", "profile", "-m", "reprise-mock", "--url", srv.URL(), "--streaming", "--concurrency", "1",
		"--num-sessions", "3", "--session-turns-mean", "2", "--shared-system-prompt-length", "64", "--user-context-prompt-length", "32",
		"--isl", "16", "--osl", "4", "--artifact-dir", out, "--format", "jsonl", "--quiet", "--export", "none")
	if code != 0 {
		t.Fatalf("exit %d: %s", code, stderr)
	}
	recs := readRecords(t, out)
	if len(recs) != 6 {
		t.Fatalf("%d records, want 6", len(recs))
	}
	for _, r := range recs {
		exp, _ := r["expected_cached_tokens"].(float64)
		turn, _ := r["turn"].(float64)
		in := r["input_tokens"].(float64)
		switch {
		case turn == 0 && in != 64+32+16:
			t.Errorf("first turn of %v: %v input tokens, want 112 (64 shared + 32 context + 16)", r["session_id"], in)
		case turn == 0 && exp != 0 && exp != 64:
			t.Errorf("first turn of %v: expected cached %v, want 0 (first session) or 64 (the shared prompt)", r["session_id"], exp)
		case turn == 1 && exp < 64+32:
			t.Errorf("second turn of %v: expected cached %v, want at least the first prompt's prefixes", r["session_id"], exp)
		}
		if sc, ok := r["server_cached_tokens"].(float64); ok && exp >= 0 && sc < exp {
			t.Errorf("%v turn %v: server cached %v < expected %v", r["session_id"], turn, sc, exp)
		}
	}
}

func mustJSON(v any) string {
	b, _ := json.Marshal(v)
	return string(b)
}

// TestProfileExportAIPerf parses every AIPerf artifact of a profile run
// with the field lists of AIPerf's exports: profile_export.jsonl's
// metadata, metrics and error; profile_export_aiperf.json's header keys
// and statistics; the CSV's two sections; inputs.json's sessions and
// payloads (each turn alone, without the live history it was sent with).
func TestProfileExportAIPerf(t *testing.T) {
	srv := startMockServer(t, nil)
	out := filepath.Join(t.TempDir(), "run")
	code, _, stderr := runCLI(t, "", "profile", "-m", "reprise-mock", "--url", srv.URL(), "--streaming", "--concurrency", "2",
		"--num-sessions", "3", "--session-turns-mean", "2", "--isl", "24", "--osl", "6", "--artifact-dir", out, "--quiet")
	if code != 0 {
		t.Fatalf("exit %d: %s", code, stderr)
	}
	read := func(name string) []byte {
		b, err := os.ReadFile(filepath.Join(out, name))
		if err != nil {
			t.Fatal(err)
		}
		return b
	}

	metadata := strings.Fields(`session_num x_request_id x_correlation_id conversation_id turn_index credit_issued_ns
		request_start_ns request_ack_ns request_end_ns worker_id record_processor_id benchmark_phase was_cancelled
		cancellation_time_ns agent_depth parent_correlation_id`)
	lines := strings.Split(strings.TrimSpace(string(read("profile_export.jsonl"))), "\n")
	if len(lines) != 6 {
		t.Fatalf("profile_export.jsonl: %d lines, want 6", len(lines))
	}
	for i, l := range lines {
		var rec struct {
			Metadata map[string]any `json:"metadata"`
			Metrics  map[string]struct {
				Value *float64 `json:"value"`
				Unit  *string  `json:"unit"`
			} `json:"metrics"`
			Error json.RawMessage `json:"error"`
		}
		if err := json.Unmarshal([]byte(l), &rec); err != nil {
			t.Fatalf("line %d: %v", i+1, err)
		}
		for _, k := range metadata {
			if _, ok := rec.Metadata[k]; !ok {
				t.Errorf("line %d: metadata lacks %s", i+1, k)
			}
		}
		if rec.Metadata["benchmark_phase"] != "profiling" {
			t.Errorf("line %d: benchmark_phase %v", i+1, rec.Metadata["benchmark_phase"])
		}
		for _, tag := range []string{"time_to_first_token", "inter_token_latency", "request_latency", "input_sequence_length", "output_sequence_length"} {
			if m, ok := rec.Metrics[tag]; !ok || m.Value == nil || m.Unit == nil {
				t.Errorf("line %d: metrics lack %s {value, unit}", i+1, tag)
			}
		}
		if string(rec.Error) != "null" {
			t.Errorf("line %d: error %s, want null", i+1, rec.Error)
		}
	}

	var sum map[string]json.RawMessage
	if err := json.Unmarshal(read("profile_export_aiperf.json"), &sum); err != nil {
		t.Fatal(err)
	}
	for _, k := range strings.Fields(`schema_version aiperf_version benchmark_id start_time end_time was_cancelled input_config
		run_info telemetry_data error_summary request_throughput request_count`) {
		if _, ok := sum[k]; !ok {
			t.Errorf("profile_export_aiperf.json lacks %s", k)
		}
	}
	var ttft map[string]any
	if err := json.Unmarshal(sum["time_to_first_token"], &ttft); err != nil {
		t.Fatal(err)
	}
	for _, k := range strings.Fields("unit avg min max p1 p5 p10 p25 p50 p75 p90 p95 p99 std count sum") {
		if _, ok := ttft[k]; !ok {
			t.Errorf("time_to_first_token lacks %s", k)
		}
	}

	csvText := string(read("profile_export_aiperf.csv"))
	dist, scalars, ok := strings.Cut(csvText, "\n\n")
	if !ok {
		t.Fatalf("CSV without a blank line between its sections:\n%s", csvText)
	}
	dl := strings.Split(dist, "\n")
	if dl[0] != "Metric,avg,min,max,sum,p1,p5,p10,p25,p50,p75,p90,p95,p99,std" {
		t.Errorf("CSV header %q", dl[0])
	}
	if !strings.Contains(dist, "\nTime to First Token (ms),") || !strings.Contains(dist, "\nRequest Latency (ms),") {
		t.Errorf("CSV lacks the latency rows:\n%s", dist)
	}
	for _, row := range dl[1:] {
		if n := len(strings.Split(row, ",")); n != 15 {
			t.Errorf("CSV row %q has %d fields", row, n)
		}
	}
	if !strings.HasPrefix(scalars, "Metric,Value\n") || !strings.Contains(scalars, "\nRequest Count (requests),6.00") {
		t.Errorf("CSV scalars:\n%s", scalars)
	}

	var inputs struct {
		Data []struct {
			SessionID *string `json:"session_id"`
			Payloads  []struct {
				Messages []struct {
					Role    string `json:"role"`
					Content string `json:"content"`
				} `json:"messages"`
				Model  string `json:"model"`
				Stream bool   `json:"stream"`
			} `json:"payloads"`
		} `json:"data"`
	}
	if err := json.Unmarshal(read("inputs.json"), &inputs); err != nil {
		t.Fatal(err)
	}
	if len(inputs.Data) != 3 {
		t.Fatalf("inputs.json: %d sessions, want 3", len(inputs.Data))
	}
	for _, d := range inputs.Data {
		if d.SessionID == nil || len(d.Payloads) != 2 {
			t.Errorf("inputs.json entry %v: want a session_id and its 2 turns", d.SessionID)
			continue
		}
		for _, p := range d.Payloads {
			if p.Model != "reprise-mock" || !p.Stream || len(p.Messages) != 1 || p.Messages[0].Role != "user" || p.Messages[0].Content == "" {
				t.Errorf("session %s: payload %+v, want one user message (no live history)", *d.SessionID, p)
			}
		}
	}
}

// TestProfileCancellation: AIPerf's cancellation percentage and delay in
// seconds reach the run as replay's fraction and duration (the manifest
// records them), and a percentage out of range is a usage error.
func TestProfileCancellation(t *testing.T) {
	srv := startMockServer(t, nil)
	out := filepath.Join(t.TempDir(), "run")
	code, _, stderr := runCLI(t, "", "profile", "-m", "reprise-mock", "--url", srv.URL(), "--isl", "16", "--osl", "4", "--request-count", "2",
		"--request-cancellation-rate", "25", "--request-cancellation-delay", "0.5", "--artifact-dir", out, "--quiet", "--export", "none")
	if code != 0 {
		t.Fatalf("exit %d: %s", code, stderr)
	}
	b, err := os.ReadFile(filepath.Join(out, "manifest.json"))
	if err != nil {
		t.Fatal(err)
	}
	var m map[string]any
	if err := json.Unmarshal(b, &m); err != nil {
		t.Fatal(err)
	}
	find := func(key string) any {
		var walk func(v any) any
		walk = func(v any) any {
			if o, ok := v.(map[string]any); ok {
				if x, ok := o[key]; ok {
					return x
				}
				for _, x := range o {
					if r := walk(x); r != nil {
						return r
					}
				}
			}
			return nil
		}
		return walk(m)
	}
	if find("cancel_rate") != 0.25 || find("cancel_after") != "500ms" {
		t.Errorf("manifest cancel_rate %v, cancel_after %v; want 0.25 and 500ms", find("cancel_rate"), find("cancel_after"))
	}
	code, _, stderr = runCLI(t, "", "profile", "-m", "m", "--isl", "16", "--osl", "4", "--request-cancellation-rate", "150")
	if code != 2 || !strings.Contains(stderr, "--request-cancellation-rate 150: want a percentage in (0, 100]") {
		t.Errorf("exit %d: %s", code, stderr)
	}
}
