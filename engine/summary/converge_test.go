package summary

import (
	"math"
	"math/rand/v2"
	"testing"

	"github.com/reprise-bench/reprise/engine/record"
)

// bruteKS is the oracle of KSTwoSample's exact p-value: every way of
// choosing which len(a) of the pooled values (no ties) are a's, each
// equally likely under the null, and the share whose statistic is at
// least the observed one.
func bruteKS(a, b []float64) float64 {
	pool := append(append([]float64(nil), a...), b...)
	d, _ := KSTwoSample(a, b)
	m, total, hits := len(a), 0, 0
	for mask := 0; mask < 1<<len(pool); mask++ {
		var x, y []float64
		for i, v := range pool {
			if mask&(1<<i) != 0 {
				x = append(x, v)
			} else {
				y = append(y, v)
			}
		}
		if len(x) != m {
			continue
		}
		total++
		if dd, _ := KSTwoSample(x, y); dd >= d-1e-12 {
			hits++
		}
	}
	return float64(hits) / float64(total)
}

// TestKSTwoSample checks the statistic and the exact p-value on samples
// whose answer is known (disjoint samples: 2 of the C(m+n, n) orders are
// as extreme), against the brute-force oracle on random samples of up to
// 13 values, and the asymptotic p-value at the Kolmogorov distribution's
// 5 % point (1.3581) and beside the exact one for large samples.
func TestKSTwoSample(t *testing.T) {
	for _, tc := range []struct {
		a, b []float64
		d, p float64
	}{
		{[]float64{1, 2, 3}, []float64{4, 5, 6}, 1, 2.0 / 20},
		{[]float64{1, 2, 3, 4, 5}, []float64{6, 7, 8, 9, 10}, 1, 2.0 / 252},
		{[]float64{1, 2, 3}, []float64{3, 2, 1}, 0, 1},
		{[]float64{1, 3, 5, 7}, []float64{2, 4, 6, 8}, 0.25, 1},
	} {
		d, p := KSTwoSample(tc.a, tc.b)
		if math.Abs(d-tc.d) > 1e-12 || math.Abs(p-tc.p) > 1e-9 {
			t.Errorf("KS(%v, %v) = D %v, p %v; want %v, %v", tc.a, tc.b, d, p, tc.d, tc.p)
		}
	}
	rng := rand.New(rand.NewPCG(3, 4))
	for range 30 {
		m, n := 2+rng.IntN(5), 2+rng.IntN(6)
		a, b := make([]float64, m), make([]float64, n)
		for i := range a {
			a[i] = rng.NormFloat64()
		}
		for i := range b {
			b[i] = rng.NormFloat64() + 0.8
		}
		if _, p := KSTwoSample(a, b); math.Abs(p-bruteKS(a, b)) > 1e-9 {
			t.Errorf("KS(%v, %v): p %v; brute force %v", a, b, p, bruteKS(a, b))
		}
	}
	if p := kolmogorovSF(1.3581); math.Abs(p-0.05) > 1e-4 {
		t.Errorf("kolmogorovSF(1.3581) = %v, want 0.05", p)
	}
	a, b := make([]float64, 2500), make([]float64, 3500) // 8.75e6 pairs: exact
	for i := range a {
		a[i] = rng.NormFloat64()
	}
	for i := range b {
		b[i] = rng.NormFloat64() + 0.05
	}
	d, exact := KSTwoSample(a, b)
	asym := kolmogorovSF(math.Sqrt(2500*3500/6000.0) * d)
	t.Logf("D %.4f on 2500 and 3500 values: exact p %.4f, asymptotic %.4f", d, exact, asym)
	if math.Abs(exact-asym) > 0.02 {
		t.Errorf("D %v: exact p %v, asymptotic %v", d, exact, asym)
	}
}

// TestConvergenceModes checks the cv rule on known run values (CV = sd/|mean|
// with the sample sd, strictly below the threshold, at least 3 runs) and
// the distribution rule on samples that match and that do not.
func TestConvergenceModes(t *testing.T) {
	mk := func(ttft float64) *Summary {
		return &Summary{RequestCount: 10, Metrics: map[string]*Stats{"time_to_first_token": {Unit: "ms", Avg: ttft}}}
	}
	cv := Convergence{Rule: "metric", Mode: ModeCV, Metrics: []string{"time_to_first_token.avg"}, Threshold: 0.1, MinRuns: 3}
	for _, tc := range []struct {
		runs    []float64
		cv      float64
		reached bool
	}{
		{[]float64{100, 110}, 0.0673, false},         // below, but 2 runs
		{[]float64{100, 110, 90}, 0.1, false},        // sd 10, mean 100: not strictly below
		{[]float64{100, 104, 96, 100}, 0.0327, true}, // sd 3.27
		{[]float64{100, 150, 50}, 0.5, false},
	} {
		var runs []*Summary
		for _, v := range tc.runs {
			runs = append(runs, mk(v))
		}
		got := cv.Check(SummarizeRuns(runs, 0, cv.Metrics...))
		if math.Abs(got.CV-tc.cv) > 1e-3 || got.Reached != tc.reached || got.Runs != len(tc.runs) || got.Metric != cv.Metrics[0] {
			t.Errorf("cv of %v: %+v; want CV %v, reached %v", tc.runs, got, tc.cv, tc.reached)
		}
	}
	dist := Convergence{Rule: "metric", Mode: ModeDistribution, Metrics: []string{"time_to_first_token.avg"}, Threshold: 0.05, MinRuns: 3}
	rng := rand.New(rand.NewPCG(5, 6))
	draw := func(n int, shift float64) []float64 {
		xs := make([]float64, n)
		for i := range xs {
			xs[i] = 50 + 10*rng.NormFloat64() + shift
		}
		return xs
	}
	if c := dist.CheckDistribution(3, draw(200, 0), draw(100, 0)); !c.Reached || c.PValue <= 0.05 {
		t.Errorf("same distribution: %+v", c)
	}
	if c := dist.CheckDistribution(3, draw(200, 0), draw(100, 8)); c.Reached || c.PValue > 1e-3 {
		t.Errorf("shifted by 0.8 sd: %+v", c)
	}
	if c := dist.CheckDistribution(2, draw(200, 0), draw(100, 0)); c.Reached {
		t.Errorf("2 runs: %+v", c)
	}
	if c := dist.CheckDistribution(3, draw(1, 0), draw(100, 0)); c.Reached || c.Metric != "" {
		t.Errorf("one earlier value: %+v", c)
	}
}

// TestRequestValues: the values a distribution rule compares are those the
// run's statistics take: none from warmup or failed requests, none of a
// streaming metric when the run did not stream; a run-level metric has
// none.
func TestRequestValues(t *testing.T) {
	get, err := RequestValues("time_to_first_token", &Options{Streaming: true})
	if err != nil {
		t.Fatal(err)
	}
	ok := record.Request{FirstTokenNS: 5, TTFTNS: 2_500_000}
	warm, failed := ok, ok
	warm.Phase, failed.ErrorKind = record.PhaseWarmup, record.ErrHTTPStatus
	if v, has := get(&ok); !has || v != 2.5 {
		t.Errorf("ok record: %v, %v", v, has)
	}
	if _, has := get(&warm); has {
		t.Error("a warmup record has a value")
	}
	if _, has := get(&failed); has {
		t.Error("a failed record has a value")
	}
	if get, _ := RequestValues("time_to_first_token", &Options{}); func() bool { _, has := get(&ok); return has }() {
		t.Error("TTFT of a run that did not stream")
	}
	if _, err := RequestValues("request_throughput", &Options{}); err == nil {
		t.Error("request_throughput has per-request values")
	}
}
