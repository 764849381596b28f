package compare

import (
	"fmt"
	"math"
	"strconv"
)

// digits is the number of decimals a unit is printed with.
func digits(unit string) int {
	switch unit {
	case "ms":
		return 3
	case "ratio":
		return 4
	}
	return 2
}

// num formats v in unit's precision, "-" when it does not exist; sign
// prints a + on positive values.
func num(v float64, unit string, sign bool) string {
	if math.IsNaN(v) || math.IsInf(v, 0) {
		return "-"
	}
	s := strconv.FormatFloat(v, 'f', digits(unit), 64)
	if sign && v >= 0 {
		s = "+" + s
	}
	return s
}

// pct formats a fraction as a signed percentage, "-" when it does not
// exist.
func pct(v float64) string {
	if math.IsNaN(v) || math.IsInf(v, 0) {
		return "-"
	}
	return fmt.Sprintf("%+.1f%%", v*100)
}

func short(sha string) string {
	if len(sha) > 12 {
		return sha[:12]
	}
	return sha
}
