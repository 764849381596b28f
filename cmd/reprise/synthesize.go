package main

import (
	"context"
	"errors"
	"io"
	"slices"

	"github.com/urfave/cli/v3"

	"github.com/reprise-bench/reprise/internal/exitcode"
	"github.com/reprise-bench/reprise/trace"
	"github.com/reprise-bench/reprise/trace/synth"
)

// Flag categories of `reprise synthesize --help`.
const (
	catSynOut    = "Output"
	catSynDerive = "Derive (with --from TRACE)"
	catSynSize   = "Generate: how much"
	catSynArr    = "Generate: arrivals"
	catSynSess   = "Generate: sessions"
	catSynPrefix = "Generate: shared prefixes"
	catSynLen    = "Generate: lengths"
	catSynTarget = "Generate: cache targets"
	catSynAgent  = "Generate: agentic tasks (with --tasks N)"
)

// synthesizeCommand is `reprise synthesize`.
func synthesizeCommand(a *app) *cli.Command {
	return &cli.Command{
		Name:  "synthesize",
		Usage: "derive a trace from a real one, or generate one, for KV-cache stress",
		Description: "Derive (--from TRACE, any supported format; - = stdin): compress time (--speedup), stretch or\n" +
			"squeeze shared prefixes and unique tails, replicate prefix trees into independent copies\n" +
			"(more tenants), cut a window, sample sessions. Generate (no --from): sessions arriving at --rate\n" +
			"(constant, poisson, gamma; ramps; a diurnal curve), multi-turn with growing context, shared-prefix\n" +
			"trees, length distributions, and targets: --target-hit-ratio (infinite-cache token hit ratio,\n" +
			"±0.02) and --working-set (distinct blocks × block size, ±5 %), both verified by the analyzer.\n" +
			"Writes Mooncake (default) or Bailian JSONL to -o (- = stdout); prints a summary on stderr.\n" +
			"Mooncake output is AIPerf's dialect: a later turn's input_length and hash_ids cover only its new tokens\n" +
			"(replay grows the history); Bailian output is cumulative. Same seed, same bytes.\n" +
			"A derive of a file already in arrival order with only --speedup, --output-len-multiplier, --max-osl,\n" +
			"--max-isl and --window, to Mooncake, is streamed row by row after a validating pass (memory does not\n" +
			"grow with rows); anything else reads the whole trace. The summary says which, and why.\n\n" +
			"Examples:\n" +
			"  reprise synthesize --from conversation_trace.jsonl --speedup 4 -o 4x.jsonl\n" +
			"  reprise synthesize --rate 20 --working-set 12M --turns 4 --think-time 30s --isl 2000 -o ws.jsonl\n" +
			"  reprise synthesize --rate 10 --duration 10m --prefix-roots 100 --target-hit-ratio 0.8 -o - | reprise replay - -m M",
		Flags: slices.Concat(synthDeriveFlags(synth.NewDeriveConfig()), synthGenerateFlags(synth.NewGenerateConfig()), synthOutputFlags()),
		Action: func(ctx context.Context, cmd *cli.Command) error {
			o := synthOptions(cmd)
			sum, err := synth.Run(ctx, o, synth.Env{Stdin: a.stdin, Log: a.log,
				Write: func(fill func(io.Writer) error) error { return writeOutput(a.stdout, o.Output, fill) }})
			if err != nil {
				return synthRunError(err)
			}
			if !o.Quiet {
				sum.Print(a.stderr)
			}
			return nil
		},
	}
}

// synthDeriveFlags are synthesize's flags of a derive (--from), d giving
// the defaults.
func synthDeriveFlags(d synth.DeriveConfig) []cli.Flag {
	return []cli.Flag{
		&cli.StringFlag{Name: "from", Category: catSynDerive, Sources: synthEnv("from"),
			Usage: "derive from `TRACE` (- = stdin); without it, generate"},
		&cli.StringFlag{Name: "from-format", Category: catSynDerive, Sources: synthEnv("from-format"),
			Usage: "`FORMAT` of --from (default: detected)"},
		&cli.FloatFlag{Name: "speedup", Value: d.Speedup, Category: catSynDerive, Sources: synthEnv("speedup"),
			Usage: "divide arrival times and delays by `X`"},
		&cli.FloatFlag{Name: "prefix-len-multiplier", Value: d.PrefixLenMultiplier, Category: catSynDerive, Sources: synthEnv("prefix-len-multiplier"),
			Usage: "scale every shared prefix by `P` (in blocks: ⌈s·P⌉ above 1, max(1, ⌊s·P⌋) below)"},
		&cli.IntFlag{Name: "prefix-root-multiplier", Value: d.PrefixRootMultiplier, Category: catSynDerive, Sources: synthEnv("prefix-root-multiplier"),
			Usage: "replicate the prefix trees into `K` independent copies (each session lands in one)"},
		&cli.FloatFlag{Name: "prompt-len-multiplier", Value: d.PromptLenMultiplier, Category: catSynDerive, Sources: synthEnv("prompt-len-multiplier"),
			Usage: "scale every unique tail (the tokens after the shared prefix) by `Q`"},
		&cli.FloatFlag{Name: "output-len-multiplier", Value: d.OutputLenMultiplier, Category: catSynDerive, Sources: synthEnv("output-len-multiplier"),
			Usage: "scale output lengths by `M` (at least 1 token)"},
		&cli.StringFlag{Name: "window", Category: catSynDerive, Sources: synthEnv("window"),
			Usage: "keep sessions starting in `START:END` of trace time (durations or seconds, either may be empty), whole; re-base to START"},
		&cli.FloatFlag{Name: "sample", Value: d.Sample, Category: catSynDerive, Sources: synthEnv("sample"),
			Usage: "keep `FRACTION` of the sessions, whole, chosen at random (seeded)"},
	}
}

// synthGenerateFlags are synthesize's flags of a generated trace: how
// much, the arrivals, the sessions, the shared prefixes, the lengths and
// the cache targets, g giving the defaults.
func synthGenerateFlags(g synth.GenerateConfig) []cli.Flag {
	return []cli.Flag{
		&cli.IntFlag{Name: "requests", HideDefault: true, Category: catSynSize, Sources: synthEnv("requests"),
			Usage: "generate `N` requests (rows)"},
		&cli.IntFlag{Name: "sessions", HideDefault: true, Category: catSynSize, Sources: synthEnv("sessions"),
			Usage: "generate `N` sessions"},
		&cli.DurationFlag{Name: "duration", HideDefault: true, Category: catSynSize, Sources: synthEnv("duration"),
			Usage: "generate the sessions that start within `D`"},
		&cli.StringFlag{Name: "working-set", Category: catSynSize, Sources: synthEnv("working-set"),
			Usage: "generate sessions until the working set (distinct blocks × block size) is `TOKENS` (K/M/G; ±5 %)"},

		&cli.FloatFlag{Name: "rate", HideDefault: true, Category: catSynArr, Sources: synthEnv("rate"),
			Usage: "new sessions per second `R` (= requests per second with one turn)"},
		&cli.StringFlag{Name: "arrival", Value: string(g.Arrival), Category: catSynArr, Sources: synthEnv("arrival"),
			Usage: "inter-arrival `PATTERN`: constant, poisson or gamma"},
		&cli.FloatFlag{Name: "smoothness", Value: g.Smoothness, Category: catSynArr, Sources: synthEnv("smoothness"),
			Usage: "gamma shape `S` of --arrival gamma: 1 = Poisson, < 1 burstier, > 1 smoother"},
		&cli.DurationFlag{Name: "rate-ramp", HideDefault: true, Category: catSynArr, Sources: synthEnv("rate-ramp"),
			Usage: "ramp the rate linearly from 0 to --rate over `D`"},
		&cli.FloatFlag{Name: "rate-end", HideDefault: true, Category: catSynArr, Sources: synthEnv("rate-end"),
			Usage: "ramp the rate linearly from --rate to `R` at --duration"},
		&cli.DurationFlag{Name: "diurnal-period", HideDefault: true, Category: catSynArr, Sources: synthEnv("diurnal-period"),
			Usage: "multiply the rate by 1 − A·cos(2πt/`P`) (trough at 0, peak at P/2, mean 1)"},
		&cli.FloatFlag{Name: "diurnal-amplitude", HideDefault: true, Category: catSynArr, Sources: synthEnv("diurnal-amplitude"),
			Usage: "amplitude `A` (0..1) of --diurnal-period"},

		&cli.FloatFlag{Name: "turns", Value: g.Turns, Category: catSynSess, Sources: synthEnv("turns"),
			Usage: "mean turns per session `N`"},
		&cli.FloatFlag{Name: "turns-stddev", Category: catSynSess, Sources: synthEnv("turns-stddev"),
			Usage: "standard deviation `S` of the turns (lognormal, rounded, ≥ 1)"},
		&cli.DurationFlag{Name: "think-time", Category: catSynSess, Sources: synthEnv("think-time"),
			Usage: "mean delay `D` between a turn's end and the next turn"},
		&cli.DurationFlag{Name: "think-time-stddev", Category: catSynSess, Sources: synthEnv("think-time-stddev"),
			Usage: "standard deviation `D` of the think time (lognormal)"},

		&cli.IntFlag{Name: "prefix-roots", Category: catSynPrefix, Sources: synthEnv("prefix-roots"),
			Usage: "`N` independent prefix trees (tenants, system prompts)"},
		&cli.IntFlag{Name: "prefix-depth", Value: g.PrefixDepth, Category: catSynPrefix, Sources: synthEnv("prefix-depth"),
			Usage: "`L` levels per tree (system prompt, few-shot template, tool schemas, …)"},
		&cli.StringFlag{Name: "prefix-fanout", Category: catSynPrefix, Sources: synthEnv("prefix-fanout"),
			Usage: "children per node `F[,F…]`, one value or one per level below the roots"},
		&cli.StringFlag{Name: "prefix-tokens", Category: catSynPrefix, Sources: synthEnv("prefix-tokens"),
			Usage: "tokens per level `T[,T…]` (K/M suffixes), one value or one per level"},
		&cli.FloatFlag{Name: "prefix-share", Value: g.PrefixShare, Category: catSynPrefix, Sources: synthEnv("prefix-share"),
			Usage: "`FRACTION` of sessions that start with a prefix path"},

		&cli.FloatFlag{Name: "isl", Value: g.ISL.Mean, Category: catSynLen, Sources: synthEnv("isl"),
			Usage: "mean new input `TOKENS` per turn (on top of the prefix and the history)"},
		&cli.FloatFlag{Name: "isl-stddev", Category: catSynLen, Sources: synthEnv("isl-stddev"),
			Usage: "standard deviation `TOKENS` of --isl"},
		&cli.StringFlag{Name: "isl-dist", Category: catSynLen, Sources: synthEnv("isl-dist"),
			Usage: "`DIST` of --isl: fixed, normal or lognormal (default: fixed, normal with --isl-stddev)"},
		&cli.StringFlag{Name: "isl-from", Category: catSynLen, Sources: synthEnv("isl-from"),
			Usage: "draw input lengths from `TRACE` (with --osl-from the same file: (input, output) pairs)"},
		&cli.FloatFlag{Name: "osl", Value: g.OSL.Mean, Category: catSynLen, Sources: synthEnv("osl"),
			Usage: "mean output `TOKENS` per turn"},
		&cli.FloatFlag{Name: "osl-stddev", Category: catSynLen, Sources: synthEnv("osl-stddev"),
			Usage: "standard deviation `TOKENS` of --osl"},
		&cli.StringFlag{Name: "osl-dist", Category: catSynLen, Sources: synthEnv("osl-dist"),
			Usage: "`DIST` of --osl: fixed, normal or lognormal (default: fixed, normal with --osl-stddev)"},
		&cli.StringFlag{Name: "osl-from", Category: catSynLen, Sources: synthEnv("osl-from"),
			Usage: "draw output lengths from `TRACE`"},

		&cli.FloatFlag{Name: "target-hit-ratio", HideDefault: true, Category: catSynTarget, Sources: synthEnv("target-hit-ratio"),
			Usage: "infinite-cache token hit ratio `R` to meet (±0.02) by sizing and sharing the prefixes"},
	}
}

// synthOutputFlags are synthesize's flags of the output and of agentic
// tasks.
func synthOutputFlags() []cli.Flag {
	return []cli.Flag{
		&cli.StringFlag{Name: "output", Aliases: []string{"o"}, Value: "-", Category: catSynOut, Sources: synthEnv("output"),
			Usage: "write the trace to `FILE` (- = stdout)"},
		&cli.StringFlag{Name: "output-format", Value: string(trace.FormatMooncake), Category: catSynOut, Sources: synthEnv("output-format"),
			Usage: "`FORMAT`: mooncake or bailian"},
		&cli.IntFlag{Name: "block-size", Category: catSynOut, Sources: synthEnv("block-size"),
			DefaultText: "--from's format's; else 512 mooncake, 16 bailian", Usage: "`TOKENS` per hash id: of --from, or of the generated ids"},
		&cli.IntFlag{Name: "max-isl", HideDefault: true, Category: catSynOut, Sources: synthEnv("max-isl"),
			Usage: "drop rows over `TOKENS` input tokens with the rest of their session (0 = no limit)"},
		&cli.IntFlag{Name: "max-osl", HideDefault: true, Category: catSynOut, Sources: synthEnv("max-osl"),
			Usage: "cap output lengths at `TOKENS` (0 = no limit)"},
		&cli.Uint64Flag{Name: "seed", Value: synth.DefaultSeed, Category: catSynOut, Sources: synthEnv("seed"),
			Usage: "`SEED` of every random draw (same seed, same bytes)"},
		&cli.BoolFlag{Name: "quiet", Aliases: []string{"q"}, Category: catSynOut, Sources: synthEnv("quiet"),
			Usage: "no summary on stderr (and no analysis of the rows for it)"},
		&cli.IntFlag{Name: "tasks", HideDefault: true, Category: catSynAgent, Sources: synthEnv("tasks"),
			Usage: "generate `N` agentic tasks (trees of dependent requests) arriving at --rate per second"},
		&cli.IntFlag{Name: "fan-out", Value: 4, Category: catSynAgent, Sources: synthEnv("fan-out"),
			Usage: "children of each request above a task's last level (`N`)"},
		&cli.IntFlag{Name: "depth", Value: 3, Category: catSynAgent, Sources: synthEnv("depth"),
			Usage: "levels of each task (`N`; 1 = a single request)"},
		&cli.DurationFlag{Name: "tool-time", Category: catSynAgent, Sources: synthEnv("tool-time"),
			Usage: "mean tool time of a child after its parent completed (`DURATION`; with --think-time after it)"},
		&cli.DurationFlag{Name: "tool-time-stddev", Category: catSynAgent, Sources: synthEnv("tool-time-stddev"),
			Usage: "standard deviation of the tool time (`DURATION`; > 0 draws a lognormal)"},
		&cli.IntFlag{Name: "system-prompts", HideDefault: true, Category: catSynAgent, Sources: synthEnv("system-prompts"),
			Usage: "`N` shared system prompts; each task's root starts with one"},
		&cli.IntFlag{Name: "system-prompt-tokens", HideDefault: true, Category: catSynAgent, Sources: synthEnv("system-prompt-tokens"),
			Usage: "length of each shared system prompt (`TOKENS`)"},
	}
}

// synthOptions copies the flags into synth.Options.
func synthOptions(cmd *cli.Command) synth.Options {
	set := map[string]bool{}
	for _, f := range cmd.Flags {
		if name := f.Names()[0]; cmd.IsSet(name) {
			set[name] = true
		}
	}
	return synth.Options{
		Args: cmd.Args().Slice(), Set: set,
		From: cmd.String("from"), FromFormat: cmd.String("from-format"), BlockSize: cmd.Int("block-size"),
		Output: cmd.String("output"), OutputFormat: cmd.String("output-format"), Seed: cmd.Uint64("seed"),
		MaxISL: cmd.Int("max-isl"), MaxOSL: cmd.Int("max-osl"), Quiet: cmd.Bool("quiet"),
		Speedup: cmd.Float("speedup"), PrefixLenMultiplier: cmd.Float("prefix-len-multiplier"),
		PrefixRootMultiplier: cmd.Int("prefix-root-multiplier"), PromptLenMultiplier: cmd.Float("prompt-len-multiplier"),
		OutputLenMultiplier: cmd.Float("output-len-multiplier"), Window: cmd.String("window"), Sample: cmd.Float("sample"),
		Requests: cmd.Int("requests"), Sessions: cmd.Int("sessions"), Duration: cmd.Duration("duration"),
		WorkingSet: cmd.String("working-set"), Rate: cmd.Float("rate"), Arrival: cmd.String("arrival"),
		Smoothness: cmd.Float("smoothness"), RateRamp: cmd.Duration("rate-ramp"), RateEnd: cmd.Float("rate-end"),
		DiurnalPeriod: cmd.Duration("diurnal-period"), DiurnalAmplitude: cmd.Float("diurnal-amplitude"),
		Turns: cmd.Float("turns"), TurnsStddev: cmd.Float("turns-stddev"),
		ThinkTime: cmd.Duration("think-time"), ThinkTimeStddev: cmd.Duration("think-time-stddev"),
		PrefixRoots: cmd.Int("prefix-roots"), PrefixDepth: cmd.Int("prefix-depth"),
		PrefixFanout: cmd.String("prefix-fanout"), PrefixTokens: cmd.String("prefix-tokens"), PrefixShare: cmd.Float("prefix-share"),
		ISL: cmd.Float("isl"), ISLStddev: cmd.Float("isl-stddev"), ISLDist: cmd.String("isl-dist"), ISLFrom: cmd.String("isl-from"),
		OSL: cmd.Float("osl"), OSLStddev: cmd.Float("osl-stddev"), OSLDist: cmd.String("osl-dist"), OSLFrom: cmd.String("osl-from"),
		TargetHitRatio: cmd.Float("target-hit-ratio"),
		Tasks:          cmd.Int("tasks"), FanOut: cmd.Int("fan-out"), Depth: cmd.Int("depth"),
		ToolTime: cmd.Duration("tool-time"), ToolTimeStddev: cmd.Duration("tool-time-stddev"),
		SystemPrompts: cmd.Int("system-prompts"), SystemPromptTokens: cmd.Int("system-prompt-tokens"),
	}
}

// synthRunError maps an error of synth.Run to an exit code: what the
// settings caused is a usage error (nothing was written), a trace that
// cannot be read gets trace.UsageError's hint, anything else is a run error.
func synthRunError(err error) error {
	if errors.Is(err, synth.ErrSettings) {
		return exitcode.UsageError(err, "see 'reprise synthesize --help'")
	}
	if re, ok := errors.AsType[*synth.ReadError](err); ok {
		flag := ""
		if re.FormatOption != "" {
			flag = "--" + re.FormatOption
		}
		return trace.UsageError(re.Err, flag, false)
	}
	return err
}
