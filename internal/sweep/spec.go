package sweep

import (
	"errors"
	"fmt"
	"strings"
	"time"

	"github.com/reprise-bench/reprise/replay"
)

// Spec is a sweep as reprise sweep's command line gives it: the swept
// settings' lists or ranges, a search goal, or a zip, variant or sampled
// sweep. [Config.Configure] turns it into the Config's points.
type Spec struct {
	// Settings maps a setting of [Settings] to its VALUES: a list, a
	// range or one value ("" or absent: not given). One value sets the
	// setting of every point.
	Settings map[string]string
	// Find, when its Goal is not empty, searches for the largest load.
	Find FindSpec
	// Profile is a zip, variant or sampled sweep; Configure fills in its
	// Lists (the settings given several values) and Seed (Base's).
	Profile ProfileSweep
}

// FindSpec is a --find search as flags give it.
type FindSpec struct {
	// Goal is max-rate (max-request-rate), max-concurrency or
	// max-speedup.
	Goal string
	// Start is the first load (nil: the single value given the searched
	// setting, else 1); Floor the lowest (nil: [DefaultFloor]).
	Start, Floor *float64
	// The rest are FindConfig's.
	Precision    float64
	MaxProbes    int
	MinRounds    int
	MinProbeTime time.Duration
	MaxLateness  time.Duration
}

// findSettings are the settings of the --find goals.
var findSettings = map[string]string{"max-rate": RequestRate, "max-request-rate": RequestRate,
	"max-concurrency": Concurrency, "max-speedup": Speedup}

// Configure sets what c runs from s and c.Base: Axes, or a search
// (Find), or the points of a zip, variant or sampled sweep (Points,
// Design). A setting given one value is set in c.Base; a request-rate
// search on ModeAuto runs in ModeRate. It also checks c.Stop, and
// reports every problem at once (errors.Join).
func (c *Config) Configure(s Spec) error {
	var errs []error
	if c.Stop.SaturationTolerance < 0 || c.Stop.SaturationTolerance >= 1 {
		errs = append(errs, fmt.Errorf("--saturation-tolerance %v: want 0 ≤ F < 1", c.Stop.SaturationTolerance))
	}
	if c.Stop.SLOFailures < 0 {
		errs = append(errs, fmt.Errorf("--stop-slo-failures %d: want ≥ 0", c.Stop.SLOFailures))
	}
	single := map[string]float64{}
	for _, name := range Settings {
		spec := s.Settings[name]
		if spec == "" {
			continue
		}
		ax, err := ParseAxis(name, spec)
		if err != nil {
			errs = append(errs, err)
			continue
		}
		if len(ax.Values) == 1 {
			single[name] = ax.Values[0]
			Apply(&c.Base, name, ax.Values[0])
			continue
		}
		c.Axes = append(c.Axes, ax)
	}
	ps := s.Profile
	ps.Seed = c.Base.Replay.Seed
	switch {
	case s.Find.Goal != "":
		errs = append(errs, c.configureFind(s.Find, single)...)
	case ps.Type == SweepZip || ps.Active():
		// A zip, variant or sampled sweep: explicit points (under
		// points/, named as AIPerf names them).
		ps.Lists = c.Axes
		exp, err := ExpandProfile(ps)
		if err != nil {
			errs = append(errs, err)
		} else {
			c.Axes, c.Points, c.Design = nil, exp.Points, exp.Design
		}
	case len(c.Axes) == 0:
		errs = append(errs, errors.New("nothing to sweep: give a list or range to --concurrency, --request-rate, --speedup, --isl or --osl, --variant, --sweep-sampling, or --find"))
	case ps.Type != SweepGrid:
		errs = append(errs, fmt.Errorf("--sweep-type %q: want grid or zip", ps.Type))
	}
	return errors.Join(errs...)
}

// configureFind sets c.Find from f, starting from the single value given
// the searched setting (single) when f has no Start, and returns the
// problems.
func (c *Config) configureFind(f FindSpec, single map[string]float64) []error {
	var errs []error
	setting := findSettings[f.Goal]
	if setting == "" {
		errs = append(errs, fmt.Errorf("--find %q: want max-rate, max-concurrency or max-speedup", f.Goal))
	}
	if c.Base.Goodput == "" {
		errs = append(errs, errors.New("--find needs SLOs to meet: give --goodput, e.g. \"ttft:250 itl:10\""))
	}
	if len(c.Axes) > 0 {
		errs = append(errs, fmt.Errorf("--find searches one setting: give no list or range (--%s %s)", c.Axes[0].Name, c.Axes[0].Spec))
	}
	start := 1.0
	if v, ok := single[setting]; ok {
		start = v
	}
	if f.Start != nil {
		start = *f.Start
	}
	c.Find = NewFindConfig(setting, start)
	c.Find.Precision, c.Find.MaxProbes = f.Precision, f.MaxProbes
	c.Find.MinRounds, c.Find.MinProbeTime = f.MinRounds, f.MinProbeTime
	c.Find.MaxLateness = f.MaxLateness
	if f.Floor != nil {
		c.Find.Floor = *f.Floor
	}
	if setting == RequestRate && c.Base.Replay.Mode == replay.ModeAuto {
		c.Base.Replay.Mode = replay.ModeRate
	}
	return errs
}

// ProfilePlan is what a profile command runs over its points: a sweep
// (comma lists, variants or a sampling design), one of AIPerf's search
// recipes, or a model-based search.
type ProfilePlan struct {
	Sweep  ProfileSweep
	Recipe *RecipeConfig
	Search *SearchConfig
	// SweepMode is AIPerf's --parameter-sweep-mode, read when a sweep
	// runs several times: repeated (the whole sweep once per trial,
	// ExpandProfile repeating it) or independent (each point its runs).
	SweepMode string
}

// ConfigureProfile sets what c runs from p and c.Base: Recipe (on
// ModeAuto without a request rate, in ModeConcurrency), Search, or the
// sweep's Points and Design (one run per point when repeated). It
// returns the name of the stimulus AIPerf gives the artifact directory:
// the recipe's name, search, or concurrency_sweep, variant_sweep,
// sobol_sweep (the last list's setting, or the sampling method).
func (c *Config) ConfigureProfile(p ProfilePlan) (string, error) {
	switch {
	case p.Recipe != nil:
		c.Recipe = p.Recipe
		if c.Base.Replay.Mode == replay.ModeAuto && c.Base.Replay.RequestRate == 0 {
			c.Base.Replay.Mode = replay.ModeConcurrency
		}
		if p.Recipe.Name == RecipeMaxGoodput && c.Base.Goodput == "" {
			return "", errors.New("max-goodput-under-slo needs the SLOs a request must meet: give --goodput, e.g. \"time_to_first_token:250\"")
		}
		return p.Recipe.Name, nil
	case p.Search != nil:
		c.Search = p.Search
		return "search", nil
	}
	ps := p.Sweep
	exp, err := ExpandProfile(ps)
	if err != nil {
		return "", err
	}
	c.Points, c.Design = exp.Points, exp.Design
	var stim string
	switch {
	case len(ps.Lists) > 0:
		stim = strings.ReplaceAll(ps.Lists[len(ps.Lists)-1].Name, "-", "_") + "_sweep"
	case len(ps.Variants) > 0:
		stim = "variant_sweep"
	default:
		stim = ps.Sampling + "_sweep"
	}
	if c.Runs.Runs > 1 {
		switch p.SweepMode {
		case "repeated":
			// ExpandProfile repeated the whole sweep once per trial:
			// profile_runs/trial_000K/VALUE, one run each.
			c.Runs.Runs = 1
		case "independent":
		default:
			return "", fmt.Errorf("--parameter-sweep-mode %q: want repeated or independent", p.SweepMode)
		}
	}
	return stim, nil
}
