package compare

import (
	"fmt"
	"math"

	"github.com/reprise-bench/reprise/internal/accuracy"
)

// AccuracyMetric is the name of the accuracy comparison in a Result.
const AccuracyMetric = "accuracy"

// compareAccuracy compares the accuracy of B against A (docs/design/0021-accuracy.md),
// from the graded requests of every run of each side. When both sides
// graded the same items (one run each; an item's first grade), the
// grades are paired by item: McNemar's exact test on the items right on
// one side only, and the Wald interval of the paired difference. Else
// (no common items, or replicates) the pooled two-proportion z-test and
// Newcombe's interval. The verdict is better or worse when the p-value is
// below 1 − level, with the sign of B − A (accuracy: higher is better).
// ok is false when a side graded nothing.
func compareAccuracy(a, b []*Run, level float64) (m Metric, note string, ok bool) {
	ga, gb := grades(a), grades(b)
	if len(ga) == 0 || len(gb) == 0 {
		return Metric{}, "", false
	}
	m = Metric{Name: AccuracyMetric, Unit: "ratio", HigherIsBetter: true, Floor: 0, FloorWhy: "",
		RelLow: math.NaN(), RelHigh: math.NaN(), Degradation: math.NaN()}
	ka, kb := countRight(ga), countRight(gb)
	m.A, m.B = float64(ka)/float64(len(ga)), float64(kb)/float64(len(gb))
	m.Diff = m.B - m.A
	m.Rel = math.NaN()
	if m.A > 0 {
		m.Rel = m.Diff / m.A
	}
	z := math.Sqrt2 * math.Erfinv(level)
	var p float64
	firstA, firstB := firstGrades(ga), firstGrades(gb)
	both, onlyA, onlyB := 0, 0, 0
	for item, ca := range firstA {
		if cb, in := firstB[item]; in {
			both++
			switch {
			case ca && !cb:
				onlyA++
			case cb && !ca:
				onlyB++
			}
		}
	}
	if len(a) == 1 && len(b) == 1 && both >= 2 && both*10 >= min(len(firstA), len(firstB))*9 {
		// Paired: the difference of the pairs' proportions.
		n := float64(both)
		d := float64(onlyB-onlyA) / n
		se := math.Sqrt(max(0, float64(onlyA+onlyB)-float64((onlyB-onlyA)*(onlyB-onlyA))/n)) / n
		m.Diff = d
		m.DiffLow, m.DiffHigh = max(-1, d-z*se), min(1, d+z*se)
		p = accuracy.McNemar(onlyA, onlyB)
		note = fmt.Sprintf("paired by item: %d items graded in both, %d right in A only, %d in B only; McNemar p = %.3g", both, onlyA, onlyB, p)
	} else {
		m.DiffLow, m.DiffHigh = accuracy.DiffInterval(ka, len(ga), kb, len(gb))
		p = accuracy.TwoProportion(ka, len(ga), kb, len(gb))
		note = fmt.Sprintf("unpaired: %d/%d right in A, %d/%d in B; two-proportion p = %.3g", ka, len(ga), kb, len(gb), p)
	}
	switch {
	case p < 1-level && m.Diff > 0:
		m.Verdict = Better
	case p < 1-level && m.Diff < 0:
		m.Verdict = Worse
	default:
		m.Verdict = NoDifference
	}
	return m, note, true
}

func grades(runs []*Run) []grade {
	var out []grade
	for _, r := range runs {
		out = append(out, r.grades...)
	}
	return out
}

func countRight(gs []grade) int {
	n := 0
	for _, g := range gs {
		if g.correct {
			n++
		}
	}
	return n
}

// firstGrades is each item's first grade.
func firstGrades(gs []grade) map[string]bool {
	m := make(map[string]bool, len(gs))
	for _, g := range gs {
		if _, seen := m[g.item]; !seen {
			m[g.item] = g.correct
		}
	}
	return m
}
