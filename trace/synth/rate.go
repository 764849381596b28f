package synth

import (
	"fmt"
	"math"
	"time"
)

// RateCurve is an arrival rate over time, in events per second:
//
//	λ(t) = base(t) · (1 − A·cos(2πt/P))
//
// base is piecewise linear through the knots (constant after the last); the diurnal factor, with amplitude A ∈ [0, 1] and
// period P, starts at its trough 1 − A (night), peaks at 1 + A half a
// period later and averages 1 over a whole period, so base stays the mean
// rate. A = 0 (or P = 0) disables it.
//
// Arrivals of a non-homogeneous process are made by time change: a
// unit-rate process in "operational time" u (constant, Poisson or gamma
// gaps of mean 1) is mapped to t = Λ⁻¹(u), where Λ(t) = ∫₀ᵗ λ is the
// expected number of arrivals by t. Gaps keep their shape (a gamma process
// stays as bursty, relative to the local rate) while the local rate
// follows λ. On each segment [t₀, t₁] where base(t) = a + b·t,
//
//	∫ (a + b·t)(1 − A·cos ωt) dt = a·t + b·t²/2 − A·[(a + b·t)·sin(ωt)/ω + b·cos(ωt)/ω²]
//
// (ω = 2π/P), so Λ is exact in closed form; Λ⁻¹ is found by a safeguarded
// Newton iteration. The zero value is not usable: use [NewRateCurve].
type RateCurve struct {
	knots []Knot    // at least one; times strictly increasing
	cum   []float64 // Λ at each knot
	amp   float64
	omega float64 // 2π/P in 1/s; 0 without the diurnal factor
}

// Knot is one point of a piecewise-linear base rate: Rate events per
// second at time At.
type Knot struct {
	At   time.Duration
	Rate float64
}

// NewRateCurve returns the curve through knots (the first at 0, times
// strictly increasing, rates ≥ 0, at least one positive) with the diurnal factor of
// amplitude amp ∈ [0, 1] and period period (0 = none).
func NewRateCurve(knots []Knot, amp float64, period time.Duration) (*RateCurve, error) {
	if len(knots) == 0 || knots[0].At != 0 {
		return nil, fmt.Errorf("rate curve: the first knot must be at time 0")
	}
	positive := false
	for i, k := range knots {
		if !(k.Rate >= 0) || math.IsInf(k.Rate, 0) {
			return nil, fmt.Errorf("rate curve: rate %g at %v: want a finite rate ≥ 0", k.Rate, k.At)
		}
		if k.Rate > 0 {
			positive = true
		}
		if i > 0 && k.At <= knots[i-1].At {
			return nil, fmt.Errorf("rate curve: knot times must increase (%v after %v)", k.At, knots[i-1].At)
		}
	}
	if !positive {
		return nil, fmt.Errorf("rate curve: every rate is 0")
	}
	if !(amp >= 0 && amp <= 1) {
		return nil, fmt.Errorf("rate curve: diurnal amplitude %g: want 0 ≤ A ≤ 1", amp)
	}
	c := &RateCurve{knots: append([]Knot(nil), knots...)}
	if amp > 0 && period > 0 {
		c.amp = amp
		c.omega = 2 * math.Pi / period.Seconds()
	}
	c.cum = make([]float64, len(knots))
	for i := 1; i < len(knots); i++ {
		c.cum[i] = c.cum[i-1] + c.segment(i-1, c.knots[i].At.Seconds())
	}
	return c, nil
}

// line returns a, b of base(t) = a + b·t on segment i (from knot i to i+1;
// the last segment, and the part before knot 0, are constant).
func (c *RateCurve) line(i int) (a, b float64) {
	k := c.knots[i]
	if i+1 >= len(c.knots) {
		return k.Rate, 0
	}
	n := c.knots[i+1]
	b = (n.Rate - k.Rate) / (n.At - k.At).Seconds()
	return k.Rate - b*k.At.Seconds(), b
}

// g is the antiderivative of (a + b·t)(1 − A cos ωt).
func (c *RateCurve) g(a, b, t float64) float64 {
	v := a*t + b*t*t/2
	if c.omega > 0 {
		w := c.omega
		v -= c.amp * ((a+b*t)*math.Sin(w*t)/w + b*math.Cos(w*t)/(w*w))
	}
	return v
}

// segment returns ∫ λ over [knot i, t], t ≥ knot i, on segment i.
func (c *RateCurve) segment(i int, t float64) float64 {
	a, b := c.line(i)
	return c.g(a, b, t) - c.g(a, b, c.knots[i].At.Seconds())
}

// seg returns the segment index containing t (seconds).
func (c *RateCurve) seg(t float64) int {
	i := 0
	for i+1 < len(c.knots) && c.knots[i+1].At.Seconds() <= t {
		i++
	}
	return i
}

// Rate returns λ(t) in events per second.
func (c *RateCurve) Rate(t time.Duration) float64 { return c.rate(t.Seconds()) }

func (c *RateCurve) rate(t float64) float64 {
	a, b := c.line(c.seg(max(t, 0)))
	base := a + b*max(t, 0)
	if c.omega > 0 {
		base *= 1 - c.amp*math.Cos(c.omega*t)
	}
	return max(base, 0)
}

// Cumulative returns Λ(t) = ∫₀ᵗ λ, the expected number of events in
// [0, t], for t ≥ 0.
func (c *RateCurve) Cumulative(t time.Duration) float64 { return c.cumulative(t.Seconds()) }

func (c *RateCurve) cumulative(t float64) float64 {
	if t <= 0 {
		return 0
	}
	i := c.seg(t)
	return c.cum[i] + c.segment(i, t)
}

// inverse returns the t ≥ from with Λ(t) = u (seconds), for u ≥ Λ(from);
// from is a hint (the previous arrival) that brackets the
// search. It returns +Inf when Λ never reaches u (a rate that falls to 0
// for good).
func (c *RateCurve) inverse(u, from float64) float64 {
	lo := max(from, 0)
	flo := c.cumulative(lo)
	if u <= flo {
		return lo
	}
	// Bracket: grow hi until Λ(hi) ≥ u.
	step := (u - flo) / max(c.rate(lo), c.meanRate(), 1e-12)
	hi := lo + step
	for c.cumulative(hi) < u {
		if c.tailRate() == 0 && hi > c.knots[len(c.knots)-1].At.Seconds() {
			return math.Inf(1)
		}
		step *= 2
		hi = lo + step
		if math.IsInf(hi, 0) {
			return math.Inf(1)
		}
	}
	t := lo + (hi-lo)/2
	for range 200 {
		f := c.cumulative(t) - u
		if f == 0 {
			return t
		}
		if f < 0 {
			lo = t
		} else {
			hi = t
		}
		if hi-lo <= 1e-10*max(1, hi) {
			return hi
		}
		// Newton step, kept inside the bracket; else bisect.
		nt := t - f/c.rate(t)
		if c.rate(t) <= 0 || !(nt > lo && nt < hi) {
			nt = lo + (hi-lo)/2
		}
		t = nt
	}
	return hi
}

func (c *RateCurve) meanRate() float64 {
	m := 0.0
	for _, k := range c.knots {
		m = max(m, k.Rate)
	}
	return m
}

func (c *RateCurve) tailRate() float64 { return c.knots[len(c.knots)-1].Rate }

// constant reports whether λ is one constant rate (no ramp, no diurnal
// factor), and the rate.
func (c *RateCurve) constant() (float64, bool) {
	if c.omega > 0 {
		return 0, false
	}
	r := c.knots[0].Rate
	for _, k := range c.knots[1:] {
		if k.Rate != r {
			return 0, false
		}
	}
	return r, true
}
