package search

import (
	"context"
	"fmt"
	"math"
	"math/rand/v2"
	"strings"
	"testing"
)

// problem is a seeded boundary problem of known answer: the largest
// load in [1, 1024] whose metric meets its SLA (metric ≤ sla).
type problem struct {
	metric func(x float64) float64
	sla    float64
	truth  float64
}

// problems are the families the searches are compared on: the mock
// server's model (TestBoundaryFewerProbesThanBisection's server) under
// each boundary recipe's SLA, and known monotone test functions.
var problems = []struct {
	name string
	make func(rng *rand.Rand) problem
}{
	{"ttft-sla (max-throughput-ttft-sla)", func(rng *rand.Rand) problem {
		s := mockServer(rng)
		sla := s.t0 * (1.5 + 3*rng.Float64())
		return problem{s.ttft, sla, s.S * (1 + (sla-s.t0)/s.hold(s.S))}
	}},
	{"itl-sla (max-throughput-itl-sla)", func(rng *rand.Rand) problem {
		// ITL rises with the batch until every slot is busy, then stays.
		// The rise over the batch is 0.5–2× the idle ITL, the SLA within
		// its lower 20–60 %: the saturated ITL stays ≥ 15 % over it, five
		// times the 3 % noise.
		s := mockServer(rng)
		s.r = s.itl * (0.5 + 1.5*rng.Float64()) / (s.S - 1)
		sla := s.itl + s.r*(s.S-1)*(0.2+0.4*rng.Float64())
		return problem{s.itlAt, sla, 1 + (sla-s.itl)/s.r}
	}},
	{"e2e-sla (max-concurrency-under-sla)", func(rng *rand.Rand) problem {
		s := mockServer(rng)
		e2e := func(c float64) float64 { return s.ttft(c) + (s.osl-1)*s.itlAt(c) }
		sla := e2e(s.S) * (1.1 + 2*rng.Float64())
		// Past S, e2e(c) = hold(S)·c/S (the wait plus the slot's time).
		return problem{e2e, sla, sla * s.S / s.hold(s.S)}
	}},
	{"slo-attainment (max-goodput-under-slo)", func(rng *rand.Rand) problem {
		// The good fraction is S/c past S (the mock serves in waves); the
		// level is the target over it.
		s := mockServer(rng)
		target := 0.5 + 0.45*rng.Float64()
		return problem{func(c float64) float64 { return target / min(1, s.S/c) }, 1, s.S / target}
	}},
	{"power law x^k", func(rng *rand.Rand) problem {
		k, x0 := 0.5+2.5*rng.Float64(), 4+500*rng.Float64()
		return problem{func(x float64) float64 { return math.Pow(x/x0, k) }, 1, x0}
	}},
	{"exponential", func(rng *rand.Rand) problem {
		x0, w := 4+500*rng.Float64(), 5+200*rng.Float64()
		return problem{func(x float64) float64 { return math.Exp((x - x0) / w) }, 1, x0}
	}},
}

func mockServer(rng *rand.Rand) *server {
	return &server{S: float64(4 + rng.IntN(60)), t0: 20 + 80*rng.Float64(), itl: 5 + 20*rng.Float64(), r: 0.2 * rng.Float64(), osl: 64}
}

// tally is the probe counts and answer errors of one search over the
// seeded repetitions of a problem family.
type tally struct{ probes, errs []float64 }

func (t *tally) add(probes int, answer, truth float64) {
	t.probes = append(t.probes, float64(probes))
	t.errs = append(t.errs, math.Abs(answer-truth)/truth)
}

func meanSD(v []float64) (m, sd float64) {
	for _, x := range v {
		m += x
	}
	m /= float64(len(v))
	for _, x := range v {
		sd += (x - m) * (x - m)
	}
	return m, math.Sqrt(sd / float64(len(v)))
}

func (t *tally) String() string {
	m, sd := meanSD(t.probes)
	e, _ := meanSD(t.errs)
	return fmt.Sprintf("%5.2f ± %4.2f probes, error %4.2f%%", m, sd, 100*e)
}

// TestModelSearchFewerProbesThanBisection: on every problem family, over
// seeded repetitions, the model-based search (Optimize of a monotone
// problem: maximize the load under the SLA) reaches the answer, within
// the tolerance bisection is held to, in fewer probes on average than
// bisection; without noise and with 3 % measurement noise. It logs the
// table of docs/design/0026-sweeps-and-searches.md ("Measurements").
func TestModelSearchFewerProbesThanBisection(t *testing.T) {
	ctx := context.Background()
	const reps = 24
	var table []string
	for _, noise := range []float64{0, 0.03} {
		for _, fam := range problems {
			var gp, bisect, mono tally
			for rep := range reps {
				pr := fam.make(rand.New(rand.NewPCG(uint64(rep), 21)))
				meas := rand.New(rand.NewPCG(uint64(rep), 22))
				measure := func(x float64) float64 {
					v := pr.metric(x)
					if noise > 0 {
						v *= math.Exp(noise * meas.NormFloat64())
					}
					return v
				}
				level := func(_ context.Context, x float64) (Level, error) {
					return Level{Ratio: measure(x) / pr.sla, Valid: true}, nil
				}
				c := NewBoundaryConfig(1, 1024, false)
				b, err := Bisect(ctx, c, level)
				if err != nil {
					t.Fatal(err)
				}
				bisect.add(len(b.Probes), b.Value, pr.truth)
				m, err := SearchBoundary(ctx, c, level)
				if err != nil {
					t.Fatal(err)
				}
				mono.add(len(m.Probes), m.Value, pr.truth)
				p := NewProblem([]Dimension{{Name: "concurrency", Lo: 1, Hi: 1024, Kind: KindFloat}}, []Objective{{Metric: "load", Maximize: true}})
				p.Constraints = []Constraint{{Metric: "latency", Op: "<=", Threshold: pr.sla}}
				p.Monotone, p.Seed, p.MaxIterations = true, uint64(rep), 30
				g, err := Optimize(ctx, p, func(_ context.Context, x []float64) (Measurement, error) {
					return Measurement{Metrics: map[string]float64{"load": x[0], "latency": measure(x[0])}, Valid: true}, nil
				})
				if err != nil {
					t.Fatal(err)
				}
				answer := 0.0
				if g.Best >= 0 {
					answer = g.Trials[g.Best].X[0]
				}
				gp.add(len(g.Trials), answer, pr.truth)
				if noise == 0 && math.Abs(answer-pr.truth)/pr.truth > c.Precision {
					t.Errorf("%s, rep %d: truth %.3g, model-based search %.3g (%s): off by more than %v", fam.name, rep, pr.truth, answer, g.Stopped, c.Precision)
				}
				if noise == 0 && len(g.Violations) > 0 {
					t.Errorf("%s, rep %d: violations without noise: %v", fam.name, rep, g.Violations)
				}
			}
			table = append(table, fmt.Sprintf("| %s | %v%% | %s | %s | %s |", fam.name, 100*noise, &gp, &bisect, &mono))
			if mg, mb := mean(gp.probes), mean(bisect.probes); mg >= mb {
				t.Errorf("%s, noise %v: the model-based search took %.2f probes on average, bisection %.2f", fam.name, noise, mg, mb)
			}
		}
	}
	t.Logf("over %d seeds:\n| problem | noise | model-based (GP) | bisection | monotone search |\n|---|---|---|---|---|\n%s", reps, strings.Join(table, "\n"))
}

func mean(v []float64) float64 { m, _ := meanSD(v); return m }

// TestModelSearchFlatMetric: a metric that does not change with the
// setting, measured on the SLA's edge (passes and fails are noise), is
// said to be flat and the search stops at the third probe instead of
// bisecting the noise down to the tolerance.
func TestModelSearchFlatMetric(t *testing.T) {
	p := NewProblem([]Dimension{{Name: "concurrency", Lo: 1, Hi: 1024, Kind: KindInt}}, []Objective{{Metric: "load", Maximize: true}})
	p.Constraints = []Constraint{{Metric: "latency", Op: "<=", Threshold: 100}}
	p.Monotone = true
	n := 0
	res, err := Optimize(context.Background(), p, func(_ context.Context, x []float64) (Measurement, error) {
		n++
		lat := 99.8 + 0.4*float64(1-n%2) // 99.8, 100.2, 99.8, …
		return Measurement{Metrics: map[string]float64{"load": x[0], "latency": lat}, Valid: true}, nil
	})
	if err != nil {
		t.Fatal(err)
	}
	if len(res.Trials) != 3 || !strings.Contains(res.Stopped, "does not change with the setting") {
		t.Errorf("%d probes, stopped %q; want 3 and the level called flat", len(res.Trials), res.Stopped)
	}
}
