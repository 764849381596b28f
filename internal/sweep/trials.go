package sweep

import (
	"fmt"
	"path/filepath"
	"strings"

	"github.com/reprise-bench/reprise/engine/summary"
	"github.com/reprise-bench/reprise/internal/report"
)

// TrialsDir is the directory of a repeated sweep's trials (AIPerf's
// profile_runs/trial_000K/).
const TrialsDir = "profile_runs"

// TrialMetrics are the headline metrics a repeated sweep aggregates
// across its trials for the table and the report (sweep.json has every
// headline metric), by [summary.SummarizeRuns] key.
var TrialMetrics = []string{"request_throughput", "output_token_throughput", "goodput",
	"time_to_first_token.p99", "inter_token_latency.p99", "request_latency.p99"}

// Trials returns points repeated n times, the whole list once per trial
// (AIPerf's --parameter-sweep-mode repeated): point p of trial k is
// named profile_runs/trial_000K/NAME and has Trial k. With n ≤ 1 it
// returns points.
func Trials(points []Point, n int) []Point {
	if n <= 1 {
		return points
	}
	var out []Point
	for k := 1; k <= n; k++ {
		for _, p := range points {
			base := p.Name()
			p.Label, p.Trial = filepath.Join(TrialsDir, fmt.Sprintf("trial_%04d", k), base), k
			out = append(out, p)
		}
	}
	return out
}

// TrialAggregate is one point of a repeated sweep across its trials: the
// mean of each headline metric over the trials and its confidence
// interval (Student t of the per-trial values, on the metric's scale,
// as runs.json computes it: [summary.Interval]).
type TrialAggregate struct {
	// Point is the point's name without the trial directory
	// (concurrency_10); Points its trials' point names, in trial order.
	Point    string             `json:"point"`
	Settings map[string]float64 `json:"settings"`
	Trials   int                `json:"trials"`
	Points   []string           `json:"points"`
	// Level is the confidence level; Metrics are keyed as runs.json's.
	Level   float64                     `json:"confidence_level"`
	Metrics map[string]summary.Interval `json:"metrics"`
}

// trialAcc collects the measured trials of one point.
type trialAcc struct {
	name     string
	settings map[string]float64
	points   []string
	sums     []*summary.Summary
}

// addTrial records the runs of a trial point (Trial > 0).
func (s *sweeper) addTrial(p Point, st *PointStatus, runs []*measured) {
	base := filepath.Base(p.Label)
	var acc *trialAcc
	for _, a := range s.trials {
		if a.name == base {
			acc = a
		}
	}
	if acc == nil {
		acc = &trialAcc{name: base, settings: st.Settings}
		s.trials = append(s.trials, acc)
	}
	acc.points = append(acc.points, st.Name)
	for _, m := range runs {
		acc.sums = append(acc.sums, m.sum)
	}
}

// aggregateTrials sets Result.Trials from the trials measured.
func (s *sweeper) aggregateTrials() {
	s.res.Trials = nil
	for _, a := range s.trials {
		across := summary.SummarizeRuns(a.sums, s.cfg.Runs.Level)
		s.res.Trials = append(s.res.Trials, TrialAggregate{Point: a.name, Settings: a.settings, Trials: len(a.sums),
			Points: a.points, Level: across.Level, Metrics: across.Metrics})
	}
}

// trialLabels are the table's and the report's names of TrialMetrics.
var trialLabels = []string{"done/s", "tok/s", "goodput/s", "ttft99 ms", "itl99 ms", "e2e99 ms"}

// Text is the aggregate's line of the sweep table: each of
// TrialMetrics as mean [low, high].
func (a *TrialAggregate) Text() string {
	parts := []string{fmt.Sprintf("%s over %d trials (%.0f%% CI):", a.Point, a.Trials, 100*a.Level)}
	for i, k := range TrialMetrics {
		if iv, ok := a.Metrics[k]; ok && iv.N > 0 {
			parts = append(parts, fmt.Sprintf("%s %s [%s, %s]", trialLabels[i], Num(iv.Mean, 4), Num(iv.Low, 4), Num(iv.High, 4)))
		}
	}
	return strings.Join(parts, " ")
}

// trialSection is the report's table of a repeated sweep's aggregates.
func trialSection(m *Manifest) report.Section {
	t := report.Table{Header: append([]string{"point", "trials"}, trialLabels...)}
	for _, a := range m.Trials {
		row := []report.Cell{{Text: a.Point}, {Text: fmt.Sprint(a.Trials), Class: "num"}}
		for _, k := range TrialMetrics {
			text := "-"
			if iv, ok := a.Metrics[k]; ok && iv.N > 0 {
				text = fmt.Sprintf("%s [%s, %s]", Num(iv.Mean, 4), Num(iv.Low, 4), Num(iv.High, 4))
			}
			row = append(row, report.Cell{Text: text, Class: "num"})
		}
		t.Rows = append(t.Rows, row)
	}
	level := summary.DefaultConfidenceLevel
	if len(m.Trials) > 0 {
		level = m.Trials[0].Level
	}
	return report.Section{ID: "sweep-trials", Title: "Across trials",
		Explain: fmt.Sprintf("each point's mean over the trials of the repeated sweep and its %.0f %% confidence interval (Student t of the per-trial values; latencies in ms, rates per second)", 100*level),
		Tables:  []report.Table{t}}
}
