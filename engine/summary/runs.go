package summary

import (
	"fmt"
	"io"
	"math"
	"slices"
	"strings"
	"text/tabwriter"
)

// valueRange is the range of values a metric can take, which picks the
// scale of its across-run interval.
type valueRange uint8

const (
	signed      valueRange = iota // any real: linear
	nonNegative                   // ≥ 0: log
	fraction                      // in [0, 1]: logit
)

func (r valueRange) scale() string {
	switch r {
	case nonNegative:
		return ScaleLog
	case fraction:
		return ScaleLogit
	}
	return ScaleLinear
}

// signedTags are the per-request metrics whose values can be negative:
// the rest are durations, rates and counts.
var signedTags = []string{"schedule_lateness", "session_delay", "input_length_error", "output_length_error", "cached_tokens_error"}

// headline is one run-level metric: a key, its unit, its range and how
// to read it from a summary (false when the run has no value).
type headline struct {
	key, unit string
	rng       valueRange
	get       func(s *Summary) (float64, bool)
}

type runStat struct {
	name string
	pick func(*Stats) float64
}

// runStats are the statistics of a per-request metric that a run-level
// key "tag.stat" can name.
var runStats = []runStat{
	{"avg", func(st *Stats) float64 { return st.Avg }},
	{"min", func(st *Stats) float64 { return st.Min }},
	{"max", func(st *Stats) float64 { return st.Max }},
	{"std", func(st *Stats) float64 { return st.Std }},
	{"p1", func(st *Stats) float64 { return st.P1 }},
	{"p5", func(st *Stats) float64 { return st.P5 }},
	{"p10", func(st *Stats) float64 { return st.P10 }},
	{"p25", func(st *Stats) float64 { return st.P25 }},
	{"p50", func(st *Stats) float64 { return st.P50 }},
	{"p75", func(st *Stats) float64 { return st.P75 }},
	{"p90", func(st *Stats) float64 { return st.P90 }},
	{"p95", func(st *Stats) float64 { return st.P95 }},
	{"p99", func(st *Stats) float64 { return st.P99 }},
}

// scalars are the run-level metrics that are one number per run.
var scalars = []headline{
	{"request_throughput", "requests/sec", nonNegative, func(s *Summary) (float64, bool) { return s.RequestThroughput, true }},
	{"output_token_throughput", "tokens/sec", nonNegative, func(s *Summary) (float64, bool) { return s.OutputTokenThroughput, true }},
	{"total_token_throughput", "tokens/sec", nonNegative, func(s *Summary) (float64, bool) { return s.TotalTokenThroughput, true }},
	{"goodput", "requests/sec", nonNegative, func(s *Summary) (float64, bool) { return s.Goodput, len(s.Options.Goodput) > 0 }},
	{"good_request_fraction", "ratio", fraction, func(s *Summary) (float64, bool) {
		return s.GoodRequestFraction, len(s.Options.Goodput) > 0
	}},
	{"error_rate", "ratio", fraction, func(s *Summary) (float64, bool) { return s.ErrorRate(), true }},
}

// headlineKeys are the keys of [HeadlineMetrics], in display order.
var headlineKeys = []string{
	"request_throughput", "output_token_throughput", "total_token_throughput", "goodput", "good_request_fraction", "error_rate",
	"time_to_first_token.avg", "time_to_first_token.p50", "time_to_first_token.p99",
	"inter_token_latency.avg", "inter_token_latency.p50", "inter_token_latency.p99",
	"request_latency.avg", "request_latency.p50", "request_latency.p99",
	"output_token_throughput_per_user.avg", "output_token_throughput_per_user.p50",
	"schedule_lateness.p99",
}

// RunMetricKey returns the key that [AcrossRuns.Metrics] gives the
// per-run value of metric tag (an AIPerf tag: a run-level one such as
// request_throughput, or a per-request one such as
// time_to_first_token) at statistic stat (avg, min, max, std, p1 … p99;
// "" is avg). A run-level metric is one number per run: its key is the
// tag, and its only statistic avg.
func RunMetricKey(tag, stat string) (string, error) {
	if stat == "" {
		stat = "avg"
	}
	if slices.ContainsFunc(scalars, func(h headline) bool { return h.key == tag }) {
		if stat != "avg" {
			return "", fmt.Errorf("%w: %s is one number per run: its statistic is avg, not %s", ErrUnknownRunMetric, tag, stat)
		}
		return tag, nil
	}
	if !slices.ContainsFunc(metrics, func(m metric) bool { return m.tag == tag }) {
		names := make([]string, 0, len(scalars)+len(metrics))
		for _, h := range scalars {
			names = append(names, h.key)
		}
		for _, m := range metrics {
			names = append(names, m.tag)
		}
		return "", fmt.Errorf("%w %q: want one of %s", ErrUnknownRunMetric, tag, strings.Join(names, ", "))
	}
	if !slices.ContainsFunc(runStats, func(s runStat) bool { return s.name == stat }) {
		return "", fmt.Errorf("%w: statistic %q: want avg, min, max, std, p1, p5, p10, p25, p50, p75, p90, p95 or p99", ErrUnknownRunMetric, stat)
	}
	return tag + "." + stat, nil
}

// runMetric resolves a key of [RunMetricKey] to its unit, range and
// per-run value; ok is false for a key it does not know.
func runMetric(key string) (h headline, ok bool) {
	if i := slices.IndexFunc(scalars, func(h headline) bool { return h.key == key }); i >= 0 {
		return scalars[i], true
	}
	tag, stat, found := strings.Cut(key, ".")
	if !found {
		return headline{}, false
	}
	mi := slices.IndexFunc(metrics, func(m metric) bool { return m.tag == tag })
	si := slices.IndexFunc(runStats, func(s runStat) bool { return s.name == stat })
	if mi < 0 || si < 0 {
		return headline{}, false
	}
	rng := nonNegative // a standard deviation, whatever the metric's sign
	if slices.Contains(signedTags, tag) && stat != "std" {
		rng = signed
	}
	pick := runStats[si].pick
	return headline{key: key, unit: metrics[mi].unit, rng: rng, get: func(s *Summary) (float64, bool) {
		st := s.Metrics[tag]
		if st == nil {
			return 0, false
		}
		return pick(st), true
	}}, true
}

// HeadlineMetrics returns the keys of the metrics [SummarizeRuns]
// summarizes, in display order: run-level rates and fractions by their
// summary.json key, per-request metrics as "tag.stat" (the run's avg,
// p50 or p99 of that metric). The caller owns the slice.
func HeadlineMetrics() []string { return slices.Clone(headlineKeys) }

// SummarizeRuns returns the across-run statistics of the runs' headline
// metrics, and of the extra keys ([RunMetricKey]; unknown ones are left
// out), at confidence level (0 < level < 1; 0 takes
// [DefaultConfidenceLevel]). A metric is summarized over the runs that
// have a value for it, and left out when none has.
func SummarizeRuns(runs []*Summary, level float64, extra ...string) *AcrossRuns {
	if level <= 0 || level >= 1 {
		level = DefaultConfidenceLevel
	}
	a := &AcrossRuns{SchemaVersion: RunsSchemaVersion, Runs: len(runs), Level: level, Method: "t",
		Metrics: map[string]Interval{}}
	for _, k := range slices.Concat(headlineKeys, extra) {
		h, ok := runMetric(k)
		if !ok {
			continue
		}
		var vals []float64
		for _, s := range runs {
			if v, ok := h.get(s); ok && !math.IsNaN(v) && !math.IsInf(v, 0) {
				vals = append(vals, v)
			}
		}
		if len(vals) == 0 {
			continue
		}
		iv := rangeInterval(vals, level, h.rng)
		iv.Unit = h.unit
		a.Metrics[h.key] = iv
	}
	return a
}

// UntilCIMetrics are the headline metrics whose relative half-width
// --until-ci compares; the runs stop when every one that exists is
// within the bound.
var UntilCIMetrics = []string{"request_throughput", "output_token_throughput",
	"time_to_first_token.p50", "inter_token_latency.p50", "request_latency.p50"}

// RecomputeRuns is [SummarizeRuns] of runs with what prev (runs.json as
// the runs wrote it, of any version; nil for none) says of them: its
// level, run directories, --until-ci bound, early stop, and its stop
// rule checked again on the new intervals (a runs.json without a
// convergence object but with until_ci has the --until-ci rule). prev is
// not changed.
func RecomputeRuns(runs []*Summary, prev *AcrossRuns) *AcrossRuns {
	if prev == nil {
		return SummarizeRuns(runs, 0)
	}
	rule := prev.Convergence
	if rule == nil && prev.UntilCI > 0 {
		rule = &Convergence{Rule: "until_ci", Metrics: UntilCIMetrics, Threshold: prev.UntilCI, MinRuns: 3}
	}
	var extra []string
	if rule != nil {
		extra = rule.Metrics
	}
	a := SummarizeRuns(runs, prev.Level, extra...)
	a.RunDirs, a.UntilCI, a.Converged = slices.Clone(prev.RunDirs), prev.UntilCI, prev.Converged
	if rule != nil {
		c := rule.Check(a)
		a.Convergence = &c
	}
	return a
}

// rangeInterval is [TInterval] on the scale of rng: for a non-negative
// quantity the t-interval of log(mean) and for a fraction that of
// logit(mean), each by the delta method (se of log(mean) ≈ se/mean, of
// logit(mean) ≈ se/(mean·(1−mean))) and mapped back. Both hold the mean
// and stay in the quantity's range, where the linear interval of a few
// spread runs goes below 0 (goodput [−2.99, 11.64]). A non-negative
// quantity whose mean is 0 and a fraction whose mean is 0 or 1 have all
// their values equal, so the interval is the point.
func rangeInterval(vals []float64, level float64, rng valueRange) Interval {
	iv := TInterval(vals, level)
	iv.Scale = rng.scale()
	if iv.N < 2 || iv.SE == 0 {
		return iv
	}
	m, tse := iv.Mean, iv.TCritical*iv.SE
	switch {
	case rng == nonNegative && m > 0:
		h := tse / m
		iv.Low, iv.High = m*math.Exp(-h), m*math.Exp(h)
	case rng == fraction && m > 0 && m < 1:
		l, h := math.Log(m/(1-m)), tse/(m*(1-m))
		expit := func(x float64) float64 { return 1 / (1 + math.Exp(-x)) }
		iv.Low, iv.High = expit(l-h), expit(l+h)
	default:
		iv.Scale = ScaleLinear
		return iv
	}
	iv.RelHalfWidth = (iv.High - iv.Low) / 2 / math.Abs(m)
	return iv
}

// WriteTable writes the across-run table: one line per metric with its
// mean, interval, relative half-width, unit and scale, then the per-run
// values, then how the convergence rule ended (when there was one).
func (a *AcrossRuns) WriteTable(w io.Writer) error {
	tw := tabwriter.NewWriter(w, 0, 0, 2, ' ', 0)
	fmt.Fprintf(tw, "Across %d runs (%g%% interval)\tmean\tlow\thigh\t±\tunit\tscale\tper run\n", a.Runs, 100*a.Level)
	keys := HeadlineMetrics()
	for k := range a.Metrics {
		if !slices.Contains(keys, k) {
			keys = append(keys, k)
		}
	}
	for _, k := range keys {
		iv, ok := a.Metrics[k]
		if !ok {
			continue
		}
		per := make([]string, len(iv.Values))
		for i, v := range iv.Values {
			per[i] = Num(v, 4)
		}
		fmt.Fprintf(tw, "%s\t%s\t%s\t%s\t%.1f%%\t%s\t%s\t%s\n", k, Num(iv.Mean, 4), Num(iv.Low, 4), Num(iv.High, 4), 100*iv.RelHalfWidth, iv.Unit, iv.Scale,
			strings.Join(per, " "))
	}
	if err := tw.Flush(); err != nil {
		return err
	}
	if c := a.Convergence; c != nil {
		_, err := fmt.Fprintln(w, c.Text())
		return err
	}
	return nil
}

// TInterval returns the Student-t confidence interval at level of the
// mean of vals (the sample is assumed to be independent draws of a
// roughly normal per-run value: each run's statistic averages many
// requests), on the linear scale. vals is not modified and not retained;
// Values is a copy.
func TInterval(vals []float64, level float64) Interval {
	iv := Interval{Scale: ScaleLinear, N: len(vals), Values: append([]float64(nil), vals...)}
	if len(vals) == 0 {
		return iv
	}
	var sum float64
	iv.Min, iv.Max = vals[0], vals[0]
	for _, v := range vals {
		sum += v
		iv.Min, iv.Max = min(iv.Min, v), max(iv.Max, v)
	}
	n := float64(len(vals))
	iv.Mean = sum / n
	iv.Low, iv.High = iv.Mean, iv.Mean
	if len(vals) < 2 {
		return iv
	}
	var ss float64
	for _, v := range vals {
		ss += (v - iv.Mean) * (v - iv.Mean)
	}
	iv.Std = math.Sqrt(ss / (n - 1))
	iv.SE = iv.Std / math.Sqrt(n)
	iv.TCritical = StudentTQuantile((1+level)/2, len(vals)-1)
	iv.Low, iv.High = iv.Mean-iv.TCritical*iv.SE, iv.Mean+iv.TCritical*iv.SE
	if iv.Mean != 0 {
		iv.CV = iv.Std / math.Abs(iv.Mean)
		iv.RelHalfWidth = iv.TCritical * iv.SE / math.Abs(iv.Mean)
	}
	return iv
}

// StudentTQuantile returns t such that P(T ≤ t) = p for Student's t
// distribution with df degrees of freedom (df ≥ 1, 0 < p < 1). It inverts
// [StudentTCDF] by bisection to 1e-12, exact enough for any interval.
func StudentTQuantile(p float64, df int) float64 {
	if p == 0.5 {
		return 0
	}
	if p < 0.5 {
		return -StudentTQuantile(1-p, df)
	}
	lo, hi := 0.0, 1.0
	for StudentTCDF(hi, df) < p && hi < 1e12 {
		hi *= 2
	}
	for range 200 {
		mid := (lo + hi) / 2
		if StudentTCDF(mid, df) < p {
			lo = mid
		} else {
			hi = mid
		}
		if hi-lo < 1e-12*max(1, hi) {
			break
		}
	}
	return (lo + hi) / 2
}

// StudentTCDF returns P(T ≤ t) for Student's t distribution with df
// degrees of freedom: 1 − I_x(df/2, 1/2)/2 for t ≥ 0 with
// x = df/(df + t²), I the regularized incomplete beta function.
func StudentTCDF(t float64, df int) float64 {
	v := float64(df)
	x := v / (v + t*t)
	tail := 0.5 * regIncBeta(v/2, 0.5, x)
	if t >= 0 {
		return 1 - tail
	}
	return tail
}

// regIncBeta is the regularized incomplete beta function I_x(a, b),
// evaluated with the continued fraction of Numerical Recipes (§6.4,
// betacf by the modified Lentz method), using the symmetry
// I_x(a,b) = 1 − I_{1−x}(b,a) where the fraction converges slowly.
func regIncBeta(a, b, x float64) float64 {
	switch {
	case x <= 0:
		return 0
	case x >= 1:
		return 1
	}
	la, _ := math.Lgamma(a + b)
	lb, _ := math.Lgamma(a)
	lc, _ := math.Lgamma(b)
	front := math.Exp(la - lb - lc + a*math.Log(x) + b*math.Log(1-x))
	if x < (a+1)/(a+b+2) {
		return front * betaCF(a, b, x) / a
	}
	return 1 - front*betaCF(b, a, 1-x)/b
}

func betaCF(a, b, x float64) float64 {
	const tiny = 1e-300
	qab, qap, qam := a+b, a+1, a-1
	c, d := 1.0, 1-qab*x/qap
	if math.Abs(d) < tiny {
		d = tiny
	}
	d = 1 / d
	h := d
	for m := 1; m <= 300; m++ {
		fm := float64(m)
		aa := fm * (b - fm) * x / ((qam + 2*fm) * (a + 2*fm))
		d = 1 + aa*d
		if math.Abs(d) < tiny {
			d = tiny
		}
		c = 1 + aa/c
		if math.Abs(c) < tiny {
			c = tiny
		}
		d = 1 / d
		h *= d * c
		aa = -(a + fm) * (qab + fm) * x / ((a + 2*fm) * (qap + 2*fm))
		d = 1 + aa*d
		if math.Abs(d) < tiny {
			d = tiny
		}
		c = 1 + aa/c
		if math.Abs(c) < tiny {
			c = tiny
		}
		d = 1 / d
		del := d * c
		h *= del
		if math.Abs(del-1) < 1e-15 {
			break
		}
	}
	return h
}

// WilsonInterval returns the Wilson score interval at level of a
// proportion with k successes in n trials (0 ≤ k ≤ n): centre
// (p̂ + z²/2n)/(1 + z²/n) and half-width z·√(p̂(1−p̂)/n + z²/4n²)/(1 + z²/n),
// z the two-sided normal quantile. It stays inside [0, 1] and is not
// degenerate at k = 0 or k = n, unlike the normal (Wald) interval. n = 0
// gives [0, 1].
func WilsonInterval(k, n int, level float64) (lo, hi float64) {
	if n <= 0 {
		return 0, 1
	}
	z := math.Sqrt2 * math.Erfinv(level)
	nf := float64(n)
	p := float64(k) / nf
	z2 := z * z
	den := 1 + z2/nf
	centre := (p + z2/(2*nf)) / den
	half := z * math.Sqrt(p*(1-p)/nf+z2/(4*nf*nf)) / den
	return max(0, centre-half), min(1, centre+half)
}
