package main

import (
	"context"
	"errors"
	"fmt"
	"reflect"
	"slices"
	"strings"

	"github.com/urfave/cli/v3"

	"github.com/reprise-bench/reprise"
	"github.com/reprise-bench/reprise/internal/exitcode"
	"github.com/reprise-bench/reprise/internal/flagmap"
	"github.com/reprise-bench/reprise/internal/sweep"
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
	"server-metrics":   {"server-metrics-url", "server-metrics-urls"}, // GenAI-Perf's Triton metrics page
	"speedup":          {"synthesis-speedup-ratio"},
	"rate-series":      {"request-rate-series"},
	"batch-size-image": {"image-batch-size"},
	"batch-size-audio": {"audio-batch-size"},
	"batch-size-video": {"video-batch-size"},

	"passages-stddev":       {"rankings-passages-stddev"},
	"passage-tokens-stddev": {"rankings-passages-prompt-token-stddev"},
	"query-tokens-stddev":   {"rankings-query-prompt-token-stddev"},
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
		if _, ok := flagmap.ListFlags[name]; ok {
			f = asListFlag(f) // AIPerf's comma lists (profile_sweep.go)
		}
		out = append(out, f)
	}
	return append(append(append(append(append(append(append(out, profileOwnFlags()...), profileSweepFlags()...), profileHubFlags()...), profileDatasetFlags()...), profileRunFlags()...), profileSynthFlags()...), profileStabilityFlags()...)
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
			Usage: "AIPerf's public dataset `NAME`, downloaded from the Hugging Face Hub into its cache: sharegpt (every turn sent with the live replies), or a text dataset of the Hub's Parquet conversion: " + strings.Join(slices.DeleteFunc(reprise.PublicDatasetNames(), func(n string) bool { return n == "sharegpt" }), ", ") + " (--hf-subset, --dataset-filter); exclusive with --input-file"},
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
		&cli.StringSliceFlag{Name: "server-metrics-formats", Value: []string{"json", "csv"}, Category: cat, Sources: envVars("server-metrics-formats"), Usage: "AIPerf's server_metrics_export files when server metrics are scraped: `FORMAT`s json and csv (every series' statistics over the run), jsonl (every scrape), parquet (every sample); comma list or repeated"},
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
			Usage: "with --num-profile-runs, every run uses the same seed: the same prompts and arrivals (on by default, as in AIPerf); --no-set-consistent-seed is --vary-seed-per-trial"},
		&cli.BoolWithInverseFlag{Name: "vary-seed-per-trial", Category: cat, Sources: envVars("vary-seed-per-trial"),
			Usage: "with --num-profile-runs, run k gets its own prompt seed and --random-seed + k − 1 (its prompts miss the cache the run before filled)"},
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
		&cli.StringFlag{Name: "transport", Aliases: []string{"transport-type"}, Category: cat, Sources: envVars("transport"),
			Usage: "AIPerf's transport: http (HTTP/1.1, the default) or http2 (replay's --http2); no other is spoken"},
		&cli.FloatFlag{Name: "profile-run-cooldown-seconds", Category: cat, Sources: envVars("profile-run-cooldown-seconds"),
			Usage: "with --num-profile-runs, pause `S` seconds between two runs (replay's --run-cooldown)"},
		&cli.BoolFlag{Name: "verbose", Aliases: []string{"v"}, Category: cat, Sources: envVars("verbose"),
			Usage: "log at debug level"},
		configFlag("AIPerf's sections: endpoint, input, loadgen, output, tokenizer, …, sweep, reprise"),
	}
}

// scenarioRefusal is the answer to AIPerf's --scenario: a named submission
// protocol (its one, inferencex-agentx-mvp) that locks AIPerf's agentic
// replay settings and stamps the result submission-valid; a reprise run is
// no submission, so its flags are given instead.
const scenarioRefusal = "AIPerf's scenarios lock the settings of a leaderboard submission (inferencex-agentx-mvp: " +
	"its agentic replay of SemiAnalysis' Weka traces from a trajectory-start window, at least 900 s) and mark the result submission-valid; " +
	"a reprise run is no submission: give the settings as flags (--input-file with the Weka traces, --cache-bust first_turn_prefix, --streaming, --benchmark-duration)"

// checkpointRefusal answers GenAI-Perf's --checkpoint-dir: a sweep's
// checkpoint here is its artifact directory.
const checkpointRefusal = "a sweep's checkpoint is its artifact directory (each complete point's summary.json): " +
	"the same command again resumes it, running only the points not complete; drop the flag, or give the directory as --artifact-dir DIR"

// aiperfUnsupported says, for each `aiperf profile` flag the profile
// command does not take, what to do instead or why not. A flag here that
// is given exits 2 with its sentence.
var aiperfUnsupported = map[string]string{
	"tokenizer-trust-remote-code":    "reprise runs no Python, so no tokenizer code from a repository: it reads tokenizer.json or a GGUF file (--tokenizer); a model whose tokenizer needs remote code is named in the error",
	"workers-max":                    "reprise has no worker processes; --senders N sets the most requests in flight",
	"max-workers":                    "reprise has no worker processes; --senders N sets the most requests in flight",
	"record-processor-service-count": "reprise has no record processor services; drop the flag",
	"record-processors":              "reprise has no record processor services; drop the flag",
	"api-port":                       "reprise serves no API while it runs; drop the flag",
	"api-host":                       "reprise serves no API while it runs; drop the flag",
	"zmq-host":                       "reprise is one process (no ZMQ); drop the flag",
	"zmq-ipc-path":                   "reprise is one process (no ZMQ); drop the flag",
	"zmq-dual-bind":                  "reprise is one process (no ZMQ); drop the flag",
	"backend":                        "GenAI-Perf's Triton backends are not supported; reprise speaks the OpenAI API (--endpoint-type chat or completions)",
	"grpc-method":                    "gRPC endpoints are not supported; reprise speaks HTTP",
	"checkpoint-dir":                 checkpointRefusal,
	"max-threads":                    "reprise has no worker threads to size; --senders N sets the most requests in flight",
	"scenario":                       scenarioRefusal,
	"unsafe-override":                "it only turns --scenario's lock errors into warnings (and the run submission-invalid), and reprise has no scenarios; drop the flag",
}

// aiperfFamilies are prefixes of AIPerf flag families that the profile
// command does not take, each with its sentence (image, audio and video
// synthesis, MLflow and W&B).
var aiperfFamilies = []struct{ prefix, why string }{
	{"wandb-", "runs are not pushed to Weights & Biases (it has no documented REST API for logging, only its Python SDK): " +
		"after the run, log summary.json with wandb (wandb.init(project=…); wandb.log(json.load(open(\"summary.json\")))), or use --mlflow-tracking-uri or --otel-url"},
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

// profileHooks map the profile flags that other files define
// (profile_<name>.go) onto the options: one line each, run by
// flagmap.Profile after AIPerf's own flags and before its defaults.
var profileHooks = []flagmap.Hook{profileHubOptions, profileDataset, flagmap.ProfileRunFlags, flagmap.ProfileAdaptive, profileSynth, flagmap.ProfileStability}

// *cli.Command is how the flag mappings read a command's values.
var _ flagmap.Values = (*cli.Command)(nil)

// profileOptions maps the profile command's flags to reprise.Options:
// replay's mapping, then AIPerf's flags and defaults over it.
func profileOptions(cmd *cli.Command) (reprise.Options, bool, error) {
	return flagmap.Profile(cmd, replayOptions(cmd), profileHooks...)
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
			if cmd.Bool("verbose") || cmd.Bool("extra-verbose") {
				if l, err := newLogger(a.stderr, "debug", "text"); err == nil {
					a.log = l
				}
			}
			if o.Trace.Path == "-" {
				o.Trace.Reader = a.stdin
			}
			runs, err := profileRuns(cmd)
			if err != nil {
				return exitcode.UsageError(err, "see 'reprise profile --help'")
			}
			ps, _, _ := flagmap.ProfileSweep(cmd)
			recipe, rerr := flagmap.Recipe(cmd)
			search, serr := flagmap.Search(cmd)
			if flagmap.Sweeps(&ps, recipe, search) || rerr != nil || serr != nil {
				return runProfileSweep(ctx, a, cmd, o, runs, quiet)
			}
			err = replayOnceOrRuns(ctx, a, o, runs, quiet, "--num-profile-runs replays the input", "see 'reprise profile --help'")
			return profileAutoPlot(ctx, a, cmd, o.Output.Dir, err)
		},
	}
	cmd.OnUsageError = func(_ context.Context, c *cli.Command, err error, _ bool) error {
		return profileUsageError(c, err)
	}
	return cmd
}

// profileRuns reads replay's --runs flags with AIPerf's defaults: warmup
// in the first run only and the same seed in every run, unless told
// otherwise.
func profileRuns(cmd *cli.Command) (sweep.RunsConfig, error) {
	runs, err := runsConfigFrom(cmd)
	if err != nil {
		return runs, err
	}
	runs.WarmupOnce = runs.WarmupOnce || cmd.Bool("profile-run-disable-warmup-after-first")
	runs.VarySeed(cmd.Bool("vary-seed-per-trial") || !cmd.Bool("set-consistent-seed"))
	if cmd.IsSet("profile-run-cooldown-seconds") {
		var errs []error
		runs.Cooldown = flagmap.Seconds(&errs, "profile-run-cooldown-seconds", cmd.Float("profile-run-cooldown-seconds"))
		if runs.Cooldown < 0 {
			errs = append(errs, errors.New("--profile-run-cooldown-seconds: want seconds ≥ 0"))
		}
		return runs, errors.Join(errs...)
	}
	return runs, nil
}
