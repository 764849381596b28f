package synth

import (
	"errors"
	"fmt"
	"math"
	"slices"
	"strconv"
	"strings"
	"time"

	"github.com/reprise-bench/reprise/trace"
	"github.com/reprise-bench/reprise/trace/analyze"
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

// Options is one synthesis as `reprise synthesize` describes it: the
// values of its options, by field, and which of them were given. The
// zero value is not useful: start from [NewOptions]. Run validates it
// before anything is read or written.
type Options struct {
	// Args are positional arguments: any is an error (the input is From).
	Args []string
	// Set names the options given explicitly (by their flag names, e.g.
	// "window"): an option of the other mode given is an error, and some
	// options apply only when given.
	Set          map[string]bool
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

// NewOptions returns the defaults of `reprise synthesize`: Mooncake to
// standard output, [DefaultSeed], the defaults of [NewDeriveConfig],
// [NewGenerateConfig] and [NewAgenticConfig].
func NewOptions() Options {
	d, g, a := NewDeriveConfig(), NewGenerateConfig(), NewAgenticConfig()
	return Options{
		Output: "-", OutputFormat: string(trace.FormatMooncake), Seed: DefaultSeed,
		Speedup: d.Speedup, PrefixLenMultiplier: d.PrefixLenMultiplier, PrefixRootMultiplier: d.PrefixRootMultiplier,
		PromptLenMultiplier: d.PromptLenMultiplier, OutputLenMultiplier: d.OutputLenMultiplier, Sample: d.Sample,
		Arrival: string(g.Arrival), Smoothness: g.Smoothness, Turns: g.Turns,
		PrefixDepth: g.PrefixDepth, PrefixShare: g.PrefixShare, ISL: g.ISL.Mean, OSL: g.OSL.Mean,
		FanOut: a.FanOut, Depth: a.Depth,
	}
}

// plan is a validated synthesize command: exactly one of derive and
// generate is set.
type plan struct {
	derive     *DeriveConfig
	generate   *GenerateConfig
	agentic    *AgenticConfig
	readOpts   trace.Options
	format     trace.Format
	lengthsISL string // --isl-from / --osl-from, read after validation
	lengthsOSL string
}

// Validate reports every problem at once (each error matches
// [ErrSettings]). It reads nothing and writes nothing.
func (c Options) Validate() error {
	_, err := c.plan()
	return err
}

// plan validates c and returns what Run executes: every problem at once.
func (c Options) plan() (*plan, error) {
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
	p := &plan{format: of}
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
	add := func(err error) { errs = append(errs, err) }
	switch {
	case agentic && !derive:
		c.planAgentic(p, bad, add)
	case derive:
		c.planDerive(p, bad, add)
	default:
		c.planGenerate(p, bad, add)
	}
	return p, settings(errors.Join(errs...))
}

// planAgentic fills p.agentic from c, reporting problems to bad and add.
func (c Options) planAgentic(p *plan, bad func(string, ...any), add func(error)) {
	of := p.format
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
	g := NewAgenticConfig()
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
		to        *Dist
	}{{"isl", c.ISL, c.ISLStddev, c.ISLDist, &g.ISL}, {"osl", c.OSL, c.OSLStddev, c.OSLDist, &g.OSL}} {
		k, err := ParseDistKind(d.kind)
		if err != nil {
			bad("--%s-dist: %v", d.name, err)
		}
		*d.to = Dist{Kind: k, Mean: d.mean, Stddev: d.std}
	}
	if err := g.Validate(); err != nil {
		add(err)
	}
	p.agentic = &g
}

// planDerive fills p.derive and p.readOpts from c.
func (c Options) planDerive(p *plan, bad func(string, ...any), add func(error)) {
	of := p.format
	f, err := trace.ParseFormat(c.FromFormat)
	if err != nil {
		bad("--from-format: %v", err)
	}
	p.readOpts = trace.Options{Format: f, BlockSize: c.BlockSize, DropFailed: true}
	d := NewDeriveConfig()
	d.Speedup, d.PrefixLenMultiplier, d.PrefixRootMultiplier = c.Speedup, c.PrefixLenMultiplier, c.PrefixRootMultiplier
	d.PromptLenMultiplier, d.OutputLenMultiplier, d.Sample = c.PromptLenMultiplier, c.OutputLenMultiplier, c.Sample
	d.MaxISL, d.MaxOSL, d.Seed, d.Format = c.MaxISL, c.MaxOSL, c.Seed, of
	if c.Set["window"] {
		w, err := ParseWindow(c.Window)
		if err != nil {
			bad("--window: %v", err)
		}
		d.Window = w
	}
	if err := d.Validate(); err != nil {
		add(err)
	}
	p.derive = &d
}

// planGenerate fills p.generate from c.
func (c Options) planGenerate(p *plan, bad func(string, ...any), add func(error)) {
	of := p.format
	g := NewGenerateConfig()
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
	if a, err := ParseArrival(c.Arrival); err != nil {
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
	dist := func(name string, mean, sd float64, kind, from string) Dist {
		k, err := ParseDistKind(kind)
		if err != nil {
			bad("--%s-dist: %v", name, err)
		}
		if from != "" {
			for _, f := range []string{name, name + "-stddev", name + "-dist"} {
				if c.Set[f] {
					bad("--%s-from takes the lengths from a trace: drop --%s", name, f)
				}
			}
			return Dist{Kind: DistEmpirical, Values: []int{1}} // replaced once read
		}
		return Dist{Kind: k, Mean: mean, Stddev: sd}
	}
	g.ISL = dist("isl", c.ISL, c.ISLStddev, c.ISLDist, c.ISLFrom)
	g.OSL = dist("osl", c.OSL, c.OSLStddev, c.OSLDist, c.OSLFrom)
	p.lengthsISL, p.lengthsOSL = c.ISLFrom, c.OSLFrom
	if c.ISLFrom == "-" || c.OSLFrom == "-" {
		bad("--isl-from/--osl-from: give a file (standard input is not supported for lengths)")
	}
	g.TargetHitRatio = c.TargetHitRatio
	if err := g.Validate(); err != nil {
		add(err)
	}
	p.generate = &g
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
