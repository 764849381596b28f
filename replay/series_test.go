package replay

import (
	"encoding/json"
	"math"
	"math/rand/v2"
	"strings"
	"testing"
	"time"

	"github.com/google/go-cmp/cmp"
)

func TestParseRateSeries(t *testing.T) {
	ok := []RatePoint{{0, 5}, {time.Minute, 10}}
	for _, c := range []struct {
		name, in string
		want     []RatePoint
		err      string
	}{
		{"object", `{"points":[{"time_s":0,"qps":5},{"time_s":60,"qps":10}]}`, ok, ""},
		{"array", `[{"time_s":0,"qps":5},{"time_s":60,"qps":10}]`, ok, ""},
		{"fractions", `[{"time_s":0.5,"qps":0.25},{"time_s":1.25,"qps":2}]`, []RatePoint{{500 * time.Millisecond, 0.25}, {1250 * time.Millisecond, 2}}, ""},
		{"not JSON", `points`, nil, "series.json: invalid character"},
		{"extra key", `{"points":[],"rate":1}`, nil, "exactly one top-level key, points"},
		{"no points key", `{"pts":[]}`, nil, "exactly one top-level key, points"},
		{"points not array", `{"points":3}`, nil, "points: want an array"},
		{"scalar", `5`, nil, "want an object with points"},
		{"one point", `[{"time_s":0,"qps":5}]`, nil, "at least two points"},
		{"point not object", `[1,2]`, nil, "point 0: want an object"},
		{"unknown field", `[{"time_s":0,"qps":5,"x":1},{"time_s":1,"qps":5}]`, nil, `point 0: unknown field "x"`},
		{"string rate", `[{"time_s":0,"qps":"5"},{"time_s":1,"qps":5}]`, nil, "point 0: qps: want a number"},
		{"missing qps", `[{"time_s":0},{"time_s":1,"qps":5}]`, nil, "point 0: want both time_s and qps"},
		{"negative time", `[{"time_s":-1,"qps":5},{"time_s":1,"qps":5}]`, nil, "point 0: time_s -1: want seconds ≥ 0"},
		{"zero rate", `[{"time_s":0,"qps":5},{"time_s":1,"qps":0}]`, nil, "point 1: qps 0: want a finite rate > 0"},
		{"not increasing", `[{"time_s":2,"qps":5},{"time_s":2,"qps":6}]`, nil, "point 1: time 2s is not after point 0's 2s"},
	} {
		t.Run(c.name, func(t *testing.T) {
			got, err := ParseRateSeries("series.json", []byte(c.in))
			if c.err != "" {
				if err == nil || !strings.Contains(err.Error(), c.err) {
					t.Fatalf("error %v; want one containing %q", err, c.err)
				}
				return
			}
			if err != nil {
				t.Fatal(err)
			}
			if diff := cmp.Diff(c.want, got); diff != "" {
				t.Errorf("points (-want +got):\n%s", diff)
			}
		})
	}
}

// TestRateAt: AIPerf's value_at examples (rate_series.rs tests).
func TestRateAt(t *testing.T) {
	pts := []RatePoint{{10 * time.Second, 5}, {20 * time.Second, 15}, {30 * time.Second, 10}}
	for _, c := range []struct {
		at   float64
		want float64
	}{{0, 5}, {10, 5}, {15, 10}, {20, 15}, {25, 12.5}, {40, 10}} {
		if got := RateAt(pts, time.Duration(c.at*1e9)); math.Abs(got-c.want) > 1e-12 {
			t.Errorf("RateAt(%vs) = %v, want %v", c.at, got, c.want)
		}
	}
}

// seriesTimeOracle inverts Λ by bisection over a numerical integral of
// RateAt (Simpson's rule per segment is exact for a linear rate, but the
// oracle integrates with 2000 trapezoids per segment to share no formula
// with seriesClock).
func seriesTimeOracle(pts []RatePoint, x float64) float64 {
	lam := func(t float64) float64 {
		// ∫₀ᵗ RateAt by trapezoids on a fine grid whose knots include the
		// points (the rate is linear between them, so this is exact up to
		// rounding).
		knots := []float64{0}
		for _, p := range pts {
			if s := p.At.Seconds(); s < t {
				knots = append(knots, s)
			}
		}
		knots = append(knots, t)
		sum := 0.0
		for i := 1; i < len(knots); i++ {
			a, b := knots[i-1], knots[i]
			const n = 2000
			h := (b - a) / n
			for k := range n {
				u, v := a+float64(k)*h, a+float64(k+1)*h
				sum += (RateAt(pts, time.Duration(u*1e9)) + RateAt(pts, time.Duration(v*1e9))) / 2 * h
			}
		}
		return sum
	}
	lo, hi := 0.0, 1.0
	for lam(hi) < x {
		hi *= 2
	}
	for range 60 {
		mid := (lo + hi) / 2
		if lam(mid) < x {
			lo = mid
		} else {
			hi = mid
		}
	}
	return (lo + hi) / 2
}

func TestSeriesClockOracle(t *testing.T) {
	rng := rand.New(rand.NewPCG(5, 6))
	for range 40 {
		n := 2 + rng.IntN(4)
		pts := make([]RatePoint, n)
		at := time.Duration(rng.IntN(3)) * time.Second
		for i := range pts {
			pts[i] = RatePoint{At: at, QPS: 0.5 + 50*rng.Float64()}
			at += time.Duration(1+rng.IntN(4000)) * time.Millisecond
		}
		c := newSeriesClock(pts)
		for range 5 {
			x := 300 * rng.Float64()
			got := float64(c.time(x)) / 1e9
			want := seriesTimeOracle(pts, x)
			// The oracle's integral is exact to ~1e-9 relative; its
			// inverse, to the rate's reciprocal times that.
			if math.Abs(got-want) > 1e-6*max(1, want) {
				t.Fatalf("series %v: time(%v) = %v s, oracle %v s", pts, x, got, want)
			}
		}
	}
}

// TestRateSeriesSendTimes: a constant-arrival run under a series sends
// request i exactly when the expected count Λ(t) reaches i: the send
// times follow the series (5 req/s for 1 s, rising to 25 req/s at 2 s,
// then 25 req/s), and the gaps show the rate.
func TestRateSeriesSendTimes(t *testing.T) {
	cfg := NewConfig()
	cfg.RateSeries = []RatePoint{{time.Second, 5}, {2 * time.Second, 25}}
	cfg.Arrival = ArrivalConstant
	cfg.RequestCount = 40
	var l jobLog
	st, wall0 := runVirtual(t, cfg, nil, &l)
	jobs := l.byID()
	if len(jobs) != 40 || st.StopReason != "request count reached" {
		t.Fatalf("%d jobs, stop %q", len(jobs), st.StopReason)
	}
	// Λ(t): 5t for t ≤ 1; 5 + 5(t−1) + 10(t−1)² for 1 ≤ t ≤ 2 (rate 5 +
	// 20(t−1)); 20 + 25(t−2) after.
	lambda := func(t float64) float64 {
		switch {
		case t <= 1:
			return 5 * t
		case t <= 2:
			return 5 + 5*(t-1) + 10*(t-1)*(t-1)
		}
		return 20 + 25*(t-2)
	}
	for i, j := range jobs {
		at := float64(j.IntendedNS-wall0) / 1e9
		if got := lambda(at); math.Abs(got-float64(i)) > 1e-6 {
			t.Errorf("request %d sent at %.9f s, where Λ = %.9f; want %d", i, at, got, i)
		}
		if j.DispatchedNS != j.IntendedNS {
			t.Errorf("request %d: late by %v", i, j.Lateness())
		}
	}
	gap := func(i int) float64 { return float64(jobs[i].IntendedNS-jobs[i-1].IntendedNS) / 1e9 }
	if g := gap(2); math.Abs(g-0.2) > 1e-9 {
		t.Errorf("gap at 5 req/s: %v s, want 0.2", g)
	}
	if g := gap(30); math.Abs(g-0.04) > 1e-9 {
		t.Errorf("gap at 25 req/s: %v s, want 0.04", g)
	}
}

func TestRateSeriesConfig(t *testing.T) {
	c := NewConfig()
	c.RateSeries = []RatePoint{{0, 5}, {time.Second, 10}}
	c.RequestRate, c.RateRamp = 3, time.Second
	err := c.Validate()
	for _, want := range []string{"RateSeries and RequestRate are mutually exclusive", "RateSeries and RateRamp are mutually exclusive"} {
		if err == nil || !strings.Contains(err.Error(), want) {
			t.Errorf("error %v; want %q", err, want)
		}
	}
	c = NewConfig()
	c.RateSeries = []RatePoint{{0, 5}, {time.Second, 10}}
	if m, err := c.ModeFor(false, false); err != nil || m != ModeRate {
		t.Errorf("ModeFor: %v, %v; want rate", m, err)
	}
	c.Shard = Shard{Index: 1, Count: 2}
	if s := c.Share(); s.RateSeries[0].QPS != 2.5 || c.RateSeries[0].QPS != 5 {
		t.Errorf("shard's series %v (config's %v); want the rates halved, the config's untouched", s.RateSeries, c.RateSeries)
	}
}

// FuzzParseRateSeries: a series that parses is valid, and writing its
// points back and parsing them again gives the same points.
func FuzzParseRateSeries(f *testing.F) {
	for _, s := range []string{
		`{"points":[{"time_s":0,"qps":5},{"time_s":60,"qps":10}]}`,
		`[{"time_s":0.5,"qps":0.25},{"time_s":1.25,"qps":2}]`,
		`{"points":[{"time_s":0,"qps":5}]}`, `[]`, `{"points":[{"time_s":1,"qps":-1},{"time_s":0,"qps":1}]}`, `nul`,
	} {
		f.Add([]byte(s))
	}
	f.Fuzz(func(t *testing.T, data []byte) {
		pts, err := ParseRateSeries("f", data)
		if err != nil {
			return
		}
		if err := checkRateSeries(pts); err != nil {
			t.Fatalf("parsed an invalid series %v: %v", pts, err)
		}
		type point struct {
			T float64 `json:"time_s"`
			Q float64 `json:"qps"`
		}
		var out struct {
			Points []point `json:"points"`
		}
		for _, p := range pts {
			out.Points = append(out.Points, point{p.At.Seconds(), p.QPS})
		}
		b, err := json.Marshal(out)
		if err != nil {
			t.Fatal(err)
		}
		again, err := ParseRateSeries("f", b)
		if err != nil {
			t.Fatalf("re-parse of %s: %v", b, err)
		}
		if diff := cmp.Diff(pts, again); diff != "" {
			t.Fatalf("round trip (-first +second):\n%s", diff)
		}
		c := newSeriesClock(pts)
		prev := int64(-1)
		for x := 0.0; x < 50; x += 0.7 {
			if tm := c.time(x); tm < prev {
				t.Fatalf("time(%v) = %d before time of an earlier count %d", x, tm, prev)
			} else {
				prev = tm
			}
		}
	})
}
