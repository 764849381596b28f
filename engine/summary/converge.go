package summary

import (
	"fmt"
	"math"
	"slices"
	"strings"

	"github.com/reprise-bench/reprise/engine/record"
)

// The modes of a "metric" convergence rule ([Convergence.Mode]), AIPerf's
// --convergence-mode.
const (
	// ModeCIWidth stops when the metric's across-run interval is within
	// ±Threshold of its mean (the relative half-width).
	ModeCIWidth = "ci_width"
	// ModeCV stops when the coefficient of variation of the per-run
	// values (sample standard deviation over |mean|) is below Threshold.
	ModeCV = "cv"
	// ModeDistribution stops when a two-sample Kolmogorov–Smirnov test
	// of the last run's per-request values against those of every
	// earlier run, pooled, gives a p-value above Threshold: the last run
	// is not told apart from the others.
	ModeDistribution = "distribution"
)

// ConvergenceModes are the modes a "metric" rule takes, the default first.
var ConvergenceModes = []string{ModeCIWidth, ModeCV, ModeDistribution}

// checkCV is [Convergence.Check] in [ModeCV]: the checked metric's CV
// after a.Runs runs, reached below Threshold with at least MinRuns runs
// (AIPerf's strict comparison). A mean of 0 never converges.
func (c Convergence) checkCV(a *AcrossRuns) Convergence {
	c.Runs, c.Metric, c.CV, c.Reached = a.Runs, "", 0, false
	for _, k := range c.Metrics {
		if iv, ok := a.Metrics[k]; ok && iv.N > 0 {
			c.Metric, c.CV = k, iv.CV
			c.Reached = a.Runs >= c.MinRuns && iv.N >= c.MinRuns && iv.Mean != 0 && iv.CV < c.Threshold
		}
	}
	return c
}

// CheckDistribution evaluates a [ModeDistribution] rule after runs runs:
// earlier are the per-request values of the metric in the runs before
// the last, pooled, and last those of the last run ([RequestValues]). It
// is reached with at least MinRuns runs, 2 values on each side and a
// p-value above Threshold. c is a copy.
func (c Convergence) CheckDistribution(runs int, earlier, last []float64) Convergence {
	c.Runs, c.Metric, c.KS, c.PValue, c.Reached = runs, "", 0, 0, false
	if len(earlier) < 2 || len(last) < 2 {
		return c
	}
	c.Metric = c.Metrics[0]
	c.KS, c.PValue = KSTwoSample(earlier, last)
	c.Reached = runs >= c.MinRuns && c.PValue > c.Threshold
	return c
}

// modeText is [Convergence.Text] for the cv and distribution modes.
func (c Convergence) modeText(what string) string {
	switch {
	case c.Metric == "":
		return fmt.Sprintf("%s not reached after %d runs: no two runs have %s", what, c.Runs, strings.Join(c.Metrics, ", "))
	case c.Mode == ModeCV && c.Reached:
		return fmt.Sprintf("%s reached after %d runs: CV %.3g %% < %.3g %%", what, c.Runs, 100*c.CV, 100*c.Threshold)
	case c.Mode == ModeCV:
		return fmt.Sprintf("%s not reached after %d runs (at least %d): CV %.3g %% (bound %.3g %%)", what, c.Runs, c.MinRuns, 100*c.CV, 100*c.Threshold)
	case c.Reached:
		return fmt.Sprintf("%s reached after %d runs: the last run's distribution is the earlier runs' (KS D %.3g, p %.3g > %.3g)", what, c.Runs, c.KS, c.PValue, c.Threshold)
	}
	return fmt.Sprintf("%s not reached after %d runs (at least %d): KS D %.3g, p %.3g (bound p > %.3g)", what, c.Runs, c.MinRuns, c.KS, c.PValue, c.Threshold)
}

// RequestValues returns how the per-request metric tag (an AIPerf tag such
// as time_to_first_token) is read from a record of a run summarized with
// o: the value, and false for a record that has none or that the run's
// statistics of tag leave out (warmup, failed requests, a streaming
// metric of a run that did not stream). An unknown tag, or a run-level
// one (request_throughput), is an error.
func RequestValues(tag string, o *Options) (func(r *record.Request) (float64, bool), error) {
	i := slices.IndexFunc(metrics, func(m metric) bool { return m.tag == tag })
	if i < 0 {
		return nil, fmt.Errorf("%w %q: a per-request metric (time_to_first_token, inter_token_latency, request_latency, …) has a distribution, a run-level one none", ErrUnknownRunMetric, tag)
	}
	m := &metrics[i]
	return func(r *record.Request) (float64, bool) {
		if r.Phase == record.PhaseWarmup || (!r.OK() && !m.onErrors) || (m.stream && !o.Streaming) {
			return 0, false
		}
		v, ok := m.get(r, o)
		return v, ok && !math.IsNaN(v) && !math.IsInf(v, 0)
	}, nil
}

// exactKSPairs is the most m·n pairs for which [KSTwoSample] computes
// the exact p-value; above it the asymptotic distribution is used.
const exactKSPairs = 10_000_000

// KSTwoSample returns the two-sample Kolmogorov–Smirnov statistic D (the
// largest distance between the empirical distribution functions of a and
// b) and its two-sided p-value. The p-value is exact (the lattice-path
// count of R's psmirnov, conditional on no ties) when len(a)·len(b) is at
// most 10⁷, else the limiting Kolmogorov distribution's at
// √(mn/(m+n))·D. Neither slice is changed; both need at least one value.
func KSTwoSample(a, b []float64) (d, p float64) {
	a, b = slices.Clone(a), slices.Clone(b)
	slices.Sort(a)
	slices.Sort(b)
	m, n := len(a), len(b)
	for i, j := 0, 0; i < m && j < n; {
		x := min(a[i], b[j])
		for i < m && a[i] == x {
			i++
		}
		for j < n && b[j] == x {
			j++
		}
		d = max(d, math.Abs(float64(i)/float64(m)-float64(j)/float64(n)))
	}
	if float64(m)*float64(n) <= exactKSPairs {
		return d, min(1, max(0, 1-smirnovCDF(d, m, n)))
	}
	return d, kolmogorovSF(math.Sqrt(float64(m)*float64(n)/float64(m+n)) * d)
}

// smirnovCDF is P(D < d) for samples of m and n values from one
// continuous distribution: the share of the C(m+n, n) monotone lattice
// paths from (0, 0) to (m, n) that stay strictly within |i/m − j/n| < d.
// Row i of u holds the paths to (i, j) times i!·n!/(i+n)! (the weight
// i/(i+n) per row), so that the last one is the share; points whose
// distance reaches d (to within rounding of the lattice's 1/(mn) steps)
// are cut. Rows whose values fall below 1e-200 are rescaled (in the
// middle of the band they would underflow for samples of thousands).
func smirnovCDF(d float64, m, n int) float64 {
	if m > n {
		m, n = n, m
	}
	md, nd := float64(m), float64(n)
	q := (0.5 + math.Floor(d*md*nd-1e-7)) / (md * nd)
	u := make([]float64, n+1)
	for j := range u {
		if float64(j)/nd <= q {
			u[j] = 1
		}
	}
	logScale := 0.0 // u is scaled by exp(−logScale): its middle underflows otherwise
	for i := 1; i <= m; i++ {
		w := float64(i) / float64(i+n)
		if float64(i)/md > q {
			u[0] = 0
		} else {
			u[0] *= w
		}
		top := u[0]
		for j := 1; j <= n; j++ {
			if math.Abs(float64(i)/md-float64(j)/nd) > q {
				u[j] = 0
			} else {
				u[j] = w*u[j] + u[j-1]
			}
			top = max(top, u[j])
		}
		if top > 0 && top < 1e-200 {
			for j := range u {
				u[j] /= top
			}
			logScale += math.Log(top)
		}
	}
	return u[n] * math.Exp(logScale)
}

// kolmogorovSF is the survival function of the Kolmogorov distribution:
// 2 Σ_{k≥1} (−1)^(k−1) exp(−2k²x²), 1 for x ≤ 0.
func kolmogorovSF(x float64) float64 {
	if x <= 0 {
		return 1
	}
	var s float64
	for k := 1; k <= 100; k++ {
		t := math.Exp(-2 * float64(k*k) * x * x)
		if k%2 == 0 {
			s -= t
		} else {
			s += t
		}
		if t < 1e-16 {
			break
		}
	}
	return min(1, max(0, 2*s))
}

// Check evaluates the rule c on a: Runs, Metric, HalfWidth and
// Reached (at least MinRuns runs, one checked metric present, every
// present one within Threshold). c is a copy; a is not changed.
func (c Convergence) Check(a *AcrossRuns) Convergence {
	switch c.Mode {
	case ModeCV:
		return c.checkCV(a)
	case ModeDistribution:
		return c // per-request values: CheckDistribution; a runs.json read back keeps its result
	}
	c.Runs, c.Metric, c.HalfWidth, c.Reached = a.Runs, "", 0, false
	seen := false
	for _, k := range c.Metrics {
		iv, ok := a.Metrics[k]
		if !ok || iv.N == 0 {
			continue
		}
		if !seen || iv.RelHalfWidth > c.HalfWidth {
			c.Metric, c.HalfWidth = k, iv.RelHalfWidth
		}
		seen = true
	}
	c.Reached = seen && a.Runs >= c.MinRuns && c.HalfWidth <= c.Threshold
	return c
}

// Text is the line that says how the rule ended, e.g. "convergence not
// reached after 5 runs: time_to_first_token.p50 ±10.5 % > ±5 %".
func (c Convergence) Text() string {
	what := "--until-ci"
	if c.Rule == "metric" && len(c.Metrics) == 1 {
		what = "convergence on " + c.Metrics[0]
	}
	if c.Mode == ModeCV || c.Mode == ModeDistribution {
		return c.modeText(what + " (" + c.Mode + ")")
	}
	switch {
	case c.Metric == "":
		return fmt.Sprintf("%s not reached after %d runs: no run has %s", what, c.Runs, strings.Join(c.Metrics, ", "))
	case c.Reached:
		return fmt.Sprintf("%s reached after %d runs: widest %s ±%.3g %% ≤ ±%.3g %%", what, c.Runs, c.Metric, 100*c.HalfWidth, 100*c.Threshold)
	case c.Runs < c.MinRuns:
		return fmt.Sprintf("%s not reached after %d runs (it needs at least %d): widest %s ±%.3g %% (bound ±%.3g %%)",
			what, c.Runs, c.MinRuns, c.Metric, 100*c.HalfWidth, 100*c.Threshold)
	}
	return fmt.Sprintf("%s not reached after %d runs: widest %s ±%.3g %% > ±%.3g %%", what, c.Runs, c.Metric, 100*c.HalfWidth, 100*c.Threshold)
}
