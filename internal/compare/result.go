package compare

// Verdict is what a metric's interval says of B against A.
type Verdict string

// The verdicts.
const (
	// Better: the interval excludes 0 on the metric's good side.
	Better Verdict = "better"
	// Worse: the interval excludes 0 on the metric's bad side.
	Worse Verdict = "worse"
	// NoDifference: the interval contains 0, or the change is within
	// the noise floor ([Metric.Floor]).
	NoDifference Verdict = "no_significant_difference"
	// Equivalent: the interval of the relative change lies within
	// ±[Config.EquivalentWithin]: no change larger than that.
	Equivalent Verdict = "equivalent"
	// Inconclusive: the interval excludes 0 and the change passes the
	// noise floor, but a run's measurement quality was degraded by as
	// much as the change ([Metric.Degradation]).
	Inconclusive Verdict = "inconclusive"
	// NotAvailable: a side has no value for the metric (no streamed
	// request for TTFT, no goodput SLOs, no server cache counts).
	NotAvailable Verdict = "n/a"
)

// Side describes one side of a comparison.
type Side struct {
	Label       string  `json:"label"`
	Dir         string  `json:"dir"`
	TraceSHA256 string  `json:"trace_sha256"`
	Model       string  `json:"model"`
	Host        string  `json:"host"`
	Requests    int     `json:"requests"`
	DurationS   float64 `json:"duration_s"`
	// Runs lists the runs of a side of several (replicates); nil for one.
	Runs []string `json:"runs,omitempty"`
}

// Metric is the comparison of one metric. Values are NaN where they do
// not exist (a side without the metric; a relative difference from 0).
type Metric struct {
	// Name is the metric ("ttft.p99", "output_token_throughput", …).
	Name string
	// Unit is the unit of A, B and the differences.
	Unit string
	// HigherIsBetter gives the metric's good direction.
	HigherIsBetter bool
	// A and B are the metric of each side, as summary.json gives it.
	A, B float64
	// Diff is B−A and Rel is (B−A)/A.
	Diff, Rel float64
	// DiffLow, DiffHigh and RelLow, RelHigh bound the bootstrap interval
	// of Diff and Rel at the result's level.
	DiffLow, DiffHigh float64
	RelLow, RelHigh   float64
	// Verdict says whether B is better, worse or not significantly
	// different.
	Verdict Verdict
	// Floor is the noise floor in the metric's unit: a change no larger
	// is no change (see [noiseFloor]); FloorWhy says what set it.
	Floor    float64
	FloorWhy string
	// Degradation is how far the degraded measurement of a run may have
	// moved the metric, in its unit (0 when no run was degraded, NaN
	// when the metric does not depend on the client's timing).
	Degradation float64
	// Note says why the verdict is not better or worse when the
	// interval alone would have made it so ("" otherwise).
	Note string
}

// Result is the comparison of B against A.
type Result struct {
	A, B Side
	// Paired reports that requests were paired, by trace row, or by
	// fan-out request (PairedBy); Pairs counts the pairs, UnpairedA and
	// UnpairedB the measured requests of each side without a partner
	// (left out of the comparison).
	Paired               bool
	PairedBy             string
	Pairs                int
	UnpairedA, UnpairedB int
	// Level, Resamples and Seed are the bootstrap's.
	Level     float64
	Resamples int
	Seed      uint64
	// RunsA and RunsB are the runs (replicates) of each side.
	RunsA, RunsB int
	// Blocks is the number of blocks of consecutive requests each run
	// was resampled in; Tail is the share of resamples each interval
	// cuts from each end, so that all the intervals of the comparison
	// hold together at Level.
	Blocks int
	Tail   float64
	// Metrics are the compared metrics in table order.
	Metrics []Metric
	// Warnings say why the runs may not be comparable.
	Warnings []string
	// Notes say how far the verdicts reach (run-to-run variation
	// unmeasured, degraded runs).
	Notes []string
}

// Metric returns the comparison of the named metric, and whether the
// result has it.
func (r *Result) Metric(name string) (Metric, bool) {
	for _, m := range r.Metrics {
		if m.Name == name {
			return m, true
		}
	}
	return Metric{}, false
}

func (r *Run) side() Side {
	var first, last int64
	for i := range r.reqs {
		if q := &r.reqs[i]; q.sent != 0 {
			if first == 0 || q.sent < first {
				first = q.sent
			}
			last = max(last, q.end)
		}
	}
	return Side{Label: r.Label, Dir: r.Dir, TraceSHA256: r.TraceSHA256, Model: r.Model, Host: r.Host,
		Requests: len(r.reqs), DurationS: float64(last-first) / 1e9}
}
