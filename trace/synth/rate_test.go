package synth

import (
	"math"
	"testing"
	"time"
)

// simpson integrates the curve's rate numerically: the oracle for the
// closed-form Cumulative.
func simpson(c *RateCurve, t float64) float64 {
	const n = 20000
	h := t / n
	s := c.rate(0) + c.rate(t)
	for i := 1; i < n; i++ {
		w := 2.0
		if i%2 == 1 {
			w = 4
		}
		s += w * c.rate(float64(i)*h)
	}
	return s * h / 3
}

func TestRateCurveCumulativeMatchesIntegral(t *testing.T) {
	sec := func(s float64) time.Duration { return time.Duration(s * 1e9) }
	tests := []struct {
		name   string
		knots  []Knot
		amp    float64
		period time.Duration
	}{
		{"constant", []Knot{{0, 3}}, 0, 0},
		{"ramp up then flat", []Knot{{0, 0}, {sec(60), 10}}, 0, 0},
		{"ramp up, then down to 0", []Knot{{0, 0}, {sec(30), 8}, {sec(100), 0}}, 0, 0},
		{"diurnal", []Knot{{0, 5}}, 0.7, sec(50)},
		{"diurnal full swing", []Knot{{0, 5}}, 1, sec(33)},
		{"ramp and diurnal", []Knot{{0, 1}, {sec(40), 20}, {sec(120), 4}}, 0.4, sec(25)},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			c, err := NewRateCurve(tt.knots, tt.amp, tt.period)
			if err != nil {
				t.Fatal(err)
			}
			for _, x := range []float64{0.5, 17, 30, 45.25, 99.9, 100, 150} {
				got, want := c.Cumulative(sec(x)), simpson(c, x)
				if math.Abs(got-want) > 1e-6*math.Max(1, want) {
					t.Errorf("Λ(%v) = %.9f, integral %.9f", x, got, want)
				}
				// The inverse returns to x wherever the rate is positive.
				if c.rate(x) > 0 {
					if back := c.inverse(got, 0); math.Abs(back-x) > 1e-6 {
						t.Errorf("Λ⁻¹(Λ(%v)) = %v", x, back)
					}
				}
			}
		})
	}
}

func TestRateCurveShape(t *testing.T) {
	c, err := NewRateCurve([]Knot{{0, 10}}, 0.5, time.Hour)
	if err != nil {
		t.Fatal(err)
	}
	// Trough at 0, peak at half the period, mean over a period = base.
	if r := c.Rate(0); math.Abs(r-5) > 1e-9 {
		t.Errorf("λ(0) = %v, want 5", r)
	}
	if r := c.Rate(30 * time.Minute); math.Abs(r-15) > 1e-9 {
		t.Errorf("λ(30m) = %v, want 15", r)
	}
	if n := c.Cumulative(time.Hour); math.Abs(n-36000) > 1e-6 {
		t.Errorf("Λ(1h) = %v, want 36000", n)
	}
	// A rate that falls to 0 for good never reaches more arrivals.
	d, err := NewRateCurve([]Knot{{0, 2}, {10 * time.Second, 0}}, 0, 0)
	if err != nil {
		t.Fatal(err)
	}
	if x := d.inverse(11, 0); !math.IsInf(x, 1) {
		t.Errorf("Λ⁻¹(11) = %v on a curve that ends at Λ = 10, want +Inf", x)
	}
	for _, bad := range [][]Knot{nil, {{time.Second, 1}}, {{0, 0}}, {{0, 1}, {0, 2}}, {{0, -1}}} {
		if _, err := NewRateCurve(bad, 0, 0); err == nil {
			t.Errorf("knots %v accepted", bad)
		}
	}
	if _, err := NewRateCurve([]Knot{{0, 1}}, 1.5, time.Second); err == nil {
		t.Error("amplitude 1.5 accepted")
	}
}

func TestRNGDistributions(t *testing.T) {
	const n = 200000
	moments := func(f func() float64) (mean, variance float64) {
		var s, ss float64
		for range n {
			v := f()
			s += v
			ss += v * v
		}
		mean = s / n
		return mean, ss/n - mean*mean
	}
	r := newRNG(1, 2)
	for _, tt := range []struct {
		name       string
		f          func() float64
		mean, vari float64
	}{
		{"uniform", r.float64, 0.5, 1.0 / 12},
		{"exponential", r.exp, 1, 1},
		{"normal", r.normal, 0, 1},
		{"gamma 0.3", func() float64 { return r.gamma(0.3) }, 0.3, 0.3},
		{"gamma 1", func() float64 { return r.gamma(1) }, 1, 1},
		{"gamma 5", func() float64 { return r.gamma(5) }, 5, 5},
		{"lognormal 100±50", func() float64 { return lognormal(r, 100, 50) }, 100, 2500},
		{"intN(7)", func() float64 { return float64(r.intN(7)) }, 3, 4},
	} {
		m, v := moments(tt.f)
		sd := math.Sqrt(tt.vari)
		if math.Abs(m-tt.mean) > 5*sd/math.Sqrt(n) || math.Abs(v-tt.vari) > 0.05*tt.vari {
			t.Errorf("%s: mean %.4f variance %.4f, want %.4f and %.4f", tt.name, m, v, tt.mean, tt.vari)
		}
	}
	a, b := newRNG(5, streamISL), newRNG(5, streamISL)
	for range 100 {
		if a.src.Uint64() != b.src.Uint64() {
			t.Fatal("equal seeds gave different streams")
		}
	}
}

func TestDistDraw(t *testing.T) {
	r := newRNG(3, 4)
	for _, d := range []Dist{
		{Kind: DistNormal, Mean: 5, Stddev: 20}, // mostly negative draws: redrawn
		{Kind: DistLognormal, Mean: 2, Stddev: 30},
		{Kind: DistEmpirical, Values: []int{7, 9}},
		Fixed(3),
	} {
		for range 10000 {
			if v := d.draw(r); v < 1 {
				t.Fatalf("%+v drew %d", d, v)
			}
		}
	}
	if v := Fixed(3).draw(r); v != 3 {
		t.Errorf("fixed 3 drew %d", v)
	}
	for _, s := range []string{"Normal", " lognormal ", "fixed", ""} {
		if _, err := ParseDistKind(s); err != nil {
			t.Errorf("%q: %v", s, err)
		}
	}
	if _, err := ParseDistKind("zipf"); err == nil {
		t.Error("zipf accepted")
	}
}
