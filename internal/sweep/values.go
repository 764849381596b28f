package sweep

import (
	"math"

	"github.com/reprise-bench/reprise/engine/summary"
)

// Num is [summary.Num].
func Num(v float64, sig int) string { return summary.Num(v, sig) }

// linspace returns n values from lo to hi, rounded to whole numbers.
func linspace(lo, hi float64, n int) []float64 {
	var out []float64
	for i := range n {
		v := math.Round(lo + (hi-lo)*float64(i)/float64(n-1))
		if len(out) == 0 || v != out[len(out)-1] {
			out = append(out, v)
		}
	}
	return out
}

// geomspace returns n whole numbers from lo to hi, geometric.
func geomspace(lo, hi float64, n int) []float64 {
	if n == 1 {
		return []float64{hi}
	}
	var out []float64
	for i := range n {
		v := math.Round(lo * math.Pow(hi/lo, float64(i)/float64(n-1)))
		if len(out) == 0 || v != out[len(out)-1] {
			out = append(out, v)
		}
	}
	return out
}

// mean is the arithmetic mean of v; 0 for none.
func mean(v []float64) float64 {
	if len(v) == 0 {
		return 0
	}
	s := 0.0
	for _, x := range v {
		s += x
	}
	return s / float64(len(v))
}

// roundSig rounds v to n significant digits.
func roundSig(v float64, n int) float64 {
	if v == 0 {
		return 0
	}
	p := math.Pow(10, float64(n)-math.Ceil(math.Log10(math.Abs(v))))
	return math.Round(v*p) / p
}
