package replay

import (
	"math"
	"math/big"
	"math/rand/v2"
	"testing"
	"time"
)

// ratNS rounds a big.Rat of nanoseconds to the nearest int64 (half away
// from zero), the exact counterpart of math.Round.
func ratNS(r *big.Rat) int64 {
	h := new(big.Rat).Add(r, big.NewRat(1, 2)) // r ≥ 0 here
	return new(big.Int).Quo(h.Num(), h.Denom()).Int64()
}

func TestScaleTraceOracle(t *testing.T) {
	rng := rand.New(rand.NewPCG(1, 2))
	speedups := []float64{1, 2, 0.5, 100, 3, 0.1, 7.25}
	for range 20000 {
		d := time.Duration(rng.Int64N(int64(30 * 24 * time.Hour)))
		s := speedups[rng.IntN(len(speedups))]
		got := scaleTrace(d, s)
		exact := new(big.Rat).Quo(new(big.Rat).SetInt64(int64(d)), new(big.Rat).SetFloat64(s))
		want := ratNS(exact)
		if diff := got - want; diff < -1 || diff > 1 {
			t.Fatalf("scaleTrace(%d, %v) = %d, exact %d", d, s, got, want)
		}
	}
	for _, tc := range []struct {
		d    time.Duration
		s    float64
		want int64
	}{
		{ms(10), 2, int64(ms(5))},
		{ms(10), 0.5, int64(ms(20))},
		{3, 2, 2}, // 1.5 ns rounds half away from zero
		{time.Hour, 100, int64(36 * time.Second)},
	} {
		if got := scaleTrace(tc.d, tc.s); got != tc.want {
			t.Errorf("scaleTrace(%v, %v) = %d, want %d", tc.d, tc.s, got, tc.want)
		}
	}
}

// rampTimeOracle computes Λ⁻¹(x) with big.Float at 200 bits.
func rampTimeOracle(x, r float64, ramp time.Duration) int64 {
	const prec = 200
	bf := func(v float64) *big.Float { return new(big.Float).SetPrec(prec).SetFloat64(v) }
	X, R := bf(x), bf(r)
	var tSec *big.Float
	if ramp <= 0 {
		tSec = new(big.Float).SetPrec(prec).Quo(X, R)
	} else {
		D := new(big.Float).SetPrec(prec).Quo(bf(float64(ramp)), bf(1e9))
		half := new(big.Float).SetPrec(prec).Mul(R, D)
		half.Quo(half, bf(2))
		if X.Cmp(half) <= 0 {
			v := new(big.Float).SetPrec(prec).Mul(bf(2), D)
			v.Mul(v, X).Quo(v, R)
			tSec = new(big.Float).SetPrec(prec).Sqrt(v)
		} else {
			v := new(big.Float).SetPrec(prec).Sub(X, half)
			v.Quo(v, R)
			tSec = v.Add(v, D)
		}
	}
	ns := new(big.Float).SetPrec(prec).Mul(tSec, bf(1e9))
	ns.Add(ns, bf(0.5))
	i, _ := ns.Int(nil)
	return i.Int64()
}

func TestRampTimeOracle(t *testing.T) {
	rng := rand.New(rand.NewPCG(3, 4))
	for range 20000 {
		r := []float64{1, 10, 1000, 20000, 0.5}[rng.IntN(5)]
		ramp := []time.Duration{0, time.Second, 90 * time.Second, ms(10)}[rng.IntN(4)]
		x := float64(rng.IntN(100000)) + rng.Float64()
		got, want := rampTime(x, r, ramp), rampTimeOracle(x, r, ramp)
		// float64 keeps ~15.9 significant digits: allow 1 ns per 2^52 ns.
		if tol := max(1, want>>50); got-want > tol || want-got > tol {
			t.Fatalf("rampTime(%v, %v, %v) = %d, oracle %d", x, r, ramp, got, want)
		}
	}
	// Continuity at the end of the ramp and the linear part.
	if a, b := rampTime(5, 1000, ms(10)), rampTime(6, 1000, ms(10)); a != int64(ms(10)) || b != int64(ms(11)) {
		t.Errorf("ramp end: %d, %d", a, b)
	}
}

func TestRampLevelOracle(t *testing.T) {
	// Slow oracle: count the step times that have passed, each computed
	// exactly as ceil(k·ramp/(c−1)) with big.Rat.
	for _, c := range []int{1, 2, 3, 7, 64} {
		for _, ramp := range []time.Duration{0, 1000, ms(20), 7 * time.Second} {
			for _, tt := range []int64{-1, 0, 1, 499, 500, 999, 1000, int64(ms(5)), int64(ms(10)), int64(ms(19)), int64(time.Second), int64(7 * time.Second)} {
				want := 1
				if c <= 1 || ramp <= 0 {
					want = c
				} else {
					for k := 1; k < c; k++ {
						q := new(big.Rat).SetFrac64(int64(k)*int64(ramp), int64(c-1))
						ceil := new(big.Int).Quo(q.Num(), q.Denom())
						if !q.IsInt() {
							ceil.Add(ceil, big.NewInt(1))
						}
						if ceil.Int64() != rampStepTime(k, c, ramp) {
							t.Fatalf("rampStepTime(%d,%d,%v) = %d, want %d", k, c, ramp, rampStepTime(k, c, ramp), ceil.Int64())
						}
						if tt >= ceil.Int64() {
							want++
						}
					}
				}
				if got := rampLevel(tt, c, ramp); got != want {
					t.Errorf("rampLevel(%d, %d, %v) = %d, want %d", tt, c, ramp, got, want)
				}
			}
		}
	}
}

func TestUserCentricStart(t *testing.T) {
	for _, tc := range []struct {
		name string
		u    int
		r    float64
		mean float64
		want []userStart
	}{
		// L = 2, gcd(2,2) = 2 → step 3: user 1 has 1 turn, slot 1, order 1.
		{"u2 L2", 2, 100, 3, []userStart{{-1, 0}, {1, int64(ms(10))}}},
		// U = 4, T = 2 → L = 1, gcd 1: user i has age 4−i, turns 1 − ⌊(4−i)/4⌋:
		// i=0 → 0 (skipped); i=1..3 → 1 turn, slot = age mod 4 = 3,2,1,
		// order = 1,2,3 at 1/R = 0.5 s steps.
		{"u4 L1", 4, 2, 2, []userStart{{-1, 0}, {1, int64(500 * time.Millisecond)}, {1, int64(time.Second)}, {1, int64(1500 * time.Millisecond)}}},
		// U = 3, T = 4 → L = 3, gcd 3 → step 2: i=0 age 9 → 0 turns;
		// i=1 age 6 → 1, slot 2, order 1; i=2 age 3 → 2, slot 1, order 2.
		{"u3 L3", 3, 3, 4, []userStart{{-1, 0}, {1, int64(time.Second / 3)}, {2, int64(math.Round(2e9 / 3))}}},
	} {
		t.Run(tc.name, func(t *testing.T) {
			got := userCentricStart(tc.u, tc.r, tc.mean)
			if len(got) != len(tc.want) {
				t.Fatalf("got %v, want %v", got, tc.want)
			}
			for i := range got {
				if got[i] != tc.want[i] {
					t.Errorf("user %d: got %+v, want %+v", i, got[i], tc.want[i])
				}
			}
		})
	}
}

// TestArrivalProperties checks the generators statistically with fixed
// seeds: Poisson's mean gap is 1/R and its CV 1; gamma's CV is
// 1/sqrt(shape); constant has CV 0. Tolerances are ≥ 5 standard errors.
func TestArrivalProperties(t *testing.T) {
	const n = 200000
	for _, tc := range []struct {
		a     Arrival
		shape float64
	}{
		{ArrivalConstant, 1}, {ArrivalPoisson, 1}, {ArrivalGamma, 0.25}, {ArrivalGamma, 0.5}, {ArrivalGamma, 1}, {ArrivalGamma, 4}, {ArrivalGamma, 16},
	} {
		g := newGapSampler(tc.a, tc.shape, 42)
		var sum, sum2 float64
		for range n {
			x := g.next()
			if x < 0 {
				t.Fatalf("%s: negative gap", tc.a)
			}
			sum += x
			sum2 += x * x
		}
		mean := sum / n
		cv := math.Sqrt(sum2/n-mean*mean) / mean
		wantCV := 0.0
		if tc.a != ArrivalConstant {
			wantCV = 1 / math.Sqrt(tc.shape)
		}
		if math.Abs(mean-1) > 5*wantCV/math.Sqrt(n)+1e-12 {
			t.Errorf("%s(%v): mean gap %v, want 1 (rate within tolerance)", tc.a, tc.shape, mean)
		}
		if math.Abs(cv-wantCV) > 0.03*max(wantCV, 0.01) {
			t.Errorf("%s(%v): CV %v, want %v", tc.a, tc.shape, cv, wantCV)
		}
	}
}

func TestPoissonRateOverRuns(t *testing.T) {
	// Over many seeded runs of 1000 arrivals at 250 req/s, the achieved
	// rate averages to 250 within 0.5 % and each run within 15 %.
	var total float64
	const runs = 200
	for seed := range uint64(runs) {
		g := newGapSampler(ArrivalPoisson, 1, seed)
		x := 0.0
		for range 1000 {
			x += g.next()
		}
		end := float64(rampTime(x, 250, 0)) / 1e9
		r := 1000 / end
		if math.Abs(r-250) > 0.15*250 {
			t.Errorf("seed %d: rate %v", seed, r)
		}
		total += r
	}
	if avg := total / runs; math.Abs(avg-250) > 0.005*250 {
		t.Errorf("mean rate %v, want 250", avg)
	}
}

func TestHistogramBuckets(t *testing.T) {
	// Every value lies in its bucket, buckets are monotone and the
	// relative width is ≤ 1/64.
	vals := []uint64{0, 1, 63, 64, 65, 127, 128, 129, 1000, 1 << 20, 123456789, math.MaxInt64, math.MaxUint64}
	rng := rand.New(rand.NewPCG(5, 6))
	for range 10000 {
		vals = append(vals, rng.Uint64()>>rng.IntN(64))
	}
	for _, v := range vals {
		b := bucketOf(v)
		if b < 0 || b >= histBuckets {
			t.Fatalf("bucketOf(%d) = %d out of range", v, b)
		}
		hi := bucketHigh(b)
		lo := uint64(0)
		if b > 0 {
			lo = bucketHigh(b-1) + 1
		}
		if v < lo || v > hi {
			t.Fatalf("%d not in bucket %d [%d, %d]", v, b, lo, hi)
		}
		if v >= 64 && float64(hi-lo) > float64(lo)/64+1 {
			t.Fatalf("bucket %d [%d, %d] wider than 1/64", b, lo, hi)
		}
	}
}

func TestPercentiles(t *testing.T) {
	c := newCollector(time.Millisecond)
	// 1..1000 µs: p50 500 µs, p90 900 µs, p99 990 µs within 1/64.
	for i := 1; i <= 1000; i++ {
		j := Job{IntendedNS: 0, DispatchedNS: int64(i) * 1000}
		c.record(&j)
	}
	p := c.lateness()
	for _, x := range []struct {
		got  time.Duration
		want float64
	}{{p.P50, 500e3}, {p.P90, 900e3}, {p.P99, 990e3}} {
		if math.Abs(float64(x.got)-x.want) > x.want/64 {
			t.Errorf("percentile %v, want %v ± 1/64", x.got, time.Duration(x.want))
		}
	}
	if p.Max != time.Millisecond || p.Mean != 500500*time.Nanosecond || p.Count != 1000 {
		t.Errorf("%+v", p)
	}
}
