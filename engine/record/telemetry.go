package record

// MetricSample is one value of one series of a server's Prometheus metrics
// at one scrape (server_metrics.parquet). Histograms and summaries are kept
// in full: one sample per bucket or quantile plus their _sum and _count.
type MetricSample struct {
	TimeNS int64  // Unix ns on the run's clock, when the scrape response was read
	Target string // scrape URL
	Metric string // family name, e.g. "vllm:time_to_first_token_seconds"
	Type   string // counter, gauge, histogram, summary or untyped
	// Labels is the series' label set without le/quantile, canonical form
	// `k1="v1",k2="v2"` sorted by name; "" for none.
	Labels string
	// Part is "" for plain values, or "bucket", "sum", "count" (histograms),
	// "quantile", "sum", "count" (summaries).
	Part string
	// Bound is the bucket's upper bound (le) or the quantile; NaN otherwise.
	Bound float64
	Value float64
}

// GPUSample is one GPU's state at one sample (gpu.parquet). A field the
// source does not provide is NaN (null in files).
type GPUSample struct {
	TimeNS        int64
	Source        string // "dcgm" or "nvml"
	GPU           int32  // device index
	UUID          string
	Name          string // model name, e.g. "NVIDIA H100 80GB HBM3"
	UtilPct       float64
	MemUsedBytes  float64
	MemTotalBytes float64
	PowerW        float64
	EnergyJ       float64 // cumulative since driver load
	TempC         float64
	SMClockMHz    float64
}
