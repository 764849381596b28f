package search

import (
	"context"
	"fmt"
	"math"
)

// Defaults of the monotone model-based search.
const (
	// DefaultTolerance ends a monotone search once the best feasible
	// setting and the lowest infeasible one above it are within 5 % of
	// each other: the answer is then known to that precision.
	DefaultTolerance = 0.05
	// posteriorCandidates is how many loads of the bracket the
	// posterior is evaluated at.
	posteriorCandidates = 128
	// flatSpread: a metric whose values over the probes differ by less
	// than 1 % of their mean does not change with the settings.
	flatSpread = 0.01
)

// SearchBoundaryModel is [SearchBoundary] with the probes chosen by the
// model-based search of a one-setting monotone [Problem]
// ([bstate.posterior]: a Gaussian process of the log level against the
// load, around the queueing shapes, and the probe that minimizes the
// expected width of the bracket after it): the same ends, violation
// re-probes, median levels and bisection safeguard. It ends early, with
// Boundary.Stopped saying so, when three or more loads measured the same
// level within 1 %: the pass/fail split is then noise and more probes
// would not locate a boundary.
func SearchBoundaryModel(ctx context.Context, c BoundaryConfig, f LevelFunc) (*Boundary, error) {
	if err := c.validate(); err != nil {
		return nil, fmt.Errorf("boundary search: %w", err)
	}
	return searchBoundaryWith(ctx, &c, f, (*bstate).posterior, (*bstate).flat)
}

// posterior is the Gaussian-process chooser of a monotone search. A
// process fitted to the log level against the load (on the unit scale
// of [Optimize]: log for a range of 16× or more), around the prior means of
// the queueing shapes ([bstate.hinges]) and none, and averaged over the
// prior means and its hyperparameters by their marginal likelihood, gives each load c of
// the bracket (lo, hi) the probability p(c) that it meets the SLA; the
// chooser probes the load that minimizes the expected log width of the
// bracket after the probe,
//
//	E(c) = p(c)·log(hi/c) + (1 − p(c))·log(c/lo),
//
// a one-step look-ahead on the answer's interval. Where the model knows
// nothing (p = ½ everywhere) E is smallest at the geometric midpoint, so
// the search is bisection; where the posterior of the crossing is sharp,
// E is smallest just beside the crossing, on the side that cuts away
// the larger part of the bracket, and the next probe lands on the other
// side: two probes close the bracket, as many as the model is right.
// Loads below lo are left out of the fit: below the knee the level is
// flat and says nothing about where it crosses the SLA.
func (s *bstate) posterior(lo, hi float64) (float64, string, bool) {
	var xs []float64
	for _, x := range s.loads() {
		if x >= lo {
			xs = append(xs, x)
		}
	}
	if len(xs) < 2 {
		return 0, "", false
	}
	dim := Dimension{Lo: s.c.Lo, Hi: s.c.Hi, Kind: KindFloat}
	us := make([][]float64, len(xs))
	for i, x := range xs {
		us[i] = []float64{toUnit(dim, x)}
	}
	// One fit per prior mean and hyperparameter pair, weighted by its
	// marginal likelihood.
	type fit struct {
		g     *gp
		prior func(float64) float64
		lml   float64
	}
	var fits []fit
	top := math.Inf(-1)
	for _, prior := range append(s.hinges(lo, hi), func(float64) float64 { return 0 }) {
		ys := make([]float64, len(xs))
		for i, x := range xs {
			ys[i] = math.Log(max(s.ratio(x), 1e-9)) - prior(x)
		}
		gs, lmls, err := fitGPs(us, ys)
		if err != nil {
			continue
		}
		for i, g := range gs {
			fits = append(fits, fit{g, prior, lmls[i]})
			top = max(top, lmls[i])
		}
	}
	// The fits of negligible weight are dropped before the candidates.
	kept := fits[:0]
	for _, f := range fits {
		if f.lml-top > math.Log(1e-3) {
			kept = append(kept, f)
		}
	}
	fits = kept
	if len(fits) == 0 {
		return 0, "", false
	}
	ulo, uhi := toUnit(dim, lo), toUnit(dim, hi)
	best, bestE := 0.0, math.Inf(1)
	for i := 1; i < posteriorCandidates; i++ {
		x := s.round(fromUnit(dim, ulo+(uhi-ulo)*float64(i)/posteriorCandidates))
		if x <= lo || x >= hi {
			continue
		}
		p, wsum := 0.0, 0.0
		u := []float64{toUnit(dim, x)}
		for _, f := range fits {
			w := math.Exp(f.lml - top)
			mu, sd := f.g.predict(u)
			p, wsum = p+w*normCDF(-(f.prior(x)+mu)/max(sd, 1e-9)), wsum+w
		}
		p /= wsum
		e := p*math.Log(hi/x) + (1-p)*math.Log(x/lo)
		if e < bestE {
			best, bestE = x, e
		}
	}
	return best, "model", !math.IsInf(bestE, 1)
}

// hinges are the prior means of the log level: the shapes of a server's
// latency against load, flat below its capacity (the level at lo) and
// rising with the load above it through the two lowest failing loads,
// linearly (requests wait for a slot in proportion to the queue,
// Little's law) or exponentially (log-linearly). Without two failing
// loads rising there are none.
func (s *bstate) hinges(lo, hi float64) []func(x float64) float64 {
	flat := math.Log(max(s.ratio(lo), 1e-9))
	var fails []float64
	for _, x := range s.loads() {
		if x >= hi && s.ratio(x) > 1 {
			fails = append(fails, x)
		}
	}
	if len(fails) < 2 {
		return nil
	}
	x1, x2 := fails[0], fails[1]
	r1, r2 := s.ratio(x1), s.ratio(x2)
	if !(r2 > r1) {
		return nil
	}
	b := (r2 - r1) / (x2 - x1)
	lb := (math.Log(r2) - math.Log(r1)) / (x2 - x1)
	return []func(float64) float64{
		func(x float64) float64 { return max(flat, math.Log(max(r1+b*(x-x1), 1e-9))) },
		func(x float64) float64 { return max(flat, math.Log(r1)+lb*(x-x1)) },
	}
}

// flat ends a monotone search whose level does not change with the load:
// three or more loads, the range's ends among them, measured within
// flatSpread of each other. (With both ends on one side of the SLA the
// ends alone end the search; this catches a level on the SLA's edge,
// where the bracket is noise.)
func (s *bstate) flat(lo, hi float64) (string, bool) {
	xs := s.loads()
	if len(xs) < 3 {
		return "", false
	}
	mn, mx, sum := math.Inf(1), math.Inf(-1), 0.0
	for _, x := range xs {
		r := s.ratio(x)
		mn, mx, sum = min(mn, r), max(mx, r), sum+r
	}
	m := sum / float64(len(xs))
	if !(m > 0) || (mx-mn)/m > flatSpread {
		return "", false
	}
	return fmt.Sprintf("the level does not change with the setting (%.4g ± %.2g%% at %d settings from %s to %s): the boundary in [%s, %s) is measurement noise, more probes would not locate it",
		m, 100*(mx-mn)/2/m, len(xs), fmtX(xs[0]), fmtX(xs[len(xs)-1]), fmtX(lo), fmtX(hi)), true
}
