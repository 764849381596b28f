package trace

import "math/bits"

// Hot path: number parsing for every reader; allocation test
// TestNextAllocs in alloc_test.go.

var pow10 = [...]uint64{
	1, 10, 100, 1e3, 1e4, 1e5, 1e6, 1e7, 1e8, 1e9, 1e10,
	1e11, 1e12, 1e13, 1e14, 1e15, 1e16, 1e17, 1e18, 1e19,
}

// numberEnd returns the length of the JSON number at the start of b, or 0
// when b does not start with one. The grammar is JSON's,
// -?(0|[1-9][0-9]*)(\.[0-9]+)?([eE][+-]?[0-9]+)?, so NaN, Inf, "+1", ".5"
// and "01" are not numbers.
func numberEnd(b []byte) int {
	i := 0
	if i < len(b) && b[i] == '-' {
		i++
	}
	if i >= len(b) {
		return 0
	}
	switch {
	case b[i] == '0':
		i++
	case b[i] >= '1' && b[i] <= '9':
		for i < len(b) && b[i] >= '0' && b[i] <= '9' {
			i++
		}
	default:
		return 0
	}
	if i < len(b) && b[i] == '.' {
		i++
		j := i
		for i < len(b) && b[i] >= '0' && b[i] <= '9' {
			i++
		}
		if i == j {
			return 0
		}
	}
	if i < len(b) && (b[i] == 'e' || b[i] == 'E') {
		i++
		if i < len(b) && (b[i] == '+' || b[i] == '-') {
			i++
		}
		j := i
		for i < len(b) && b[i] >= '0' && b[i] <= '9' {
			i++
		}
		if i == j {
			return 0
		}
	}
	return i
}

// Results of parseFixed besides a value.
const (
	fixedOK      = iota // exact value
	fixedRounded        // value rounded to the nearest unit
	fixedSyntax         // not a number
	fixedRange          // magnitude ≥ 2^63 units
)

// parseFixed parses the whole of b as a JSON-grammar number and returns
// round(v·10^scale) as an int64, exactly (no float64 on the way): a
// timestamp of 61.114 s at scale 9 is 61114000000 ns. Digits below the unit
// are rounded half away from zero and reported as fixedRounded.
func parseFixed(b []byte, scale int) (int64, int) {
	// Fastest path: 1 to 18 digits without a leading zero, a valid JSON
	// number that numberEnd need not check (lengths and most timestamps).
	if n := len(b); n > 0 && n <= 18 && (b[0] != '0' || n == 1) && scale <= 19 {
		var m uint64
		j := 0
		for j < n && b[j] >= '0' && b[j] <= '9' {
			m = m*10 + uint64(b[j]-'0')
			j++
		}
		if j == n {
			return scaleInt(m, false, scale)
		}
	}
	if len(b) == 0 || numberEnd(b) != len(b) {
		return 0, fixedSyntax
	}
	i := 0
	neg := false
	if b[0] == '-' {
		neg = true
		i++
	}
	// Fast path: a plain integer of at most 18 digits.
	if j := i; true {
		var m uint64
		for j < len(b) && b[j] >= '0' && b[j] <= '9' && j-i < 18 {
			m = m*10 + uint64(b[j]-'0')
			j++
		}
		if j == len(b) && scale <= 19 {
			return scaleInt(m, neg, scale)
		}
	}
	return parseFixedSlow(b, i, neg, scale)
}

// parseFixedSlow is parseFixed of a valid JSON number that the fast
// paths do not take: one with a fraction, an exponent, more than 18
// digits, or a scale above 19. The digits start at b[i], after the sign;
// neg says whether there was one. It gathers the digits that fit a
// uint64, then rounds away the rest. (It is one function, not gathering
// and rounding apart: the call between them cost 3 to 5 % on
// BenchmarkParseFixed.)
func parseFixedSlow(b []byte, i int, neg bool, scale int) (int64, int) {
	var (
		m        uint64 // kept significant digits
		p        int    // value = m·10^p before scaling
		firstDrp = -1   // first dropped digit, for rounding
		dropped  bool   // a nonzero digit after the first dropped one
	)
	digit := func(d byte, frac bool) {
		if m <= (1<<64-1-9)/10 {
			m = m*10 + uint64(d-'0')
			if frac {
				p--
			}
			return
		}
		if firstDrp < 0 {
			firstDrp = int(d - '0')
		} else if d != '0' {
			dropped = true
		}
		if !frac {
			p++
		}
	}
	for i < len(b) && b[i] >= '0' && b[i] <= '9' {
		digit(b[i], false)
		i++
	}
	if i < len(b) && b[i] == '.' {
		i++
		for i < len(b) && b[i] >= '0' && b[i] <= '9' {
			digit(b[i], true)
			i++
		}
	}
	if i < len(b) && (b[i] == 'e' || b[i] == 'E') {
		p += exponent(b[i+1:])
	}
	p += scale
	inexact := firstDrp > 0 || dropped
	if m == 0 {
		if inexact {
			return 0, fixedRounded
		}
		return 0, fixedOK
	}
	var q uint64
	status := fixedOK
	switch {
	case p > 19:
		return 0, fixedRange
	case p > 0:
		hi, lo := bits.Mul64(m, pow10[p])
		if hi != 0 {
			return 0, fixedRange
		}
		q = lo
		if inexact {
			// m holds 19+ digits, so m·10^p ≥ 2^63 anyway; kept for clarity.
			status = fixedRounded
		}
	case p == 0:
		q = m
		if firstDrp >= 5 {
			q++
		}
		if inexact {
			status = fixedRounded
		}
	case p < -19:
		return 0, fixedRounded
	default:
		d := pow10[-p]
		var r uint64
		q, r = m/d, m%d
		if r != 0 || inexact {
			status = fixedRounded
		}
		if r >= d-r { // r ≥ d/2 without overflow
			q++
		}
	}
	if q >= 1<<63 {
		return 0, fixedRange
	}
	v := int64(q)
	if neg {
		v = -v
	}
	return v, status
}

// exponent returns the exponent of a JSON number, given the valid digits
// after its 'e' (a sign, then digits). Past 100000 it stops growing: any
// such exponent is out of range or rounds to zero.
func exponent(b []byte) int {
	i := 0
	eneg := false
	if b[i] == '+' || b[i] == '-' {
		eneg = b[i] == '-'
		i++
	}
	e := 0
	for ; i < len(b); i++ {
		if e < 100000 {
			e = e*10 + int(b[i]-'0')
		}
	}
	if eneg {
		e = -e
	}
	return e
}

func scaleInt(m uint64, neg bool, scale int) (int64, int) {
	hi, lo := bits.Mul64(m, pow10[scale])
	if hi != 0 || lo >= 1<<63 {
		return 0, fixedRange
	}
	v := int64(lo)
	if neg {
		v = -v
	}
	return v, fixedOK
}

// parseCount parses a token count: a non-negative integer (an integral
// float such as 6758.0 is accepted) of at most maxTokens.
func parseCount(b []byte) (int, string) {
	v, st := parseFixed(b, 0)
	switch {
	case st == fixedSyntax:
		return 0, "not a number"
	case st == fixedRange || v > maxTokens:
		return 0, "more than 2^30 tokens"
	case st == fixedRounded:
		return 0, "not a whole number of tokens"
	case v < 0:
		return 0, "negative"
	}
	return int(v), ""
}

// maxTokens bounds every token count a reader accepts.
const maxTokens = 1 << 30
