package sweep

import (
	"errors"
	"fmt"
	"maps"
	"slices"
	"strings"
)

// Planner holds AIPerf's choices of its search's machinery, as given
// (--search-planner, --optuna-sampler, --optuna-acquisition,
// --optuna-terminator, --search-percentile-pooling,
// --bo-constraint-mode; docs/format/cli.md, "Sweeps and searches"). A
// model-based search has one method (a Gaussian process of each metric,
// expected improvement times the probability that every SLA holds, the
// monotone boundary search for a one-load SLA problem): each value that
// names it, or a method it stands in for, is taken and recorded in
// sweep.json; a value naming another method is refused with a sentence
// ([Planner.validate]). The zero value is the default of each.
type Planner struct {
	Name           string `json:"planner,omitempty"`
	Sampler        string `json:"optuna_sampler,omitempty"`
	Acquisition    string `json:"optuna_acquisition,omitempty"`
	Terminator     string `json:"optuna_terminator,omitempty"`
	Pooling        string `json:"percentile_pooling,omitempty"`
	ConstraintMode string `json:"constraint_mode,omitempty"`
}

// plannerChoices are the values each Planner field takes: for each, ""
// when reprise's search is what the value asks for (or stands in for it),
// else the sentence that refuses it. The keys are AIPerf's choices.
var plannerChoices = []struct {
	flag   string
	get    func(*Planner) string
	values map[string]string
}{
	{"--search-planner", func(p *Planner) string { return p.Name }, map[string]string{
		// bayesian and optuna are Optuna's GP/TPE loop; monotonic_sla
		// and smooth_isotonic its searches of a one-load SLA boundary,
		// which reprise runs whenever the problem is one (validate).
		"bayesian": "", "optuna": "", "monotonic_sla": "", "smooth_isotonic": "",
	}},
	{"--optuna-sampler", func(p *Planner) string { return p.Sampler }, map[string]string{
		"gp": "", "botorch": "",
		"tpe": "reprise's search models each metric with a Gaussian process (what gp and botorch select), not a tree-structured Parzen estimator: give gp or drop the flag",
	}},
	{"--optuna-acquisition", func(p *Planner) string { return p.Acquisition }, map[string]string{
		// EI in log form has the same maximizer; q = 1 (one probe at a
		// time); the noisy forms are stood in for by EI over the best
		// measured value, the plug-in incumbent.
		"logei": "", "qlogei": "", "qnei": "", "qlognei": "",
		// Several objectives: a random Chebyshev scalarization per
		// probe (ParEGO) spreads the probes along the front (validate).
		"qehvi": "", "qnehvi": "", "qlognehvi": "",
	}},
	{"--optuna-terminator", func(p *Planner) string { return p.Terminator }, map[string]string{
		// reprise's stop is itself a regret bound: no candidate expected
		// to improve the best by more than 1 % of its spread.
		"none": "", "regret": "", "emmr": "",
	}},
	{"--search-percentile-pooling", func(p *Planner) string { return p.Pooling }, map[string]string{
		"mean": "", "pooled": "", // validate: pooled needs one run per probe
	}},
}

// validate checks the Planner against a search of objectives metrics,
// monotone when it is a one-load SLA problem ([SearchConfig.monotone]),
// whose probes are run runs times each.
func (p *Planner) validate(monotone bool, objectives, runs int) error {
	var errs []error
	for _, ch := range plannerChoices {
		v := ch.get(p)
		if v == "" {
			continue
		}
		why, ok := ch.values[strings.ToLower(v)]
		switch {
		case !ok:
			errs = append(errs, fmt.Errorf("%s %q: want one of %s", ch.flag, v, strings.Join(sortedKeys(ch.values), ", ")))
		case why != "":
			errs = append(errs, fmt.Errorf("%s %s: %s", ch.flag, v, why))
		}
	}
	switch strings.ToLower(p.Name) {
	case "monotonic_sla", "smooth_isotonic":
		if !monotone {
			errs = append(errs, fmt.Errorf("--search-planner %s: the monotone search needs one load setting (concurrency or request-rate), one --search-metric to maximize and upper-limit --search-sla constraints (op < or <=)", p.Name))
		}
	}
	switch a := strings.ToLower(p.Acquisition); {
	case strings.HasSuffix(a, "hvi") && objectives < 2:
		errs = append(errs, fmt.Errorf("--optuna-acquisition %s is a multi-objective acquisition: give two or more --search-metric, or logei", p.Acquisition))
	case a != "" && !strings.HasSuffix(a, "hvi") && objectives > 1:
		errs = append(errs, fmt.Errorf("--optuna-acquisition %s is a single-objective acquisition: with %d --search-metric give qlognehvi (or drop the flag)", p.Acquisition, objectives))
	}
	if strings.ToLower(p.Pooling) == "pooled" && runs > 1 {
		errs = append(errs, fmt.Errorf("--search-percentile-pooling pooled with %d runs per probe: a probe's statistic is the mean of its runs' (mean); pooling their requests is not supported: give mean or --num-profile-runs 1 (where the two are one)", runs))
	}
	return errors.Join(errs...)
}

func sortedKeys(m map[string]string) []string {
	return slices.Sorted(maps.Keys(m))
}
