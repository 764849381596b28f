// How numbers are written in the tables and in summary.json.

package summary

import (
	"fmt"
	"math"
	"strconv"
	"strings"
)

// scalar is an aggregate value in summary.json: AIPerf writes derived
// metrics as {"unit", "avg"}.
type scalar struct {
	Unit string  `json:"unit"`
	Avg  float64 `json:"avg"`
}

// num formats a value with two decimals, as AIPerf's console does.
func num(v float64) string {
	if math.IsNaN(v) {
		return "n/a"
	}
	return fmt.Sprintf("%.2f", v)
}

// Num formats v for a table with sig significant digits and never an
// exponent: 14687.3 is 14687 (not 1.469e+04), 0.01234 is 0.01234, 2.5 is
// 2.5. Whole digits are never cut, so a large value has more than sig.
func Num(v float64, sig int) string {
	if math.IsNaN(v) || math.IsInf(v, 0) {
		return strconv.FormatFloat(v, 'f', -1, 64)
	}
	if v == 0 {
		return "0"
	}
	dec := max(0, sig-1-int(math.Floor(math.Log10(math.Abs(v)))))
	t := strconv.FormatFloat(v, 'f', dec, 64)
	if strings.Contains(t, ".") {
		t = strings.TrimRight(strings.TrimRight(t, "0"), ".")
	}
	return t
}
