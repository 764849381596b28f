package main

import (
	"context"
	"errors"
	"fmt"
	"slices"
	"strconv"
	"strings"

	"github.com/urfave/cli/v3"

	"github.com/reprise-bench/reprise"
	"github.com/reprise-bench/reprise/arrowio"
	"github.com/reprise-bench/reprise/engine"
	"github.com/reprise-bench/reprise/internal/exitcode"
	"github.com/reprise-bench/reprise/internal/flagmap"
	"github.com/reprise-bench/reprise/internal/runout"
	"github.com/reprise-bench/reprise/internal/sweep"
	"github.com/reprise-bench/reprise/trace"
)

// replayFlags are the engine's flags; the scheduler's come from
// timingFlags.
func replayFlags() []cli.Flag {
	return slices.Concat(replayBaseFlags(), accuracyFlags(), mediaFlags(), rankingsFlags(), wireFlags(), serverControlFlags())
}

// rankingsFlags vary a rankings endpoint's requests (AIPerf's draws).
func rankingsFlags() []cli.Flag {
	return []cli.Flag{
		&cli.FloatFlag{Name: "passages-stddev", Category: "Requests", Sources: envVars("passages-stddev"),
			Usage: "a rankings request's passage count is drawn around --batch-size with standard deviation `N` (seeded; at least 1)"},
		&cli.FloatFlag{Name: "passage-tokens-stddev", Category: "Requests", Sources: envVars("passage-tokens-stddev"),
			Usage: "each passage of a rankings request is drawn around the row's input length with standard deviation `N` tokens (seeded; at least 1)"},
		&cli.FloatFlag{Name: "query-tokens-stddev", Category: "Requests", Sources: envVars("query-tokens-stddev"),
			Usage: "a rankings request's query is drawn around --query-tokens with standard deviation `N` tokens (seeded; at least 1)"},
	}
}

// Flag categories of `reprise replay --help`.
const (
	catTarget    = "Target"
	catRequests  = "Requests"
	catSynthLoad = "Synthetic load (no TRACE)"
	catTrace     = "Trace"
	catResults   = "Results"
)

// replayBaseFlags are replay's flags of the target, the requests, the
// synthetic load, the trace and the results: a table, which replayFlags
// joins with the other groups.
func replayBaseFlags() []cli.Flag {
	return []cli.Flag{
		&cli.StringSliceFlag{Name: "url", Aliases: []string{"u"}, Value: []string{reprise.DefaultURL}, Category: catTarget, Sources: envVars("url"),
			Usage: "server base `URL` (http:// or https://; host:port means http://host:port); the endpoint path is appended. Repeat it for several targets (0, 1, …), spread by --url-policy"},
		&cli.StringFlag{Name: "url-policy", Value: reprise.DefaultURLPolicy, Category: catTarget, Sources: envVars("url-policy"),
			Usage: "`POLICY` over several --url targets: round-robin, random (seeded, per row), least-in-flight, or fan-out (every request to every target at the same instant)"},
		&cli.StringSliceFlag{Name: "target-model", Category: catTarget, Sources: envVars("target-model"),
			Usage: "`I=MODEL`: the model name sent to target I (the I-th --url from 0) instead of --model (repeatable)"},
		&cli.StringSliceFlag{Name: "target-header", Category: catTarget, Sources: envVars("target-header"),
			Usage: "`I=NAME:VALUE`: an extra request header for target I only (repeatable)"},
		&cli.StringFlag{Name: "model", Aliases: []string{"m"}, Category: catTarget, Sources: envVars("model"),
			Usage: "`MODEL` name sent in every request (required)"},
		&cli.StringFlag{Name: "endpoint", Value: reprise.DefaultEndpoint, Category: catTarget, Sources: envVars("endpoint"),
			Usage: "API `KIND`: a native endpoint (chat, completions, responses, ...: see 'reprise adapters list'), a Wasm adapter FILE.wasm or a shipped adapter name"},
		&cli.StringFlag{Name: "adapter-config", Category: catTarget, Sources: envVars("adapter-config"),
			Usage: "`JSON` options for the --endpoint adapter (a Wasm adapter's rp_configure \"options\"; a native endpoint's string options)"},
		&cli.StringFlag{Name: "adapter-sha256", Category: catTarget, Sources: envVars("adapter-sha256"),
			Usage: "pin a Wasm --endpoint adapter to this `SHA256` (a different module fails to load)"},
		&cli.StringFlag{Name: "adapter-sandbox", Value: reprise.DefaultAdapterSandbox, Category: catTarget, Sources: envVars("adapter-sandbox"),
			Usage: "`MODE` of Wasm --endpoint adapters: auto (modules from files are interrupted at their deadline, shipped ones trusted), " +
				"always (every module interruptible; use it for third-party modules; costs 6-11x guest CPU) or never (no deadline: a looping guest hangs its sender)"},
		&cli.IntFlag{Name: "adapter-memory-mib", Value: reprise.DefaultAdapterMemoryMiB, Category: catTarget, Sources: envVars("adapter-memory-mib"),
			Usage: "cap the linear memory of all of a Wasm --endpoint adapter's instances together at `MIB` MiB (64 MiB each: the default keeps 16; senders wait for a free one)"},
		&cli.StringSliceFlag{Name: "header", Aliases: []string{"H"}, Category: catTarget, Sources: envVars("header"),
			Usage: "extra request header `NAME:VALUE` (repeatable)"},
		&cli.StringFlag{Name: "api-key", Category: catTarget, Sources: cli.EnvVars("REPRISE_API_KEY", "OPENAI_API_KEY"),
			Usage: "bearer `KEY` (also REPRISE_API_KEY or OPENAI_API_KEY); never written to any file"},
		&cli.DurationFlag{Name: "timeout", Value: reprise.DefaultTimeout, Category: catTarget, Sources: envVars("timeout"),
			Usage: "give up on a request after `D` (recorded as timeout)"},
		&cli.BoolFlag{Name: "no-preflight", Category: catTarget, Sources: envVars("no-preflight"),
			Usage: "send the first request without checking the server first (by default each --url is connected to and asked GET /v1/models; any HTTP answer passes)"},
		&cli.DurationFlag{Name: "preflight-timeout", Value: reprise.DefaultPreflightTimeout, Category: catTarget, Sources: envVars("preflight-timeout"),
			Usage: "the check before the first request fails (exit 1, nothing sent) when the servers have not answered within `D`, all together"},
		&cli.IntFlag{Name: "abort-after-connect-failures", Value: reprise.DefaultAbortAfterConnectFailures, Category: catTarget, Sources: envVars("abort-after-connect-failures"),
			Usage: "stop the run (exit 1, what was recorded written) when its first `N` requests to end all failed to connect (0 = never)"},
		// Embeddings and rankings batches.
		&cli.IntFlag{Name: "batch-size", Value: 1, Category: catRequests, Sources: envVars("batch-size"),
			Usage: "`N` inputs per request of an embeddings endpoint, or passages per request of a rankings endpoint (each of the row's input length)"},
		&cli.IntFlag{Name: "query-tokens", Value: reprise.DefaultQueryTokens, Category: catRequests, Sources: envVars("query-tokens"),
			Usage: "the query of a rankings endpoint is `N` tokens long"},
		// Generation endpoints (image_generation, video_generation, transcription, speech).
		&cli.StringFlag{Name: "request-content-type", Value: "application/json", Category: catRequests, Sources: envVars("request-content-type"),
			Usage: "`TYPE` of a video_generation submit's body: application/json or multipart/form-data (transcription always uploads a form)"},
		&cli.BoolFlag{Name: "download-video-content", Category: catRequests, Sources: envVars("download-video-content"),
			Usage: "download each done video (GET /v1/videos/{id}/content); its time is in the request's latency and recorded apart"},
		&cli.DurationFlag{Name: "job-poll-interval", Value: reprise.DefaultJobPollInterval, Category: catRequests, Sources: envVars("job-poll-interval"),
			Usage: "poll a video job's status every `D` until it is done"},
		&cli.DurationFlag{Name: "job-timeout", Value: reprise.DefaultJobTimeout, Category: catRequests, Sources: envVars("job-timeout"),
			Usage: "a video job not done `D` after its submit fails as a timeout (0 = no bound)"},
		&cli.StringFlag{Name: "transcribe-audio", Category: catRequests, Sources: envVars("transcribe-audio"),
			Usage: "PCM WAV `FILE` every transcription request uploads (default: a synthetic clip of --transcribe-seconds)"},
		&cli.FloatFlag{Name: "transcribe-seconds", Value: reprise.DefaultTranscribeSeconds, Category: catRequests, Sources: envVars("transcribe-seconds"),
			Usage: "length in `SECONDS` of the synthetic clip a transcription run uploads (16 kHz mono, seeded)"},
		// Routed deployments and request cancellation.
		&cli.StringFlag{Name: "session-header", Category: catRequests, Sources: envVars("session-header"),
			Usage: "send each trace row's session id in header `NAME` (router affinity: Dynamo, llm-d, SGLang router)"},
		&cli.FloatFlag{Name: "cancel-rate", Category: catRequests, Sources: envVars("cancel-rate"),
			Usage: "cancel this `FRACTION` (0-1) of the measured requests, drawn from --seed, --cancel-after after they were sent (recorded as cancelled, outside the latency metrics and the error rate)"},
		&cli.DurationFlag{Name: "cancel-after", Category: catRequests, Sources: envVars("cancel-after"),
			Usage: "with --cancel-rate: cancel `D` after the request was written whole, unless its response ended first"},
		&cli.BoolFlag{Name: "http2", Category: catTarget, Sources: envVars("http2"),
			Usage: "use HTTP/2 (h2c prior knowledge for http://, h2 for https://) instead of HTTP/1.1"},
		&cli.BoolFlag{Name: "no-kernel-timestamps", Category: catTarget, Sources: envVars("no-kernel-timestamps"),
			Usage: "stamp response bytes when reprise reads them, not when the kernel received them (SO_TIMESTAMPNS; Linux, HTTP/1.1)"},
		&cli.IntFlag{Name: "nice", Category: catTarget, Sources: envVars("nice"), DefaultText: "as started",
			Usage: "run reprise's threads at nice value `N` (-20 runs first: on a busy machine the kernel then delays reprise's reads and sends less; needs root or CAP_SYS_NICE below the current value)"},
		&cli.IntFlag{Name: "max-connections", Category: catTarget, Sources: envVars("max-connections"),
			Usage: "cap connections to the server at `N` (0 = one per request in flight)"},
		&cli.BoolWithInverseFlag{Name: "streaming", Value: true, Category: catRequests, Sources: envVars("streaming"),
			Usage: "stream responses (SSE); --no-streaming asks for whole bodies"},
		&cli.BoolWithInverseFlag{Name: "ignore-eos", Value: true, Category: catRequests, Sources: envVars("ignore-eos"),
			Usage: "ask the server to generate exactly max_tokens (output lengths follow the trace)"},
		&cli.BoolWithInverseFlag{Name: "max-tokens-from-trace", Value: true, Category: catRequests, Sources: envVars("max-tokens-from-trace"),
			Usage: "send each row's output length (or --osl) as max_tokens"},
		&cli.StringFlag{Name: "extra-body", Aliases: []string{"extra-inputs"}, Category: catRequests, Sources: envVars("extra-body"),
			Usage: "`JSON` object merged into every request body, e.g. '{\"temperature\":0}'"},
		&cli.StringFlag{Name: "tokenizer", Value: reprise.DefaultTokenizer, Category: catRequests, Sources: envVars("tokenizer"),
			Usage: "client tokenizer `SPEC`: builtin (o200k_base), an encoding name, a tokenizer.json, a GGUF model file, a model dir, a Hugging Face model id ORG/NAME (from the HF cache, else downloaded: HF_ENDPOINT, HF_TOKEN, HF_HUB_OFFLINE), or server (learn the prompt words from the server's /tokenize; cached)"},
		&cli.StringFlag{Name: "tokenizer-revision", Category: catRequests, Sources: envVars("tokenizer-revision"),
			Usage: "`REV` (branch, tag or commit) of a Hugging Face model id given as --tokenizer (default main)"},
		&cli.BoolFlag{Name: "use-server-token-count", Value: reprise.DefaultUseServerTokenCount, DefaultText: "true", Category: catRequests, Sources: envVars("use-server-token-count"),
			Usage: "take output lengths (OSL, ITL) from the server's usage when it reports it; =false counts with the client tokenizer (both counts are recorded)"},
		&cli.FloatFlag{Name: "isl", Aliases: []string{"synthetic-input-tokens-mean"}, Category: catSynthLoad, Sources: envVars("isl"),
			Usage: "synthetic input length, mean `TOKENS`"},
		&cli.FloatFlag{Name: "isl-stddev", Aliases: []string{"synthetic-input-tokens-stddev"}, Category: catSynthLoad, Sources: envVars("isl-stddev"),
			Usage: "synthetic input length, standard deviation `TOKENS`"},
		&cli.FloatFlag{Name: "osl", Aliases: []string{"output-tokens-mean"}, Category: catSynthLoad, Sources: envVars("osl"),
			Usage: "synthetic output length, mean `TOKENS`; with a TRACE, the output length of rows that have none (they are refused without it)"},
		&cli.FloatFlag{Name: "osl-stddev", Aliases: []string{"output-tokens-stddev"}, Category: catSynthLoad, Sources: envVars("osl-stddev"),
			Usage: "synthetic output length, standard deviation `TOKENS`"},
		&cli.IntFlag{Name: "num-sessions", Aliases: []string{"conversation-num", "num-conversations"}, Category: catSynthLoad, Sources: envVars("num-sessions"),
			DefaultText: "as many as --request-count needs", Usage: "synthetic multi-turn load: `N` conversations (profile with --input-file: send exactly N of the file's entries, drawn by --dataset-sampling-strategy)"},
		&cli.FloatFlag{Name: "session-turns-mean", Aliases: []string{"conversation-turn-mean"}, Category: catSynthLoad, Sources: envVars("session-turns-mean"), DefaultText: "1",
			Usage: "synthetic load: `TURNS` per conversation, mean (normal, at least 1); later turns carry the history with the live responses"},
		&cli.FloatFlag{Name: "session-turns-stddev", Aliases: []string{"conversation-turn-stddev"}, Category: catSynthLoad, Sources: envVars("session-turns-stddev"),
			Usage: "synthetic load: turns per conversation, standard deviation `TURNS`"},
		&cli.DurationFlag{Name: "turn-delay", Category: catSynthLoad, Sources: envVars("turn-delay"),
			Usage: "synthetic load: think time `D` between a turn's response and the next turn, mean"},
		&cli.DurationFlag{Name: "turn-delay-stddev", Category: catSynthLoad, Sources: envVars("turn-delay-stddev"),
			Usage: "synthetic load: think time between turns, standard deviation `D`"},
		&cli.IntFlag{Name: "shared-prefix-length", Aliases: []string{"shared-system-prompt-length"}, Category: catSynthLoad, Sources: envVars("shared-prefix-length"),
			Usage: "synthetic load: `TOKENS` of a prefix every conversation's first prompt shares (with --prefix-groups, each group's own); profile with --input-file: a system message of TOKENS shared by every conversation, before every turn"},
		&cli.IntFlag{Name: "prefix-groups", Category: catSynthLoad, Sources: envVars("prefix-groups"), DefaultText: "1",
			Usage: "synthetic load: `N` distinct shared prefixes, conversations assigned round-robin (SGLang's generated-shared-prefix groups)"},
		&cli.IntFlag{Name: "user-context-length", Aliases: []string{"user-context-prompt-length"}, Category: catSynthLoad, Sources: envVars("user-context-length"),
			Usage: "synthetic load: `TOKENS` of a prefix of each conversation's own, after the shared one; profile with --input-file: a user message of TOKENS of each conversation's own, before every turn"},
		&cli.StringFlag{Name: "trace-format", Category: catTrace, Sources: envVars("trace-format"),
			Usage: "trace `FORMAT` (default: detected): mooncake, bailian, burstgpt, azure, …"},
		&cli.IntFlag{Name: "block-size", Category: catTrace, Sources: envVars("block-size"),
			DefaultText: "the format's, 512 Mooncake, 16 Bailian", Usage: "tokens per hash id `N` (0: the format's)"},
		&cli.IntFlag{Name: "max-input-tokens", Value: reprise.DefaultMaxInputTokens, Category: catTrace, Sources: envVars("max-input-tokens"),
			Usage: "refuse a trace row of more than `N` input tokens (the default, 2^24, is above any model's context window)"},
		withCategory(stdinSpoolFlag("which the run reads again; with --request-count only the rows it needs are read"), catTrace),
		&cli.BoolFlag{Name: "skip-invalid", Category: catTrace, Sources: envVars("skip-invalid"),
			Usage: "skip invalid trace rows (counted) instead of stopping"},
		&cli.BoolFlag{Name: "drop-failed", Category: catTrace, Sources: envVars("drop-failed"),
			Usage: "drop rows the trace marks as failed (BurstGPT zero output)"},
		&cli.StringFlag{Name: "model-filter", Category: catTrace, Sources: envVars("model-filter"),
			Usage: "keep only rows of trace model `NAME` (BurstGPT)"},
		&cli.StringFlag{Name: "prompt-column", Category: catTrace, Sources: envVars("prompt-column"),
			Usage: "table dataset (JSONL, CSV, Parquet): the `COLUMN` holding the prompt text (default: prompt, text, question, instruction, input or query)"},
		&cli.StringFlag{Name: "input-len-column", Category: catTrace, Sources: envVars("input-len-column"),
			Usage: "table dataset: the `COLUMN` holding the input length of rows without a prompt (default: input_length, input_tokens or isl)"},
		&cli.StringFlag{Name: "output-len-column", Category: catTrace, Sources: envVars("output-len-column"),
			Usage: "table dataset: the `COLUMN` holding the output length (default: output_length, output_tokens, max_tokens or osl)"},
		&cli.StringFlag{Name: "session-column", Category: catTrace, Sources: envVars("session-column"),
			Usage: "table dataset: the `COLUMN` holding a session id (rows sharing one are the turns of a conversation; default: session_id or conversation_id)"},
		&cli.StringFlag{Name: "timestamp-column", Category: catTrace, Sources: envVars("timestamp-column"),
			Usage: "table dataset: the `COLUMN` holding the arrival in ms (default: timestamp)"},
		&cli.BoolFlag{Name: "all-turns", Category: catTrace, Sources: envVars("all-turns"),
			Usage: "ShareGPT: send every human→gpt pair of a conversation as a turn of one session (live responses in the history), not only the first"},
		&cli.StringFlag{Name: "dataset-sampling", Category: catTrace, Sources: envVars("dataset-sampling"), DefaultText: "sequential",
			Usage: "`ORDER` in which the load modes send the rows: sequential (file order), shuffle (a new permutation each pass) or random (with replacement); drawn with --seed"},
		&cli.Uint64Flag{Name: "prompt-seed", Category: catTrace, Sources: envVars("prompt-seed"),
			Usage: "`SEED` of the prompt words: equal seeds build equal prompts (and can reuse a server's cache)"},
		&cli.BoolFlag{Name: "prime-prefixes", Category: catTrace, Sources: envVars("prime-prefixes"),
			Usage: "before measuring, send each shared prefix of the trace's hash ids once (warmup records) and wait for them, so measured requests find it cached"},
		&cli.StringFlag{Name: "hash-mismatch", Value: reprise.DefaultHashMismatch, Category: catTrace, Sources: envVars("hash-mismatch"),
			Usage: "`MODE` of rows whose hash ids do not fit their length: error (stop before sending) or fit (adapt the ids, counted)"},
		&cli.IntFlag{Name: "isl-correction", Category: catTrace, Sources: envVars("isl-correction"),
			Usage: "subtract `N` tokens from every synthesized prompt (what the server's chat template adds)"},
		&cli.BoolFlag{Name: "apply-chat-template", Category: catTrace, Sources: envVars("apply-chat-template"),
			Usage: "input lengths count the prompt through the model's chat template (AIPerf's): the template's tokens, rendered from the tokenizer's tokenizer_config.json, chat_template.jinja or GGUF file (or the server's count with --tokenizer server), come off every prompt, so the server's prompt_tokens is the asked length"},
		&cli.StringFlag{Name: "prompt-format", Value: reprise.DefaultPromptFormat, Category: catTrace, Sources: envVars("prompt-format"),
			Usage: "`FORMAT` of synthesized prompts: text, or token-ids (sent as a token array with --endpoint completions)"},
		&cli.StringFlag{Name: "goodput", Category: catResults, Sources: envVars("goodput"),
			Usage: "SLOs `\"TAG:VALUE …\"`, e.g. \"ttft:250 itl:10 e2e:2000\" (ms; AIPerf tags accepted)"},
		&cli.FloatFlag{Name: "min-good-fraction", Value: reprise.DefaultMinGoodFraction, Category: catResults, Sources: envVars("min-good-fraction"),
			Usage: "with --goodput, exit 3 when fewer than `F` of the requests meet every SLO"},
		&cli.FloatFlag{Name: "max-error-rate", Value: reprise.DefaultMaxErrorRate, Category: catResults, Sources: envVars("max-error-rate"),
			Usage: "exit 3 when more than `R` (a fraction) of the measured requests failed (1 = never)"},
		&cli.StringFlag{Name: "calibration", Value: reprise.AutoCalibration, Category: catResults, Sources: envVars("calibration"),
			Usage: "apply a reprise selftest calibration `FILE` (error bars, and a warning past its safe load); auto: this host's own if under a week old; off: none"},
		&cli.StringFlag{Name: "out", Aliases: []string{"o"}, Category: catResults, Sources: envVars("out"),
			Usage: "run `DIR` (default runs/<UTC time>-<model>-<mode>/); it must be new or empty unless --overwrite"},
		&cli.BoolFlag{Name: "overwrite", Category: catResults, Sources: envVars("overwrite"),
			Usage: "reuse a non-empty --out run directory: clear the earlier run's files first (refused if it holds other files)"},
		&cli.StringFlag{Name: "format", Value: reprise.DefaultFormat, Category: catResults, Sources: envVars("format"),
			Usage: "record file `FORMAT`: parquet, arrow or jsonl"},
		&cli.BoolFlag{Name: "single-file", Category: catResults, Sources: envVars("single-file"),
			Usage: "write one file per table (records.parquet) instead of rolling parts; a crash then loses the whole table"},
		&cli.DurationFlag{Name: "part-interval", Value: reprise.DefaultPartInterval, Category: catResults, Sources: envVars("part-interval"),
			Usage: "durability: every record is in a complete file (survives kill -9) within `D` of reaching the writer; a part is completed (jsonl: flushed) at least this often (0 = by --part-rows only)"},
		&cli.IntFlag{Name: "part-rows", Value: reprise.DefaultPartRows, Category: catResults, Sources: envVars("part-rows"),
			Usage: "complete a part (jsonl: flush) every `N` rows, if --part-interval has not already"},
		&cli.StringFlag{Name: "export", Category: catResults, Sources: envVars("export"),
			Usage: "`KIND`: aiperf also writes profile_export.jsonl, profile_export_aiperf.json and .csv and inputs.json (AIPerf's shapes) after the run"},
		&cli.StringFlag{Name: "export-level", Value: reprise.DefaultExportLevel, Category: catResults, Sources: envVars("export-level"),
			Usage: "`LEVEL`: records (one row per request) or events (also one row per response event)"},
		&cli.StringFlag{Name: "cpuprofile", Category: catResults, Sources: envVars("cpuprofile"),
			Usage: "write a CPU profile of the run to `FILE`"},
		&cli.StringFlag{Name: "memprofile", Category: catResults, Sources: envVars("memprofile"),
			Usage: "write a heap profile at the end of the run (before the summary) to `FILE`"},
		&cli.BoolFlag{Name: "quiet", Aliases: []string{"q"}, Category: catResults, Sources: envVars("quiet"),
			Usage: "no progress and no summary table on stderr; print the run directory on stdout, one line"},
		&cli.StringFlag{Name: "ui", Value: reprise.UILine, Category: catResults, Sources: envVars("ui"),
			Usage: "live `VIEW` on stderr: line (one progress line) or dashboard (full screen on a terminal; q stops sending, q again cancels in flight, p pauses the view; the line where stderr is no terminal or TERM=dumb)"},
	}
}

// replayCommand is `reprise replay [TRACE] --url URL --model M`.
func replayCommand(a *app) *cli.Command {
	return &cli.Command{
		Name:      "replay",
		Usage:     "replay a trace (or a synthetic load) against an OpenAI-compatible server and measure it",
		ArgsUsage: "[TRACE]",
		Description: "Sends every request of TRACE (any supported format; - = stdin) at its intended time, with\n" +
			"prompts that reproduce the trace's prefix sharing, streams the responses and records TTFT, TTFO,\n" +
			"ITL, latency, token counts, errors and its own schedule lateness per request. Without a TRACE it\n" +
			"runs a synthetic load (--isl, --osl) at --request-rate or --concurrency.\n" +
			"Writes records (Parquet), summary.json and the manifest to --out; prints the summary on stderr.\n" +
			"Ctrl-C stops sending, waits --grace for in-flight requests, cancels the rest and writes everything;\n" +
			"a second Ctrl-C cancels in-flight requests at once and writes what is finished.\n\n" +
			"Exit codes: 0 ok, 1 run error, interrupted, server not answering or no request succeeded, 2 bad command\n" +
			"line or trace, 3 goodput SLO or --max-error-rate (default 0.05) failed, 4 p99 schedule lateness over\n" +
			"--max-lateness; with several, the first of 1, 4, 3, and every failed check is printed.\n\n" +
			"Examples:\n" +
			"  reprise replay traces/mooncake-sample.jsonl --url http://localhost:8000 --model M --speedup 10\n" +
			"  reprise replay --url http://localhost:8000 --model M --isl 512 --osl 128 --concurrency 32 --request-count 1000\n" +
			"  reprise replay trace.jsonl -m M --goodput \"ttft:1000 itl:50\" --max-error-rate 0.01 --max-lateness 10ms",
		Flags: append(append(append(append(append(append(replayFlags(), configFlag("replay's flag names as keys, trace: the TRACE")), responseCapFlags()...), contextFlags()...), timingFlags()...), telemetryFlags()...),
			runsFlags()...),
		Action: func(ctx context.Context, cmd *cli.Command) error {
			rc, err := flagmap.Timing(cmd)
			tc, terr := flagmap.Telemetry(cmd)
			if err := errors.Join(err, terr); err != nil {
				return exitcode.UsageError(err, "see 'reprise replay --help'")
			}
			args := cmd.Args().Slice()
			if len(args) > 1 {
				return exitcode.UsageError(fmt.Errorf("want at most one TRACE, got %d: %s", len(args), strings.Join(args, " ")),
					"see 'reprise replay --help'")
			}
			o := replayOptions(cmd)
			if err := targetFlags(&o, cmd.StringSlice("target-model"), cmd.StringSlice("target-header")); err != nil {
				return exitcode.UsageError(err, "see 'reprise replay --help'")
			}
			o.Replay, o.Telemetry = rc, tc
			flagmap.Warmup(cmd, &o)
			flagmap.WarmupPhase(&o)
			if len(args) == 1 {
				o.Trace.Path = args[0]
				if args[0] == "-" {
					o.Trace.Reader = a.stdin
				}
			}
			runs, err := runsConfigFrom(cmd)
			if err != nil {
				return exitcode.UsageError(err, "see 'reprise replay --help'")
			}
			return replayOnceOrRuns(ctx, a, o, runs, cmd.Bool("quiet"), "--runs replays the trace", "see 'reprise replay --help'")
		},
	}
}

// replayOnceOrRuns runs the replay o once, or runs.Runs times (sweep.Repeat).
// Repeated runs read the trace again, so they refuse standard input; what
// says who replays what in that refusal, help is the command's hint.
func replayOnceOrRuns(ctx context.Context, a *app, o reprise.Options, runs sweep.RunsConfig, quiet bool, what, help string) error {
	o.Trace.Hold = loadTraces
	o.Log = a.log
	o.Abort = a.abort.Done()
	if runs.Runs <= 1 {
		return runReplay(ctx, a, o, quiet)
	}
	if o.Trace.Reader != nil {
		return exitcode.UsageError(errors.New(what+" several times: give a file, not - (standard input)"), help)
	}
	return runRepeated(ctx, a, o, runs, quiet)
}

// replayOptions maps the replay flags (all but the timing and telemetry
// flags) to reprise.Options.
func replayOptions(cmd *cli.Command) reprise.Options {
	o := reprise.NewOptions()
	o.Model, o.Endpoint = cmd.String("model"), cmd.String("endpoint")
	if !cmd.IsSet("endpoint") {
		o.Endpoint = "" // a recorded trace's, else chat
	}
	o.URLPolicy = cmd.String("url-policy")
	if urls := flagmap.CommaList(cmd.StringSlice("url")); len(urls) > 0 {
		o.URL = flagmap.WithScheme(urls[0])
		for _, u := range urls[1:] {
			o.Targets = append(o.Targets, reprise.Target{URL: flagmap.WithScheme(u)})
		}
	}
	o.Adapter = reprise.AdapterOptions{Config: cmd.String("adapter-config"), SHA256: cmd.String("adapter-sha256"),
		Sandbox: cmd.String("adapter-sandbox"), MemoryMiB: cmd.Int("adapter-memory-mib")}
	o.Streaming, o.IgnoreEOS, o.MaxTokensFromTrace = cmd.Bool("streaming"), cmd.Bool("ignore-eos"), cmd.Bool("max-tokens-from-trace")
	o.PrimePrefixes = cmd.Bool("prime-prefixes")
	o.ExtraBody, o.Headers, o.APIKey = cmd.String("extra-body"), cmd.StringSlice("header"), cmd.String("api-key")
	o.Timeout = cmd.Duration("timeout")
	o.Preflight = reprise.PreflightOptions{Skip: cmd.Bool("no-preflight"), Timeout: cmd.Duration("preflight-timeout")}
	o.Server = flagmap.ServerControl(cmd)
	o.AbortAfterConnectFailures = cmd.Int("abort-after-connect-failures")
	o.BatchSize, o.QueryTokens = cmd.Int("batch-size"), cmd.Int("query-tokens")
	o.Rankings = reprise.RankingsVariation{PassagesStdDev: cmd.Float("passages-stddev"), PassageTokensStdDev: cmd.Float("passage-tokens-stddev"),
		QueryTokensStdDev: cmd.Float("query-tokens-stddev")}
	o.Generation = reprise.GenerationOptions{RequestContentType: cmd.String("request-content-type"), DownloadVideo: cmd.Bool("download-video-content"),
		JobPollInterval: cmd.Duration("job-poll-interval"), JobTimeout: cmd.Duration("job-timeout"),
		AudioFile: cmd.String("transcribe-audio"), TranscribeSeconds: cmd.Float("transcribe-seconds")}
	o.SessionHeader, o.CancelRate, o.CancelAfter = cmd.String("session-header"), cmd.Float("cancel-rate"), cmd.Duration("cancel-after")
	o.MaxResponseEvents, o.MaxEventBytes, o.MaxResponseBytes = cmd.Int("max-response-events"), cmd.Int("max-event-bytes"), cmd.Int64("max-response-bytes")
	o.HTTP2, o.NoKernelTimestamps, o.MaxConnections = cmd.Bool("http2"), cmd.Bool("no-kernel-timestamps"), cmd.Int("max-connections")
	o.ConnReuse = cmd.String("connection-reuse-strategy")
	o.NetworkLatency = flagmap.NetworkLatency(cmd)
	if cmd.IsSet("nice") {
		n := cmd.Int("nice")
		o.Nice = &n
	}
	o.Tokenizer, o.UseServerTokenCount = cmd.String("tokenizer"), cmd.Bool("use-server-token-count")
	o.TokenizerRevision = cmd.String("tokenizer-revision")
	o.Synthetic = reprise.SyntheticLoad{ISL: cmd.Float("isl"), ISLStdDev: cmd.Float("isl-stddev"), OSL: cmd.Float("osl"), OSLStdDev: cmd.Float("osl-stddev"),
		Sessions: cmd.Int("num-sessions"), TurnsMean: cmd.Float("session-turns-mean"), TurnsStdDev: cmd.Float("session-turns-stddev"),
		TurnDelay: cmd.Duration("turn-delay"), TurnDelayStdDev: cmd.Duration("turn-delay-stddev"),
		SharedPrefix: cmd.Int("shared-prefix-length"), PrefixGroups: cmd.Int("prefix-groups"), UserContext: cmd.Int("user-context-length")}
	o.Media = mediaOptions(cmd)
	o.Prompts = reprise.PromptOptions{Seed: cmd.Uint64("prompt-seed"), HashMismatch: cmd.String("hash-mismatch"),
		ISLCorrection: cmd.Int("isl-correction"), ApplyChatTemplate: cmd.Bool("apply-chat-template"), Format: cmd.String("prompt-format"), ContextMode: cmd.String("context-mode")}
	o.Trace = reprise.TraceOptions{Format: cmd.String("trace-format"), BlockSize: cmd.Int("block-size"),
		MaxInputTokens: cmd.Int("max-input-tokens"), SpoolMiB: cmd.Int("stdin-spool-mib"), SkipInvalid: cmd.Bool("skip-invalid"),
		DropFailed: cmd.Bool("drop-failed"), ModelFilter: cmd.String("model-filter"),
		Columns: trace.Columns{Prompt: cmd.String("prompt-column"), InputLength: cmd.String("input-len-column"),
			OutputLength: cmd.String("output-len-column"), Session: cmd.String("session-column"), Timestamp: cmd.String("timestamp-column"),
			Image: cmd.String("image-column"), Audio: cmd.String("audio-column")},
		AllTurns: cmd.Bool("all-turns"), Sampling: cmd.String("dataset-sampling")}
	o.Goodput, o.MinGoodFraction, o.MaxErrorRate = cmd.String("goodput"), cmd.Float("min-good-fraction"), cmd.Float("max-error-rate")
	accuracyOptions(cmd, &o)
	if o.Calibration = cmd.String("calibration"); o.Calibration == "off" || o.Calibration == "none" {
		o.Calibration = ""
	}
	o.Output = reprise.OutputOptions{Dir: cmd.String("out"), Overwrite: cmd.Bool("overwrite"), Format: cmd.String("format"),
		SingleFile: cmd.Bool("single-file"), PartInterval: cmd.Duration("part-interval"), PartRows: cmd.Int("part-rows"),
		ExportLevel: cmd.String("export-level"), Export: cmd.String("export")}
	o.Output.HTTPTrace, o.Output.HTTPTiming = cmd.Bool("export-http-trace"), cmd.Bool("show-trace-timing")
	o.Profile = reprise.ProfileOptions{CPU: cmd.String("cpuprofile"), Heap: cmd.String("memprofile")}
	o.UI = cmd.String("ui")
	return o
}

// loadTraces makes the replay command hold every trace in memory
// (reprise.TraceOptions.Hold): the tests compare both paths.
var loadTraces bool

// runReplay runs o, prints what the run does and measured on stderr
// (unless quiet) and maps the outcome to an exit code.
func runReplay(ctx context.Context, a *app, o reprise.Options, quiet bool) error {
	var held *holdLog
	if !quiet {
		o.Progress = a.stderr
		if o.UI == reprise.UIDashboard && o.Log != nil {
			held = &holdLog{}
			o.Log = held.logger(o.Log)
		}
	}
	o.OnStart = func(s reprise.Start) {
		if s.UI == reprise.UIDashboard && held != nil {
			defer held.hold() // after the lines below: the dashboard draws next
		}
		runout.Start(a.stderr, s, &o, quiet)
	}
	res, err := reprise.Run(ctx, o)
	held.release()
	if err != nil && res == nil {
		return runError(err, &o)
	}
	runout.Report(a.stdout, a.stderr, res, quiet)
	if err != nil {
		return runError(err, &o)
	}
	return verdictError(res)
}

// runError maps an error of reprise.Run to its message, with the
// Options fields it names spelled as flags, and its exit code
// (docs/format/cli.md): 2 for a problem with the command line or the trace
// found before anything was sent, for a run directory in use (the
// options' Output.Dir) and for
// telemetry that cannot start; 1 for the rest, a server that does not
// answer included.
func runError(err error, o *reprise.Options) error {
	spelled := flagSpelled(err)
	switch {
	case errors.As(err, new(*reprise.ConfigError)):
		if h, ok := trace.Hint(spelled, "--trace-format", true); ok {
			return exitcode.UsageError(spelled, h)
		}
		return exitcode.UsageError(spelled, "see 'reprise replay --help'")
	case errors.Is(err, arrowio.ErrRunDirInUse):
		if o.Output.Overwrite {
			return exitcode.UsageError(spelled, "choose a new or empty --out directory, or move the files reprise did not write out of it")
		}
		return exitcode.UsageError(spelled, "choose a new or empty --out directory, or add --overwrite to replace the earlier run in it")
	case errors.As(err, new(*reprise.TelemetryError)):
		return exitcode.UsageError(spelled, "drop --gpu-telemetry, or point it at a DCGM exporter with dcgm=URL")
	}
	if _, ok := errors.AsType[*reprise.FailedRequestsError](err); ok {
		return &exitcode.Error{Code: exitcode.SLOBreach, Err: spelled,
			Hint: "every failure is in the records (error_kind, error_message); raise --failed-request-threshold, or drop it to send every request anyway"}
	}
	if ue, ok := errors.AsType[*reprise.UnreachableError](err); ok && ue.Requests > 0 {
		return &exitcode.Error{Code: exitcode.RunError, Err: spelled,
			Hint: "check --url and that the server is up; every failure is in the records; --abort-after-connect-failures 0 sends every request anyway"}
	}
	return spelled // a preflight that failed says all in its one line
}

// contextFlags are the flags of multi-turn sessions.
func contextFlags() []cli.Flag {
	return []cli.Flag{
		&cli.StringFlag{Name: "context-mode", Value: reprise.DefaultContextMode, Category: "Trace", Sources: envVars("context-mode"),
			Usage: "`MODE` of multi-turn sessions: auto (rows whose input_length holds the history, e.g. Bailian, go as they are; " +
				"Mooncake/AIPerf session rows get every earlier prompt and the live response, as AIPerf does), " +
				"history (grow every session that can), or self-contained (every row as it stands)",
			Validator: func(s string) error {
				if engine.ContextMode(s).Validate() != nil {
					return fmt.Errorf("want %s, %s or %s", engine.ContextAuto, engine.ContextHistory, engine.ContextSelfContained)
				}
				return nil
			}},
	}
}

// targetFlags applies --target-model and --target-header, each I=VALUE
// for target I (the I-th --url, from 0), to o.
func targetFlags(o *reprise.Options, models, headers []string) error {
	var errs []error
	n := 1 + len(o.Targets)
	split := func(flag, v string) (int, string, bool) {
		is, rest, ok := strings.Cut(v, "=")
		i, err := strconv.Atoi(strings.TrimSpace(is))
		if !ok || err != nil || i < 0 || i >= n {
			errs = append(errs, fmt.Errorf("--%s %q: want I=VALUE with I a target from 0 to %d (the I-th --url)", flag, v, n-1))
			return 0, "", false
		}
		return i, rest, true
	}
	for _, v := range models {
		if i, m, ok := split("target-model", v); ok {
			if i == 0 {
				o.Model = m
			} else {
				o.Targets[i-1].Model = m
			}
		}
	}
	for _, v := range headers {
		if i, h, ok := split("target-header", v); ok {
			if i == 0 {
				o.Headers = append(o.Headers, h)
			} else {
				o.Targets[i-1].Headers = append(o.Targets[i-1].Headers, h)
			}
		}
	}
	return errors.Join(errs...)
}

// verdictError maps the verdicts of a completed run to an exit code, with
// the options spelled as flags.
func verdictError(res *reprise.Result) error { return runout.VerdictError(res, flagSpelled) }

// wireFlags are replay's flags of the HTTP exchange: connection reuse,
// HTTP timing and network latency (AIPerf's names and units).
func wireFlags() []cli.Flag {
	return []cli.Flag{
		&cli.BoolFlag{Name: "export-http-trace", Category: catTarget, Sources: envVars("export-http-trace"),
			Usage: "with --export aiperf, each profile_export.jsonl record also carries its HTTP timestamps and phases (trace_data)"},
		&cli.BoolFlag{Name: "show-trace-timing", Category: catTarget, Sources: envVars("show-trace-timing"),
			Usage: "after the run, print the HTTP timing table (p50/p90/p99 of connection wait, DNS, connect, sending, waiting, receiving); summary.json gets http_req_dns_lookup, _sending, _receiving, _duration"},
		&cli.BoolFlag{Name: "network-latency-automatic", Category: catTarget, Sources: envVars("network-latency-automatic"),
			Usage: "measure the network round trip to the server (a TCP handshake every --network-latency-ping-interval) and report TTFT, TTFO and request latency less it as network_adjusted_*"},
		&cli.FloatFlag{Name: "network-latency-mean", Category: catTarget, Sources: envVars("network-latency-mean"),
			Usage: "the network round trip to the server is `MS` milliseconds: report TTFT, TTFO and request latency less it as network_adjusted_* (exclusive with --network-latency-automatic)"},
		&cli.FloatFlag{Name: "network-latency-ping-interval", Value: engine.DefaultRTTProbeInterval.Seconds(), Category: catTarget, Sources: envVars("network-latency-ping-interval"),
			Usage: "with --network-latency-automatic, `S` seconds between two probes"},
		&cli.StringFlag{Name: "connection-reuse-strategy", Value: "pooled", Category: catTarget, Sources: envVars("connection-reuse-strategy"),
			Usage: "which requests share a connection: pooled (keep-alive pool), never (a new connection per request) or sticky-user-sessions (one per session, reused by its turns, closed after its last); HTTP/1.1"},
	}
}
