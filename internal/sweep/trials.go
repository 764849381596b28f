package sweep

import (
	"fmt"
	"path/filepath"

	"github.com/reprise-bench/reprise/engine/summary"
	"github.com/reprise-bench/reprise/internal/report"
)

// TrialsDir is the directory of a repeated sweep's trials (AIPerf's
// profile_runs/trial_000K/).
const TrialsDir = "profile_runs"

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
