package sweep

import (
	"errors"
	"fmt"
	"io"
	"log/slog"
	"math"
	"slices"
	"strconv"
	"strings"
	"time"

	"github.com/reprise-bench/reprise"
	"github.com/reprise-bench/reprise/engine/summary"
	isearch "github.com/reprise-bench/reprise/internal/search"
)

// Defaults of [NewConfig].
const (
	// DefaultSLOFailures stops a sweep after two consecutive points that
	// failed the goodput SLOs: one may be noise, two are a trend.
	DefaultSLOFailures = 2
	// DefaultStopErrorRate stops a sweep after a point in which more than
	// 5 % of the requests failed (as reprise.DefaultMaxErrorRate).
	DefaultStopErrorRate = reprise.DefaultMaxErrorRate
	// maxBeforePointOutput bounds the kept output of a before-point
	// command.
	maxBeforePointOutput = 1 << 20
)

// StopConfig says when a sweep stops before its last point. With two
// axes a stop ends the sweep of the second axis for the current value of
// the first, which then goes on with its next value.
type StopConfig struct {
	// SaturationTolerance is the tolerance of the rate and backlog
	// saturation checks (docs/format/sweep.md); 0 turns every saturation
	// check off.
	SaturationTolerance float64 `json:"saturation_tolerance"`
	// OnSaturation stops after the first saturated point.
	OnSaturation bool `json:"on_saturation"`
	// SLOFailures stops after this many consecutive points that failed
	// the goodput SLOs (0 = never).
	SLOFailures int `json:"slo_failures"`
	// MaxErrorRate stops after a point whose error rate is above it
	// (≥ 1 = never).
	MaxErrorRate float64 `json:"max_error_rate"`
}

// Config configures a sweep or a boundary search.
type Config struct {
	// Base is the replay every point starts from; each point sets its
	// axes' settings, its run directory and (with FreshPromptSeed) its
	// prompt seed. Base.Output.Dir and Base.Progress are ignored;
	// Base.OnStart is called at the start of every run.
	Base reprise.Options
	// Dir is the sweep directory (created; an earlier sweep of the same
	// plan in it is resumed).
	Dir string
	// Axes are the swept settings (any number) of a grid sweep; a
	// search has none and uses Find, Recipe or Search.
	Axes []Axis
	// Points, when not empty, are the points to run, in order, instead
	// of the grid of Axes (a zip, variant or sampled sweep, or a grid
	// with AIPerf's names: [ExpandProfile]). A stop condition then ends
	// the rest of the points.
	Points []Point
	// PointsDir is the directory of the points, relative to Dir:
	// [PointsDir] ("points") when empty; "." puts each point directly
	// in Dir (AIPerf's layout: artifacts/…-concurrency_sweep/concurrency_10/).
	PointsDir string
	// Cooldown is a pause before every point but the first (AIPerf's
	// --parameter-sweep-cooldown-seconds).
	Cooldown time.Duration
	// Recipe, when not nil, runs one of AIPerf's search recipes instead
	// of a grid ([RecipeConfig]).
	Recipe *RecipeConfig
	// Search, when not nil, runs a model-based search over a box of
	// settings instead of a grid ([SearchConfig]).
	Search *SearchConfig
	// Design, when not nil, is the sampling design Points were drawn
	// from, written to sampling_design.json ([DesignFile]).
	Design *isearch.Design
	// Find, when not nil, searches for the largest load that meets the
	// SLOs instead of sweeping a grid.
	Find *FindConfig
	// Runs says how often each point is run.
	Runs RunsConfig
	// FreshPromptSeed gives every point its own Prompts.Seed, derived
	// from Base.Prompts.Seed and the point's name ([DeriveSeed]), so a
	// point does not hit the prefix cache filled by the one before.
	FreshPromptSeed bool
	// BeforePoint, when not empty, is run with sh -c before each point
	// (REPRISE_POINT and REPRISE_POINT_DIR in its environment); its
	// output is kept in the point's directory. A failure stops the sweep.
	BeforePoint string
	// Stop says when the sweep stops early.
	Stop StopConfig
	// Table, when not nil, receives the sweep table as the points finish,
	// then the Pareto front and knee (or the search's answer).
	Table io.Writer
	// Log receives the sweep's log records; nil discards them.
	Log *slog.Logger
}

// NewConfig returns a Config with the documented defaults: one run per
// point, fresh prompt seeds, and stops on saturation (tolerance
// [DefaultSaturationTolerance]), after [DefaultSLOFailures] consecutive
// SLO failures and above [DefaultStopErrorRate] errors.
func NewConfig() Config {
	return Config{
		Base: reprise.NewOptions(), Runs: RunsConfig{Runs: 1, Level: summary.DefaultConfidenceLevel, FreshPromptSeed: true},
		FreshPromptSeed: true,
		Stop: StopConfig{SaturationTolerance: DefaultSaturationTolerance, OnSaturation: true,
			SLOFailures: DefaultSLOFailures, MaxErrorRate: DefaultStopErrorRate},
	}
}

// The errors exposed.
var (
	// ErrPlanChanged is returned when the sweep directory holds a sweep
	// of another plan.
	ErrPlanChanged = errors.New("the sweep directory holds a different sweep")
	// ErrInvalidConfig wraps every problem of a Config found before
	// anything runs.
	ErrInvalidConfig = errors.New("invalid sweep configuration")
)

// planned are the points of a grid sweep: Points, else the grid of Axes.
func (c *Config) planned() []Point {
	if len(c.Points) > 0 {
		return c.Points
	}
	return Grid(c.Axes)
}

// pointsDir is the points' directory relative to Dir.
func (c *Config) pointsDir() string {
	if c.PointsDir == "" {
		return PointsDir
	}
	return c.PointsDir
}

// Defaults of a boundary search.
const (
	// DefaultFindFactor is the bracketing step: each probe doubles (or
	// halves) the load until the SLOs flip.
	DefaultFindFactor = 2.0
	// DefaultFindPrecision ends the bisection when the bracket is no
	// wider than 2 % of its lower end.
	DefaultFindPrecision = 0.02
	// DefaultFindMaxProbes bounds the probes of one search: the
	// bracketing and bisection probes, the confirmations of the bracket's
	// ends and the re-probes of disagreeing loads (not the re-runs of
	// invalid probes, [DefaultFindMaxReruns] each, nor the lengthened
	// ones, [maxLengthen] each).
	DefaultFindMaxProbes = 24
	// DefaultFindFloorDivisor puts the floor of a search (the lowest
	// load probed) at its start divided by 16: four halvings.
	DefaultFindFloorDivisor = 16
	// DefaultFindMinRounds is N of the probe-length rule ([FindConfig]):
	// a passing probe has at least N requests per request in flight.
	DefaultFindMinRounds = 10
	// DefaultFindMinProbeTime is T of the probe-length rule: a probe
	// sends for at least 10 s.
	DefaultFindMinProbeTime = 10 * time.Second
	// maxLengthen bounds the lengthened re-runs of one probe.
	maxLengthen = 2
	// maxProbesPerLoad bounds the valid probes of one load: the first,
	// its confirmation and, when those two disagree, the decider.
	maxProbesPerLoad = 3
	// tryName names the second and later tries at one load in the
	// point's name: request-rate=30_try=2.
	tryName = "try"
)

// FindConfig configures a search for the largest load that meets the
// goodput SLOs (Options.Goodput at Options.MinGoodFraction).
//
// # Probe length
//
// A probe that is too short passes above capacity: the queue of a server
// past its capacity C grows by R − C requests a second, and a request
// waits about (R/C − 1)·t longer at time t into the probe, so a 40-request
// probe 4 % past capacity ends with waits of a fraction of a second,
// within most TTFT SLOs. A probe's requests are therefore at least
//
//	max(base request count, rate × MinProbeTime + 1, MinRounds × in-flight)
//
// where in-flight is the requests in flight by Little's law (the rate
// times the mean request latency, summary.json's load.streams): with S
// slots a queue adds a wait every S requests, so MinRounds × S requests
// give it MinRounds steps to show, in the saturation checks' slope and in
// the SLO. The in-flight count is estimated before a probe from the
// nearest valid probe below it (it grows in proportion to the rate below
// capacity); a passing probe that was shorter than the rule asks with its
// own in-flight count is run again, lengthened (at most [maxLengthen]
// times). A failing or saturated probe needs no length: it already showed
// the queue. For concurrency the rate is estimated from the nearest
// probe, and the rule uses concurrency as the in-flight count. With a
// --duration instead of a request count, the duration is lengthened
// instead; a trace's probes are as long as the trace (the rule is not
// applied). MinRounds = 0 and MinProbeTime = 0 turn the rule off.
//
// # Valid probes
//
// A probe counts only when the client kept its schedule ([Validity]); an
// invalid one is run again, at most MaxReruns times, after which the
// search stops with Found.Unmeasurable.
//
// # Outcomes
//
// A valid probe passes when it met the SLOs and was not saturated: a
// saturated probe (docs/format/sweep.md, "Stop conditions") fails
// whatever its good fraction, because its queue was growing and a longer
// probe would break the SLO. A load's outcome is the majority of its
// valid probes, a tie failing. When the bisection has converged, both
// ends of the bracket are confirmed by a second probe, and a load whose
// probes disagree gets a third, which decides. Outcomes out of order (a
// load that passes above one that fails) re-probe the failing load, then
// the passing one, up to three probes each; what stays out of order
// after that is reported, and the answer is the largest pass below the
// lowest fail.
type FindConfig struct {
	// Setting is the load searched: request-rate, concurrency or speedup.
	Setting string `json:"setting"`
	// Start is the first probe's load (> 0).
	Start float64 `json:"start"`
	// Factor is the bracketing step (> 1).
	Factor float64 `json:"factor"`
	// Precision ends the bisection once hi/lo − 1 ≤ Precision (for
	// concurrency also once hi − lo ≤ 1).
	Precision float64 `json:"precision"`
	// MaxProbes bounds the probes (see [DefaultFindMaxProbes]).
	MaxProbes int `json:"max_probes"`
	// Floor is the lowest load probed (> 0, ≤ Start; a whole number for
	// concurrency): when every probe down to it fails, the search ends
	// there, with no load found.
	Floor float64 `json:"floor"`
	// MinRounds and MinProbeTime are N and T of the probe-length rule
	// (≥ 0; both 0 turn it off).
	MinRounds    int           `json:"min_rounds"`
	MinProbeTime time.Duration `json:"min_probe_time_ns"`
	// MaxLateness is the lateness budget of a valid probe: its schedule
	// lateness p99 may not exceed it. 0 applies the default rule of
	// [Validity]: half the mean gap between sends.
	MaxLateness time.Duration `json:"max_lateness_ns"`
	// MinSentShare is the least share of the asked rate a valid probe
	// sent at (0 < MinSentShare ≤ 1).
	MinSentShare float64 `json:"min_sent_share"`
	// MaxReruns is how often an invalid probe is run again (≥ 0).
	MaxReruns int `json:"max_reruns"`
}

// NewFindConfig returns a search of setting from start with the default
// factor, precision, probe bound, floor ([DefaultFloor]), probe-length
// rule and validity rule.
func NewFindConfig(setting string, start float64) *FindConfig {
	return &FindConfig{Setting: setting, Start: start, Factor: DefaultFindFactor, Precision: DefaultFindPrecision,
		MaxProbes: DefaultFindMaxProbes, Floor: DefaultFloor(setting, start), MinRounds: DefaultFindMinRounds,
		MinProbeTime: DefaultFindMinProbeTime, MinSentShare: DefaultFindMinSentShare, MaxReruns: DefaultFindMaxReruns}
}

// DefaultFloor is the default floor of a search of setting from start:
// start / [DefaultFindFloorDivisor], rounded to 4 significant digits,
// and for concurrency at least 1 and a whole number.
func DefaultFloor(setting string, start float64) float64 {
	if setting == Concurrency {
		return max(1, math.Floor(start/DefaultFindFloorDivisor))
	}
	return roundSig(start/DefaultFindFloorDivisor, 4)
}

func (f *FindConfig) validate(o *reprise.Options) error {
	var errs []error
	switch f.Setting {
	case RequestRate, Concurrency, Speedup:
	default:
		errs = append(errs, fmt.Errorf("find %q: want max-request-rate (max-rate), max-concurrency or max-speedup", f.Setting))
	}
	if f.Start <= 0 || (f.Setting == Concurrency && f.Start != math.Trunc(f.Start)) {
		errs = append(errs, fmt.Errorf("find start %v: want a load > 0 (a whole number for concurrency)", f.Start))
	}
	if f.Factor <= 1 {
		errs = append(errs, fmt.Errorf("find factor %v: want > 1", f.Factor))
	}
	if f.Precision <= 0 {
		errs = append(errs, fmt.Errorf("find precision %v: want > 0", f.Precision))
	}
	if f.MaxProbes < 2 {
		errs = append(errs, fmt.Errorf("find max probes %d: want ≥ 2", f.MaxProbes))
	}
	if f.Floor <= 0 || f.Floor > f.Start || (f.Setting == Concurrency && f.Floor != math.Trunc(f.Floor)) {
		errs = append(errs, fmt.Errorf("find floor %v: want a load > 0 and ≤ the start %v (a whole number for concurrency)", f.Floor, f.Start))
	}
	if f.MinRounds < 0 {
		errs = append(errs, fmt.Errorf("find min rounds %d: want ≥ 0", f.MinRounds))
	}
	if f.MinProbeTime < 0 {
		errs = append(errs, fmt.Errorf("find min probe time %v: want ≥ 0", f.MinProbeTime))
	}
	if f.MaxLateness < 0 {
		errs = append(errs, fmt.Errorf("find max lateness %v: want ≥ 0 (0 = half the mean gap between sends)", f.MaxLateness))
	}
	if f.MinSentShare <= 0 || f.MinSentShare > 1 {
		errs = append(errs, fmt.Errorf("find min sent share %v: want 0 < share ≤ 1, e.g. 0.95", f.MinSentShare))
	}
	if f.MaxReruns < 0 {
		errs = append(errs, fmt.Errorf("find max reruns %d: want ≥ 0", f.MaxReruns))
	}
	if o.Goodput == "" {
		errs = append(errs, errors.New("find: Goodput is empty; a search needs SLOs to meet, e.g. \"ttft:250 itl:10\""))
	}
	return errors.Join(errs...)
}

// Search recipes, by AIPerf's names (--search-recipe).
const (
	RecipeMaxThroughputTTFT = "max-throughput-ttft-sla"
	RecipeMaxThroughputITL  = "max-throughput-itl-sla"
	RecipeMaxConcurrency    = "max-concurrency-under-sla"
	RecipeMaxGoodput        = "max-goodput-under-slo"
	RecipeConcurrencyRamp   = "concurrency-ramp"
	RecipePrefillTTFT       = "prefill-ttft-curve"
	RecipeDecodeITL         = "decode-itl-curve"
	RecipeParetoSweep       = "pareto-sweep"
)

// Recipes lists the recipes.
var Recipes = []string{RecipeMaxThroughputTTFT, RecipeMaxThroughputITL, RecipeMaxConcurrency, RecipeMaxGoodput,
	RecipeConcurrencyRamp, RecipePrefillTTFT, RecipeDecodeITL, RecipeParetoSweep}

// Defaults of [RecipeConfig].
const (
	DefaultRecipeStat            = "p99"
	DefaultConcurrencyMin        = 1
	DefaultConcurrencyMax        = 256
	DefaultConcurrencySteps      = 6
	DefaultCurveSteps            = 5
	DefaultDegradationThreshold  = 0.5
	DefaultSLOAttainmentFraction = 0.95
)

// RecipeConfig is one of AIPerf's search recipes (docs/format/sweep.md,
// "Recipes"). The boundary recipes (max-throughput-ttft-sla,
// max-throughput-itl-sla, max-concurrency-under-sla,
// max-goodput-under-slo, concurrency-ramp) search the largest
// concurrency in [ConcurrencyMin, ConcurrencyMax] meeting their SLAs
// with [isearch.SearchBoundaryModel], which uses the monotone response of
// latency to load (a Gaussian process of the SLA level chooses each
// probe; measurements out of order are re-probed and reported); the curve recipes (prefill-ttft-curve,
// decode-itl-curve) run a line of lengths and fit a line to it;
// pareto-sweep runs a concurrency ladder per ISL/OSL pair and keeps the
// Pareto front.
type RecipeConfig struct {
	Name string `json:"name"`
	// Stat is the statistic of the latency SLAs (p99 unless given).
	Stat string `json:"stat"`
	// TTFTSLA, ITLSLA and E2ESLA are upper limits in ms of TTFT, ITL and
	// request latency at Stat (0 = none); ErrorRateSLA an upper limit of
	// the error rate (0 = none).
	TTFTSLA      float64 `json:"ttft_sla_ms,omitempty"`
	ITLSLA       float64 `json:"itl_sla_ms,omitempty"`
	E2ESLA       float64 `json:"e2e_sla_ms,omitempty"`
	ErrorRateSLA float64 `json:"error_rate_sla,omitempty"`
	// SLOAttainment is the fraction of requests that must meet the
	// goodput SLOs (max-goodput-under-slo).
	SLOAttainment float64 `json:"slo_attainment_fraction,omitempty"`
	// Degradation is concurrency-ramp's limit: the knee is the largest
	// concurrency whose request latency at Stat is at most (1 +
	// Degradation) times that at ConcurrencyMin.
	Degradation float64 `json:"degradation_threshold,omitempty"`
	// The concurrency range of the boundary recipes and pareto-sweep's
	// ladder (Steps values, geometric).
	ConcurrencyMin   float64 `json:"concurrency_min"`
	ConcurrencyMax   float64 `json:"concurrency_max"`
	ConcurrencySteps int     `json:"concurrency_steps"`
	// The length lines of the curve recipes (Steps values, linear).
	ISLMin   float64 `json:"isl_min,omitempty"`
	ISLMax   float64 `json:"isl_max,omitempty"`
	ISLSteps int     `json:"isl_steps,omitempty"`
	OSLMin   float64 `json:"osl_min,omitempty"`
	OSLMax   float64 `json:"osl_max,omitempty"`
	OSLSteps int     `json:"osl_steps,omitempty"`
	// Pairs are pareto-sweep's ISL/OSL pairs.
	Pairs [][2]float64 `json:"isl_osl_pairs,omitempty"`
	// MinRounds, when > 0, sizes a probe at concurrency c: MinRounds·c
	// measured requests after c warmup requests (the first wave of a
	// closed loop, which finds the server idle), so the measured
	// requests are MinRounds waves of the steady state.
	MinRounds int `json:"min_rounds,omitempty"`
	// Precision and MaxProbes bound a boundary recipe
	// ([isearch.BoundaryConfig]).
	// Style is AIPerf's --search-style of max-concurrency-under-sla, as
	// given ("" = monotonic); every style it takes names the one
	// boundary search.
	Style     string  `json:"search_style,omitempty"`
	Precision float64 `json:"precision"`
	MaxProbes int     `json:"max_probes"`
}

// NewRecipeConfig returns recipe name with the documented defaults.
func NewRecipeConfig(name string) *RecipeConfig {
	return &RecipeConfig{Name: name, Stat: DefaultRecipeStat, ConcurrencyMin: DefaultConcurrencyMin, ConcurrencyMax: DefaultConcurrencyMax,
		ConcurrencySteps: DefaultConcurrencySteps, ISLSteps: DefaultCurveSteps, OSLSteps: DefaultCurveSteps,
		Degradation: DefaultDegradationThreshold, SLOAttainment: DefaultSLOAttainmentFraction,
		Precision: isearch.DefaultPrecision, MaxProbes: isearch.DefaultBoundaryMaxProbes}
}

func (r *RecipeConfig) boundary() bool {
	switch r.Name {
	case RecipeMaxThroughputTTFT, RecipeMaxThroughputITL, RecipeMaxConcurrency, RecipeMaxGoodput, RecipeConcurrencyRamp:
		return true
	}
	return false
}

// settings are the settings the recipe's probes vary.
func (r *RecipeConfig) settings() []string {
	switch r.Name {
	case RecipePrefillTTFT:
		return []string{ISL}
	case RecipeDecodeITL:
		return []string{OSL}
	case RecipeParetoSweep:
		return []string{ISL, OSL, Concurrency}
	}
	return []string{Concurrency}
}

func (r *RecipeConfig) validate() error {
	var errs []error
	if !slices.Contains(Recipes, r.Name) {
		return fmt.Errorf("search recipe %q: want one of %s", r.Name, strings.Join(Recipes, ", "))
	}
	switch strings.ToLower(r.Style) {
	case "", "monotonic", "smooth_isotonic", "bo", "optuna":
	case "grid":
		errs = append(errs, errors.New("--search-style grid: give the concurrencies as a sweep (--concurrency 1,2,4,8,…) and read its table; the recipe's search needs fewer probes"))
	default:
		errs = append(errs, fmt.Errorf("--search-style %q: want monotonic, smooth_isotonic, bo or optuna", r.Style))
	}
	if r.Style != "" && r.Name != RecipeMaxConcurrency {
		errs = append(errs, fmt.Errorf("--search-style is max-concurrency-under-sla's, not %s's", r.Name))
	}
	if _, err := summary.RunMetricKey("time_to_first_token", r.Stat); err != nil {
		errs = append(errs, fmt.Errorf("recipe statistic: %w", err))
	}
	for _, v := range []struct {
		name string
		v    float64
	}{{"--ttft-sla-ms", r.TTFTSLA}, {"--itl-sla-ms", r.ITLSLA}, {"--e2e-sla-ms", r.E2ESLA}, {"--error-rate-sla", r.ErrorRateSLA}} {
		if v.v < 0 || math.IsNaN(v.v) {
			errs = append(errs, fmt.Errorf("%s %v: want > 0", v.name, v.v))
		}
	}
	switch r.Name {
	case RecipeMaxThroughputTTFT:
		if r.TTFTSLA == 0 {
			errs = append(errs, errors.New("max-throughput-ttft-sla needs --ttft-sla-ms"))
		}
	case RecipeMaxThroughputITL:
		if r.ITLSLA == 0 {
			errs = append(errs, errors.New("max-throughput-itl-sla needs --itl-sla-ms"))
		}
	case RecipeMaxConcurrency:
		if r.TTFTSLA == 0 && r.ITLSLA == 0 && r.E2ESLA == 0 && r.ErrorRateSLA == 0 {
			errs = append(errs, errors.New("max-concurrency-under-sla needs an SLA: --ttft-sla-ms, --itl-sla-ms, --e2e-sla-ms or --error-rate-sla"))
		}
	case RecipeMaxGoodput:
		if !(r.SLOAttainment > 0 && r.SLOAttainment <= 1) {
			errs = append(errs, fmt.Errorf("--slo-attainment-fraction %v: want 0 < F ≤ 1", r.SLOAttainment))
		}
	case RecipeConcurrencyRamp:
		if !(r.Degradation > 0) {
			errs = append(errs, fmt.Errorf("--degradation-threshold %v: want > 0 (0.5 = 50 %% above the lowest concurrency's latency)", r.Degradation))
		}
	case RecipePrefillTTFT:
		if !(r.ISLMin >= 1 && r.ISLMax > r.ISLMin && r.ISLSteps >= 2) {
			errs = append(errs, fmt.Errorf("prefill-ttft-curve needs 1 ≤ --isl-min < --isl-max and --isl-steps ≥ 2, got %v, %v, %d", r.ISLMin, r.ISLMax, r.ISLSteps))
		}
	case RecipeDecodeITL:
		if !(r.OSLMin >= 2 && r.OSLMax > r.OSLMin && r.OSLSteps >= 2) {
			errs = append(errs, fmt.Errorf("decode-itl-curve needs 2 ≤ --osl-min < --osl-max and --osl-steps ≥ 2 (one output token has no ITL), got %v, %v, %d", r.OSLMin, r.OSLMax, r.OSLSteps))
		}
	case RecipeParetoSweep:
		if len(r.Pairs) == 0 {
			errs = append(errs, errors.New("pareto-sweep needs --isl-osl-pairs, e.g. 512:128,2048:256"))
		}
		if r.ConcurrencySteps < 1 {
			errs = append(errs, fmt.Errorf("--concurrency-steps %d: want ≥ 1", r.ConcurrencySteps))
		}
	}
	if r.boundary() || r.Name == RecipeParetoSweep {
		if !(r.ConcurrencyMin >= 1 && r.ConcurrencyMax > r.ConcurrencyMin) || r.ConcurrencyMin != math.Trunc(r.ConcurrencyMin) || r.ConcurrencyMax != math.Trunc(r.ConcurrencyMax) {
			errs = append(errs, fmt.Errorf("--concurrency-min %v --concurrency-max %v: want whole numbers 1 ≤ min < max", r.ConcurrencyMin, r.ConcurrencyMax))
		}
	}
	return errors.Join(errs...)
}

// ParsePairs reads pareto-sweep's "ISL:OSL,ISL:OSL" (also ISLxOSL).
func ParsePairs(s string) ([][2]float64, error) {
	var out [][2]float64
	for f := range strings.SplitSeq(s, ",") {
		f = strings.TrimSpace(f)
		a, b, ok := strings.Cut(f, ":")
		if !ok {
			a, b, ok = strings.Cut(f, "x")
		}
		i, err1 := strconv.ParseFloat(strings.TrimSpace(a), 64)
		o, err2 := strconv.ParseFloat(strings.TrimSpace(b), 64)
		if !ok || err1 != nil || err2 != nil || i < 1 || o < 1 {
			return nil, fmt.Errorf("--isl-osl-pairs %q: pair %q: want ISL:OSL with both ≥ 1, e.g. 512:128,2048:256", s, f)
		}
		out = append(out, [2]float64{i, o})
	}
	return out, nil
}

func (r *RecipeConfig) key(tag string) string { k, _ := summary.RunMetricKey(tag, r.Stat); return k }

// slas are the recipe's upper limits by metric key.
func (r *RecipeConfig) slas() map[string]float64 {
	m := map[string]float64{}
	if r.TTFTSLA > 0 && r.Name != RecipeMaxThroughputITL || r.Name == RecipeMaxThroughputTTFT {
		m[r.key("time_to_first_token")] = r.TTFTSLA
	}
	if r.ITLSLA > 0 && r.Name != RecipeMaxThroughputTTFT || r.Name == RecipeMaxThroughputITL {
		m[r.key("inter_token_latency")] = r.ITLSLA
	}
	if r.E2ESLA > 0 {
		m[r.key("request_latency")] = r.E2ESLA
	}
	if r.ErrorRateSLA > 0 {
		m["error_rate"] = r.ErrorRateSLA
	}
	delete(m, "")
	return m
}

// SearchConfig is a model-based search over a box of settings
// ([isearch.Optimize]): AIPerf's --search-space, --search-metric,
// --search-stat, --search-direction, --search-sla,
// --search-max-iterations, --search-initial-points and
// --search-random-seed.
type SearchConfig struct {
	// Space are the settings searched, each a setting a sweep can vary.
	Space []isearch.Dimension `json:"space"`
	// Objectives are metrics "TAG:STAT" (output_token_throughput:avg);
	// several give a Pareto front.
	Objectives  []isearch.Objective  `json:"objectives"`
	Constraints []isearch.Constraint `json:"constraints,omitempty"`
	// MaxIterations, InitialPoints and Seed are isearch.Problem's.
	MaxIterations int    `json:"max_iterations"`
	InitialPoints int    `json:"initial_points"`
	Seed          uint64 `json:"seed"`
	// MinRounds is a recipe's ([RecipeConfig]).
	MinRounds int `json:"min_rounds,omitempty"`
	// Planner is AIPerf's choice of method, as given.
	Planner Planner `json:"planner,omitzero"`
	// Tiers are AIPerf's --search-sla-tier: 2 to 10 SLA tiers, one
	// boundary search each ([Tier]).
	Tiers []Tier `json:"tiers,omitempty"`
}

// SettingForPath maps a --search-space path to the setting it names: a
// profile flag name (concurrency, request-rate, isl, …) or a dotted path
// ending in one (load.concurrency, phases.profiling.request_rate);
// underscores read as dashes.
func SettingForPath(path string) (string, error) {
	p := path
	if i := strings.LastIndex(p, "."); i >= 0 {
		p = p[i+1:]
	}
	p = strings.ReplaceAll(strings.TrimSpace(p), "_", "-")
	switch p {
	case "rate":
		p = RequestRate
	case "input-tokens-mean", "prompt-input-tokens-mean", "synthetic-input-tokens-mean":
		p = ISL
	case "output-tokens-mean", "prompt-output-tokens-mean":
		p = OSL
	}
	if !known(p) {
		return "", fmt.Errorf("search space %q: %q is not a setting a search can vary; want one of %s", path, p, strings.Join(ProfileSettings, ", "))
	}
	return p, nil
}

func (c *SearchConfig) validate() error {
	var errs []error
	if len(c.Space) == 0 {
		errs = append(errs, errors.New("search: no --search-space"))
	}
	seen := map[string]bool{}
	for _, d := range c.Space {
		if !known(d.Name) {
			errs = append(errs, fmt.Errorf("search space: %q is not a setting a search can vary", d.Name))
		}
		if seen[d.Name] {
			errs = append(errs, fmt.Errorf("search space: %s given twice", d.Name))
		}
		seen[d.Name] = true
		if d.Name == Concurrency && d.Kind != isearch.KindInt {
			errs = append(errs, errors.New("search space: concurrency is a whole number (kind int)"))
		}
	}
	if len(c.Objectives) == 0 {
		errs = append(errs, errors.New("search: no --search-metric"))
	}
	for _, o := range c.Objectives {
		if _, err := metricKey(o.Metric); err != nil {
			errs = append(errs, fmt.Errorf("--search-metric: %w", err))
		}
	}
	for _, k := range c.Constraints {
		if _, err := metricKey(k.Metric); err != nil {
			errs = append(errs, fmt.Errorf("--search-sla: %w", err))
		}
	}
	if c.MaxIterations < 1 || c.InitialPoints < 1 {
		errs = append(errs, fmt.Errorf("--search-max-iterations %d, --search-initial-points %d: want ≥ 1", c.MaxIterations, c.InitialPoints))
	}
	errs = append(errs, c.validateTiers())
	return errors.Join(errs...)
}

// monotone reports whether the search is a single-load SLA problem: one
// load setting (concurrency or request rate), one metric to maximize and
// upper limits only (latency, error rate). Latency does not fall as load
// rises, so the settings meeting the SLAs are an interval from the
// range's low end, and [isearch.Optimize] searches for its top
// ([isearch.Problem.Monotone]) in fewer probes than bisection.
func (c *SearchConfig) monotone() bool {
	if len(c.Tiers) > 0 {
		return true // validateTiers checks it
	}
	if len(c.Space) != 1 || (c.Space[0].Name != Concurrency && c.Space[0].Name != RequestRate) ||
		len(c.Objectives) != 1 || !c.Objectives[0].Maximize || len(c.Constraints) == 0 {
		return false
	}
	for _, k := range c.Constraints {
		if k.Op != "<=" && k.Op != "<" {
			return false
		}
	}
	return true
}

// metricKey maps "TAG:STAT" (or "TAG") to summary's run metric key.
func metricKey(m string) (string, error) {
	tag, stat, _ := strings.Cut(m, ":")
	return summary.RunMetricKey(tag, stat)
}

// Tier limits of AIPerf's --search-sla-tier.
const (
	MinTiers = 2
	MaxTiers = 10
)

// Tier is one SLA tier of a multi-tier search (AIPerf's
// --search-sla-tier LABEL:FILTER,…): the monotone search finds the
// largest load meeting every one of its constraints (and the search's
// --search-sla ones).
type Tier struct {
	Label       string               `json:"label"`
	Constraints []isearch.Constraint `json:"constraints"`
}

// ParseTier reads "LABEL:FILTER[,FILTER…]" or "FILTER[,FILTER…]" (then
// labelled tier_N, N = n), each FILTER [isearch.ParseConstraint]'s.
func ParseTier(s string, n int) (Tier, error) {
	t := Tier{Label: fmt.Sprintf("tier_%d", n)}
	first, _, _ := strings.Cut(s, ",")
	if strings.Count(first, ":") == 4 {
		t.Label, s, _ = strings.Cut(s, ":")
		t.Label = strings.TrimSpace(t.Label)
	}
	var errs []error
	for _, f := range strings.Split(s, ",") {
		k, err := isearch.ParseConstraint(f)
		if err != nil {
			errs = append(errs, err)
			continue
		}
		t.Constraints = append(t.Constraints, k)
	}
	if t.Label == "" {
		errs = append(errs, fmt.Errorf("%q: empty LABEL", s))
	}
	return t, errors.Join(errs...)
}

// validateTiers checks a multi-tier search: 2 to 10 tiers of distinct
// labels over one load setting, each of upper limits only (the monotone
// search's).
func (c *SearchConfig) validateTiers() error {
	if len(c.Tiers) == 0 {
		return nil
	}
	var errs []error
	if len(c.Tiers) < MinTiers || len(c.Tiers) > MaxTiers {
		errs = append(errs, fmt.Errorf("--search-sla-tier given %d times: want %d to %d tiers", len(c.Tiers), MinTiers, MaxTiers))
	}
	if len(c.Space) != 1 || (c.Space[0].Name != Concurrency && c.Space[0].Name != RequestRate) {
		errs = append(errs, errors.New("--search-sla-tier searches one load: give one --search-space of concurrency or request-rate"))
	}
	seen := map[string]bool{}
	for _, t := range c.Tiers {
		if seen[t.Label] {
			errs = append(errs, fmt.Errorf("--search-sla-tier: label %q given twice", t.Label))
		}
		seen[t.Label] = true
		for _, k := range append(t.Constraints, c.Constraints...) {
			if _, err := metricKey(k.Metric); err != nil {
				errs = append(errs, fmt.Errorf("--search-sla-tier %s: %w", t.Label, err))
			}
			if k.Op != "<=" && k.Op != "<" {
				errs = append(errs, fmt.Errorf("--search-sla-tier %s: %s %s %v: the tiers' boundary search takes upper limits (op < or <=)", t.Label, k.Metric, k.Op, k.Threshold))
			}
		}
	}
	return errors.Join(errs...)
}
