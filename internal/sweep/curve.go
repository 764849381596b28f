package sweep

import (
	"fmt"
	"math"
	"strings"
)

// curvePoint is one valid probe of a curve recipe: the length probed,
// the metric's value there and that value's standard error.
type curvePoint struct {
	x, y, se float64
}

// seFloor is the smallest relative standard error a curve point is
// given: a deterministic server (the mock at concurrency 1) answers with
// no spread at all, and a few tenths of a per cent of timer and
// scheduling error is always there.
const seFloor = 0.01

// curve runs a curve recipe (prefill-ttft-curve, decode-itl-curve): a
// probe per length of its line, then a line fitted to the valid ones.
// Latency does not fall as the prompt or the output grows (a longer
// prompt is more prefill, a longer output a longer KV cache to attend
// to), so two neighbouring points that fall by more than their spreads
// allow are re-probed once each, as the boundary recipes re-probe
// measurements out of order, and a fitted slope still below zero by
// more than two standard errors is "cannot tell": the probes were
// disturbed (a busy client or server machine), and neither the line
// nor its mean is the server's.
func (s *sweeper) curve(r *RecipeConfig, res *SearchResult, run func([]string, []float64, string) (*SearchProbe, error), ttft, itl string) error {
	setting, lo, hi, n, metric, tag := ISL, r.ISLMin, r.ISLMax, r.ISLSteps, ttft, "time_to_first_token"
	unit := "input token"
	if r.Name == RecipeDecodeITL {
		setting, lo, hi, n, metric, tag, unit = OSL, r.OSLMin, r.OSLMax, r.OSLSteps, itl, "inter_token_latency", "output token"
	}
	probe := func(v float64, why string) (curvePoint, bool, error) {
		pr, err := run([]string{setting}, []float64{v}, why)
		if err != nil {
			return curvePoint{}, false, err
		}
		y, ok := pr.Metrics[metric]
		if !ok || !pr.Valid {
			return curvePoint{}, false, nil
		}
		return curvePoint{x: v, y: y, se: s.standardError(tag, pr.Metrics[tag+".std"], y)}, true, nil
	}
	var pts []curvePoint
	for _, v := range linspace(lo, hi, n) {
		p, ok, err := probe(v, "step")
		if err != nil {
			return err
		}
		if ok {
			pts = append(pts, p)
		}
	}
	reprobed := map[float64]bool{}
	for i := 0; i+1 < len(pts); i++ {
		a, b := pts[i], pts[i+1]
		if a.y-b.y <= 2*math.Hypot(a.se, b.se) {
			continue
		}
		res.Violations = append(res.Violations, fmt.Sprintf("%s %s %s at %s %s > %s at %s %s: re-probed",
			tag, r.Stat, formatMS(a.y), setting, formatValue(a.x), formatMS(b.y), setting, formatValue(b.x)))
		for _, j := range []int{i, i + 1} {
			if reprobed[pts[j].x] {
				continue
			}
			reprobed[pts[j].x] = true
			p, ok, err := probe(pts[j].x, "reprobe")
			if err != nil {
				return err
			}
			if ok {
				pts[j] = p
			}
		}
	}
	fit := fitCurve(pts)
	res.Setting = setting
	res.Slope, res.SlopeSE, res.Intercept = fit.slope, fit.se, fit.intercept
	res.Converged = len(pts) >= 2
	ys := make([]float64, len(pts))
	for i, p := range pts {
		ys[i] = p.y
	}
	res.Metrics = map[string]float64{metric + ".mean": mean(ys)}
	valid := 0
	for _, pr := range res.Probes {
		if pr.Valid {
			valid++
		}
	}
	over := fmt.Sprintf("over %s %s…%s (%d valid probes of %d)", setting, formatValue(lo), formatValue(hi), valid, len(res.Probes))
	if len(res.Violations) > 0 {
		over += "; " + strings.Join(res.Violations, "; ")
	}
	if len(pts) >= 2 && fit.falls() {
		res.Converged = false
		res.CannotTell = fmt.Sprintf("%s fell as the %s grew (%.4g ± %.2g ms per %s, after re-probing), which a server's latency does not do: the probes were disturbed (a busy client or server machine)",
			metric, strings.TrimSuffix(unit, " token")+" length", fit.slope, 2*fit.se, unit)
		res.Text = fmt.Sprintf("%s: cannot tell: %s; %s; mean %.4g ms", r.Name, res.CannotTell, over, mean(ys))
		return nil
	}
	sign := "+"
	if fit.slope < 0 {
		sign = "−"
	}
	res.Text = fmt.Sprintf("%s: %s fit = %.4g ms %s %.4g ± %.2g ms per %s %s; mean %.4g ms",
		r.Name, metric, fit.intercept, sign, math.Abs(fit.slope), 2*fit.se, unit, over, mean(ys))
	return nil
}

// standardError is the standard error of a probe's value y of the
// metric tag, whose spread over the probe's requests is std: std/√n over
// the n requests of the probe's runs that have the metric, and never
// below seFloor·y. For a percentile statistic it is the mean's error,
// which understates the percentile's: a wrong-signed slope is then
// called sooner, never later.
func (s *sweeper) standardError(tag string, std, y float64) float64 {
	n := 0
	for _, m := range s.lastRuns {
		if st := m.sum.Metrics[tag]; st != nil {
			n += st.Count
		}
	}
	se := 0.0
	if n > 0 {
		se = std / math.Sqrt(float64(n))
	}
	return max(se, seFloor*math.Abs(y))
}

// curveFit is a weighted least-squares line and its slope's standard
// error.
type curveFit struct {
	slope, se, intercept float64
}

// fitCurve fits y = a + b·x to pts, each weighted by 1/se², and returns
// b, its standard error and a. The slope's error is the larger of the
// one the points' own errors give (1/√Σw(x − x̄)²) and the one their
// scatter about the line gives (that times √(χ²/(n − 2))), so points that
// disagree by more than their errors widen it. Fewer than two points
// give slope 0 and their mean.
func fitCurve(pts []curvePoint) curveFit {
	if len(pts) < 2 {
		ys := make([]float64, len(pts))
		for i, p := range pts {
			ys[i] = p.y
		}
		return curveFit{intercept: mean(ys)}
	}
	var sw, swx, swy float64
	for _, p := range pts {
		w := 1 / (p.se * p.se)
		sw, swx, swy = sw+w, swx+w*p.x, swy+w*p.y
	}
	mx, my := swx/sw, swy/sw
	var sxx, sxy float64
	for _, p := range pts {
		w := 1 / (p.se * p.se)
		sxx, sxy = sxx+w*(p.x-mx)*(p.x-mx), sxy+w*(p.x-mx)*(p.y-my)
	}
	if sxx == 0 {
		return curveFit{intercept: my}
	}
	b := sxy / sxx
	a := my - b*mx
	se := 1 / math.Sqrt(sxx)
	if len(pts) > 2 {
		chi2 := 0.0
		for _, p := range pts {
			e := (p.y - a - b*p.x) / p.se
			chi2 += e * e
		}
		se *= max(1, math.Sqrt(chi2/float64(len(pts)-2)))
	}
	return curveFit{slope: b, se: se, intercept: a}
}

// falls reports whether the line falls by more than two standard
// errors of its slope: what a server's latency over the prompt or output
// length does not do.
func (f curveFit) falls() bool { return f.slope+2*f.se < 0 }

// formatMS is a latency in ms, as the recipes' texts print it.
func formatMS(v float64) string { return fmt.Sprintf("%.4g ms", v) }
