package sweep

import (
	"context"
	"errors"
	"fmt"
	"math"
	"slices"
	"strconv"
	"strings"

	"github.com/reprise-bench/reprise/engine/summary"
	"github.com/reprise-bench/reprise/internal/exitcode"
	isearch "github.com/reprise-bench/reprise/internal/search"
	"github.com/reprise-bench/reprise/replay"
)

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

// SearchProbe is one probe of a recipe or a model-based search in
// sweep.json.
type SearchProbe struct {
	Point    string             `json:"point"`
	Settings map[string]float64 `json:"settings"`
	// Why the probe ran: a boundary search's (end, model, bisect,
	// reprobe, rerun), "step" (a line or ladder point) or a model-based
	// search's (initial, model).
	Why string `json:"why"`
	// Validity is the verdicts issue's rule (docs/design/0015): a probe
	// counts only when the client kept its schedule.
	Validity
	// Level is a boundary probe's worst metric-to-SLA ratio (pass when
	// ≤ 1); Pass its outcome.
	Level float64 `json:"level,omitempty"`
	Pass  bool    `json:"pass"`
	// Metrics are the probe's values of the metrics the recipe uses
	// ("time_to_first_token.p99", …).
	Metrics map[string]float64 `json:"metrics"`
}

// SearchResult is a recipe's or a search's outcome in sweep.json.
type SearchResult struct {
	// Kind is the recipe's name, or "model-based".
	Kind string `json:"kind"`
	// Setting is what the answer is a value of (concurrency for the
	// boundary recipes); Value the answer and Above the lowest value
	// that failed (the boundary lies in [Value, Above)); Converged
	// whether that bracket is within the precision.
	Setting   string  `json:"setting,omitempty"`
	Value     float64 `json:"value"`
	Above     float64 `json:"above,omitempty"`
	Converged bool    `json:"converged"`
	// Metrics are the answer's metrics (at Value, or the best trial).
	Metrics map[string]float64 `json:"metrics,omitempty"`
	// Slope and Intercept are a curve recipe's weighted least-squares
	// line (ms per token, ms) and SlopeSE the slope's standard error,
	// from the probes' own spreads ([fitCurve]).
	Slope     float64 `json:"slope,omitempty"`
	SlopeSE   float64 `json:"slope_se,omitempty"`
	Intercept float64 `json:"intercept,omitempty"`
	// Pareto names the probes on the Pareto front (pareto-sweep; a
	// model-based search with several objectives).
	Pareto []string `json:"pareto,omitempty"`
	// Violations say where the measurements broke monotonicity, and
	// what was re-probed.
	Violations []string `json:"violations,omitempty"`
	// CannotTell, when set, says why the answer is not known, or known
	// only below a load that could not be measured (the client did not
	// drive it faithfully): a reader must not take Value as the
	// boundary. Unmeasurable is that load.
	CannotTell   string  `json:"cannot_tell,omitempty"`
	Unmeasurable float64 `json:"unmeasurable,omitempty"`
	// Valid and Invalid count the probes by validity.
	Valid   int `json:"valid"`
	Invalid int `json:"invalid"`
	// Stopped says why a model-based search ended, or why a boundary
	// recipe ended before its bracket was within the precision (a level
	// that does not change with the load: the boundary is noise).
	Stopped string        `json:"stopped,omitempty"`
	Probes  []SearchProbe `json:"probes"`
	// Tiers are a multi-tier search's answers, one per tier, in order
	// (Value and Above are then the first tier's).
	Tiers []TierResult `json:"tiers,omitempty"`
	// Text says the answer, as printed.
	Text string `json:"text"`
}

// Verdict is a boundary recipe's verdict (nil for anything else, or
// with an answer): exit code 3 when no tested load met its SLAs, 4 when
// it cannot tell (its lowest load could not be measured: the client's
// failure, not the server's), each with the answer's text. A curve
// recipe that cannot tell (its probes were disturbed) exits 4 too.
func (r *SearchResult) Verdict() error {
	if r != nil && (r.Kind == RecipePrefillTTFT || r.Kind == RecipeDecodeITL) && r.CannotTell != "" {
		return &exitcode.Error{Code: exitcode.Lateness, Err: errors.New(r.Text)}
	}
	if r == nil || !(&RecipeConfig{Name: r.Kind}).boundary() || r.Value > 0 || len(r.Probes) == 0 {
		return nil
	}
	code := exitcode.SLOBreach
	if r.CannotTell != "" {
		code = exitcode.Lateness
	}
	return &exitcode.Error{Code: code, Err: errors.New(r.Text)}
}

// probe runs one probe at the given settings and returns it (its
// validity judged by [validity]); try numbers repeated settings.
func (s *sweeper) probe(ctx context.Context, names []string, values []float64, why string, metricKeys []string) (*SearchProbe, error) {
	p := Point{Names: names, Values: values}
	if s.cfg.PointsDir == "." {
		p.Label = AIPerfLabel(p)
	}
	base := p.Name()
	k := 1
	for slices.ContainsFunc(s.res.Points, func(st PointStatus) bool { return st.Name == p.Name() }) {
		k++
		p.Label = base + "_" + tryName + "_" + strconv.Itoa(k)
	}
	st := s.status(p)
	st.RequestCount, st.WarmupRequests = s.probeLength(names, values)
	s.res.Points = append(s.res.Points, st)
	stp := &s.res.Points[len(s.res.Points)-1]
	row, err := s.point(ctx, p, stp)
	if err != nil || s.res.Interrupted {
		if err == nil {
			err = errInterrupted
		}
		return nil, err
	}
	pr := &SearchProbe{Point: st.Name, Settings: st.Settings, Why: why, Metrics: map[string]float64{}}
	for i, m := range s.lastRuns {
		open := replay.Mode(m.sum.Run.Mode) != replay.ModeConcurrency
		val := validity(m, open, 0, DefaultFindMinSentShare, s.cfg.Base.MinGoodFraction)
		if i == 0 || (!val.Valid && pr.Validity.Valid) {
			pr.Validity = val
		}
	}
	keys := append(slices.Clone(metricKeys), "output_token_throughput", "request_throughput", "error_rate")
	for _, key := range keys {
		sum, n := 0.0, 0
		for _, m := range s.lastRuns {
			if v, ok := summary.RunMetricValue(m.sum, key); ok {
				sum, n = sum+v, n+1
			}
		}
		if n > 0 {
			pr.Metrics[key] = sum / float64(n)
		}
	}
	if s.cfg.Base.Goodput != "" {
		pr.Metrics["goodput"] = row.Goodput
		pr.Metrics["good_request_fraction"] = row.GoodFraction
	}
	if err := s.save(); err != nil {
		return pr, err
	}
	return pr, nil
}

var errInterrupted = errors.New("interrupted")

// DefaultProbeRounds is R of a recipe's or search's probe-length rule
// ([sweeper.probeLength]).
const DefaultProbeRounds = 3

// probeLength is the measured and warmup request counts of a recipe's or
// a model-based search's probe at the settings given (0: the base's).
// A closed-loop probe at concurrency c must fill its c slots for several
// rounds, or it measures a lighter load than it is named for (10
// requests at concurrency 32 never have more than 10 in flight): with a
// MinRounds (no --request-count or --benchmark-duration given) it sends c
// warmup requests, the first wave, which finds the server idle, then
// MinRounds·c measured ones; given a --request-count N, it sends
// max(N, R·c) measured requests, R = DefaultProbeRounds, and at least c
// warmup requests when N was raised. A probe of a trace, or one that
// runs for a --benchmark-duration, keeps the base's length (a closed loop
// keeps its slots full for the whole duration).
func (s *sweeper) probeLength(names []string, values []float64) (count, warmup int) {
	o := &s.cfg.Base
	c, closed := max(o.Replay.Concurrency, 1), o.Replay.Mode == replay.ModeConcurrency
	if i := slices.Index(names, Concurrency); i >= 0 {
		c, closed = int(values[i]), true
	}
	if o.Trace.Path != "" || !closed {
		return 0, 0
	}
	rounds := 0
	switch {
	case s.cfg.Recipe != nil:
		rounds = s.cfg.Recipe.MinRounds
	case s.cfg.Search != nil:
		rounds = s.cfg.Search.MinRounds
	}
	if rounds > 0 {
		return rounds * c, c
	}
	if o.Replay.RequestCount == 0 || DefaultProbeRounds*c <= o.Replay.RequestCount {
		return 0, 0
	}
	return DefaultProbeRounds * c, max(o.Replay.WarmupRequests, c)
}

// AIPerfLabel is a point's directory name in AIPerf's layout:
// concurrency_10, or concurrency_10_isl_512 with several settings.
func AIPerfLabel(p Point) string {
	parts := make([]string, len(p.Names))
	for i, n := range p.Names {
		parts[i] = strings.ReplaceAll(n, "-", "_") + "_" + formatValue(p.Values[i])
	}
	return strings.Join(parts, "_")
}

// recipe runs cfg.Recipe.
func (s *sweeper) recipe(ctx context.Context) error {
	r := s.cfg.Recipe
	res := &SearchResult{Kind: r.Name}
	s.res.Search = res
	var err error
	if r.boundary() {
		err = s.boundaryRecipe(ctx, r, res)
	} else {
		err = s.lineRecipe(ctx, r, res)
	}
	if errors.Is(err, errInterrupted) {
		err = nil
	}
	for _, p := range res.Probes {
		if p.Valid {
			res.Valid++
		} else {
			res.Invalid++
		}
	}
	if w := s.cfg.Table; w != nil && res.Text != "" {
		fmt.Fprintln(w, res.Text)
	}
	return err
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

func (s *sweeper) boundaryRecipe(ctx context.Context, r *RecipeConfig, res *SearchResult) error {
	slas := r.slas()
	var keys []string
	for k := range slas {
		keys = append(keys, k)
	}
	slices.Sort(keys)
	lat := r.key("request_latency")
	keys = append(keys, lat)
	baseline := 0.0
	level := func(ctx context.Context, x float64) (isearch.Level, error) {
		pr, err := s.probe(ctx, []string{Concurrency}, []float64{x}, "", keys)
		if err != nil {
			return isearch.Level{}, err
		}
		ratio := 0.0
		for k, lim := range slas {
			ratio = max(ratio, pr.Metrics[k]/lim)
		}
		switch r.Name {
		case RecipeMaxGoodput:
			ratio = max(ratio, r.SLOAttainment/max(pr.Metrics["good_request_fraction"], 1e-9))
		case RecipeConcurrencyRamp:
			// The baseline is the first valid probe's: an invalid one
			// (the client fell behind its schedule) measured the client.
			if baseline == 0 && pr.Valid {
				baseline = pr.Metrics[lat]
			}
			if baseline > 0 {
				ratio = max(ratio, pr.Metrics[lat]/((1+r.Degradation)*baseline))
			}
		}
		pr.Level, pr.Pass = ratio, pr.Valid && ratio <= 1
		res.Probes = append(res.Probes, *pr)
		return isearch.Level{Ratio: ratio, Valid: pr.Valid, Note: strings.Join(pr.Reasons, "; ")}, nil
	}
	bc := isearch.NewBoundaryConfig(r.ConcurrencyMin, r.ConcurrencyMax, true)
	bc.Precision, bc.MaxProbes = r.Precision, r.MaxProbes
	b, err := isearch.SearchBoundaryModel(ctx, bc, level)
	if b == nil {
		return err
	}
	// The boundary search names why it probed; copy that to the probes.
	for i := range res.Probes {
		if i < len(b.Probes) {
			res.Probes[i].Why = b.Probes[i].Why
		}
	}
	res.Setting, res.Value, res.Above, res.Converged, res.Violations = Concurrency, b.Value, b.Above, b.Converged, b.Violations
	res.Stopped = b.Stopped
	// The answer's metrics: the last valid passing probe at Value.
	for _, p := range res.Probes {
		if p.Settings[Concurrency] == b.Value && p.Pass {
			res.Metrics = p.Metrics
		}
	}
	res.Text = s.boundaryText(r, res, b)
	return err
}

func (s *sweeper) boundaryText(r *RecipeConfig, res *SearchResult, b *isearch.Boundary) string {
	var slas []string
	for k, v := range r.slas() {
		slas = append(slas, fmt.Sprintf("%s ≤ %v", k, v))
	}
	slices.Sort(slas)
	under := ""
	if len(slas) > 0 {
		under = " under " + strings.Join(slas, ", ")
	}
	t := r.Name + ": "
	if b.Unmeasurable > 0 {
		res.Unmeasurable = b.Unmeasurable
		n, why := invalidAt(res.Probes, b.Unmeasurable)
		res.CannotTell = fmt.Sprintf("concurrency %s could not be measured on this machine: the client did not drive it faithfully in %d tries (%s)",
			formatValue(b.Unmeasurable), n, why)
	}
	switch {
	case res.Value == 0 && res.CannotTell != "":
		res.Converged = false
		return t + "cannot tell: no tested load met the SLAs" + under + "; " + res.CannotTell + fmt.Sprintf("; %d probes", len(b.Probes))
	case res.Value == 0:
		return t + fmt.Sprintf("no tested load met the SLAs%s: concurrency %s, the lowest, failed; %d probes", under, formatValue(r.ConcurrencyMin), len(b.Probes))
	}
	t += s.answerText(r, res) + under
	switch {
	case res.Above > 0:
		t += fmt.Sprintf("; the boundary lies in [%s, %s)", formatValue(res.Value), formatValue(res.Above))
	case res.CannotTell != "":
		res.Converged = false
		t += fmt.Sprintf("; cannot tell above it: %s", res.CannotTell)
	default:
		t += fmt.Sprintf("; every concurrency up to --concurrency-max %s met it", formatValue(r.ConcurrencyMax))
	}
	if res.Above > 0 && res.CannotTell != "" {
		t += "; cannot tell it closer: " + res.CannotTell
	}
	t += fmt.Sprintf("; %d probes", len(b.Probes))
	if b.Stopped != "" {
		t += "; cannot tell the boundary closer: " + b.Stopped
	}
	if len(b.Violations) > 0 {
		t += "; monotonicity violated: " + strings.Join(b.Violations, "; ")
	}
	return t
}

// answerText says a boundary recipe's answer at res.Value.
func (s *sweeper) answerText(r *RecipeConfig, res *SearchResult) string {
	switch r.Name {
	case RecipeMaxThroughputTTFT, RecipeMaxThroughputITL:
		return fmt.Sprintf("max output throughput %.4g tokens/s at concurrency %s", res.Metrics["output_token_throughput"], formatValue(res.Value))
	case RecipeMaxGoodput:
		return fmt.Sprintf("max goodput %.4g requests/s at concurrency %s (≥ %v of requests met %q)", res.Metrics["goodput"], formatValue(res.Value), r.SLOAttainment, s.cfg.Base.Goodput)
	case RecipeConcurrencyRamp:
		return fmt.Sprintf("degradation knee at concurrency %s (request latency %s within %v× of concurrency %s's)", formatValue(res.Value), r.Stat, 1+r.Degradation, formatValue(r.ConcurrencyMin))
	}
	return fmt.Sprintf("max concurrency %s", formatValue(res.Value))
}

// invalidAt counts the invalid probes at concurrency x and gives the
// last one's reasons.
func invalidAt(probes []SearchProbe, x float64) (n int, why string) {
	why = "no reason recorded"
	for _, p := range probes {
		if p.Settings[Concurrency] == x && !p.Valid {
			n++
			if len(p.Reasons) > 0 {
				why = strings.Join(p.Reasons, "; ")
			}
		}
	}
	return n, why
}

// linspace returns n values from lo to hi, rounded to whole numbers.
func linspace(lo, hi float64, n int) []float64 {
	var out []float64
	for i := range n {
		v := math.Round(lo + (hi-lo)*float64(i)/float64(n-1))
		if len(out) == 0 || v != out[len(out)-1] {
			out = append(out, v)
		}
	}
	return out
}

// geomspace returns n whole numbers from lo to hi, geometric.
func geomspace(lo, hi float64, n int) []float64 {
	if n == 1 {
		return []float64{hi}
	}
	var out []float64
	for i := range n {
		v := math.Round(lo * math.Pow(hi/lo, float64(i)/float64(n-1)))
		if len(out) == 0 || v != out[len(out)-1] {
			out = append(out, v)
		}
	}
	return out
}

func (s *sweeper) lineRecipe(ctx context.Context, r *RecipeConfig, res *SearchResult) error {
	ttft, itl := r.key("time_to_first_token"), r.key("inter_token_latency")
	keys := []string{ttft, itl, r.key("request_latency")}
	if r.Name == RecipePrefillTTFT || r.Name == RecipeDecodeITL {
		keys = append(keys, "time_to_first_token.std", "inter_token_latency.std")
	}
	run := func(names []string, values []float64, why string) (*SearchProbe, error) {
		pr, err := s.probe(ctx, names, values, why, keys)
		if err != nil {
			return nil, err
		}
		pr.Pass = pr.Valid
		res.Probes = append(res.Probes, *pr)
		return pr, nil
	}
	switch r.Name {
	case RecipePrefillTTFT, RecipeDecodeITL:
		return s.curve(r, res, run, ttft, itl)
	case RecipeParetoSweep:
		for _, pair := range r.Pairs {
			for _, c := range geomspace(r.ConcurrencyMin, r.ConcurrencyMax, r.ConcurrencySteps) {
				if _, err := run([]string{ISL, OSL, Concurrency}, []float64{pair[0], pair[1], c}, "step"); err != nil {
					return err
				}
			}
		}
		var rows []Row
		var names []string
		for _, st := range s.res.Points {
			if st.Row != nil {
				rows, names = append(rows, *st.Row), append(names, st.Name)
			}
		}
		for _, i := range Pareto(rows) {
			res.Pareto = append(res.Pareto, names[i])
		}
		res.Converged = true
		res.Text = fmt.Sprintf("%s: %d points over %d ISL/OSL pairs; Pareto front (output tokens/s against p99 request latency): %s",
			r.Name, len(res.Probes), len(r.Pairs), strings.Join(res.Pareto, ", "))
	}
	return nil
}

func mean(v []float64) float64 {
	if len(v) == 0 {
		return 0
	}
	s := 0.0
	for _, x := range v {
		s += x
	}
	return s / float64(len(v))
}

// optimize runs cfg.Search.
func (s *sweeper) optimize(ctx context.Context) error {
	c := s.cfg.Search
	if len(c.Tiers) > 0 {
		return s.searchTiers(ctx)
	}
	res := &SearchResult{Kind: "model-based"}
	s.res.Search = res
	names := make([]string, len(c.Space))
	for i, d := range c.Space {
		names[i] = d.Name
	}
	// The search package names metrics TAG:STAT; summary TAG.STAT.
	var keys []string
	conv := func(m string) string { k, _ := metricKey(m); return k }
	p := isearch.NewProblem(c.Space, nil)
	for _, o := range c.Objectives {
		keys = append(keys, conv(o.Metric))
		p.Objectives = append(p.Objectives, isearch.Objective{Metric: conv(o.Metric), Maximize: o.Maximize})
	}
	for _, k := range c.Constraints {
		keys = append(keys, conv(k.Metric))
		p.Constraints = append(p.Constraints, isearch.Constraint{Metric: conv(k.Metric), Op: k.Op, Threshold: k.Threshold})
	}
	p.MaxIterations, p.InitialPoints, p.Seed = c.MaxIterations, c.InitialPoints, c.Seed
	p.Monotone = c.monotone()
	out, err := isearch.Optimize(ctx, p, func(ctx context.Context, x []float64) (isearch.Measurement, error) {
		pr, err := s.probe(ctx, names, x, "", keys)
		if err != nil {
			return isearch.Measurement{}, err
		}
		res.Probes = append(res.Probes, *pr)
		return isearch.Measurement{Metrics: pr.Metrics, Valid: pr.Valid, Note: strings.Join(pr.Reasons, "; ")}, nil
	})
	if out != nil {
		for i, t := range out.Trials {
			if i < len(res.Probes) {
				res.Probes[i].Why, res.Probes[i].Pass = t.Why, t.Feasible
			}
		}
		res.Stopped, res.Violations = out.Stopped, out.Violations
		if out.Best >= 0 && out.Best < len(res.Probes) {
			b := res.Probes[out.Best]
			res.Metrics, res.Converged = b.Metrics, true
			if len(names) == 1 {
				res.Setting, res.Value = names[0], b.Settings[names[0]]
			}
		}
		for _, i := range out.Pareto {
			if i < len(res.Probes) {
				res.Pareto = append(res.Pareto, res.Probes[i].Point)
			}
		}
		for _, pr := range res.Probes {
			if pr.Valid {
				res.Valid++
			} else {
				res.Invalid++
			}
		}
		res.Text = fmt.Sprintf("search: %d probes (%d valid); stopped: %s", len(res.Probes), res.Valid, out.Stopped)
		if res.Invalid > 0 {
			res.Text += fmt.Sprintf("; %d probes not used: the client did not drive them faithfully (their reasons in sweep.json)", res.Invalid)
		}
		if out.Best >= 0 && out.Best < len(res.Probes) {
			b := res.Probes[out.Best]
			res.Text += fmt.Sprintf("; best %s: %s = %.4g", b.Point, keys[0], b.Metrics[keys[0]])
		} else {
			res.Text += "; no probe met every --search-sla"
		}
		if len(res.Pareto) > 1 {
			res.Text += "; Pareto front: " + strings.Join(res.Pareto, ", ")
		}
		if len(res.Violations) > 0 {
			res.Text += "; monotonicity violated: " + strings.Join(res.Violations, "; ")
		}
		if w := s.cfg.Table; w != nil {
			fmt.Fprintln(w, res.Text)
		}
	}
	if errors.Is(err, errInterrupted) {
		err = nil
	}
	return err
}
