package synth

import (
	"errors"
	"fmt"
	"math"
	"strings"
	"time"

	"github.com/reprise-bench/reprise/trace"
	"github.com/reprise-bench/reprise/trace/analyze"
)

// Arrival names the inter-arrival pattern of generated sessions.
type Arrival string

// The arrival patterns: gaps of mean 1/rate (in operational time, see
// [RateCurve]).
const (
	// ArrivalConstant spaces sessions exactly 1/rate apart.
	ArrivalConstant Arrival = "constant"
	// ArrivalPoisson draws exponential gaps (coefficient of variation 1).
	ArrivalPoisson Arrival = "poisson"
	// ArrivalGamma draws Gamma(shape s, scale 1/(rate·s)) gaps: CV 1/√s,
	// s = 1 is Poisson, s < 1 burstier, s > 1 smoother (vLLM's and
	// AIPerf's burstiness).
	ArrivalGamma Arrival = "gamma"
)

// ParseArrival returns the Arrival named s (case-insensitive).
func ParseArrival(s string) (Arrival, error) {
	switch a := Arrival(strings.ToLower(strings.TrimSpace(s))); a {
	case ArrivalConstant, ArrivalPoisson, ArrivalGamma:
		return a, nil
	}
	return "", fmt.Errorf("unknown arrival pattern %q: use constant, poisson or gamma", s)
}

// Defaults of [NewGenerateConfig].
const (
	DefaultISL = 550
	DefaultOSL = 150
)

// Limits that keep a generation inside memory.
const (
	// maxPrefixNodes bounds the nodes of the prefix trees.
	maxPrefixNodes = 1 << 24
	// maxSessions bounds the sessions a generation may draw.
	maxSessions = 1 << 22
	// maxPrefixTokens bounds a solved prefix (all levels together).
	maxPrefixTokens = 1 << 22
)

// GenerateConfig configures [Generate]. Build it with [NewGenerateConfig]
// and set one of Requests, Sessions, Duration or WorkingSet, and Rate.
// Validate does not change it.
type GenerateConfig struct {
	// Seed seeds every draw; one stream per concern (arrivals, turns,
	// think times, lengths, prefix paths, prefix share).
	Seed uint64
	// Format is the output format (mooncake or bailian).
	Format trace.Format
	// BlockSize is the tokens per hash id; 0 = the format's (512
	// Mooncake, 16 Bailian).
	BlockSize int

	// How much: exactly one of these is set (> 0).
	//   Requests: rows; sessions are started until their turns add up to
	//   it (the last session is cut short).
	//   Sessions: sessions.
	//   Duration: the sessions that start before it (their later turns
	//   may come after it).
	//   WorkingSet: tokens; sessions are started until the trace's
	//   working set (distinct blocks × BlockSize, see GenerateStats) is
	//   closest to it.
	Requests   int
	Sessions   int
	Duration   time.Duration
	WorkingSet int64

	// Rate is the mean rate of new sessions per second (= the request
	// rate when sessions have one turn). Required.
	Rate float64
	// Arrival and Smoothness (gamma shape) set the gaps.
	Arrival    Arrival
	Smoothness float64
	// RateRamp ramps the rate linearly from 0 to Rate over its length.
	RateRamp time.Duration
	// RateEnd, when ≥ 0 (negative = none), ramps the rate linearly from Rate (after
	// RateRamp) to RateEnd at Duration (which it requires).
	RateEnd float64
	// DiurnalAmplitude A and DiurnalPeriod P multiply the rate by
	// 1 − A·cos(2πt/P): a trough at 0, a peak at P/2, mean 1.
	DiurnalPeriod    time.Duration
	DiurnalAmplitude float64

	// Turns per session: the mean, and a standard deviation (> 0 draws
	// a lognormal count, rounded, at least 1).
	Turns       float64
	TurnsStddev float64
	// ThinkTime between a turn's end and the next turn (the row's
	// delay): the mean and a standard deviation (> 0: lognormal).
	ThinkTime       time.Duration
	ThinkTimeStddev time.Duration

	// Prefix trees: PrefixRoots independent trees (tenants, system
	// prompts) of PrefixDepth levels; a node at level l+1 has
	// PrefixFanout[l−1] children (one value = every level). Level l is
	// PrefixTokens[l−1] tokens long (one value = every level). A session
	// that walks the trees (a share PrefixShare of them, drawn per
	// session) picks a root and then a child per level uniformly and
	// starts its first turn with the path's tokens.
	PrefixRoots  int
	PrefixDepth  int
	PrefixFanout []int
	PrefixTokens []int
	PrefixShare  float64

	// ISL is the distribution of each turn's new prompt tokens (on top
	// of the prefix and the history), OSL of each turn's output tokens.
	ISL, OSL Dist
	// Lengths, when set, are (input, output) pairs drawn jointly, per
	// turn, uniformly with replacement (the empirical distribution of a
	// trace, see LoadLengths); they replace ISL and OSL.
	Lengths [][2]int
	// MaxISL ends a session before its first turn over it (0 = none);
	// MaxOSL caps output lengths.
	MaxISL, MaxOSL int

	// SkipAnalysis leaves out the analyzer's measure of the rows as
	// written: GenerateStats.Written is nil and the model's statistics
	// are not checked against the analyzer. The analyzer's state grows
	// with the distinct blocks (about 20 bytes each); without it, a
	// generation without a target holds only its open sessions.
	SkipAnalysis bool

	// TargetHitRatio, in (0, 1), is the infinite-cache token hit ratio
	// (analyze-trace's cache.token_hit_ratio) to meet within ±0.02, by
	// adjusting PrefixShare, and the prefix length when PrefixTokens is
	// not given. 0 = none.
	TargetHitRatio float64
}

// NewGenerateConfig returns the defaults: seed [DefaultSeed], Mooncake,
// Poisson arrivals (smoothness 1), one turn per session, no prefix trees
// (depth 1 and share 1 once roots are set), ISL [DefaultISL] and OSL
// [DefaultOSL] tokens. Count and rate are left for the caller.
func NewGenerateConfig() GenerateConfig {
	return GenerateConfig{
		Seed: DefaultSeed, Format: trace.FormatMooncake,
		Arrival: ArrivalPoisson, Smoothness: 1, RateEnd: -1,
		Turns: 1, PrefixDepth: 1, PrefixShare: 1,
		ISL: Fixed(DefaultISL), OSL: Fixed(DefaultOSL),
	}
}

// blockSize returns the block size in effect.
func (c GenerateConfig) blockSize() int {
	if c.BlockSize > 0 {
		return c.BlockSize
	}
	if bs := c.Format.DefaultBlockSize(); bs > 0 {
		return bs
	}
	return 512
}

// multiTurn reports whether sessions may have more than one turn.
func (c GenerateConfig) multiTurn() bool { return c.Turns > 1 || c.TurnsStddev > 0 }

// roots returns the prefix roots in effect: a target hit ratio without
// trees gets one (a shared system prompt).
func (c GenerateConfig) roots() int {
	if c.PrefixRoots == 0 && c.TargetHitRatio > 0 {
		return 1
	}
	return c.PrefixRoots
}

// Validate reports every invalid setting and combination at once.
func (c GenerateConfig) Validate() error {
	var errs []error
	bad := func(format string, args ...any) { errs = append(errs, fmt.Errorf(format, args...)) }
	finite := func(v float64) bool { return !math.IsNaN(v) && !math.IsInf(v, 0) }

	if err := checkOutputFormat(c.Format); err != nil {
		errs = append(errs, err)
	}
	if c.BlockSize < 0 {
		bad("--block-size %d: want tokens per hash id ≥ 1 (0 = the format's)", c.BlockSize)
	}
	counts := 0
	for _, set := range []bool{c.Requests != 0, c.Sessions != 0, c.Duration != 0, c.WorkingSet != 0} {
		if set {
			counts++
		}
	}
	switch {
	case counts == 0:
		bad("how much to generate: give one of --requests, --sessions, --duration or --working-set")
	case counts > 1:
		bad("--requests, --sessions, --duration and --working-set are exclusive: give one")
	}
	if c.Requests < 0 || c.Sessions < 0 || c.Duration < 0 || c.WorkingSet < 0 {
		bad("--requests, --sessions, --duration and --working-set must be positive")
	}
	if c.Sessions > maxSessions {
		bad("--sessions %d: at most %d", c.Sessions, maxSessions)
	}
	if c.Requests > maxSessions*8 {
		bad("--requests %d: at most %d", c.Requests, maxSessions*8)
	}
	if !(c.Rate > 0) || !finite(c.Rate) {
		bad("--rate %g: want the session arrival rate per second, > 0", c.Rate)
	}
	switch c.Arrival {
	case ArrivalConstant, ArrivalPoisson, ArrivalGamma:
	default:
		bad("--arrival %q: use constant, poisson or gamma", c.Arrival)
	}
	if !(c.Smoothness > 0) || !finite(c.Smoothness) {
		bad("--smoothness %g: want a gamma shape > 0", c.Smoothness)
	} else if c.Smoothness != 1 && c.Arrival != ArrivalGamma {
		bad("--smoothness applies only to --arrival gamma (got --arrival %s)", c.Arrival)
	}
	if c.RateRamp < 0 {
		bad("--rate-ramp %v: want a duration ≥ 0", c.RateRamp)
	}
	if c.RateEnd >= 0 {
		switch {
		case !finite(c.RateEnd):
			bad("--rate-end %g: want a finite rate ≥ 0", c.RateEnd)
		case c.Duration <= 0:
			bad("--rate-end ramps the rate until --duration: give --duration")
		case c.RateRamp >= c.Duration:
			bad("--rate-end: --rate-ramp %v leaves no time before --duration %v", c.RateRamp, c.Duration)
		}
	}
	if !(c.DiurnalAmplitude >= 0 && c.DiurnalAmplitude <= 1) {
		bad("--diurnal-amplitude %g: want 0 ≤ A ≤ 1", c.DiurnalAmplitude)
	}
	if c.DiurnalPeriod < 0 {
		bad("--diurnal-period %v: want a duration > 0", c.DiurnalPeriod)
	}
	if (c.DiurnalAmplitude > 0) != (c.DiurnalPeriod > 0) {
		bad("--diurnal-period and --diurnal-amplitude go together: give both")
	}

	if !(c.Turns >= 1) || !finite(c.Turns) || c.Turns > 1e4 {
		bad("--turns %g: want a mean of at least 1 (at most 10000)", c.Turns)
	}
	if !(c.TurnsStddev >= 0) || !finite(c.TurnsStddev) {
		bad("--turns-stddev %g: want ≥ 0", c.TurnsStddev)
	}
	if c.ThinkTime < 0 || c.ThinkTimeStddev < 0 {
		bad("--think-time and --think-time-stddev must not be negative")
	}
	if (c.ThinkTime > 0 || c.ThinkTimeStddev > 0) && !c.multiTurn() {
		bad("--think-time is the delay between turns: set --turns above 1")
	}
	if c.ThinkTimeStddev > 0 && c.ThinkTime == 0 {
		bad("--think-time-stddev needs a mean --think-time")
	}

	c.validatePrefix(bad)

	if c.Lengths != nil {
		for i, p := range c.Lengths {
			if p[0] < 1 || p[1] < 1 {
				bad("lengths: pair %d (%d, %d): both must be ≥ 1", i, p[0], p[1])
				break
			}
		}
		if len(c.Lengths) == 0 {
			bad("lengths: no (input, output) pairs")
		}
	} else {
		if err := c.ISL.validate("--isl"); err != nil {
			errs = append(errs, err)
		}
		if err := c.OSL.validate("--osl"); err != nil {
			errs = append(errs, err)
		}
	}
	if c.MaxISL < 0 || c.MaxOSL < 0 {
		bad("--max-isl and --max-osl must not be negative (0 = no limit)")
	}
	if c.TargetHitRatio != 0 && !(c.TargetHitRatio > 0 && c.TargetHitRatio < 1) {
		bad("--target-hit-ratio %g: want a ratio strictly between 0 and 1", c.TargetHitRatio)
	}
	return errors.Join(errs...)
}

func (c GenerateConfig) validatePrefix(bad func(string, ...any)) {
	if c.PrefixRoots < 0 {
		bad("--prefix-roots %d: want ≥ 0", c.PrefixRoots)
		return
	}
	roots := c.roots()
	if roots == 0 {
		if c.PrefixDepth > 1 || len(c.PrefixFanout) > 0 || len(c.PrefixTokens) > 0 || c.PrefixShare != 1 {
			bad("--prefix-depth, --prefix-fanout, --prefix-tokens and --prefix-share shape prefix trees: give --prefix-roots")
		}
		return
	}
	if c.PrefixDepth < 1 || c.PrefixDepth > 64 {
		bad("--prefix-depth %d: want 1 to 64 levels", c.PrefixDepth)
		return
	}
	if n := len(c.PrefixFanout); c.PrefixDepth > 1 && n != 1 && n != c.PrefixDepth-1 {
		bad("--prefix-fanout: want one value or %d (one per level below the roots), got %d", c.PrefixDepth-1, n)
	} else if c.PrefixDepth == 1 && n > 0 {
		bad("--prefix-fanout: a tree of depth 1 has no children; raise --prefix-depth")
	}
	for _, f := range c.PrefixFanout {
		if f < 1 {
			bad("--prefix-fanout %d: want ≥ 1 child per node", f)
			break
		}
	}
	if n := len(c.PrefixTokens); n != 0 && n != 1 && n != c.PrefixDepth {
		bad("--prefix-tokens: want one value or %d (one per level), got %d", c.PrefixDepth, n)
	}
	for _, t := range c.PrefixTokens {
		if t < 1 || t > maxPrefixTokens {
			bad("--prefix-tokens %d: want 1 to %d tokens per level", t, maxPrefixTokens)
			break
		}
	}
	if len(c.PrefixTokens) == 0 && c.TargetHitRatio == 0 {
		bad("--prefix-tokens: give the tokens per level (or --target-hit-ratio to size the prefix)")
	}
	if !(c.PrefixShare >= 0 && c.PrefixShare <= 1) {
		bad("--prefix-share %g: want a fraction in [0, 1]", c.PrefixShare)
	}
	if c.TargetHitRatio > 0 && c.PrefixShare != 1 {
		bad("--prefix-share is what --target-hit-ratio adjusts: give one of them")
	}
	nodes, width := float64(roots), float64(roots)
	for l := 1; l < c.PrefixDepth; l++ {
		width *= float64(c.fanout(l))
		nodes += width
	}
	if nodes > maxPrefixNodes {
		bad("prefix trees of %.3g nodes: at most %d (fewer --prefix-roots, a smaller --prefix-fanout or --prefix-depth)", nodes, maxPrefixNodes)
	}
}

// fanout returns the children per node at level l (1-based, l ≥ 1) of the
// tree, i.e. the branching from level l to l+1.
func (c GenerateConfig) fanout(l int) int {
	switch len(c.PrefixFanout) {
	case 0:
		return 1
	case 1:
		return c.PrefixFanout[0]
	}
	return c.PrefixFanout[l-1]
}

// levelTokens returns the tokens of each of the depth levels as given.
func (c GenerateConfig) levelTokens() []int {
	out := make([]int, c.PrefixDepth)
	for l := range out {
		switch len(c.PrefixTokens) {
		case 0:
		case 1:
			out[l] = c.PrefixTokens[0]
		default:
			out[l] = c.PrefixTokens[l]
		}
	}
	return out
}

// GenerateStats says what [Generate] made.
type GenerateStats struct {
	Sessions, Rows int
	// SessionsCut and RowsCut count sessions that lost turns to MaxISL
	// and the turns they lost; OSLCapped the output lengths cut to
	// MaxOSL.
	SessionsCut, RowsCut int
	OSLCapped            int
	// PrefixTokens are the tokens per level used (solved when the target
	// sized the prefix); PrefixShare the share of sessions that walk the
	// trees (solved under a target) and Walkers how many did.
	PrefixTokens []int
	PrefixShare  float64
	Walkers      int
	// HitRatio is the infinite-cache token hit ratio and WorkingSetTokens
	// the distinct blocks × block size, both as the analyzer measures
	// them on the rows.
	HitRatio         float64
	WorkingSetTokens int64
	// Written is the analyzer's report (without LRU capacities) of the
	// rows as written: what analyze-trace reports on the output file.
	// For Mooncake multi-turn output, whose later turns hold their new
	// tokens only, it differs from the contexts HitRatio describes.
	Written *analyze.Report
}
