package synth

import (
	"math"
	"math/bits"
	"math/rand/v2"
)

// DefaultSeed is the seed of every random draw when none is given.
const DefaultSeed uint64 = 42

// rng is one deterministic random stream: the PCG-DXSM generator of
// math/rand/v2 as the bit source, with this package's own samplers on top,
// so the values depend only on the seed, the stream and this code — not on
// how the standard library happens to sample a normal or an exponential.
// Every concern (arrivals, turns, lengths, paths, …) has its own stream, so
// changing one knob never reshuffles the draws of another.
//
// An rng is not safe for concurrent use.
type rng struct{ src *rand.PCG }

// The streams, one per concern. Their values are part of the output's
// reproducibility: changing one changes every synthesized trace.
const (
	streamArrivals uint64 = 0x61727269766c0001 + iota
	streamTurns
	streamThink
	streamISL
	streamOSL
	streamPaths
	streamShare
	streamSample
	streamTrees
)

func newRNG(seed, stream uint64) *rng { return &rng{src: rand.NewPCG(seed, stream)} }

// float64 returns a uniform value in [0, 1) with 53 random bits.
func (r *rng) float64() float64 { return float64(r.src.Uint64()>>11) * 0x1p-53 }

// open01 returns a uniform value in (0, 1].
func (r *rng) open01() float64 { return 1 - r.float64() }

// intN returns a uniform integer in [0, n) (n > 0), by Lemire's
// multiply-and-reject method (unbiased).
func (r *rng) intN(n int) int {
	if n <= 0 {
		panic("BUG: synth.rng.intN: n <= 0")
	}
	un := uint64(n)
	hi, lo := bits.Mul64(r.src.Uint64(), un)
	if lo < un {
		thresh := -un % un
		for lo < thresh {
			hi, lo = bits.Mul64(r.src.Uint64(), un)
		}
	}
	return int(hi)
}

// exp returns an exponential value with mean 1.
func (r *rng) exp() float64 { return -math.Log(r.open01()) }

// normal returns a standard normal value (Box–Muller, one value per two
// uniforms; no state is carried between calls).
func (r *rng) normal() float64 {
	u1, u2 := r.open01(), r.float64()
	return math.Sqrt(-2*math.Log(u1)) * math.Cos(2*math.Pi*u2)
}

// gamma returns a Gamma(shape, 1) value (Marsaglia and Tsang 2000; for
// shape < 1 the boost Gamma(shape+1)·U^(1/shape)).
func (r *rng) gamma(shape float64) float64 {
	if shape < 1 {
		return r.gamma(shape+1) * math.Pow(r.open01(), 1/shape)
	}
	d := shape - 1.0/3
	c := 1 / math.Sqrt(9*d)
	for {
		x := r.normal()
		v := 1 + c*x
		if v <= 0 {
			continue
		}
		v = v * v * v
		u := r.open01()
		if math.Log(u) < 0.5*x*x+d-d*v+d*math.Log(v) {
			return d * v
		}
	}
}
