package replay

import (
	"math"
	"math/rand/v2"
	"time"
)

// This file holds the schedule maths as pure functions of plain numbers;
// each has a slow exact oracle in maths_test.go.

// scaleTrace converts a trace-time span to run time under a speed-up:
// round(d / speedup) nanoseconds. float64 is exact for spans below 2^53 ns
// (104 days), and the division rounds once, so the error is ≤ 0.5 ns plus
// the quotient's rounding (≤ 1 ulp, sub-ns below 2^52 ns).
func scaleTrace(d time.Duration, speedup float64) int64 {
	if speedup == 1 {
		return int64(d)
	}
	return int64(math.Round(float64(d) / speedup))
}

// rampTime maps a point x of the arrival process's count axis to run time
// in ns for a target rate r (per second) reached by a linear ramp of length
// ramp.
//
// Derivation: the rate grows as r(t) = R·t/D for t < D, then stays R. The
// expected count by time t is Λ(t) = ∫r = R·t²/(2D) for t ≤ D and
// R·D/2 + R·(t−D) after. Arrivals of any renewal process with unit mean
// gaps on the count axis (constant: x_i = i; Poisson: exponential gaps;
// gamma: gamma gaps with mean 1) become arrivals at rate r(t) under the
// time change t = Λ⁻¹(x): for x ≤ R·D/2, t = sqrt(2·D·x/R); else
// t = D + (x − R·D/2)/R. Without a ramp, t = x/R.
func rampTime(x, r float64, ramp time.Duration) int64 {
	d := ramp.Seconds()
	var t float64
	if d <= 0 {
		t = x / r
	} else if half := r * d / 2; x <= half {
		t = math.Sqrt(2 * d * x / r)
	} else {
		t = d + (x-half)/r
	}
	return int64(math.Round(t * 1e9))
}

// gapSampler draws the gaps of an arrival pattern on the count axis (unit
// mean). It is deterministic for a seed and not safe for concurrent use.
type gapSampler struct {
	arrival Arrival
	shape   float64
	rng     *rand.Rand
}

func newGapSampler(a Arrival, shape float64, seed uint64) *gapSampler {
	// One stream per concern: the stream constant names the arrival one.
	return &gapSampler{arrival: a, shape: shape, rng: rand.New(rand.NewPCG(seed, 0x61727269766c))}
}

// next returns the next gap (mean 1).
func (g *gapSampler) next() float64 {
	switch g.arrival {
	case ArrivalConstant:
		return 1
	case ArrivalPoisson:
		return g.rng.ExpFloat64()
	default:
		// Gamma(shape k, scale 1/k): mean 1, CV 1/sqrt(k).
		return gammaSample(g.rng, g.shape) / g.shape
	}
}

// gammaSample draws Gamma(k, 1) by Marsaglia and Tsang's method ("A
// simple method for generating gamma variables", 2000); for k < 1 it uses
// Gamma(k+1)·U^(1/k).
func gammaSample(rng *rand.Rand, k float64) float64 {
	if k < 1 {
		u := rng.Float64()
		for u == 0 {
			u = rng.Float64()
		}
		return gammaSample(rng, k+1) * math.Pow(u, 1/k)
	}
	d := k - 1.0/3
	c := 1 / math.Sqrt(9*d)
	for {
		x := rng.NormFloat64()
		v := 1 + c*x
		if v <= 0 {
			continue
		}
		v = v * v * v
		u := rng.Float64()
		if u < 1-0.0331*x*x*x*x {
			return d * v
		}
		if math.Log(u) < 0.5*x*x+d*(1-v+math.Log(v)) {
			return d * v
		}
	}
}

// rampStepTime is when the closed-loop level reaches k+1 (k = 1..c−1)
// under a concurrency ramp: the level goes 1 → c in +1 steps evenly spaced
// over ramp, step k at ceil(k·ramp/(c−1)) ns, so the level is c at ramp.
func rampStepTime(k, c int, ramp time.Duration) int64 {
	if c <= 1 || ramp <= 0 {
		return 0
	}
	num := uint64(k) * uint64(ramp)
	den := uint64(c - 1)
	// k·ramp fits in uint64 for any ramp below 292 years / k; the engine
	// validates c to be a sender count, far below that.
	return int64((num + den - 1) / den)
}

// rampLevel is the closed-loop level at run time t (ns): 1 + the number of
// steps whose time has come, at most c.
func rampLevel(t int64, c int, ramp time.Duration) int {
	if c <= 1 || ramp <= 0 || t >= int64(ramp) {
		return c
	}
	if t < 0 {
		return 1
	}
	// The largest k with ceil(k·ramp/(c−1)) ≤ t is floor(t·(c−1)/ramp).
	k := int((uint64(t) * uint64(c-1)) / uint64(ramp))
	return min(c, 1+k)
}

// userStart is one user of the user-centric warm start.
type userStart struct {
	// Turns is how many turns the user sends (its session's last Turns).
	Turns int
	// At is the first send, ns after the start.
	At int64
}

// userCentricStart computes the warm start of the user-centric mode for u
// users at total rate r (per second) whose sessions have meanTurns turns
// on average (AIPerf semantics, docs/reference/aiperf.md §2):
//
//	turn_gap = u/r, stagger = 1/r, T = round(meanTurns), L = max(1, T−1)
//	user i in 0..u−1: age = (u−i)·L, turns = L − ⌊age/u⌋ (≤ 0: skipped)
//	slot = age mod u, or (i·step) mod u when gcd(u, L) > 1 with step the
//	smallest integer > 1 coprime to u; order = u − slot;
//	first send at order·stagger.
//
// One fresh user (all its turns, Turns = −1) also starts at 0; it comes
// first in the result. Users appear in index order after it.
func userCentricStart(u int, r float64, meanTurns float64) []userStart {
	stagger := 1e9 / r
	t := int(math.Round(meanTurns))
	l := max(1, t-1)
	step := 0
	if gcd(u, l) > 1 {
		step = 2
		for gcd(step, u) != 1 {
			step++
		}
	}
	out := []userStart{{Turns: -1, At: 0}}
	for i := range u {
		age := (u - i) * l
		turns := l - age/u
		if turns <= 0 {
			continue
		}
		slot := age % u
		if step > 0 {
			slot = (i * step) % u
		}
		order := u - slot
		out = append(out, userStart{Turns: turns, At: int64(math.Round(float64(order) * stagger))})
	}
	return out
}

func gcd(a, b int) int {
	for b != 0 {
		a, b = b, a%b
	}
	return a
}
