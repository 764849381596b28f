package report

import (
	"fmt"
	"slices"
)

// accuracySection is the accuracy of each run's graded requests, per
// task, with the Wilson interval (docs/design/0021-accuracy.md); no
// tables (so no section) when no run graded anything.
func accuracySection(runs []*runData) Section {
	t := Table{Caption: "Accuracy of the graded requests (Wilson 95 % interval)",
		Header: []string{"run", "task", "graded", "right", "unanswered", "failed", "accuracy %", "95 % interval"}}
	for _, d := range runs {
		a := d.sum.Accuracy
		if a == nil {
			continue
		}
		stats := append(slices.Clone(a.Tasks), a.All)
		for k, st := range stats {
			task := st.Task
			if k == len(stats)-1 {
				if len(a.Tasks) == 1 {
					continue // the one task is the whole
				}
				task = "all"
			}
			t.Rows = append(t.Rows, []Cell{{Text: d.label}, {Text: task}, num(float64(st.Graded)), num(float64(st.Correct)),
				num(float64(st.Unanswered)), num(float64(st.Failed)), {Text: fmt.Sprintf("%.1f", 100*st.Accuracy), Class: "num"},
				{Text: fmt.Sprintf("[%.1f, %.1f]", 100*st.Low, 100*st.High), Class: "num"}})
		}
	}
	if len(t.Rows) == 0 {
		return Section{}
	}
	return Section{ID: "accuracy", Title: "Accuracy",
		Explain: "Graded answers (docs/format/accuracy.md): right / graded per task; a failed request is graded wrong.",
		Tables:  []Table{t}}
}
