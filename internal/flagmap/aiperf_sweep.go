package flagmap

import (
	"errors"
	"fmt"
	"strings"

	"github.com/reprise-bench/reprise"
	isearch "github.com/reprise-bench/reprise/internal/search"
	"github.com/reprise-bench/reprise/internal/sweep"
	"github.com/reprise-bench/reprise/replay"
)

// ListFlags maps the profile flags that take a comma list (AIPerf's
// sweepable flags) to the sweep setting each varies.
var ListFlags = map[string]string{
	"concurrency": sweep.Concurrency, "request-rate": sweep.RequestRate, "isl": sweep.ISL, "osl": sweep.OSL,
	"isl-stddev": sweep.ISLStdDev, "osl-stddev": sweep.OSLStdDev, "session-turns-mean": sweep.TurnsMean,
}

// listOrder is the order in which comma lists become axes (the
// last varies fastest): the request shape, then the load.
var listOrder = []string{"isl", "isl-stddev", "osl", "osl-stddev", "session-turns-mean", "request-rate", "concurrency"}

// ProfileSweep reads a profile command's sweep flags: the comma
// lists (or GenAI-Perf's --sweep-list/--sweep-range, read as the list
// of the flag its --sweep-type names), the sweep type, variants and
// sampling. vals are the values the
// base options take (a single value, or a list's first).
func ProfileSweep(v Values) (ps sweep.ProfileSweep, vals map[string]float64, err error) {
	var errs []error
	vals = map[string]float64{}
	gflag, glist, err := genaiSweep(v)
	errs = append(errs, err)
	for _, flag := range listOrder {
		spec := strings.TrimSpace(v.String(flag))
		if flag == gflag {
			spec = glist
		}
		if spec == "" {
			continue
		}
		setting := ListFlags[flag]
		if strings.Contains(spec, ":") {
			errs = append(errs, fmt.Errorf("--%s %q: profile takes a comma list (AIPerf's form); ranges A:B:xF are reprise sweep's", flag, spec))
			continue
		}
		ax, err := sweep.ParseAxis(setting, spec)
		if err != nil {
			errs = append(errs, fmt.Errorf("--%s: %w", flag, err))
			continue
		}
		vals[setting] = ax.Values[0]
		if len(ax.Values) > 1 {
			ps.Lists = append(ps.Lists, ax)
		}
	}
	ps.Type = v.String("sweep-type")
	if _, ok := genaiSweepTypes[ps.Type]; ok {
		ps.Type = sweep.SweepGrid // GenAI-Perf's one list
	} else if v.IsSet("sweep-type") && len(ps.Lists) == 0 {
		errs = append(errs, errors.New("--sweep-type needs comma lists to combine (e.g. --concurrency 10,50 --isl 128,512)"))
	}
	ps.Variants = v.StringSlice("variant")
	ps.Sampling, ps.Samples, ps.Dimensions = v.String("sweep-sampling"), v.Int("sweep-samples"), v.StringSlice("sweep-dimension")
	ps.Seed = v.Uint64("random-seed")
	if v.String("parameter-sweep-mode") == "repeated" && v.Int("runs") > 1 {
		ps.Trials = v.Int("runs") // the whole sweep once per trial
	}
	return ps, vals, errors.Join(errs...)
}

// applyValues sets the swept settings' base values in o and rc.
func applyValues(o *reprise.Options, rc *replay.Config, vals map[string]float64) {
	tmp := *o
	tmp.Replay = *rc
	for name, v := range vals {
		sweep.Apply(&tmp, name, v)
	}
	*rc = tmp.Replay
	tmp.Replay = o.Replay
	*o = tmp
}

// Recipe reads --search-recipe and its flags; nil without one.
func Recipe(v Values) (*sweep.RecipeConfig, error) {
	name := v.String("search-recipe")
	if name == "" {
		return nil, nil
	}
	r := sweep.NewRecipeConfig(name)
	if s := v.String("search-stat"); s != "" {
		r.Stat = s
	}
	r.TTFTSLA, r.ITLSLA, r.E2ESLA, r.ErrorRateSLA = v.Float("ttft-sla-ms"), v.Float("itl-sla-ms"), v.Float("e2e-sla-ms"), v.Float("error-rate-sla")
	r.SLOAttainment, r.Degradation = v.Float("slo-attainment-fraction"), v.Float("degradation-threshold")
	r.Style = v.String("search-style")
	r.ConcurrencyMin, r.ConcurrencyMax, r.ConcurrencySteps = v.Float("concurrency-min"), v.Float("concurrency-max"), v.Int("concurrency-steps")
	r.ISLMin, r.ISLMax, r.ISLSteps = v.Float("isl-min"), v.Float("isl-max"), v.Int("isl-steps")
	r.OSLMin, r.OSLMax, r.OSLSteps = v.Float("osl-min"), v.Float("osl-max"), v.Int("osl-steps")
	if p := v.String("isl-osl-pairs"); p != "" {
		pairs, err := sweep.ParsePairs(p)
		if err != nil {
			return nil, err
		}
		r.Pairs = pairs
	}
	r.MinRounds = probeRounds(v)
	return r, nil
}

// probeRounds is the MinRounds of a recipe's or a search's probes:
// sweep.DefaultProbeRounds waves of the probe's concurrency after one of
// warmup when neither --request-count nor --benchmark-duration sets their
// length, else 0.
func probeRounds(v Values) int {
	if v.IsSet("request-count") || v.IsSet("benchmark-duration") || v.IsSet("duration") {
		return 0
	}
	return sweep.DefaultProbeRounds
}

// Search reads the model-based search flags; nil without
// --search-space.
func Search(v Values) (*sweep.SearchConfig, error) {
	spaces := v.StringSlice("search-space")
	if len(spaces) == 0 {
		for _, f := range []string{"search-metric", "search-sla", "search-direction", "search-planner", "optuna-sampler", "optuna-acquisition",
			"optuna-terminator", "search-percentile-pooling", "search-sla-tier"} {
			if v.IsSet(f) {
				return nil, fmt.Errorf("--%s needs --search-space 'PATH:LO,HI[:int|float]'", f)
			}
		}
		return nil, nil
	}
	var errs []error
	c := &sweep.SearchConfig{MaxIterations: v.Int("search-max-iterations"), InitialPoints: v.Int("search-initial-points"),
		Seed: v.Uint64("random-seed"), MinRounds: probeRounds(v)}
	if v.IsSet("search-random-seed") {
		c.Seed = v.Uint64("search-random-seed")
	}
	for _, s := range spaces {
		d, err := isearch.ParseDimension(s)
		if err != nil {
			errs = append(errs, fmt.Errorf("--search-space %w", err))
			continue
		}
		name, err := sweep.SettingForPath(d.Name)
		if err != nil {
			errs = append(errs, fmt.Errorf("--search-space: %w", err))
			continue
		}
		d.Name = name
		c.Space = append(c.Space, d)
	}
	stat := v.String("search-stat")
	metrics, dirs := v.StringSlice("search-metric"), v.StringSlice("search-direction")
	if len(metrics) == 0 {
		metrics = []string{"output_token_throughput"}
	}
	if len(dirs) > len(metrics) {
		errs = append(errs, fmt.Errorf("%d --search-direction for %d --search-metric", len(dirs), len(metrics)))
	}
	for i, m := range metrics {
		o := isearch.Objective{Metric: m, Maximize: true}
		if !strings.Contains(m, ":") && stat != "" {
			o.Metric = m + ":" + stat
		}
		if i < len(dirs) {
			switch strings.ToLower(dirs[i]) {
			case "maximize", "max":
			case "minimize", "min":
				o.Maximize = false
			default:
				errs = append(errs, fmt.Errorf("--search-direction %q: want maximize or minimize", dirs[i]))
			}
		}
		c.Objectives = append(c.Objectives, o)
	}
	for _, s := range v.StringSlice("search-sla") {
		k, err := isearch.ParseConstraint(s)
		if err != nil {
			errs = append(errs, fmt.Errorf("--search-sla %w", err))
			continue
		}
		c.Constraints = append(c.Constraints, k)
	}
	for i, s := range v.StringSlice("search-sla-tier") {
		t, err := sweep.ParseTier(s, i+1)
		if err != nil {
			errs = append(errs, fmt.Errorf("--search-sla-tier %w", err))
			continue
		}
		c.Tiers = append(c.Tiers, t)
	}
	c.Planner = sweep.Planner{Name: v.String("search-planner"), Sampler: v.String("optuna-sampler"), Acquisition: v.String("optuna-acquisition"),
		Terminator: v.String("optuna-terminator"), Pooling: v.String("search-percentile-pooling")}
	if v.IsSet("bo-constraint-mode") {
		c.Planner.ConstraintMode = v.String("bo-constraint-mode")
	}
	return c, errors.Join(errs...)
}

// Sweeps reports whether the command sweeps or searches.
func Sweeps(ps *sweep.ProfileSweep, r *sweep.RecipeConfig, sc *sweep.SearchConfig) bool {
	return ps.Active() || r != nil || sc != nil
}
