package accuracy

import (
	"math"
	"testing"
)

func TestWilson(t *testing.T) {
	tests := []struct {
		k, n   int
		lo, hi float64
	}{
		// Values from the closed form (e.g. Newcombe 1998, table I: 81/263).
		{81, 263, 0.2553, 0.3662},
		{0, 10, 0, 0.2775},
		{10, 10, 0.7225, 1},
		{5, 10, 0.2366, 0.7634},
	}
	for _, tc := range tests {
		lo, hi := Wilson(tc.k, tc.n, Z95)
		if math.Abs(lo-tc.lo) > 5e-4 || math.Abs(hi-tc.hi) > 5e-4 {
			t.Errorf("Wilson(%d, %d) = [%.4f, %.4f], want [%.4f, %.4f]", tc.k, tc.n, lo, hi, tc.lo, tc.hi)
		}
	}
	if lo, hi := Wilson(0, 0, Z95); lo != 0 || hi != 1 {
		t.Errorf("Wilson(0, 0) = [%v, %v], want [0, 1]", lo, hi)
	}
}

func TestMcNemar(t *testing.T) {
	tests := []struct {
		b, c int
		p    float64
	}{
		{0, 0, 1},
		{5, 5, 1},
		// 2·P(X ≤ 0), X ~ B(10, ½) = 2/1024.
		{10, 0, 2.0 / 1024},
		// 2·P(X ≤ 2), X ~ B(12, ½) = 2·79/4096.
		{2, 10, 2 * 79.0 / 4096},
	}
	for _, tc := range tests {
		if p := McNemar(tc.b, tc.c); math.Abs(p-tc.p) > 1e-9 {
			t.Errorf("McNemar(%d, %d) = %v, want %v", tc.b, tc.c, p, tc.p)
		}
	}
}

func TestTwoProportion(t *testing.T) {
	// 50/100 vs 65/100: pooled p 0.575, z = 0.15/√(0.575·0.425·0.02) = 2.1448, p = 0.03197.
	if p := TwoProportion(50, 100, 65, 100); math.Abs(p-0.03197) > 2e-4 {
		t.Errorf("TwoProportion = %v, want 0.0320", p)
	}
	if p := TwoProportion(0, 0, 3, 4); p != 1 {
		t.Errorf("TwoProportion with n1 = 0: %v, want 1", p)
	}
	lo, hi := DiffInterval(50, 100, 65, 100)
	if !(lo > 0 && hi > lo && hi < 0.3) {
		t.Errorf("DiffInterval = [%v, %v], want a positive interval below 0.3", lo, hi)
	}
}
