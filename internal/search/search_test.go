package search

import (
	"context"
	"math"
	"math/rand/v2"
	"testing"

	"github.com/google/go-cmp/cmp"
)

func TestSobolFirstPoints(t *testing.T) {
	// The unshifted sequence in Gray-code order: dimension 1 is van der
	// Corput's, dimension 2 the first Joe–Kuo one.
	got, err := Sobol(4, 2, 0)
	if err != nil {
		t.Fatal(err)
	}
	want := [][]float64{{0, 0}, {0.5, 0.5}, {0.75, 0.25}, {0.25, 0.75}}
	if d := cmp.Diff(want, got); d != "" {
		t.Errorf("Sobol(4, 2) (-want +got):\n%s", d)
	}
}

// strata checks that pts put exactly one point in each of the n
// intervals [i/n, (i+1)/n) of every dimension.
func strata(t *testing.T, name string, pts [][]float64) {
	t.Helper()
	n := len(pts)
	for j := range pts[0] {
		seen := make([]int, n)
		for _, p := range pts {
			if p[j] < 0 || p[j] >= 1 {
				t.Fatalf("%s: point %v outside [0, 1)", name, p)
			}
			seen[int(p[j]*float64(n))]++
		}
		for i, c := range seen {
			if c != 1 {
				t.Errorf("%s: dimension %d, interval %d of %d holds %d points, want 1", name, j, i, n, c)
			}
		}
	}
}

func TestSamplingStratifies(t *testing.T) {
	for _, seed := range []uint64{0, 1, 42} {
		s, err := Sobol(64, maxSobolDims, seed)
		if err != nil {
			t.Fatal(err)
		}
		strata(t, "sobol", s)
		l, err := LatinHypercube(37, 5, seed)
		if err != nil {
			t.Fatal(err)
		}
		strata(t, "latin hypercube", l)
	}
	a, _ := Sobol(8, 3, 7)
	b, _ := Sobol(8, 3, 7)
	c, _ := Sobol(8, 3, 8)
	if !cmp.Equal(a, b) || cmp.Equal(a, c) {
		t.Error("a seed does not give the same design, or two seeds give one")
	}
	if _, err := Sobol(4, maxSobolDims+1, 0); err == nil {
		t.Error("Sobol took more dimensions than it has direction numbers for")
	}
}

func TestSobol2DNet(t *testing.T) {
	// The first 2^k points of dimensions 1 and 2 form a (0, k, 2)-net:
	// every elementary box of area 2^−k holds one point.
	const k = 6
	pts, _ := Sobol(1<<k, 2, 3)
	for a := 0; a <= k; a++ {
		nx, ny := 1<<a, 1<<(k-a)
		count := map[[2]int]int{}
		for _, p := range pts {
			count[[2]int{int(p[0] * float64(nx)), int(p[1] * float64(ny))}]++
		}
		if len(count) != 1<<k {
			t.Errorf("boxes %d×%d: %d of %d hold a point", nx, ny, len(count), 1<<k)
		}
	}
}

func TestNewDesignRoundsIntDimensions(t *testing.T) {
	dims := []Dimension{{Name: "concurrency", Lo: 1, Hi: 64, Kind: KindInt}, {Name: "request-rate", Lo: 0.5, Hi: 2, Kind: KindFloat}}
	d, err := NewDesign(MethodLatinHypercube, 10, dims, 5)
	if err != nil {
		t.Fatal(err)
	}
	for _, p := range d.Points {
		if p[0] != math.Trunc(p[0]) || p[0] < 1 || p[0] > 64 || p[1] < 0.5 || p[1] > 2 {
			t.Errorf("point %v outside the dimensions or not whole", p)
		}
	}
	if _, err := NewDesign("grid", 3, dims, 0); err == nil {
		t.Error("an unknown method was taken")
	}
}

func TestParseDimension(t *testing.T) {
	tests := []struct {
		in   string
		want Dimension
		bad  bool
	}{
		{in: "concurrency:1,256", want: Dimension{Name: "concurrency", Lo: 1, Hi: 256, Kind: KindInt}},
		{in: "request-rate:0.5,8", want: Dimension{Name: "request-rate", Lo: 0.5, Hi: 8, Kind: KindFloat}},
		{in: "isl:128,4096:float", want: Dimension{Name: "isl", Lo: 128, Hi: 4096, Kind: KindFloat}},
		{in: "isl:1.5,3:int", bad: true},
		{in: "isl:3,1", bad: true},
		{in: "isl:1", bad: true},
		{in: ":1,2", bad: true},
		{in: "isl:1,2:complex", bad: true},
		{in: "isl:a,2", bad: true},
	}
	for _, tt := range tests {
		got, err := ParseDimension(tt.in)
		if (err != nil) != tt.bad {
			t.Errorf("ParseDimension(%q) error %v, want error %v", tt.in, err, tt.bad)
			continue
		}
		if !tt.bad && got != tt.want {
			t.Errorf("ParseDimension(%q) = %+v, want %+v", tt.in, got, tt.want)
		}
	}
}

func TestParseConstraint(t *testing.T) {
	c, err := ParseConstraint("time_to_first_token:p99:<=:500")
	if err != nil || c != (Constraint{Metric: "time_to_first_token:p99", Op: "<=", Threshold: 500}) {
		t.Errorf("got %+v, %v", c, err)
	}
	if !c.Holds(500) || c.Holds(501) {
		t.Error("<= 500 does not hold at 500, or holds at 501")
	}
	for _, bad := range []string{"ttft:p99:500", "ttft:p99:=:5", "ttft:p99:<=:x"} {
		if _, err := ParseConstraint(bad); err == nil {
			t.Errorf("ParseConstraint(%q) took it", bad)
		}
	}
}

func TestGPInterpolatesAKnownFunction(t *testing.T) {
	f := func(x float64) float64 { return math.Sin(6*x) + 0.5*x }
	var xs [][]float64
	var ys []float64
	for i := range 12 {
		x := float64(i) / 11
		xs, ys = append(xs, []float64{x}), append(ys, f(x))
	}
	g, err := fitGP(xs, ys)
	if err != nil {
		t.Fatal(err)
	}
	for _, x := range []float64{0.05, 0.33, 0.61, 0.97} {
		mu, sd := g.predict([]float64{x})
		if math.Abs(mu-f(x)) > 0.05 {
			t.Errorf("mean at %v = %.3f, f = %.3f", x, mu, f(x))
		}
		if sd > 0.2 {
			t.Errorf("sd at %v = %.3f between measured points", x, sd)
		}
	}
	// Far from the data the model is unsure.
	if _, sd := g.predict([]float64{3}); sd < 0.5 {
		t.Errorf("sd far outside the data = %.3f, want near the prior's", sd)
	}
}

func TestExpectedImprovement(t *testing.T) {
	// EI of N(0, 1) below best 0 is φ(0) = 0.3989.
	if got := expectedImprovement(0, 1, 0); math.Abs(got-0.398942) > 1e-5 {
		t.Errorf("EI = %v", got)
	}
	if got := expectedImprovement(2, 0, 1); got != 0 {
		t.Errorf("EI of a sure worse value = %v", got)
	}
}

func TestOptimizeKnownFunctions(t *testing.T) {
	ctx := context.Background()
	t.Run("branin", func(t *testing.T) {
		// Branin over [−5, 10] × [0, 15]: minimum 0.397887 at three points.
		branin := func(a, b float64) float64 {
			return math.Pow(b-5.1/(4*math.Pi*math.Pi)*a*a+5/math.Pi*a-6, 2) + 10*(1-1/(8*math.Pi))*math.Cos(a) + 10
		}
		p := NewProblem([]Dimension{{Name: "a", Lo: -5, Hi: 10, Kind: KindFloat}, {Name: "b", Lo: 0, Hi: 15, Kind: KindFloat}},
			[]Objective{{Metric: "f"}})
		p.MaxIterations, p.InitialPoints, p.Seed, p.MinImprovement = 40, 6, 1, 1e-4
		res, err := Optimize(ctx, p, func(_ context.Context, x []float64) (Measurement, error) {
			return Measurement{Metrics: map[string]float64{"f": branin(x[0], x[1])}, Valid: true}, nil
		})
		if err != nil {
			t.Fatal(err)
		}
		best := res.Trials[res.Best].Metrics["f"]
		t.Logf("branin: best %.4f after %d probes (%s)", best, len(res.Trials), res.Stopped)
		if best > 0.397887+0.1 {
			t.Errorf("best %.4f, the minimum is 0.3979", best)
		}
	})
	t.Run("constrained", func(t *testing.T) {
		// Maximize throughput x subject to latency 10/(20 − x) ≤ 2, i.e.
		// x ≤ 15, over [1, 19]: the answer is on the constraint.
		p := NewProblem([]Dimension{{Name: "x", Lo: 1, Hi: 19, Kind: KindFloat}}, []Objective{{Metric: "tput", Maximize: true}})
		p.Constraints = []Constraint{{Metric: "lat", Op: "<=", Threshold: 2}}
		p.Seed = 3
		res, err := Optimize(ctx, p, func(_ context.Context, x []float64) (Measurement, error) {
			return Measurement{Metrics: map[string]float64{"tput": x[0], "lat": 10 / (20 - x[0])}, Valid: true}, nil
		})
		if err != nil {
			t.Fatal(err)
		}
		if res.Best < 0 {
			t.Fatal("nothing feasible found")
		}
		got := res.Trials[res.Best].X[0]
		t.Logf("constrained: best x %.3f after %d probes (%s)", got, len(res.Trials), res.Stopped)
		if got > 15 || got < 15*0.95 {
			t.Errorf("best x %.3f, want within 5 %% below 15", got)
		}
		for _, tr := range res.Trials {
			if tr.Feasible != (tr.Metrics["lat"] <= 2) {
				t.Errorf("trial %v marked feasible %v", tr.X, tr.Feasible)
			}
		}
	})
	t.Run("pareto", func(t *testing.T) {
		// Two objectives that conflict along x: minimize x² and (x − 1)²
		// over [−1, 2]; the Pareto set is [0, 1].
		p := NewProblem([]Dimension{{Name: "x", Lo: -1, Hi: 2, Kind: KindFloat}}, []Objective{{Metric: "f1"}, {Metric: "f2"}})
		p.MaxIterations, p.Seed, p.MinImprovement = 16, 9, 0
		res, err := Optimize(ctx, p, func(_ context.Context, x []float64) (Measurement, error) {
			return Measurement{Metrics: map[string]float64{"f1": x[0] * x[0], "f2": (x[0] - 1) * (x[0] - 1)}, Valid: true}, nil
		})
		if err != nil {
			t.Fatal(err)
		}
		inSet := 0
		for _, i := range res.Pareto {
			if x := res.Trials[i].X[0]; x >= 0 && x <= 1 {
				inSet++
			}
		}
		if inSet < 3 {
			t.Errorf("%d Pareto points in the Pareto set [0, 1], want a spread of at least 3", inSet)
		}
		// No trial dominates a point of the front.
		for _, i := range res.Pareto {
			a := res.Trials[i].Metrics
			for _, tr := range res.Trials {
				b := tr.Metrics
				if b["f1"] <= a["f1"] && b["f2"] <= a["f2"] && (b["f1"] < a["f1"] || b["f2"] < a["f2"]) {
					t.Errorf("front point %v is dominated by %v", res.Trials[i].X, tr.X)
				}
			}
		}
	})
	t.Run("invalid probes are not modelled", func(t *testing.T) {
		p := NewProblem([]Dimension{{Name: "x", Lo: 0, Hi: 1, Kind: KindFloat}}, []Objective{{Metric: "f"}})
		p.MaxIterations = 8
		n := 0
		res, err := Optimize(ctx, p, func(_ context.Context, x []float64) (Measurement, error) {
			n++
			return Measurement{Metrics: map[string]float64{"f": x[0]}, Valid: n%2 == 0, Note: "late"}, nil
		})
		if err != nil {
			t.Fatal(err)
		}
		for _, tr := range res.Trials {
			if !tr.Valid && tr.Feasible {
				t.Error("an invalid probe counted as feasible")
			}
		}
	})
}

// server is a simulated server with S slots under closed-loop
// concurrency c (the mock server's model, docs/format/mock-server.md):
// below S, TTFT is t0 and a slot holds a request for T(c) =
// t0 + (osl − 1)(itl + r(c − 1)); past S every slot is busy and a
// request waits (c/S − 1)·T(S) for one.
type server struct {
	S          float64
	t0, itl, r float64 // ms
	osl        float64
	noise      float64 // relative standard deviation of a measurement
	rng        *rand.Rand
}

func (s *server) hold(c float64) float64 { return s.t0 + (s.osl-1)*(s.itl+s.r*(min(c, s.S)-1)) }

func (s *server) ttft(c float64) float64 { return s.t0 + max(c/s.S-1, 0)*s.hold(s.S) }

func (s *server) itlAt(c float64) float64 { return s.itl + s.r*(min(c, s.S)-1) }

func (s *server) noisy(v float64) float64 {
	if s.noise == 0 {
		return v
	}
	return v * math.Exp(s.noise*s.rng.NormFloat64())
}

// TestBoundaryFewerProbesThanBisection: on seeded problems whose answer
// is known (the largest concurrency whose TTFT meets an SLA), the
// monotone search lands within the precision of the answer as bisection
// does, in fewer probes on average; with measurement noise too.
func TestBoundaryFewerProbesThanBisection(t *testing.T) {
	ctx := context.Background()
	const gpReps = 8
	for _, noise := range []float64{0, 0.03} {
		var nModel, nBisect, nGP, reps int
		var errModel, errGP, errBisect float64
		for rep := range 40 {
			rng := rand.New(rand.NewPCG(uint64(rep), 11))
			s := &server{S: float64(4 + rng.IntN(60)), t0: 20 + 80*rng.Float64(), itl: 5 + 20*rng.Float64(), r: 0.2 * rng.Float64(),
				osl: 64, noise: noise, rng: rand.New(rand.NewPCG(uint64(rep), 12))}
			sla := s.t0 * (1.5 + 3*rng.Float64())
			truth := s.S * (1 + (sla-s.t0)/s.hold(s.S)) // ttft(c) = sla
			c := NewBoundaryConfig(1, 1024, false)
			level := func(_ context.Context, x float64) (Level, error) {
				return Level{Ratio: s.noisy(s.ttft(x)) / sla, Valid: true}, nil
			}
			m, err := SearchBoundary(ctx, c, level)
			if err != nil {
				t.Fatal(err)
			}
			b, err := Bisect(ctx, c, level)
			if err != nil {
				t.Fatal(err)
			}
			reps++
			nModel += len(m.Probes)
			nBisect += len(b.Probes)
			relM := math.Abs(m.Value-truth) / truth
			errModel += relM
			errBisect += math.Abs(b.Value-truth) / truth
			// The Gaussian-process search of the same problem (fewer
			// repetitions: it is the slow one): maximize the load under
			// the SLA.
			if rep < gpReps {
				p := NewProblem([]Dimension{{Name: "concurrency", Lo: 1, Hi: 1024, Kind: KindFloat}}, []Objective{{Metric: "load", Maximize: true}})
				p.Constraints = []Constraint{{Metric: "ttft", Op: "<=", Threshold: sla}}
				p.Seed, p.MaxIterations = uint64(rep), 30
				g, err := Optimize(ctx, p, func(_ context.Context, x []float64) (Measurement, error) {
					return Measurement{Metrics: map[string]float64{"load": x[0], "ttft": s.noisy(s.ttft(x[0]))}, Valid: true}, nil
				})
				if err != nil {
					t.Fatal(err)
				}
				nGP += len(g.Trials)
				if g.Best >= 0 {
					errGP += math.Abs(g.Trials[g.Best].X[0]-truth) / truth
				} else {
					errGP++
				}
			}
			if noise == 0 {
				if relM > c.Precision || math.Abs(b.Value-truth)/truth > c.Precision {
					t.Errorf("rep %d: truth %.2f, model %.2f, bisection %.2f: off by more than %v", rep, truth, m.Value, b.Value, c.Precision)
				}
				if len(m.Violations) > 0 {
					t.Errorf("rep %d: violations without noise: %v", rep, m.Violations)
				}
			} else if relM > 0.10 {
				t.Errorf("rep %d (noise %v): truth %.2f, model %.2f: off by %.1f%%", rep, noise, truth, m.Value, 100*relM)
			}
		}
		mm, mb, mg := float64(nModel)/float64(reps), float64(nBisect)/float64(reps), float64(nGP)/gpReps
		t.Logf("noise %v: mean probes over %d problems: monotone search %.2f (mean error %.2f%%), bisection %.2f (mean error %.2f%%); GP search over the first %d: %.2f (mean error %.2f%%)",
			noise, reps, mm, 100*errModel/float64(reps), mb, 100*errBisect/float64(reps), gpReps, mg, 100*errGP/gpReps)
		if mm >= mb {
			t.Errorf("noise %v: the monotone search took %.2f probes on average, bisection %.2f", noise, mm, mb)
		}
	}
}

// TestBoundaryReprobesViolations: a server whose level at one load is
// measured far off once (a stall) breaks the order; the search says so
// and probes that load again instead of trusting it.
func TestBoundaryReprobesViolations(t *testing.T) {
	ctx := context.Background()
	hits := map[float64]int{}
	level := func(_ context.Context, x float64) (Level, error) {
		hits[x]++
		r := x / 50 // passes up to 50
		if x == 1024 && hits[x] == 1 {
			r = 0.5 // a first measurement far too good
		}
		return Level{Ratio: r, Valid: true}, nil
	}
	c := NewBoundaryConfig(1, 1024, true)
	b, err := SearchBoundary(ctx, c, level)
	if err != nil {
		t.Fatal(err)
	}
	// 1024 passed once: the search believes every load passes.
	if b.Value != 1024 {
		t.Fatalf("value %v; this test wants the range's top to pass at first", b.Value)
	}
	// The second probe inside the range is measured with the wrong
	// outcome (a stall, or a burst of luck): its level breaks the order
	// of its neighbours', so the search re-probes instead of trusting it.
	hits = map[float64]int{}
	interior := 0
	level2 := func(_ context.Context, x float64) (Level, error) {
		hits[x]++
		r := x / 50
		if x != 1 && x != 1024 {
			interior++
			if interior == 2 {
				r = map[bool]float64{true: 3, false: 0.3}[r <= 1]
			}
		}
		return Level{Ratio: r, Valid: true}, nil
	}
	b, err = SearchBoundary(ctx, c, level2)
	if err != nil {
		t.Fatal(err)
	}
	t.Logf("probes %+v, violations %v", b.Probes, b.Violations)
	if b.Value < 48 || b.Value > 50 || b.Above < 51 || b.Above > 53 {
		t.Errorf("boundary [%v, %v), want about [50, 51) within the precision", b.Value, b.Above)
	}
	reprobes := 0
	for _, p := range b.Probes {
		if p.Why == "reprobe" {
			reprobes++
		}
	}
	if reprobes == 0 || len(b.Violations) == 0 {
		t.Errorf("no re-probe (%d) or no violation reported (%v) of a fail below passes", reprobes, b.Violations)
	}
}

func TestBoundaryEnds(t *testing.T) {
	ctx := context.Background()
	c := NewBoundaryConfig(2, 64, true)
	never := func(_ context.Context, x float64) (Level, error) { return Level{Ratio: 2, Valid: true}, nil }
	b, _ := SearchBoundary(ctx, c, never)
	if b.Value != 0 || b.Above != 2 || len(b.Probes) != 1 {
		t.Errorf("nothing meets the SLA: got [%v, %v) after %d probes", b.Value, b.Above, len(b.Probes))
	}
	always := func(_ context.Context, x float64) (Level, error) { return Level{Ratio: 0.5, Valid: true}, nil }
	b, _ = SearchBoundary(ctx, c, always)
	if b.Value != 64 || b.Above != 0 || len(b.Probes) != 2 {
		t.Errorf("everything meets the SLA: got [%v, %v) after %d probes", b.Value, b.Above, len(b.Probes))
	}
	invalid := func(_ context.Context, x float64) (Level, error) { return Level{Valid: false, Note: "late"}, nil }
	b, _ = SearchBoundary(ctx, c, invalid)
	if b.Unmeasurable != 2 || len(b.Probes) != c.MaxInvalid+1 {
		t.Errorf("an unmeasurable load: got %v after %d probes", b.Unmeasurable, len(b.Probes))
	}
}
