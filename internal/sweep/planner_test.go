package sweep

import (
	"strings"
	"testing"

	isearch "github.com/reprise-bench/reprise/internal/search"
)

// TestPlannerValidate: each of AIPerf's planner choices that names
// reprise's search (or a method it stands in for) is taken; the others
// are refused with their sentence.
func TestPlannerValidate(t *testing.T) {
	one := &SearchConfig{Space: []isearch.Dimension{{Name: Concurrency, Lo: 1, Hi: 64, Kind: isearch.KindInt}},
		Objectives:  []isearch.Objective{{Metric: "output_token_throughput:avg", Maximize: true}},
		Constraints: []isearch.Constraint{{Metric: "time_to_first_token:p99", Op: "<=", Threshold: 500}}}
	two := &SearchConfig{Space: one.Space, Objectives: []isearch.Objective{
		{Metric: "output_token_throughput:avg", Maximize: true}, {Metric: "request_latency:p99"}}}
	for _, tc := range []struct {
		p    Planner
		c    *SearchConfig
		runs int
		err  string // "" = taken
	}{
		{Planner{}, one, 1, ""},
		{Planner{Name: "bayesian", Sampler: "gp", Acquisition: "qlognei", Terminator: "regret", ConstraintMode: "anything"}, one, 1, ""},
		{Planner{Name: "optuna", Sampler: "botorch", Acquisition: "LogEI", Terminator: "emmr"}, one, 1, ""},
		{Planner{Name: "monotonic_sla"}, one, 1, ""},
		{Planner{Name: "smooth_isotonic"}, two, 1, "the monotone search needs one load setting"},
		{Planner{Acquisition: "qlognehvi"}, two, 1, ""},
		{Planner{Acquisition: "qlognehvi"}, one, 1, "multi-objective acquisition"},
		{Planner{Acquisition: "logei"}, two, 1, "single-objective acquisition"},
		{Planner{Sampler: "tpe"}, one, 1, "not a tree-structured Parzen estimator"},
		{Planner{Sampler: "cmaes"}, one, 1, `--optuna-sampler "cmaes": want one of botorch, gp, tpe`},
		{Planner{Terminator: "patience"}, one, 1, "want one of emmr, none, regret"},
		{Planner{Pooling: "pooled"}, one, 1, ""},
		{Planner{Pooling: "pooled"}, one, 3, "pooled with 3 runs per probe"},
		{Planner{Pooling: "mean"}, one, 3, ""},
	} {
		err := tc.p.validate(tc.c.monotone(), len(tc.c.Objectives), tc.runs)
		switch {
		case tc.err == "" && err != nil:
			t.Errorf("%+v: %v", tc.p, err)
		case tc.err != "" && (err == nil || !strings.Contains(err.Error(), tc.err)):
			t.Errorf("%+v: error %v, want one saying %q", tc.p, err, tc.err)
		}
	}
}
