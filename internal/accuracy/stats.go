package accuracy

import "math"

// Z95 is the normal quantile of a two-sided 95 % interval.
const Z95 = 1.959963984540054

// Wilson returns the Wilson score interval of k successes in n trials at
// normal quantile z (Z95 for 95 %). It stays inside [0, 1] and is sound at
// k = 0 and k = n, where the normal (Wald) interval collapses. n = 0
// gives [0, 1].
func Wilson(k, n int, z float64) (lo, hi float64) {
	if n <= 0 {
		return 0, 1
	}
	p := float64(k) / float64(n)
	nn := float64(n)
	z2 := z * z
	den := 1 + z2/nn
	mid := (p + z2/(2*nn)) / den
	half := z * math.Sqrt(p*(1-p)/nn+z2/(4*nn*nn)) / den
	return max(0, mid-half), min(1, mid+half)
}

// McNemar is the exact (binomial) McNemar test of paired outcomes: b items
// right in the first run only, c right in the second only. It returns the
// two-sided p-value of "no difference" (1 when b+c = 0).
func McNemar(b, c int) float64 {
	n := b + c
	if n == 0 {
		return 1
	}
	k := min(b, c)
	// P(X ≤ k) for X ~ Binomial(n, 1/2), doubled.
	p := 0.0
	for i := 0; i <= k; i++ {
		p += math.Exp(lchoose(n, i) - float64(n)*math.Ln2)
	}
	return min(1, 2*p)
}

func lchoose(n, k int) float64 {
	a, _ := math.Lgamma(float64(n + 1))
	b, _ := math.Lgamma(float64(k + 1))
	c, _ := math.Lgamma(float64(n - k + 1))
	return a - b - c
}

// TwoProportion is the two-sided pooled z-test of k1/n1 against k2/n2: its
// p-value (1 when either n is 0 or the pooled proportion is 0 or 1).
func TwoProportion(k1, n1, k2, n2 int) float64 {
	if n1 <= 0 || n2 <= 0 {
		return 1
	}
	p := float64(k1+k2) / float64(n1+n2)
	if p <= 0 || p >= 1 {
		return 1
	}
	se := math.Sqrt(p * (1 - p) * (1/float64(n1) + 1/float64(n2)))
	z := (float64(k2)/float64(n2) - float64(k1)/float64(n1)) / se
	return math.Erfc(math.Abs(z) / math.Sqrt2)
}

// DiffInterval is the Newcombe (method 10) 95 % interval of p2 − p1 for
// independent proportions, from each one's Wilson interval.
func DiffInterval(k1, n1, k2, n2 int) (lo, hi float64) {
	l1, u1 := Wilson(k1, n1, Z95)
	l2, u2 := Wilson(k2, n2, Z95)
	p1, p2 := frac(k1, n1), frac(k2, n2)
	d := p2 - p1
	lo = d - math.Sqrt((p2-l2)*(p2-l2)+(u1-p1)*(u1-p1))
	hi = d + math.Sqrt((u2-p2)*(u2-p2)+(p1-l1)*(p1-l1))
	return max(-1, lo), min(1, hi)
}

func frac(k, n int) float64 {
	if n <= 0 {
		return 0
	}
	return float64(k) / float64(n)
}
