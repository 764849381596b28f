package summary

import "math"

// DefaultConfidenceLevel is the confidence level of [AcrossRuns]
// intervals when none is given.
const DefaultConfidenceLevel = 0.95

// RunsSchemaVersion is the version of runs.json (docs/format/sweep.md).
const RunsSchemaVersion = "1"

// Interval is the across-run statistics of one headline metric: the
// mean over runs of the per-run value and its Student-t confidence
// interval. Values are in Unit. With one run (or values that are all
// equal) the interval is the point itself; with none, N is 0 and the
// other fields are 0.
type Interval struct {
	Unit string  `json:"unit"`
	N    int     `json:"n"`
	Mean float64 `json:"mean"`
	// Std is the sample standard deviation (n−1), SE the standard error
	// Std/√N, CV the coefficient of variation Std/|Mean| (0 when Mean
	// is 0).
	Std float64 `json:"std"`
	SE  float64 `json:"se"`
	CV  float64 `json:"cv"`
	Min float64 `json:"min"`
	Max float64 `json:"max"`
	// TCritical is the two-sided Student-t quantile of the level with
	// N−1 degrees of freedom; Low and High are Mean ∓ TCritical·SE.
	TCritical float64 `json:"t_critical"`
	Low       float64 `json:"ci_low"`
	High      float64 `json:"ci_high"`
	// RelHalfWidth is (High−Low)/2/|Mean|, what --until-ci compares
	// (0 when Mean is 0).
	RelHalfWidth float64 `json:"rel_half_width"`
	// Values are the per-run values, in run order.
	Values []float64 `json:"values"`
}

// AcrossRuns is the across-run summary of repeated runs of one load
// (runs.json): a t-interval for the mean of every headline metric.
type AcrossRuns struct {
	SchemaVersion string `json:"schema_version"`
	// Runs counts the runs summarized; Level is the confidence level.
	Runs  int     `json:"runs"`
	Level float64 `json:"confidence_level"`
	// Method is "t": Student-t intervals of the mean of per-run values.
	Method string `json:"method"`
	// Metrics are keyed as [HeadlineMetrics] names them.
	Metrics map[string]Interval `json:"metrics"`
}

// headline is one headline metric of a run: a key, its unit and how to
// read it from a summary (false when the run has no value).
type headline struct {
	key, unit string
	get       func(s *Summary) (float64, bool)
}

func stat(tag string, pick func(*Stats) float64) func(s *Summary) (float64, bool) {
	return func(s *Summary) (float64, bool) {
		st := s.Metrics[tag]
		if st == nil {
			return 0, false
		}
		return pick(st), true
	}
}

func avgOf(st *Stats) float64 { return st.Avg }
func p50Of(st *Stats) float64 { return st.P50 }
func p99Of(st *Stats) float64 { return st.P99 }

var headlines = []headline{
	{"request_throughput", "requests/sec", func(s *Summary) (float64, bool) { return s.RequestThroughput, true }},
	{"output_token_throughput", "tokens/sec", func(s *Summary) (float64, bool) { return s.OutputTokenThroughput, true }},
	{"total_token_throughput", "tokens/sec", func(s *Summary) (float64, bool) { return s.TotalTokenThroughput, true }},
	{"goodput", "requests/sec", func(s *Summary) (float64, bool) { return s.Goodput, len(s.Options.Goodput) > 0 }},
	{"good_request_fraction", "ratio", func(s *Summary) (float64, bool) {
		return s.GoodRequestFraction, len(s.Options.Goodput) > 0
	}},
	{"error_rate", "ratio", func(s *Summary) (float64, bool) { return s.ErrorRate(), true }},
	{"time_to_first_token.avg", "ms", stat("time_to_first_token", avgOf)},
	{"time_to_first_token.p50", "ms", stat("time_to_first_token", p50Of)},
	{"time_to_first_token.p99", "ms", stat("time_to_first_token", p99Of)},
	{"inter_token_latency.avg", "ms", stat("inter_token_latency", avgOf)},
	{"inter_token_latency.p50", "ms", stat("inter_token_latency", p50Of)},
	{"inter_token_latency.p99", "ms", stat("inter_token_latency", p99Of)},
	{"request_latency.avg", "ms", stat("request_latency", avgOf)},
	{"request_latency.p50", "ms", stat("request_latency", p50Of)},
	{"request_latency.p99", "ms", stat("request_latency", p99Of)},
	{"output_token_throughput_per_user.avg", "tokens/sec/user", stat("output_token_throughput_per_user", avgOf)},
	{"output_token_throughput_per_user.p50", "tokens/sec/user", stat("output_token_throughput_per_user", p50Of)},
	{"schedule_lateness.p99", "ms", stat("schedule_lateness", p99Of)},
}

// HeadlineMetrics returns the keys of the metrics [SummarizeRuns]
// summarizes, in display order: run-level rates and fractions by their
// summary.json key, per-request metrics as "tag.stat" (the run's avg,
// p50 or p99 of that metric). The caller owns the slice.
func HeadlineMetrics() []string {
	keys := make([]string, len(headlines))
	for i, h := range headlines {
		keys[i] = h.key
	}
	return keys
}

// SummarizeRuns returns the across-run statistics of the runs' headline
// metrics at confidence level (0 < level < 1; 0 takes
// [DefaultConfidenceLevel]). A metric is summarized over the runs that
// have a value for it, and left out when none has.
func SummarizeRuns(runs []*Summary, level float64) *AcrossRuns {
	if level <= 0 || level >= 1 {
		level = DefaultConfidenceLevel
	}
	a := &AcrossRuns{SchemaVersion: RunsSchemaVersion, Runs: len(runs), Level: level, Method: "t",
		Metrics: map[string]Interval{}}
	for _, h := range headlines {
		var vals []float64
		for _, s := range runs {
			if v, ok := h.get(s); ok && !math.IsNaN(v) && !math.IsInf(v, 0) {
				vals = append(vals, v)
			}
		}
		if len(vals) == 0 {
			continue
		}
		iv := TInterval(vals, level)
		iv.Unit = h.unit
		a.Metrics[h.key] = iv
	}
	return a
}

// TInterval returns the Student-t confidence interval at level of the
// mean of vals (the sample is assumed to be independent draws of a
// roughly normal per-run value: each run's statistic averages many
// requests). vals is not modified and not retained; Values is a copy.
func TInterval(vals []float64, level float64) Interval {
	iv := Interval{N: len(vals), Values: append([]float64(nil), vals...)}
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
