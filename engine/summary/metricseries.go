package summary

// MetricSeries is one series of a server's Prometheus metrics (one
// target, family and label set) over the profile window: what AIPerf's
// server_metrics_export.json and .csv hold per series
// (docs/format/telemetry.md). Counters and histograms are increases from
// the baseline, as in [ServerSummary]; gauges are the scrapes inside the
// window.
type MetricSeries struct {
	Target string // scrape URL
	Metric string // family name
	// Type is "counter", "gauge" (gauges and untyped series) or
	// "histogram"; summaries are left out.
	Type string
	// Labels are the series' labels (le excluded); nil for none.
	Labels map[string]string
	// Stats are the statistics under AIPerf's names: counters total and
	// rate (per second of the window); gauges avg, min, max, std and p1 …
	// p99; histograms count, sum, avg, count_rate, sum_rate and
	// p1_estimate … p99_estimate (in the metric's own unit). A statistic
	// without a value (an empty histogram's avg) is absent.
	Stats map[string]float64
	// Buckets are a histogram's increases per bucket, by upper bound
	// ascending (+Inf last); cumulative, as Prometheus counts them.
	Buckets []BucketCount
}

// BucketCount is one bucket of a histogram series: its upper bound (le)
// and the observations at or below it over the window.
type BucketCount struct {
	LE    float64
	Count float64
}
