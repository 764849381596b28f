package report

import (
	"fmt"
	"slices"

	"github.com/reprise-bench/reprise/engine/summary"
)

// AcrossRunsSection is the section of repeated runs of one load (replay
// --runs N): for every metric of a, its mean, the across-run interval,
// its relative half-width, unit and scale, then each run's value under
// its label (labels in run order; a missing one is "run K"), and how
// the stop rule ended. name names the runs in the title.
func AcrossRunsSection(name string, a *summary.AcrossRuns, labels []string) Section {
	t := Table{Caption: fmt.Sprintf("%g%% intervals across the runs (runs.json; log scale for rates and latencies, logit for fractions)", 100*a.Level),
		Header: []string{"metric", "mean", "low", "high", "±", "unit", "scale"}}
	for k := range a.Runs {
		l := fmt.Sprintf("run %d", k+1)
		if k < len(labels) && labels[k] != "" {
			l = labels[k]
		}
		t.Header = append(t.Header, l)
	}
	keys := summary.HeadlineMetrics()
	for k := range a.Metrics {
		if !slices.Contains(keys, k) {
			keys = append(keys, k)
		}
	}
	for _, k := range keys {
		iv, ok := a.Metrics[k]
		if !ok {
			continue
		}
		row := []Cell{{Text: k}, num(iv.Mean), num(iv.Low), num(iv.High),
			{Text: fmt.Sprintf("%.1f%%", 100*iv.RelHalfWidth), Class: "num"}, {Text: iv.Unit}, {Text: iv.Scale}}
		// A metric some runs lack has fewer values than runs: its
		// values are those of the runs that have it, in order.
		for i := range a.Runs {
			if iv.N == a.Runs && i < len(iv.Values) {
				row = append(row, num(iv.Values[i]))
			} else {
				row = append(row, Cell{Text: "—", Class: "num"})
			}
		}
		t.Rows = append(t.Rows, row)
	}
	explain := fmt.Sprintf("%d runs of one load; each run is also its own series in the charts below.", a.Runs)
	if c := a.Convergence; c != nil {
		explain += " " + c.Text() + "."
	}
	return Section{Title: "Across runs: " + name, Explain: explain, Tables: []Table{t}}
}
