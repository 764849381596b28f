// What runs.json holds: the across-run intervals of repeated runs and
// how their convergence rule ended.

package summary

import "errors"

// DefaultConfidenceLevel is the confidence level of [AcrossRuns]
// intervals when none is given.
const DefaultConfidenceLevel = 0.95

// RunsSchemaVersion is the version of runs.json (docs/format/sweep.md).
const RunsSchemaVersion = "2"

// Interval is the across-run statistics of one metric: the mean over
// runs of the per-run value and its confidence interval at the level, on
// the metric's Scale. Values are in Unit. With one run (or values that
// are all equal) the interval is the point itself; with none, N is 0 and
// the other fields are 0.
type Interval struct {
	Unit string `json:"unit"`
	// Scale is how the interval was computed: [ScaleLinear], [ScaleLog]
	// or [ScaleLogit], by what range the metric's values can take.
	Scale string  `json:"scale"`
	N     int     `json:"n"`
	Mean  float64 `json:"mean"`
	// Std is the sample standard deviation (n−1), SE the standard error
	// Std/√N, CV the coefficient of variation Std/|Mean| (0 when Mean
	// is 0).
	Std float64 `json:"std"`
	SE  float64 `json:"se"`
	CV  float64 `json:"cv"`
	Min float64 `json:"min"`
	Max float64 `json:"max"`
	// TCritical is the two-sided Student-t quantile of the level with
	// N−1 degrees of freedom. Low and High bound the interval: Mean ∓
	// TCritical·SE on the linear scale, the bounds of the t-interval of
	// log(Mean) or logit(Mean) (by the delta method) mapped back on the
	// log and logit scales, so that a rate's interval stays above 0 and
	// a fraction's inside [0, 1].
	TCritical float64 `json:"t_critical"`
	Low       float64 `json:"ci_low"`
	High      float64 `json:"ci_high"`
	// RelHalfWidth is (High−Low)/2/|Mean|, what --until-ci and
	// --convergence-threshold compare (0 when Mean is 0).
	RelHalfWidth float64 `json:"rel_half_width"`
	// Values are the per-run values, in run order.
	Values []float64 `json:"values"`
}

// AcrossRuns is the across-run summary of repeated runs of one load
// (runs.json): a confidence interval for the mean of every headline
// metric, and how the runs were stopped.
type AcrossRuns struct {
	SchemaVersion string `json:"schema_version"`
	// Runs counts the runs summarized; Level is the confidence level.
	Runs  int     `json:"runs"`
	Level float64 `json:"confidence_level"`
	// Method is "t": Student-t intervals of the mean of per-run values,
	// each on its metric's [Interval.Scale].
	Method string `json:"method"`
	// RunDirs are the run directories, relative to runs.json's
	// directory, in run order.
	RunDirs []string `json:"run_dirs,omitempty"`
	// UntilCI is the --until-ci bound (0 = none) and Converged whether
	// a convergence rule stopped the runs before the most allowed.
	UntilCI   float64 `json:"until_ci,omitempty"`
	Converged bool    `json:"converged,omitempty"`
	// Convergence is the convergence rule and whether it was reached;
	// nil without one.
	Convergence *Convergence `json:"convergence,omitempty"`
	// Metrics are keyed as [HeadlineMetrics] names them, plus the
	// convergence metric when it is not a headline one.
	Metrics map[string]Interval `json:"metrics"`
}

// ErrUnknownRunMetric is returned by [RunMetricKey] for a metric or
// statistic it does not know.
var ErrUnknownRunMetric = errors.New("unknown run metric")

// Convergence is a stop rule of repeated runs (--until-ci, or
// --convergence-metric with --convergence-stat and
// --convergence-threshold) and how it ended.
type Convergence struct {
	// Rule is "until_ci" (every metric of the --until-ci list that the
	// runs have) or "metric" (one named metric and statistic).
	Rule string `json:"rule"`
	// Metrics are the checked metrics' keys, as [AcrossRuns.Metrics]
	// names them.
	Metrics []string `json:"metrics"`
	// Threshold is the bound on each checked metric's RelHalfWidth;
	// MinRuns the fewest runs the rule may stop after.
	Threshold float64 `json:"threshold"`
	MinRuns   int     `json:"min_runs"`
	// Reached reports that after Runs runs every checked metric that the
	// runs have (at least one) was within Threshold.
	Reached bool `json:"reached"`
	Runs    int  `json:"runs"`
	// Metric is the checked metric with the widest interval after the
	// last run and HalfWidth its RelHalfWidth, the achieved bound; "" and
	// 0 when no run has any checked metric.
	Metric    string  `json:"widest_metric"`
	HalfWidth float64 `json:"achieved_rel_half_width"`
	// Mode is a "metric" rule's [ModeCIWidth] ("" in files written
	// before modes), [ModeCV] or [ModeDistribution]. CV is the checked
	// metric's coefficient of variation (ModeCV); KS and PValue are the
	// Kolmogorov–Smirnov statistic and p-value of the last run against
	// the earlier ones (ModeDistribution), whose Threshold is the p-value
	// to exceed.
	Mode   string  `json:"mode,omitempty"`
	CV     float64 `json:"achieved_cv,omitempty"`
	KS     float64 `json:"ks_statistic,omitempty"`
	PValue float64 `json:"p_value,omitempty"`
}

// Scales of an across-run interval ([Interval.Scale]).
const (
	// ScaleLinear is the Student-t interval mean ∓ t·se, for a quantity
	// that may be negative (schedule lateness, token count errors).
	ScaleLinear = "linear"
	// ScaleLog is the t-interval of log(mean), by the delta method:
	// mean·exp(∓t·se/mean), for a quantity that cannot be negative
	// (rates, latencies, counts): it stays above 0.
	ScaleLog = "log"
	// ScaleLogit is the t-interval of logit(mean), by the delta method:
	// expit(logit(mean) ∓ t·se/(mean·(1−mean))), for a fraction: it stays
	// inside [0, 1].
	ScaleLogit = "logit"
)
