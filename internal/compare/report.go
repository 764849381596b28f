package compare

import (
	"fmt"
	"math"
	"strings"

	"github.com/reprise-bench/reprise/internal/report"
)

// ReportSections are the sections a comparison adds to the HTML report
// of its runs (report.Options.Sections): per comparison, a table of every
// metric with A, B, B−A, the relative change, the interval and the
// verdict (coloured: better good, worse bad), and the warnings.
func ReportSections(results []*Result) []report.Section {
	var out []report.Section
	for i, r := range results {
		how := "unpaired: each run resampled on its own"
		if r.Paired {
			how = fmt.Sprintf("paired by %s: %d pairs", r.PairedBy, r.Pairs)
		}
		sec := report.Section{
			ID:    fmt.Sprintf("compare-%d", i+1),
			Title: fmt.Sprintf("Comparison: %s against %s", r.B.Label, r.A.Label),
			Explain: fmt.Sprintf("B−A with its %g%% bootstrap interval (%s; %d resamples, seed %d): worse or better when the interval excludes 0",
				r.Level*100, how, r.Resamples, r.Seed),
		}
		t := report.Table{Header: []string{"metric", "unit", "A", "B", "B−A", "B/A−1", fmt.Sprintf("%g%% interval of B−A", r.Level*100), "verdict"}}
		for _, m := range r.Metrics {
			iv := "-"
			if !math.IsNaN(m.DiffLow) {
				iv = "[" + num(m.DiffLow, m.Unit, true) + ", " + num(m.DiffHigh, m.Unit, true) + "]"
			}
			v := report.Cell{Text: string(m.Verdict)}
			switch m.Verdict {
			case Better:
				v.Class = "good"
			case Worse:
				v.Class = "bad"
			case NoDifference:
				v.Text = "no significant difference"
			}
			t.Rows = append(t.Rows, []report.Cell{{Text: m.Name}, {Text: m.Unit},
				{Text: num(m.A, m.Unit, false), Class: "num"}, {Text: num(m.B, m.Unit, false), Class: "num"},
				{Text: num(m.Diff, m.Unit, true), Class: "num"}, {Text: pct(m.Rel), Class: "num"}, {Text: iv, Class: "num"}, v})
		}
		sec.Tables = []report.Table{t}
		if len(r.Warnings) > 0 {
			sec.Details = []report.Detail{{Summary: fmt.Sprintf("%d warnings: the runs may not be comparable", len(r.Warnings)),
				Text: strings.Join(r.Warnings, "\n")}}
		}
		out = append(out, sec)
	}
	return out
}
