package record

import "strings"

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

// LabelMap parses a canonical label string (MetricSample.Labels) into its
// pairs; nil for "". Escapes (\\, \n, \") are undone.
func LabelMap(labels string) map[string]string {
	if labels == "" {
		return nil
	}
	m := map[string]string{}
	for rest := labels; rest != ""; {
		eq := strings.Index(rest, `="`)
		if eq < 0 {
			break
		}
		key := rest[:eq]
		rest = rest[eq+2:]
		var val strings.Builder
		i := 0
		for ; i < len(rest) && rest[i] != '"'; i++ {
			c := rest[i]
			if c == '\\' && i+1 < len(rest) {
				i++
				c = rest[i]
				if c == 'n' {
					c = '\n'
				}
			}
			val.WriteByte(c)
		}
		m[key] = val.String()
		rest = strings.TrimPrefix(rest[min(i+1, len(rest)):], ",")
	}
	return m
}
