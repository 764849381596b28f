package main

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"math"
	"path/filepath"
	"reflect"
	"slices"
	"strconv"
	"strings"
	"time"

	"github.com/urfave/cli/v3"

	"github.com/reprise-bench/reprise"
	"github.com/reprise-bench/reprise/engine/adapter/native"
	"github.com/reprise-bench/reprise/internal/exitcode"
	"github.com/reprise-bench/reprise/replay"
	"github.com/reprise-bench/reprise/trace"
)

// profileAliases are AIPerf's spellings of replay flags with the same
// meaning and units, added as aliases on the profile command's copies.
var profileAliases = map[string][]string{
	"model":            {"model-names"},
	"isl":              {"prompt-input-tokens-mean", "rankings-passages-prompt-token-mean"},
	"batch-size":       {"b", "prompt-batch-size", "batch-size-text", "rankings-passages-mean"},
	"query-tokens":     {"rankings-query-prompt-token-mean"},
	"runs":             {"num-profile-runs"},
	"isl-stddev":       {"prompt-input-tokens-stddev"},
	"osl":              {"prompt-output-tokens-mean"},
	"osl-stddev":       {"prompt-output-tokens-stddev"},
	"block-size":       {"isl-block-size", "synthetic-input-tokens-block-size", "prompt-input-tokens-block-size"},
	"request-count":    {"num-requests"},
	"warmup-requests":  {"warmup-request-count", "num-warmup-requests"},
	"arrival":          {"arrival-pattern", "request-rate-mode"},
	"smoothness":       {"arrival-smoothness", "vllm-burstiness"},
	"goodput":          {"g"},
	"out":              {"artifact-dir", "output-artifact-dir"},
	"dataset-sampling": {"dataset-sampling-strategy"},
	"concurrency":      {"session-concurrency"},
	"speedup":          {"synthesis-speedup-ratio"},
	"batch-size-image": {"image-batch-size"},
	"batch-size-audio": {"audio-batch-size"},
	"batch-size-video": {"video-batch-size"},
}

// profileReplaced are replay flags whose AIPerf namesake means something
// else or takes other units: the profile command has its own flag of that
// name instead (see profileOwnFlags).
var profileReplaced = map[string]bool{
	"endpoint": true, "streaming": true, "warmup-duration": true, "export": true, "export-level": true,
	"gpu-telemetry": true, "auto-offset": true, "start-offset": true, "end-offset": true, "ui": true,
}

// profileFlags returns the profile command's flags: every replay flag
// (with AIPerf's aliases) but those profileReplaced names, then AIPerf's
// own flags mapped onto the same Options.
func profileFlags() []cli.Flag {
	all := append(append(append(append(append(replayFlags(), responseCapFlags()...), contextFlags()...), timingFlags()...), telemetryFlags()...),
		runsFlags()...)
	var out []cli.Flag
	for _, f := range all {
		name := f.Names()[0]
		if profileReplaced[name] {
			continue
		}
		if name == "extra-body" {
			setAliases(f, nil) // --extra-inputs is AIPerf's key:value list here
		}
		if extra := slices.Concat(profileAliases[name], profileLoadAliases[name]); len(extra) > 0 {
			setAliases(f, append(slices.Clone(f.Names()[1:]), extra...))
		}
		if _, ok := profileListFlags[name]; ok {
			f = asListFlag(f) // AIPerf's comma lists (profile_sweep.go)
		}
		out = append(out, f)
	}
	return append(append(append(append(out, profileOwnFlags()...), profileSweepFlags()...), profileHubFlags()...), profileDatasetFlags()...)
}

// setAliases sets the Aliases of a flag value of the cli package.
func setAliases(f cli.Flag, aliases []string) {
	v := reflect.ValueOf(f).Elem().FieldByName("Aliases")
	v.Set(reflect.ValueOf(aliases))
}

// profileOwnFlags are AIPerf's flags that differ from replay's in name,
// units or default.
func profileOwnFlags() []cli.Flag {
	const cat = "AIPerf"
	return []cli.Flag{
		&cli.StringFlag{Name: "endpoint-type", Value: "chat", Category: cat, Sources: envVars("endpoint-type"),
			Usage: "API `KIND`: replay's --endpoint names (chat, completions, responses, embeddings, rerank-tei, image_generation, video_generation, transcription, speech, …, a Wasm adapter) or AIPerf's (nim_embeddings, hf_tei_rankings, cohere_rankings, nim_rankings)"},
		&cli.StringFlag{Name: "endpoint", Aliases: []string{"custom-endpoint"}, Category: cat, Sources: envVars("custom-endpoint"),
			Usage: "AIPerf's endpoint `PATH`: a native endpoint's path (/v1/chat/completions, /v1/completions, /v1/embeddings, …) picks that endpoint, or must be --endpoint-type's; another path is refused"},
		&cli.BoolFlag{Name: "streaming", Category: cat, Sources: envVars("streaming"),
			Usage: "stream responses (needed for TTFT and ITL); off by default, as in AIPerf"},
		&cli.StringFlag{Name: "input-file", Category: cat, Sources: envVars("input-file"),
			Usage: "the trace or dataset `FILE` (replay's TRACE)"},
		&cli.StringFlag{Name: "public-dataset", Category: cat, Sources: envVars("public-dataset"),
			Usage: "AIPerf's public dataset `NAME`: sharegpt (downloaded from the Hugging Face Hub into its cache, every turn sent with the live replies); exclusive with --input-file"},
		&cli.StringFlag{Name: "custom-dataset-type", Category: cat, Sources: envVars("custom-dataset-type"),
			Usage: "`TYPE` of --input-file: single_turn, multi_turn, random_pool, mooncake_trace, bailian_trace, burst_gpt_trace, raw_payload, inputs_json, or any --trace-format"},
		&cli.BoolFlag{Name: "fixed-schedule", Category: cat, Sources: envVars("fixed-schedule"),
			Usage: "send every row at its timestamp (replay's --mode fixed)"},
		&cli.BoolFlag{Name: "no-fixed-schedule", Category: cat, Sources: envVars("no-fixed-schedule"),
			Usage: "ignore the file's timestamps: pace it by --request-rate, --user-centric-rate or --concurrency"},
		&cli.BoolFlag{Name: "fixed-schedule-auto-offset", Category: cat, Sources: envVars("fixed-schedule-auto-offset"),
			Usage: "start at the first timestamp rather than at timestamp 0"},
		&cli.IntFlag{Name: "fixed-schedule-start-offset", Category: cat, Sources: envVars("fixed-schedule-start-offset"),
			Usage: "send only rows with timestamp ≥ `MS` (that timestamp is t=0)"},
		&cli.IntFlag{Name: "fixed-schedule-end-offset", Category: cat, Sources: envVars("fixed-schedule-end-offset"),
			Usage: "send only rows with timestamp ≤ `MS`"},
		&cli.FloatFlag{Name: "benchmark-duration", Category: cat, Sources: envVars("benchmark-duration"),
			Usage: "stop sending after `S` seconds (replay's --duration)"},
		&cli.StringFlag{Name: "benchmark-grace-period", Category: cat, Sources: envVars("benchmark-grace-period"),
			Usage: "after --benchmark-duration, wait `S` seconds (or inf) for requests in flight (replay's --grace; default 30)"},
		&cli.FloatFlag{Name: "warmup-duration", Category: cat, Sources: envVars("warmup-duration"),
			Usage: "requests due in the first `S` seconds are warmup"},
		&cli.Uint64Flag{Name: "random-seed", Category: cat, Sources: envVars("random-seed"),
			Usage: "`SEED` of every random draw: schedule, sampling and prompt words (replay's --seed and --prompt-seed)"},
		&cli.FloatFlag{Name: "request-timeout-seconds", Category: cat, Sources: envVars("request-timeout-seconds"),
			Usage: "give up on a request after `S` seconds (replay's --timeout)"},
		&cli.StringSliceFlag{Name: "extra-inputs", Category: cat, Sources: envVars("extra-inputs"),
			Usage: "`KEY:VALUE` merged into every body (repeatable; true/false, null, numbers are typed), or one JSON object"},
		&cli.StringSliceFlag{Name: "gpu-telemetry", Category: cat, Sources: envVars("gpu-telemetry"),
			Usage: "GPU `SOURCE`: pynvml (NVML), dcgm, or a DCGM exporter's URL"},
		&cli.BoolFlag{Name: "no-gpu-telemetry", Category: cat, Sources: envVars("no-gpu-telemetry"),
			Usage: "collect no GPU samples (the default)"},
		&cli.StringFlag{Name: "export-level", Aliases: []string{"profile-export-level"}, Value: "records", Category: cat, Sources: envVars("export-level"),
			Usage: "`LEVEL`: summary or records (one record row per request), raw (also one row per response event)"},
		&cli.StringFlag{Name: "profile-export-prefix", Aliases: []string{"profile-export-file"}, Category: cat, Sources: envVars("profile-export-prefix"),
			Usage: "name AIPerf's export files `PREFIX`.jsonl, PREFIX.json and PREFIX.csv (not profile_export.jsonl, profile_export_aiperf.json and .csv); a GenAI-Perf --profile-export-file name loses its extension"},
		&cli.FloatFlag{Name: "slice-duration", Category: cat, Sources: envVars("slice-duration"),
			Usage: "also summarize the requests per slice of `S` seconds by send time: summary.json's time_slices and profile_export_aiperf_timeslices.json and .csv"},
		&cli.StringFlag{Name: "export", Value: "aiperf", Category: cat, Sources: envVars("export"),
			Usage: "`KIND`: aiperf writes AIPerf's export files (the default here); none writes reprise's files only"},
		&cli.StringFlag{Name: "ui-type", Aliases: []string{"ui"}, Category: cat, Sources: envVars("ui-type"),
			Usage: "`UI`: none (as --quiet), simple (the progress line) or dashboard (replay's --ui dashboard: full screen on a terminal)"},
		&cli.BoolFlag{Name: "use-legacy-max-tokens", Category: cat, Sources: envVars("use-legacy-max-tokens"),
			Usage: "send max_tokens (reprise always does; accepted for AIPerf command lines)"},
		&cli.FloatFlag{Name: "session-turn-delay-mean", Aliases: []string{"conversation-turn-delay-mean"}, Category: cat, Sources: envVars("session-turn-delay-mean"),
			Usage: "synthetic sessions: think time between turns, mean `MS` (replay's --turn-delay)"},
		&cli.FloatFlag{Name: "session-turn-delay-stddev", Aliases: []string{"conversation-turn-delay-stddev"}, Category: cat, Sources: envVars("session-turn-delay-stddev"),
			Usage: "synthetic sessions: think time between turns, standard deviation `MS`"},
		&cli.FloatFlag{Name: "session-delay-ratio", Aliases: []string{"conversation-turn-delay-ratio"}, Value: 1, Category: cat, Sources: envVars("session-delay-ratio"),
			Usage: "multiply every synthetic think time by `R`"},
		&cli.FloatFlag{Name: "concurrency-ramp-duration", Category: cat, Sources: envVars("concurrency-ramp-duration"),
			Usage: "raise the concurrency from 1 over `S` seconds (replay's --concurrency-ramp)"},
		&cli.FloatFlag{Name: "request-rate-ramp-duration", Category: cat, Sources: envVars("request-rate-ramp-duration"),
			Usage: "ramp the request rate up over `S` seconds (replay's --rate-ramp)"},
		&cli.FloatFlag{Name: "request-cancellation-rate", Category: cat, Sources: envVars("request-cancellation-rate"),
			Usage: "cancel `PCT` percent of the requests (replay's --cancel-rate as a fraction)"},
		&cli.FloatFlag{Name: "request-cancellation-delay", Category: cat, Sources: envVars("request-cancellation-delay"),
			Usage: "cancel `S` seconds after the request was sent whole (replay's --cancel-after)"},
		&cli.BoolWithInverseFlag{Name: "profile-run-disable-warmup-after-first", Value: true, Category: cat, Sources: envVars("profile-run-disable-warmup-after-first"),
			Usage: "with --num-profile-runs, warm up in the first run only (replay's --warmup-once; on by default, as in AIPerf)"},
		&cli.BoolWithInverseFlag{Name: "set-consistent-seed", Value: true, Category: cat, Sources: envVars("set-consistent-seed"),
			Usage: "with --num-profile-runs, every run sends the same prompts (on by default, as in AIPerf); --no-set-consistent-seed is --vary-seed-per-trial"},
		&cli.BoolWithInverseFlag{Name: "vary-seed-per-trial", Category: cat, Sources: envVars("vary-seed-per-trial"),
			Usage: "with --num-profile-runs, each run gets its own prompt seed (its prompts miss the cache the run before filled)"},
		&cli.FloatFlag{Name: "prefill-concurrency-ramp-duration", Category: cat, Sources: envVars("prefill-concurrency-ramp-duration"),
			Usage: "raise --prefill-concurrency from 1 over `S` seconds (replay's --prefill-concurrency-ramp)"},
		&cli.FloatFlag{Name: "wait-for-model-timeout", Category: cat, Sources: envVars("wait-for-model-timeout"),
			Usage: "poll the server for up to `S` seconds until it serves the model (replay's --wait-for-model; 0 = do not wait)"},
		&cli.FloatFlag{Name: "wait-for-model-interval", Value: reprise.DefaultWaitForModelInterval.Seconds(), Category: cat, Sources: envVars("wait-for-model-interval"),
			Usage: "`S` seconds between two readiness polls (replay's --wait-interval)"},
		&cli.FloatFlag{Name: "reset-kv-cache-timeout-seconds", Value: reprise.DefaultResetCacheTimeout.Seconds(), Category: cat, Sources: envVars("reset-kv-cache-timeout-seconds"),
			Usage: "give up on the cache reset after `S` seconds (replay's --reset-cache-timeout)"},
		&cli.IntFlag{Name: "num-warmup-sessions", Category: cat, Sources: envVars("num-warmup-sessions"),
			Usage: "warm up with `N` requests (every turn counts; replay's --warmup-requests)"},
		&cli.FloatFlag{Name: "warmup-grace-period", Category: cat, Sources: envVars("warmup-grace-period"),
			Usage: "after --warmup-duration, let the warmup phase's requests finish for `S` seconds (replay's --warmup-grace)"},
		&cli.FloatFlag{Name: "warmup-concurrency-ramp-duration", Category: cat, Sources: envVars("warmup-concurrency-ramp-duration"),
			Usage: "raise the warmup phase's concurrency from 1 over `S` seconds"},
		&cli.FloatFlag{Name: "warmup-request-rate-ramp-duration", Category: cat, Sources: envVars("warmup-request-rate-ramp-duration"),
			Usage: "ramp the warmup phase's rate over `S` seconds"},
		&cli.FloatFlag{Name: "warmup-prefill-concurrency-ramp-duration", Category: cat, Sources: envVars("warmup-prefill-concurrency-ramp-duration"),
			Usage: "raise the warmup phase's prefill cap from 1 over `S` seconds"},
		&cli.FloatFlag{Name: "inter-turn-delay-cap-seconds", Category: cat, Sources: envVars("inter-turn-delay-cap-seconds"),
			Usage: "cap every think time between turns (and a dependent row's delay) at `S` seconds (replay's --max-turn-delay)"},
		&cli.StringFlag{Name: "model-selection-strategy", Category: cat, Sources: envVars("model-selection-strategy"),
			Usage: "with several models (-m A,B,…), which model a row is sent to: round_robin (the default) or random (seeded); records.target is the model's index"},
		&cli.StringFlag{Name: "url-strategy", Category: cat, Sources: envVars("url-strategy"),
			Usage: "how requests are spread over several --url: round_robin (AIPerf's), or replay's --url-policy names (least-in-flight, fan-out)"},
		&cli.FloatFlag{Name: "profile-run-cooldown-seconds", Category: cat, Sources: envVars("profile-run-cooldown-seconds"),
			Usage: "with --num-profile-runs, pause `S` seconds between two runs (replay's --run-cooldown)"},
		&cli.BoolFlag{Name: "verbose", Aliases: []string{"v"}, Category: cat, Sources: envVars("verbose"),
			Usage: "log at debug level"},
		configFlag("AIPerf's sections: endpoint, input, loadgen, output, tokenizer, …, sweep, reprise"),
	}
}

// aiperfEndpoints maps AIPerf's --endpoint-type names to reprise's
// endpoints where they differ.
var aiperfEndpoints = map[string]string{
	"nim_embeddings": "nim-embeddings", "hf_tei_rankings": "rerank-tei", "cohere_rankings": "rerank-cohere",
	"nim_rankings": "ranking-nim",
}

// endpointForPath returns the native endpoint that AIPerf's --endpoint
// PATH names: kind itself when PATH is its path, else (kind not given
// explicitly) the first native endpoint served at PATH. reprise sends to
// an endpoint's own path, so any other PATH is an error.
func endpointForPath(path, kind string, explicit bool) (string, error) {
	path = "/" + strings.TrimLeft(path, "/")
	var at []string
	for _, e := range native.List() {
		if e.Adapter.Info().Path == path {
			if e.Name == kind {
				return kind, nil
			}
			at = append(at, e.Name)
		}
	}
	const how = "for another path or body shape, write a Wasm adapter (reprise adapters new) and pass it as --endpoint-type FILE.wasm"
	switch {
	case len(at) == 0:
		return kind, fmt.Errorf("--endpoint %s: no native endpoint is served at that path; %s", path, how)
	case explicit:
		return kind, fmt.Errorf("--endpoint %s is the path of %s, not of --endpoint-type %s; give one of them", path, strings.Join(at, " or "), kind)
	}
	return at[0], nil
}

// otelRefusal is the answer to AIPerf's OpenTelemetry flags: reprise
// serves its live metrics for a scrape instead of pushing OTLP (RATIONALE.md,
// "Why live metrics for Prometheus and no OTLP export?").
const otelRefusal = "no OTLP push: serve the same live metrics for a scrape with --metrics-addr HOST:PORT " +
	"(an OpenTelemetry Collector's prometheus receiver forwards them as OTLP); the run directory's Parquet files are the full export"

// aiperfUnsupported says, for each `aiperf profile` flag the profile
// command does not take, what to do instead or why not. A flag here that
// is given exits 2 with its sentence.
var aiperfUnsupported = map[string]string{
	"transport":                             "reprise speaks HTTP (add --http2 for HTTP/2); drop the flag",
	"transport-type":                        "reprise speaks HTTP (add --http2 for HTTP/2); drop the flag",
	"connection-reuse-strategy":             "reprise pools connections (--max-connections caps them); per-session or no reuse is not offered",
	"hf-subset":                             "reprise's --public-dataset names one file (sharegpt); export the subset to Parquet or JSONL and pass it with --input-file (--prompt-column names the text)",
	"dataset-filter":                        "reprise's --public-dataset is read whole; filter the file first (e.g. with duckdb or jq) and pass it with --input-file",
	"rankings-passages-stddev":              "rankings requests have fixed counts and lengths here (--batch-size passages, --isl tokens each, --query-tokens); drop the standard deviation",
	"rankings-passages-prompt-token-stddev": "rankings requests have fixed counts and lengths here (--batch-size passages, --isl tokens each, --query-tokens); drop the standard deviation",
	"rankings-query-prompt-token-stddev":    "rankings requests have fixed counts and lengths here (--batch-size passages, --isl tokens each, --query-tokens); drop the standard deviation",
	"synthesis-prefix-len-multiplier":       "rescale the trace first with reprise synthesize, then replay it",
	"synthesis-prefix-root-multiplier":      "rescale the trace first with reprise synthesize, then replay it",
	"synthesis-prompt-len-multiplier":       "rescale the trace first with reprise synthesize, then replay it",
	"synthesis-output-len-multiplier":       "rescale the trace first with reprise synthesize, then replay it",
	"synthesis-max-osl":                     "cap output lengths in the trace first (reprise synthesize), then replay it",
	"adaptive-scale":                        "adaptive scaling is not supported; run a sweep of --concurrency values instead",
	"adaptive-sustain-duration":             "adaptive scaling is not supported; run a sweep of --concurrency values instead",
	"adaptive-assessment-period":            "adaptive scaling is not supported; run a sweep of --concurrency values instead",
	"adaptive-scale-sla":                    "adaptive scaling is not supported; run a sweep of --concurrency values instead",
	"tokenizer-trust-remote-code":           "reprise runs no Python, so no tokenizer code from a repository: it reads tokenizer.json or a GGUF file (--tokenizer); a model whose tokenizer needs remote code is named in the error",
	"export-http-trace":                     "records always carry the HTTP timings (dns, connect, headers, bytes); drop the flag",
	"show-trace-timing":                     "records always carry the HTTP timings (dns, connect, headers, bytes); drop the flag",
	"auto-plot":                             "plots are drawn afterwards: run reprise plot ARTIFACT_DIR (aiperf plot's flags)",
	"no-auto-plot":                          "plots are drawn afterwards: run reprise plot ARTIFACT_DIR (aiperf plot's flags)",
	"plot-required":                         "plots are drawn afterwards: run reprise plot ARTIFACT_DIR (aiperf plot's flags)",
	"server-metrics-formats":                "server metrics are written as Parquet (metrics table of the run directory); drop the flag",
	"network-latency-automatic":             "network-adjusted metrics are not computed; records carry connect and DNS times",
	"network-latency-mean":                  "network-adjusted metrics are not computed; records carry connect and DNS times",
	"network-latency-ping-interval":         "network-adjusted metrics are not computed; records carry connect and DNS times",
	"otel-url":                              otelRefusal,
	"stream":                                otelRefusal,
	"otel-resource-attributes":              otelRefusal,
	"gen-ai-provider":                       otelRefusal,
	"convergence-mode":                      "only the ci_width mode (AIPerf's default) exists: --convergence-threshold bounds the interval's relative half-width; drop the flag",
	"extra-verbose":                         "give reprise --log-level debug before the command",
	"vv":                                    "give reprise --log-level debug before the command",
	"workers-max":                           "reprise has no worker processes; --senders N sets the most requests in flight",
	"max-workers":                           "reprise has no worker processes; --senders N sets the most requests in flight",
	"record-processor-service-count":        "reprise has no record processor services; drop the flag",
	"record-processors":                     "reprise has no record processor services; drop the flag",
	"api-port":                              "reprise serves no API while it runs; drop the flag",
	"api-host":                              "reprise serves no API while it runs; drop the flag",
	"zmq-host":                              "reprise is one process (no ZMQ); drop the flag",
	"zmq-ipc-path":                          "reprise is one process (no ZMQ); drop the flag",
	"zmq-dual-bind":                         "reprise is one process (no ZMQ); drop the flag",
	"apply-chat-template":                   "use --isl-correction N for the tokens the chat template adds",
	"cache-bust":                            "synthetic prompts are already distinct per request; drop the flag",
	"prompt-corpus":                         "reprise builds prompts from its own word list (--prompt-seed picks them); drop the flag",
	"failed-request-threshold":              "use --max-error-rate R (a fraction): over it the run exits 3",
	"request-rate-series":                   "a series of rates is a trace: generate one with reprise synthesize and replay it",
	"stats-interval":                        "the progress line updates by itself; drop the flag",
	"backend":                               "GenAI-Perf's Triton backends are not supported; reprise speaks the OpenAI API (--endpoint-type chat or completions)",
	"grpc-method":                           "gRPC endpoints are not supported; reprise speaks HTTP",
	"checkpoint-dir":                        "GenAI-Perf's checkpoints do not exist here; drop the flag",
	"enable-checkpointing":                  "GenAI-Perf's checkpoints do not exist here; drop the flag",
	"generate-plots":                        "plots are drawn afterwards: run reprise plot ARTIFACT_DIR (aiperf plot's flags)",
	"max-threads":                           "reprise has no worker threads to size; --senders N sets the most requests in flight",
	"measurement-interval":                  "use --benchmark-duration S",
	"p":                                     "use --benchmark-duration S",
	"stability-percentage":                  "use --benchmark-duration S",
	"s":                                     "use --benchmark-duration S",
	"output-tokens-mean-deterministic":      "reprise sends ignore_eos by default, so outputs have the asked length (--no-ignore-eos to let the model stop)",
	"scenario":                              "no scenarios: give the flags",
	"unsafe-override":                       "no scenarios: give the flags",
}

// aiperfFamilies are prefixes of AIPerf flag families that the profile
// command does not take, each with its sentence (image, audio and video
// synthesis, Optuna's sampler settings).
var aiperfFamilies = []struct{ prefix, why string }{
	{"video-audio-", "synthetic videos carry no audio track; send audio with --audio-length-mean"},
	{"mlflow-", "runs are not pushed to MLflow; the run directory's summary.json and Parquet files hold every number (log them as artifacts afterwards)"},
	{"wandb-", "runs are not pushed to Weights & Biases; the run directory's summary.json and Parquet files hold every number (log them afterwards)"},
	{"server-metrics-url", "GenAI-Perf's DCGM URL is --gpu-telemetry URL in AIPerf and here; --server-metrics URL scrapes a server's Prometheus metrics"},
	{"sweep-list", "GenAI-Perf analyze's sweeps: give reprise sweep the values as a comma list (--concurrency 1,8,32)"},
	{"sweep-range", "GenAI-Perf analyze's sweeps: give reprise sweep a range (--request-rate 1:64:x2)"},
	{"optuna-", "reprise's model-based search is its own (a Gaussian process with constrained expected improvement, --search-space and --search-*), not Optuna: its sampler settings do not apply; drop the flag"},
}

// aiperfWhy returns the sentence for an AIPerf flag name the profile
// command does not take, or "".
func aiperfWhy(name string) string {
	if why, ok := aiperfUnsupported[name]; ok {
		return why
	}
	for _, f := range aiperfFamilies {
		if strings.HasPrefix(name, f.prefix) {
			return f.why
		}
	}
	return ""
}

// profileUsageError is the profile command's OnUsageError: an AIPerf flag
// it does not take is explained; anything else goes as for every command.
func profileUsageError(c *cli.Command, err error) error {
	if name, ok := strings.CutPrefix(err.Error(), unknownFlagPrefix); ok {
		name = strings.TrimLeft(name, "-")
		if why := aiperfWhy(name); why != "" {
			return exitcode.UsageError(fmt.Errorf("aiperf's %s is not supported: %s", dashed(name), why), "see 'reprise profile --help' and docs/format/cli.md")
		}
	}
	return usageError(c, err)
}

// profileCommand is `reprise profile`: aiperf profile's command line on
// reprise's engine, the same run as replay with the same outputs plus
// AIPerf's export files.
func profileCommand(a *app) *cli.Command {
	cmd := &cli.Command{
		Name:  "profile",
		Usage: "run an `aiperf profile` command line unchanged on reprise's engine (AIPerf's flags, replay's run and outputs)",
		Description: "Accepts aiperf profile's flags where reprise has the same meaning and runs the same replay as\n" +
			"'reprise replay' (same engine, same run directory), with AIPerf's defaults: non-streaming unless\n" +
			"--streaming, 10 requests when nothing else bounds the run, the artifact directory\n" +
			"artifacts/<model>-openai-<endpoint type>-<stimulus>, and AIPerf's export files (profile_export.jsonl,\n" +
			"profile_export_aiperf.json and .csv, inputs.json). An AIPerf flag reprise does not take exits 2 with\n" +
			"what to use instead. Every replay flag works here too.\n\n" +
			"Example:\n" +
			"  reprise profile -m Qwen/Qwen3-0.6B --url http://localhost:8000 --endpoint-type chat --streaming \\\n" +
			"    --isl 550 --osl 128 --concurrency 8 --request-count 100",
		ArgsUsage: " ",
		Flags:     profileFlags(),
		Action: func(ctx context.Context, cmd *cli.Command) error {
			if args := cmd.Args().Slice(); len(args) > 0 {
				return exitcode.UsageError(fmt.Errorf("profile takes no arguments, got %s", strings.Join(args, " ")),
					"give the dataset or trace with --input-file")
			}
			o, quiet, err := profileOptions(cmd)
			if err != nil {
				return exitcode.UsageError(err, "see 'reprise profile --help'")
			}
			if cmd.Bool("verbose") {
				if l, err := newLogger(a.stderr, "debug", "text"); err == nil {
					a.log = l
				}
			}
			if o.Trace.Path == "-" {
				o.Trace.Reader = a.stdin
			}
			runs, err := runsConfigFrom(cmd)
			if err != nil {
				return exitcode.UsageError(err, "see 'reprise profile --help'")
			}
			// AIPerf: warmup in the first run only and the same seed in
			// every run, unless told otherwise.
			runs.WarmupOnce = runs.WarmupOnce || cmd.Bool("profile-run-disable-warmup-after-first")
			runs.FreshPromptSeed = cmd.Bool("vary-seed-per-trial") || !cmd.Bool("set-consistent-seed")
			if cmd.IsSet("profile-run-cooldown-seconds") {
				var errs []error
				runs.Cooldown = seconds(&errs, "profile-run-cooldown-seconds", cmd.Float("profile-run-cooldown-seconds"))
				if runs.Cooldown < 0 {
					errs = append(errs, errors.New("--profile-run-cooldown-seconds: want seconds ≥ 0"))
				}
				if err := errors.Join(errs...); err != nil {
					return exitcode.UsageError(err, "see 'reprise profile --help'")
				}
			}
			ps, _, _ := profileSweepFrom(cmd)
			recipe, rerr := profileRecipeFrom(cmd)
			search, serr := profileSearchFrom(cmd)
			if profileSweeps(&ps, recipe, search) || rerr != nil || serr != nil {
				return runProfileSweep(ctx, a, cmd, o, runs, quiet)
			}
			return replayOnceOrRuns(ctx, a, o, runs, quiet, "--num-profile-runs replays the input", "see 'reprise profile --help'")
		},
	}
	cmd.OnUsageError = func(_ context.Context, c *cli.Command, err error, _ bool) error {
		return profileUsageError(c, err)
	}
	return cmd
}

// profileOptions maps the profile command's flags to reprise.Options:
// replay's mapping, then AIPerf's flags and defaults over it.
func profileOptions(cmd *cli.Command) (reprise.Options, bool, error) {
	var errs []error
	rc, err := timingConfigFrom(cmd)
	errs = append(errs, err)
	o := replayOptions(cmd)
	// The flags that take a comma list (profile_sweep.go): a single
	// value, or a list's first, is the base run's.
	_, vals, err := profileSweepFrom(cmd)
	errs = append(errs, err)
	applyProfileValues(&o, &rc, vals)
	// AIPerf's tokenizer is the model's unless one is named.
	o.TokenizerFromModel = !cmd.IsSet("tokenizer")
	quiet := cmd.Bool("quiet")
	switch ui := cmd.String("ui-type"); ui {
	case "none":
		quiet, o.UI = true, reprise.UILine
	case "", "simple":
		o.UI = reprise.UILine
	case "dashboard":
		o.UI = reprise.UIDashboard
	default:
		errs = append(errs, fmt.Errorf("--ui-type %q: want none, simple or dashboard", ui))
	}

	o.Endpoint = cmd.String("endpoint-type")
	if e, ok := aiperfEndpoints[o.Endpoint]; ok {
		o.Endpoint = e
	}
	if path := cmd.String("endpoint"); path != "" {
		e, err := endpointForPath(path, o.Endpoint, cmd.IsSet("endpoint-type"))
		errs = append(errs, err)
		o.Endpoint = e
	}
	o.Streaming = cmd.Bool("streaming")
	o.Trace.Path, o.Trace.PublicDataset = cmd.String("input-file"), cmd.String("public-dataset")
	if t := cmd.String("custom-dataset-type"); t != "" {
		if o.Trace.Path == "" {
			errs = append(errs, errors.New("--custom-dataset-type needs --input-file"))
		}
		o.Trace.Format = t
	}
	if cmd.IsSet("random-seed") {
		rc.Seed = cmd.Uint64("random-seed")
		o.Prompts.Seed = rc.Seed
	}
	if cmd.IsSet("request-timeout-seconds") {
		o.Timeout = seconds(&errs, "request-timeout-seconds", cmd.Float("request-timeout-seconds"))
	}
	extra, err := extraInputs(cmd.String("extra-body"), cmd.StringSlice("extra-inputs"))
	errs = append(errs, err)
	o.ExtraBody = extra
	switch lvl := cmd.String("export-level"); lvl {
	case "summary", "records":
		o.Output.ExportLevel = "records"
	case "raw", "events":
		o.Output.ExportLevel = "events"
	default:
		errs = append(errs, fmt.Errorf("--export-level %q: want summary, records or raw", lvl))
	}
	switch exp := cmd.String("export"); exp {
	case "aiperf":
		o.Output.Export = "aiperf"
	case "none", "":
		o.Output.Export = ""
	default:
		errs = append(errs, fmt.Errorf("--export %q: want aiperf or none", exp))
	}
	if cmd.IsSet("slice-duration") {
		if s := cmd.Float("slice-duration"); !(s > 0) {
			errs = append(errs, fmt.Errorf("--slice-duration %v: want seconds > 0", s))
		} else {
			o.Output.SliceDuration = seconds(&errs, "slice-duration", s)
		}
	}
	if p := cmd.String("profile-export-prefix"); p != "" {
		// GenAI-Perf's --profile-export-file names a file (x.json): its
		// stem is the prefix, as AIPerf takes it.
		o.Output.ExportPrefix = strings.TrimSuffix(strings.TrimSuffix(strings.TrimSuffix(p, ".jsonl"), ".json"), ".csv")
	}

	// Timing: AIPerf's mode selection (fixed schedule, then user-centric,
	// then rate, then concurrency) where no --mode says otherwise.
	fixed, noFixed := cmd.Bool("fixed-schedule"), cmd.Bool("no-fixed-schedule")
	switch {
	case fixed && noFixed:
		errs = append(errs, errors.New("--fixed-schedule and --no-fixed-schedule exclude each other"))
	case fixed:
		rc.Mode = replay.ModeFixed
	case noFixed && rc.Mode == replay.ModeAuto:
		switch {
		case rc.UserCentricRate > 0:
			rc.Mode = replay.ModeUserCentric
		case rc.RequestRate > 0:
			rc.Mode = replay.ModeRate
		default:
			rc.Mode = replay.ModeConcurrency
		}
	}
	rc.AutoOffset = cmd.Bool("fixed-schedule-auto-offset")
	if ms := cmd.Int("fixed-schedule-start-offset"); ms > 0 {
		rc.StartOffset = time.Duration(ms) * time.Millisecond
	}
	if ms := cmd.Int("fixed-schedule-end-offset"); ms > 0 {
		rc.EndOffset = time.Duration(ms) * time.Millisecond
	}
	if cmd.IsSet("benchmark-duration") {
		rc.Duration = seconds(&errs, "benchmark-duration", cmd.Float("benchmark-duration"))
	}
	if g := cmd.String("benchmark-grace-period"); g != "" {
		if !cmd.IsSet("benchmark-duration") {
			errs = append(errs, errors.New("--benchmark-grace-period needs --benchmark-duration (as in AIPerf)"))
		}
		if strings.EqualFold(g, "inf") {
			rc.Grace = 365 * 24 * time.Hour
		} else if s, err := strconv.ParseFloat(g, 64); err != nil || s < 0 || math.IsNaN(s) {
			errs = append(errs, fmt.Errorf("--benchmark-grace-period %q: want seconds ≥ 0 or inf", g))
		} else {
			rc.Grace = seconds(&errs, "benchmark-grace-period", s)
		}
	} else if !cmd.IsSet("grace") {
		rc.Grace = 30 * time.Second // AIPerf's default
	}
	if cmd.IsSet("concurrency-ramp-duration") {
		rc.ConcurrencyRamp = seconds(&errs, "concurrency-ramp-duration", cmd.Float("concurrency-ramp-duration"))
	}
	if cmd.IsSet("request-rate-ramp-duration") {
		rc.RateRamp = seconds(&errs, "request-rate-ramp-duration", cmd.Float("request-rate-ramp-duration"))
	}
	ratio := cmd.Float("session-delay-ratio")
	if ratio < 0 || math.IsNaN(ratio) {
		errs = append(errs, fmt.Errorf("--session-delay-ratio %v: want a factor ≥ 0", ratio))
	}
	if cmd.IsSet("session-turn-delay-mean") {
		o.Synthetic.TurnDelay = seconds(&errs, "session-turn-delay-mean", cmd.Float("session-turn-delay-mean")/1000*ratio)
	}
	if cmd.IsSet("session-turn-delay-stddev") {
		o.Synthetic.TurnDelayStdDev = seconds(&errs, "session-turn-delay-stddev", cmd.Float("session-turn-delay-stddev")/1000*ratio)
	}
	if cmd.IsSet("request-cancellation-rate") {
		pct := cmd.Float("request-cancellation-rate")
		if pct <= 0 || pct > 100 || math.IsNaN(pct) {
			errs = append(errs, fmt.Errorf("--request-cancellation-rate %v: want a percentage in (0, 100]", pct))
		}
		o.CancelRate = pct / 100
	}
	if cmd.IsSet("request-cancellation-delay") {
		o.CancelAfter = seconds(&errs, "request-cancellation-delay", cmd.Float("request-cancellation-delay"))
	}
	if cmd.IsSet("warmup-duration") {
		rc.WarmupDuration = seconds(&errs, "warmup-duration", cmd.Float("warmup-duration"))
	}
	if cmd.IsSet("prefill-concurrency-ramp-duration") {
		rc.PrefillConcurrencyRamp = seconds(&errs, "prefill-concurrency-ramp-duration", cmd.Float("prefill-concurrency-ramp-duration"))
	}
	// AIPerf's gamma shape alone picks the gamma pattern.
	if cmd.IsSet("smoothness") && !cmd.IsSet("arrival") {
		rc.Arrival = replay.ArrivalGamma
	}
	if cmd.IsSet("inter-turn-delay-cap-seconds") {
		rc.MaxTurnDelay = seconds(&errs, "inter-turn-delay-cap-seconds", cmd.Float("inter-turn-delay-cap-seconds"))
	}
	if cmd.IsSet("wait-for-model-timeout") {
		o.Server.WaitForModel = seconds(&errs, "wait-for-model-timeout", cmd.Float("wait-for-model-timeout"))
	}
	if cmd.IsSet("wait-for-model-interval") {
		o.Server.WaitInterval = seconds(&errs, "wait-for-model-interval", cmd.Float("wait-for-model-interval"))
	}
	if cmd.IsSet("reset-kv-cache-timeout-seconds") {
		o.Server.ResetCacheTimeout = seconds(&errs, "reset-kv-cache-timeout-seconds", cmd.Float("reset-kv-cache-timeout-seconds"))
	}
	switch us := cmd.String("url-strategy"); us {
	case "":
	case "round_robin", reprise.URLPolicyRoundRobin:
		o.URLPolicy = reprise.URLPolicyRoundRobin
	case reprise.URLPolicyLeastInFlight, "least_in_flight", reprise.URLPolicyFanOut, "fan_out":
		o.URLPolicy = strings.ReplaceAll(us, "_", "-")
	default:
		errs = append(errs, fmt.Errorf("--url-strategy %q: want round_robin (or least-in-flight, fan-out)", us))
	}
	// AIPerf sends 10 requests when nothing else bounds a run that is not
	// a fixed schedule: a synthetic load, or a file paced by a load model
	// named outright. A file (or a public dataset) in the auto mode is
	// sent once, whole.
	if rc.RequestCount == 0 && rc.Duration == 0 && rc.Mode != replay.ModeFixed && o.Accuracy.Mix == 0 && o.Accuracy.Benchmark == "" && o.Accuracy.File == "" &&
		(o.Trace.Path == "" && o.Trace.PublicDataset == "" || rc.Mode != replay.ModeAuto) && o.Synthetic.Sessions == 0 {
		rc.RequestCount = 10
	}
	// Without a load model AIPerf runs one request at a time (its
	// concurrency burst), unless a file's timestamps make a fixed schedule.
	if rc.Mode == replay.ModeAuto && rc.RequestRate == 0 && rc.UserCentricRate == 0 && rc.Concurrency == 0 &&
		(o.Trace.Path == "" || !fileHasTimestamps(o.Trace.Path, o.Trace.Format, o.Trace.Columns)) {
		rc.Concurrency = 1
	}
	o.Replay = rc
	warmupFrom(cmd, &o)
	for _, f := range []struct {
		flag string
		to   *time.Duration
	}{{"warmup-grace-period", &o.Warmup.Grace}, {"warmup-concurrency-ramp-duration", &o.Warmup.ConcurrencyRamp},
		{"warmup-request-rate-ramp-duration", &o.Warmup.RateRamp}, {"warmup-prefill-concurrency-ramp-duration", &o.Warmup.PrefillConcurrencyRamp}} {
		if cmd.IsSet(f.flag) {
			*f.to = seconds(&errs, f.flag, cmd.Float(f.flag))
		}
	}
	if cmd.IsSet("num-warmup-sessions") {
		o.Replay.WarmupRequests = cmd.Int("num-warmup-sessions")
	}
	warmupPhase(&o)

	tc, err := telemetryConfigFrom(cmd)
	errs = append(errs, err)
	if !cmd.Bool("no-gpu-telemetry") {
		for _, g := range cmd.StringSlice("gpu-telemetry") {
			switch {
			case g == "pynvml" || g == "nvml":
				tc.GPU = "nvml"
			case g == "dcgm":
				tc.GPU, tc.DCGMURL = "dcgm", reprise.DefaultDCGMURL
			case strings.HasPrefix(g, "http://") || strings.HasPrefix(g, "https://"):
				tc.GPU, tc.DCGMURL = "dcgm", g
			case g == "dashboard":
			default:
				errs = append(errs, fmt.Errorf("--gpu-telemetry %q: want pynvml, dcgm or a DCGM exporter URL (amdsmi and custom metric files are not read)", g))
			}
		}
	}
	o.Telemetry = tc

	errs = append(errs, profileHubOptions(cmd, &o)) // profile_hub.go
	if models := commaList([]string{o.Model}); len(models) > 1 {
		mo, err := reprise.WithModels(o, models, cmd.String("model-selection-strategy"))
		if err != nil {
			errs = append(errs, fmt.Errorf("--model %s: %w", o.Model, err))
		} else {
			o = mo
		}
	}
	if o.Output.Dir == "" {
		o.Output.Dir = filepath.Join("artifacts", artifactName(&o))
	}
	if !cmd.IsSet("overwrite") {
		o.Output.Overwrite = true // AIPerf writes over its artifact directory
	}
	errs = append(errs, profileDataset(cmd, &o))
	return o, quiet, errors.Join(errs...)
}

// artifactName is AIPerf's artifact subdirectory:
// {model, / → _}-openai-{endpoint type}-{stimulus}.
func artifactName(o *reprise.Options) string {
	stim := "concurrency" + strconv.Itoa(max(o.Replay.Concurrency, 1))
	switch {
	case o.Replay.Mode == replay.ModeFixed:
		stim = "fixed_schedule"
	case o.Replay.UserCentricRate > 0:
		stim = fmt.Sprintf("user_centric-users%d-qps%s", o.Replay.NumUsers, strconv.FormatFloat(o.Replay.UserCentricRate, 'f', -1, 64))
	case o.Replay.RequestRate > 0:
		stim = "request_rate" + strconv.FormatFloat(o.Replay.RequestRate, 'f', -1, 64)
	}
	model := strings.ReplaceAll(o.Model, "/", "_")
	if model == "" {
		model = "model"
	}
	return model + "-openai-" + filepath.Base(o.Endpoint) + "-" + stim
}

// maxSeconds is the longest time a time.Duration holds, in seconds
// (about 292 years).
const maxSeconds = float64(math.MaxInt64) / float64(time.Second)

// seconds converts AIPerf's float seconds of --flag; a value no Duration
// holds (NaN, infinite, beyond ±292 years) is added to errs, never
// wrapped around to a negative duration.
func seconds(errs *[]error, flag string, s float64) time.Duration {
	if !(math.Abs(s) <= maxSeconds) {
		*errs = append(*errs, fmt.Errorf("--%s: %v seconds is out of range; want a finite number of seconds up to %.4g", flag, s, maxSeconds))
		return 0
	}
	return time.Duration(s * float64(time.Second))
}

// extraInputs merges --extra-body (a JSON object) and AIPerf's
// --extra-inputs (KEY:VALUE pairs, values typed as AIPerf does, or JSON
// objects) into one JSON object; "" when both are empty.
func extraInputs(body string, pairs []string) (string, error) {
	if len(pairs) == 0 {
		return body, nil
	}
	m := map[string]any{}
	if body != "" {
		if err := json.Unmarshal([]byte(body), &m); err != nil {
			return "", fmt.Errorf("--extra-body: want a JSON object: %v", err)
		}
	}
	for _, p := range pairs {
		p = strings.TrimSpace(p)
		if strings.HasPrefix(p, "{") {
			var obj map[string]any
			if err := json.Unmarshal([]byte(p), &obj); err != nil {
				return "", fmt.Errorf("--extra-inputs %q: want KEY:VALUE or a JSON object: %v", p, err)
			}
			for k, v := range obj {
				m[k] = v
			}
			continue
		}
		k, v, ok := strings.Cut(p, ":")
		if !ok || strings.TrimSpace(k) == "" {
			return "", fmt.Errorf("--extra-inputs %q: want KEY:VALUE or a JSON object", p)
		}
		m[strings.TrimSpace(k)] = typedValue(strings.TrimSpace(v))
	}
	b, err := json.Marshal(m)
	return string(b), err
}

// typedValue types an --extra-inputs value as AIPerf does: true/false,
// none/null, an integer, a float, else a string.
func typedValue(v string) any {
	switch strings.ToLower(v) {
	case "true":
		return true
	case "false":
		return false
	case "none", "null":
		return nil
	}
	if i, err := strconv.ParseInt(v, 10, 64); err == nil {
		return i
	}
	if f, err := strconv.ParseFloat(v, 64); err == nil && !math.IsInf(f, 0) && !math.IsNaN(f) {
		return f
	}
	return v
}

// fileHasTimestamps reports whether the first row of the trace or dataset
// at path has an arrival time (then the run is a fixed schedule, as AIPerf
// auto-enables it); false when it cannot be read (the run reports why).
func fileHasTimestamps(path, format string, cols trace.Columns) bool {
	if path == "-" {
		return true // standard input is read once, by the run
	}
	f, err := trace.ParseFormat(format)
	if err != nil {
		return false
	}
	r, err := trace.Open(path, trace.Options{Format: f, Columns: cols, SkipInvalid: true, MaxRows: 1})
	if err != nil {
		return false
	}
	defer r.Close()
	var row trace.Row
	return r.Next(&row) == nil && row.HasOffset
}
