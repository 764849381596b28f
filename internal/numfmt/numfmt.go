// Package numfmt formats numbers for the text reports people read
// (analyze-trace's report, synthesize's summary): thousands separators.
package numfmt

import (
	"strconv"
	"strings"
)

// Group formats n with thousands separators: 1234567 → "1,234,567".
func Group(n int64) string {
	s := strconv.FormatInt(n, 10)
	neg := strings.HasPrefix(s, "-")
	if neg {
		s = s[1:]
	}
	var b strings.Builder
	for i, c := range s {
		if i > 0 && (len(s)-i)%3 == 0 {
			b.WriteByte(',')
		}
		b.WriteRune(c)
	}
	if neg {
		return "-" + b.String()
	}
	return b.String()
}
