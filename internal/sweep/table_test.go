package sweep

import "testing"

// TestNum: table numbers have their significant digits and no exponent
// (the --runs and sweep tables printed 1.469e+04).
func TestNum(t *testing.T) {
	for _, c := range []struct {
		v    float64
		sig  int
		want string
	}{
		{14687.3, 4, "14687"},
		{1468.73, 4, "1469"},
		{2.5, 4, "2.5"},
		{0.0123449, 4, "0.01234"},
		{9.99996, 4, "10"},
		{-312.46, 3, "-312"},
		{1e-7, 3, "0.0000001"},
		{0, 4, "0"},
		{123456789, 3, "123456789"},
	} {
		if got := Num(c.v, c.sig); got != c.want {
			t.Errorf("Num(%v, %d) = %q, want %q", c.v, c.sig, got, c.want)
		}
	}
}
