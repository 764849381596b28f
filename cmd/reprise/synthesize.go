package main

import (
	"context"
	"errors"
	"fmt"
	"io"
	"math"
	"slices"
	"strconv"
	"strings"
	"time"

	"github.com/urfave/cli/v3"

	"github.com/reprise-bench/reprise/internal/exitcode"
	"github.com/reprise-bench/reprise/trace"
	"github.com/reprise-bench/reprise/trace/analyze"
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

// deriveFlags and generateFlags name the flags of each mode, to reject
// the ones that do not apply.
var (
	deriveFlags = []string{"speedup", "prefix-len-multiplier", "prefix-root-multiplier", "prompt-len-multiplier",
		"output-len-multiplier", "window", "sample", "from-format"}
	generateFlags = []string{"requests", "sessions", "duration", "working-set", "rate", "arrival", "smoothness",
		"rate-ramp", "rate-end", "diurnal-period", "diurnal-amplitude", "turns", "turns-stddev", "think-time",
		"think-time-stddev", "prefix-roots", "prefix-depth", "prefix-fanout", "prefix-tokens", "prefix-share",
		"isl", "isl-stddev", "isl-dist", "isl-from", "osl", "osl-stddev", "osl-dist", "osl-from", "target-hit-ratio"}
	// agenticFlags generate agentic tasks (--tasks); agenticShared are
	// the generate flags that also apply to them.
	agenticFlags  = []string{"tasks", "fan-out", "depth", "tool-time", "tool-time-stddev", "system-prompts", "system-prompt-tokens"}
	agenticShared = []string{"rate", "think-time", "think-time-stddev", "isl", "isl-stddev", "isl-dist", "osl", "osl-stddev", "osl-dist"}
)

// synthesizeConfig is the synthesize command line, copied from the flags
// and validated before anything is read or written.
type synthesizeConfig struct {
	Args         []string
	Set          map[string]bool // flags given on the command line or in the environment
	From         string
	FromFormat   string
	BlockSize    int
	Output       string
	OutputFormat string
	Seed         uint64
	MaxISL       int
	MaxOSL       int
	Quiet        bool

	Speedup, PrefixLenMultiplier, PromptLenMultiplier, OutputLenMultiplier float64
	PrefixRootMultiplier                                                   int
	Window                                                                 string
	Sample                                                                 float64

	Requests, Sessions int
	Duration           time.Duration
	WorkingSet         string
	Rate               float64
	Arrival            string
	Smoothness         float64
	RateRamp           time.Duration
	RateEnd            float64
	DiurnalPeriod      time.Duration
	DiurnalAmplitude   float64
	Turns, TurnsStddev float64
	ThinkTime          time.Duration
	ThinkTimeStddev    time.Duration
	PrefixRoots        int
	PrefixDepth        int
	PrefixFanout       string
	PrefixTokens       string
	PrefixShare        float64
	ISL, ISLStddev     float64
	ISLDist, ISLFrom   string
	OSL, OSLStddev     float64
	OSLDist, OSLFrom   string
	TargetHitRatio     float64

	Tasks, FanOut, Depth              int
	ToolTime, ToolTimeStddev          time.Duration
	SystemPrompts, SystemPromptTokens int
}

// synthPlan is a validated synthesize command: exactly one of derive and
// generate is set.
type synthPlan struct {
	derive     *synth.DeriveConfig
	generate   *synth.GenerateConfig
	agentic    *synth.AgenticConfig
	readOpts   trace.Options
	format     trace.Format
	lengthsISL string // --isl-from / --osl-from, read after validation
	lengthsOSL string
}

// Validate reports every problem at once and returns the plan. It reads
// nothing and writes nothing.
func (c synthesizeConfig) Validate() (*synthPlan, error) {
	var errs []error
	bad := func(format string, args ...any) { errs = append(errs, fmt.Errorf(format, args...)) }
	if len(c.Args) > 0 {
		bad("unexpected arguments %q: the input trace is --from TRACE", strings.Join(c.Args, " "))
	}
	of, err := trace.ParseFormat(c.OutputFormat)
	if err != nil || (of != trace.FormatMooncake && of != trace.FormatBailian) {
		bad("--output-format %q: want mooncake or bailian", c.OutputFormat)
	}
	if c.BlockSize < 0 {
		bad("--block-size %d: want tokens per hash id ≥ 1 (0 = the format's default)", c.BlockSize)
	}
	if c.Output == "" {
		bad("--output: give a file, or - for standard output")
	}
	p := &synthPlan{format: of}
	derive := c.From != ""
	for _, name := range generateFlags {
		if derive && c.Set[name] {
			bad("--%s describes a generated trace; it does not apply with --from", name)
		}
	}
	for _, name := range deriveFlags {
		if !derive && c.Set[name] {
			bad("--%s transforms a trace: give --from TRACE", name)
		}
	}
	agentic := c.Set["tasks"]
	for _, name := range agenticFlags {
		switch {
		case derive && c.Set[name]:
			bad("--%s describes a generated agentic trace; it does not apply with --from", name)
		case !agentic && c.Set[name]:
			bad("--%s shapes agentic tasks: give --tasks N", name)
		}
	}
	if agentic && !derive {
		for _, name := range generateFlags {
			if c.Set[name] && !slices.Contains(agenticShared, name) {
				bad("--%s does not apply to agentic tasks (--tasks); they take %s", name, "--"+strings.Join(agenticShared, ", --"))
			}
		}
		for _, name := range []string{"max-isl", "max-osl"} {
			if c.Set[name] {
				bad("--%s does not apply to agentic tasks (--tasks)", name)
			}
		}
		if of != trace.FormatMooncake {
			bad("--output-format %s: agentic tasks are written as agentic Mooncake rows; use mooncake", of)
		}
		g := synth.NewAgenticConfig()
		g.Seed, g.Tasks, g.Rate, g.FanOut, g.Depth = c.Seed, c.Tasks, c.Rate, c.FanOut, c.Depth
		if c.BlockSize > 0 {
			g.BlockSize = c.BlockSize
		}
		g.ThinkTime, g.ThinkTimeStddev, g.ToolTime, g.ToolTimeStddev = c.ThinkTime, c.ThinkTimeStddev, c.ToolTime, c.ToolTimeStddev
		g.SystemPrompts, g.SystemPromptTokens = c.SystemPrompts, c.SystemPromptTokens
		for _, d := range []struct {
			name      string
			mean, std float64
			kind      string
			to        *synth.Dist
		}{{"isl", c.ISL, c.ISLStddev, c.ISLDist, &g.ISL}, {"osl", c.OSL, c.OSLStddev, c.OSLDist, &g.OSL}} {
			k, err := synth.ParseDistKind(d.kind)
			if err != nil {
				bad("--%s-dist: %v", d.name, err)
			}
			*d.to = synth.Dist{Kind: k, Mean: d.mean, Stddev: d.std}
		}
		if err := g.Validate(); err != nil {
			errs = append(errs, err)
		}
		p.agentic = &g
		return p, errors.Join(errs...)
	}
	if derive {
		f, err := trace.ParseFormat(c.FromFormat)
		if err != nil {
			bad("--from-format: %v", err)
		}
		p.readOpts = trace.Options{Format: f, BlockSize: c.BlockSize, DropFailed: true}
		d := synth.NewDeriveConfig()
		d.Speedup, d.PrefixLenMultiplier, d.PrefixRootMultiplier = c.Speedup, c.PrefixLenMultiplier, c.PrefixRootMultiplier
		d.PromptLenMultiplier, d.OutputLenMultiplier, d.Sample = c.PromptLenMultiplier, c.OutputLenMultiplier, c.Sample
		d.MaxISL, d.MaxOSL, d.Seed, d.Format = c.MaxISL, c.MaxOSL, c.Seed, of
		if c.Set["window"] {
			w, err := synth.ParseWindow(c.Window)
			if err != nil {
				bad("--window: %v", err)
			}
			d.Window = w
		}
		if err := d.Validate(); err != nil {
			errs = append(errs, err)
		}
		p.derive = &d
		return p, errors.Join(errs...)
	}

	g := synth.NewGenerateConfig()
	g.Seed, g.Format, g.BlockSize, g.MaxISL, g.MaxOSL = c.Seed, of, c.BlockSize, c.MaxISL, c.MaxOSL
	g.Requests, g.Sessions, g.Duration = c.Requests, c.Sessions, c.Duration
	// Only the summary shows the analyzer's measure of the rows.
	g.SkipAnalysis = c.Quiet
	if c.Set["working-set"] {
		ws, err := analyze.ParseTokens(c.WorkingSet)
		if err != nil {
			bad("--working-set: %v", err)
		} else if ws == 0 {
			bad("--working-set 0: want a number of tokens > 0")
		}
		g.WorkingSet = max(ws, 1)
	}
	g.Rate = c.Rate
	if a, err := synth.ParseArrival(c.Arrival); err != nil {
		bad("--arrival: %v", err)
	} else {
		g.Arrival = a
	}
	g.Smoothness, g.RateRamp = c.Smoothness, c.RateRamp
	if c.Set["rate-end"] {
		if c.RateEnd < 0 || math.IsNaN(c.RateEnd) {
			bad("--rate-end %g: want a rate ≥ 0", c.RateEnd)
		}
		g.RateEnd = c.RateEnd
	}
	g.DiurnalPeriod, g.DiurnalAmplitude = c.DiurnalPeriod, c.DiurnalAmplitude
	g.Turns, g.TurnsStddev, g.ThinkTime, g.ThinkTimeStddev = c.Turns, c.TurnsStddev, c.ThinkTime, c.ThinkTimeStddev
	g.PrefixRoots, g.PrefixDepth, g.PrefixShare = c.PrefixRoots, c.PrefixDepth, c.PrefixShare
	if c.Set["prefix-fanout"] {
		v, err := parseCounts(c.PrefixFanout, false)
		if err != nil {
			bad("--prefix-fanout: %v", err)
		}
		g.PrefixFanout = v
	}
	if c.Set["prefix-tokens"] {
		v, err := parseCounts(c.PrefixTokens, true)
		if err != nil {
			bad("--prefix-tokens: %v", err)
		}
		g.PrefixTokens = v
	}
	dist := func(name string, mean, sd float64, kind, from string) synth.Dist {
		k, err := synth.ParseDistKind(kind)
		if err != nil {
			bad("--%s-dist: %v", name, err)
		}
		if from != "" {
			for _, f := range []string{name, name + "-stddev", name + "-dist"} {
				if c.Set[f] {
					bad("--%s-from takes the lengths from a trace: drop --%s", name, f)
				}
			}
			return synth.Dist{Kind: synth.DistEmpirical, Values: []int{1}} // replaced once read
		}
		return synth.Dist{Kind: k, Mean: mean, Stddev: sd}
	}
	g.ISL = dist("isl", c.ISL, c.ISLStddev, c.ISLDist, c.ISLFrom)
	g.OSL = dist("osl", c.OSL, c.OSLStddev, c.OSLDist, c.OSLFrom)
	p.lengthsISL, p.lengthsOSL = c.ISLFrom, c.OSLFrom
	if c.ISLFrom == "-" || c.OSLFrom == "-" {
		bad("--isl-from/--osl-from: give a file (standard input is not supported for lengths)")
	}
	g.TargetHitRatio = c.TargetHitRatio
	if err := g.Validate(); err != nil {
		errs = append(errs, err)
	}
	p.generate = &g
	return p, errors.Join(errs...)
}

// parseCounts parses "4" or "2000,500,300"; with tokens, K/M/G suffixes
// are allowed ("2K").
func parseCounts(s string, tokens bool) ([]int, error) {
	var out []int
	for part := range strings.SplitSeq(s, ",") {
		var v int64
		var err error
		if tokens {
			v, err = analyze.ParseTokens(part)
		} else {
			v, err = strconv.ParseInt(strings.TrimSpace(part), 10, 64)
			if err != nil {
				err = fmt.Errorf("%q: want whole numbers separated by commas, e.g. 4,2", part)
			}
		}
		if err != nil {
			return nil, err
		}
		if v < 1 || v > 1<<30 {
			return nil, fmt.Errorf("%d: want a value from 1 to %d", v, 1<<30)
		}
		out = append(out, int(v))
	}
	return out, nil
}

// synthesizeCommand is `reprise synthesize`.
func synthesizeCommand(a *app) *cli.Command {
	d, g := synth.NewDeriveConfig(), synth.NewGenerateConfig()
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
		Flags: []cli.Flag{
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
		},
		Action: func(ctx context.Context, cmd *cli.Command) error {
			set := map[string]bool{}
			for _, f := range cmd.Flags {
				name := f.Names()[0]
				if cmd.IsSet(name) {
					set[name] = true
				}
			}
			c := synthesizeConfig{
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
			return runSynthesize(ctx, a, c)
		},
	}
}

// runSynthesize validates, then derives in memory or generates row by row
// into the output: a failure before the end leaves no output file behind.
func runSynthesize(ctx context.Context, a *app, c synthesizeConfig) error {
	p, err := c.Validate()
	if err != nil {
		return exitcode.UsageError(err, "see 'reprise synthesize --help'")
	}
	var out synthOutput
	if p.agentic != nil {
		res, err := synth.GenerateAgentic(*p.agentic)
		if err != nil {
			return synthError(err)
		}
		err = writeOutput(a.stdout, c.Output, func(w io.Writer) error { return synth.Write(w, res) })
		if err != nil {
			return err
		}
		out = synthOutput{rows: len(res.Rows), format: res.Format,
			report: analyze.Rows(res.Rows, analyze.Config{BlockSize: res.BlockSize, CacheSizes: []int64{}})}
	} else if p.derive != nil {
		streamed, why, err := deriveStreamed(ctx, a, c, p, &out)
		if err != nil {
			return err
		}
		if !streamed {
			if out, err = deriveInMemory(ctx, a, c, p); err != nil {
				return err
			}
			out.inMemory = why
		}
	} else {
		if err := p.loadLengths(); err != nil {
			return traceError(err, "", false)
		}
		g := p.generate
		out.format = g.Format
		var genErr error
		err := writeOutput(a.stdout, c.Output, func(w io.Writer) error {
			tw, err := trace.NewWriter(w, g.Format)
			if err != nil {
				return err
			}
			n := 0
			out.generate, genErr = synth.GenerateTo(*g, func(r *trace.Row) error {
				if n++; n&0xfff == 0 {
					if err := ctx.Err(); err != nil {
						return err
					}
				}
				return tw.Write(r)
			})
			if genErr != nil {
				return genErr
			}
			return tw.Flush()
		})
		if genErr != nil {
			if ctx.Err() != nil {
				return ctx.Err()
			}
			return synthError(genErr)
		}
		if err != nil {
			return err
		}
		out.rows, out.report = out.generate.Rows, out.generate.Written
	}
	if !c.Quiet {
		printSynthSummary(a.stderr, c, out)
	}
	return nil
}

// deriveInMemory reads the whole input, sorted by arrival, derives and
// writes the output.
func deriveInMemory(ctx context.Context, a *app, c synthesizeConfig, p *synthPlan) (synthOutput, error) {
	rows, err := readTrace(ctx, a, c.From, p.readOpts)
	if err != nil {
		return synthOutput{}, traceError(err, "--from-format", false)
	}
	if err := ctx.Err(); err != nil {
		return synthOutput{}, err
	}
	res, err := synth.Derive(rows, *p.derive)
	if err != nil {
		return synthOutput{}, synthError(err)
	}
	if err := ctx.Err(); err != nil {
		return synthOutput{}, err
	}
	err = writeOutput(a.stdout, c.Output, func(w io.Writer) error { return synth.Write(w, res) })
	if err != nil {
		return synthOutput{}, err
	}
	out := synthOutput{rows: len(res.Rows), format: res.Format, derive: res.Derive}
	if !c.Quiet {
		out.report = synth.Measure(res.Rows, res.BlockSize, []int64{})
	}
	return out, nil
}

// deriveStreamed derives row by row when the settings and the input allow
// it (synth.CanStream: a first pass that validates every row, as the
// in-memory read does): it reports false, and why, when they do not.
func deriveStreamed(ctx context.Context, a *app, c synthesizeConfig, p *synthPlan, out *synthOutput) (bool, string, error) {
	opts := p.readOpts
	opts.Log, opts.Context = a.log, ctx
	ok, why, err := synth.CanStream(c.From, opts, *p.derive)
	if err != nil {
		if errors.Is(err, synth.ErrSettings) {
			return false, "", synthError(err)
		}
		return false, "", traceError(err, "--from-format", false)
	}
	if !ok {
		return false, why, nil
	}
	var an *analyze.Analyzer
	if !c.Quiet {
		an = analyze.New(analyze.Config{CacheSizes: []int64{}})
	}
	var derr error
	err = writeOutput(a.stdout, c.Output, func(w io.Writer) error {
		tw, err := trace.NewWriter(w, p.derive.Format)
		if err != nil {
			return err
		}
		n := 0
		out.derive, derr = synth.DeriveTo(c.From, opts, *p.derive, func(r *trace.Row) error {
			if n++; n&0xfff == 0 {
				if err := ctx.Err(); err != nil {
					return err
				}
			}
			if an != nil {
				an.Add(r)
			}
			return tw.Write(r)
		})
		if derr != nil {
			return derr
		}
		return tw.Flush()
	})
	if derr != nil {
		if ctx.Err() != nil {
			return false, "", ctx.Err()
		}
		if errors.Is(derr, synth.ErrSettings) {
			return false, "", synthError(derr)
		}
		return false, "", traceError(derr, "--from-format", false)
	}
	if err != nil {
		return false, "", err
	}
	out.rows, out.format = out.derive.RowsOut, p.derive.Format
	if an != nil {
		out.report = an.Report()
	}
	return true, "", nil
}

// synthOutput is what a synthesis wrote, for its summary.
type synthOutput struct {
	rows     int
	format   trace.Format
	report   *analyze.Report // of the rows as written
	derive   *synth.DeriveStats
	generate *synth.GenerateStats
	// inMemory says why a derive read the whole input ("" when streamed).
	inMemory string
}

// readTrace reads a whole trace, sorted by arrival, from a file or stdin
// (read once, straight into the rows: no copy of it is kept). Reading
// stops when ctx is done.
func readTrace(ctx context.Context, a *app, path string, opts trace.Options) ([]trace.Row, error) {
	opts.Log, opts.Context = a.log, ctx
	if path != "-" {
		rows, _, err := trace.ReadAll(path, opts)
		return rows, err
	}
	r, err := trace.NewReader("-", a.stdin, opts)
	if err != nil {
		return nil, err
	}
	defer r.Close()
	rows, _, err := trace.ReadAllFrom(r)
	return rows, err
}

// loadLengths reads the traces of --isl-from and --osl-from; the same file
// for both gives joint (input, output) pairs.
func (p *synthPlan) loadLengths() error {
	g := p.generate
	if p.lengthsISL == "" && p.lengthsOSL == "" {
		return nil
	}
	load := func(path string) ([][2]int, error) {
		return synth.LoadLengths(path, trace.Options{DropFailed: true})
	}
	if p.lengthsISL != "" && p.lengthsISL == p.lengthsOSL {
		pairs, err := load(p.lengthsISL)
		if err != nil {
			return err
		}
		g.Lengths = pairs
		return nil
	}
	column := func(path string, i int) (synth.Dist, error) {
		pairs, err := load(path)
		if err != nil {
			return synth.Dist{}, err
		}
		v := make([]int, len(pairs))
		for j, pr := range pairs {
			v[j] = pr[i]
		}
		return synth.Dist{Kind: synth.DistEmpirical, Values: v}, nil
	}
	var err error
	if p.lengthsISL != "" {
		if g.ISL, err = column(p.lengthsISL, 0); err != nil {
			return err
		}
	}
	if p.lengthsOSL != "" {
		if g.OSL, err = column(p.lengthsOSL, 1); err != nil {
			return err
		}
	}
	return nil
}

// synthError maps a synthesis error: what the settings caused is a usage
// error (nothing was written), anything else a run error.
func synthError(err error) error {
	if errors.Is(err, synth.ErrSettings) {
		return exitcode.UsageError(err, "see 'reprise synthesize --help'")
	}
	return err
}

// printSynthSummary prints what was written and what the analyzer
// measures on it.
func printSynthSummary(w io.Writer, c synthesizeConfig, res synthOutput) {
	rep := res.report
	dest := c.Output
	if dest == "-" {
		dest = "stdout"
	}
	fmt.Fprintf(w, "synthesize: %s rows (%s) to %s\n", groupInt(int64(res.rows)), res.format, dest)
	fmt.Fprintf(w, "  span %.4f s, mean rate %.3f req/s, ISL mean %.1f, OSL mean %.1f\n",
		rep.SpanSeconds, rep.Arrivals.MeanRate, rep.ISL.Mean, rep.OSL.Mean)
	if ca := rep.Cache; ca != nil {
		fmt.Fprintf(w, "  infinite-cache token hit ratio %.4f (block %.4f), working set %s tokens (%s blocks of %d)\n",
			ca.TokenHitRatio, ca.BlockHitRatio, groupInt(ca.DistinctBlocks*int64(ca.BlockSize)), groupInt(ca.DistinctBlocks), ca.BlockSize)
		if def := res.format.DefaultBlockSize(); def != ca.BlockSize {
			fmt.Fprintf(w, "  note: %s readers assume %d-token blocks; read this file with --block-size %d\n", res.format, def, ca.BlockSize)
		}
	}
	if d := rep.Dependencies; d != nil {
		fmt.Fprintf(w, "  agentic: %s tasks, depth %.0f–%.0f, fan-out mean %.2f, think %.4f s and tool %.4f s mean, ancestor token hit ratio %.4f\n",
			groupInt(d.Tasks), d.Depth.Min, d.Depth.Max, d.FanOut.Mean, d.ThinkTime.Mean, d.ToolTime.Mean, d.AncestorTokenHitRatio)
	}
	if st := res.derive; st != nil {
		var parts []string
		if st.WindowSessionsDropped > 0 || c.Set["window"] {
			parts = append(parts, fmt.Sprintf("window dropped %d sessions (kept %d rows past its end, dropped %d inside it from sessions begun before)",
				st.WindowSessionsDropped, st.WindowRowsBeyond, st.WindowRowsBefore))
		}
		if st.SampleSessionsDropped > 0 {
			parts = append(parts, fmt.Sprintf("sample dropped %d sessions", st.SampleSessionsDropped))
		}
		if st.MaxISLRowsDropped > 0 {
			parts = append(parts, fmt.Sprintf("--max-isl dropped %d rows of %d sessions", st.MaxISLRowsDropped, st.MaxISLSessionsCut))
		}
		if c.PrefixRootMultiplier > 1 && rep.Cache != nil {
			parts = append(parts, fmt.Sprintf("root multiplier ×%d: ceiling %.4f before, %.4f expected after (formula)",
				c.PrefixRootMultiplier, st.CeilingBefore, st.ExpectedCeiling))
		}
		parts = append(parts, fmt.Sprintf("%s of %s sessions, %s new hash ids", groupInt(int64(st.SessionsOut)), groupInt(int64(st.SessionsIn)), groupInt(st.NewIDs)))
		if res.inMemory != "" {
			parts = append(parts, "read whole into memory: "+res.inMemory)
		} else {
			parts = append(parts, "streamed row by row")
		}
		fmt.Fprintf(w, "  derive: %s\n", strings.Join(parts, "; "))
	}
	if st := res.generate; st != nil {
		s := fmt.Sprintf("%s sessions", groupInt(int64(st.Sessions)))
		if len(st.PrefixTokens) > 0 {
			s += fmt.Sprintf(", prefix levels %v tokens walked by %d sessions (share %.4f)", st.PrefixTokens, st.Walkers, st.PrefixShare)
		}
		if st.RowsCut > 0 {
			s += fmt.Sprintf(", --max-isl cut %d turns of %d sessions", st.RowsCut, st.SessionsCut)
		}
		if c.TargetHitRatio > 0 {
			s += fmt.Sprintf(", hit ratio %.4f for target %g", st.HitRatio, c.TargetHitRatio)
		}
		if c.Set["working-set"] {
			ws, _ := analyze.ParseTokens(c.WorkingSet)
			s += fmt.Sprintf(", working set %s for target %s (%+.2f %%)", groupInt(st.WorkingSetTokens), groupInt(ws),
				100*float64(st.WorkingSetTokens-ws)/float64(ws))
		}
		fmt.Fprintf(w, "  generate: %s\n", s)
	}
}

// groupInt formats n with thousands separators: 12,031.
func groupInt(n int64) string {
	s := strconv.FormatInt(n, 10)
	neg := strings.HasPrefix(s, "-")
	if neg {
		s = s[1:]
	}
	var b strings.Builder
	for i, c := range s {
		if i > 0 && (len(s)-i)%3 == 0 {
			b.WriteByte(',')
		}
		b.WriteRune(c)
	}
	if neg {
		return "-" + b.String()
	}
	return b.String()
}
