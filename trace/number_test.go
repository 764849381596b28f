package trace

import (
	"fmt"
	"math/big"
	"math/rand/v2"
	"testing"
)

func TestParseFixed(t *testing.T) {
	tests := []struct {
		in     string
		scale  int
		want   int64
		status int
	}{
		{"0", 6, 0, fixedOK},
		{"61.114", 9, 61114000000, fixedOK}, // float64 would give ...999999
		{"1500.25", 6, 1500250000, fixedOK},
		{"1.25e3", 6, 1250000000, fixedOK},
		{"-5", 6, -5000000, fixedOK},
		{"0.0000001", 6, 0, fixedRounded},   // 0.1 ns
		{"0.0000005", 6, 1, fixedRounded},   // half rounds away from zero
		{"-0.0000005", 6, -1, fixedRounded}, // symmetric
		{"6758.0", 0, 6758, fixedOK},        // integral float
		{"6758.5", 0, 6759, fixedRounded},   // not a whole number
		{"9223372036854775807", 0, 1<<63 - 1, fixedOK},
		{"9223372036854775808", 0, 0, fixedRange},
		{"9223372036.854775807", 9, 1<<63 - 1, fixedOK},
		{"1e19", 0, 0, fixedRange},
		{"1e-400", 9, 0, fixedRounded},
		{"1e400", 9, 0, fixedRange},
		{"12345678901234567890123e-10", 0, 1234567890123, fixedRounded},
		{"NaN", 6, 0, fixedSyntax},
		{"01", 0, 0, fixedSyntax},
		{"1.", 0, 0, fixedSyntax},
		{".5", 0, 0, fixedSyntax},
		{"+1", 0, 0, fixedSyntax},
		{"", 0, 0, fixedSyntax},
		{"1e", 0, 0, fixedSyntax},
	}
	for _, tt := range tests {
		got, st := parseFixed([]byte(tt.in), tt.scale)
		if got != tt.want || st != tt.status {
			t.Errorf("parseFixed(%q, %d) = %d, %d; want %d, %d", tt.in, tt.scale, got, st, tt.want, tt.status)
		}
	}
}

// TestParseFixedOracle compares parseFixed with exact big.Rat arithmetic
// on random decimal numbers, and appendDecimal's output with its input.
func TestParseFixedOracle(t *testing.T) {
	rng := rand.New(rand.NewPCG(3, 4))
	for range 20000 {
		var s string
		switch rng.IntN(3) {
		case 0:
			s = fmt.Sprintf("%d.%0*d", rng.Int64N(1e12), rng.IntN(12)+1, rng.Int64N(1e12))
		case 1:
			s = fmt.Sprintf("%de%d", rng.Int64N(1e15), rng.IntN(30)-15)
		default:
			s = fmt.Sprintf("-%d.%de-%d", rng.Int64N(1e6), rng.Int64N(1e9), rng.IntN(5))
		}
		scale := []int{0, 6, 9}[rng.IntN(3)]
		got, st := parseFixed([]byte(s), scale)
		r, _ := new(big.Rat).SetString(s)
		r.Mul(r, new(big.Rat).SetInt(new(big.Int).Exp(big.NewInt(10), big.NewInt(int64(scale)), nil)))
		want := ratRound(r)
		switch {
		case !want.IsInt64():
			if st != fixedRange {
				t.Fatalf("parseFixed(%q, %d) = %d, %d; want out of range", s, scale, got, st)
			}
		case got != want.Int64():
			t.Fatalf("parseFixed(%q, %d) = %d; want %d", s, scale, got, want)
		case (st == fixedOK) != r.IsInt():
			t.Fatalf("parseFixed(%q, %d) status %d, exact %v", s, scale, st, r.IsInt())
		}
		if st != fixedRange {
			back, st2 := parseFixed(appendDecimal(nil, got, scale), scale)
			if back != got || st2 != fixedOK {
				t.Fatalf("appendDecimal(%d, %d) = %q reads back as %d", got, scale, appendDecimal(nil, got, scale), back)
			}
		}
	}
}

// ratRound rounds r to an integer, half away from zero.
func ratRound(r *big.Rat) *big.Int {
	n, d := r.Num(), r.Denom()
	q, m := new(big.Int).QuoRem(n, d, new(big.Int))
	if new(big.Int).Mul(new(big.Int).Abs(m), big.NewInt(2)).Cmp(d) >= 0 {
		if n.Sign() < 0 {
			q.Sub(q, big.NewInt(1))
		} else {
			q.Add(q, big.NewInt(1))
		}
	}
	return q
}
