package compare

import "fmt"

type metricKind uint8

const (
	kindPercentile metricKind = iota
	kindRequestThroughput
	kindOutputThroughput
	kindTotalThroughput
	kindGoodput
	kindErrorRate
	kindCacheHit
)

// metricDef is one headline metric.
type metricDef struct {
	name   string
	unit   string
	higher bool // larger is better
	kind   metricKind
	lat    int     // kindPercentile: index into latencyTags
	p      float64 // kindPercentile: the percentile
	pi     int     // kindPercentile: index into percentiles
}

// percentiles are the latency percentiles compared.
var percentiles = [...]float64{50, 90, 99}

// metricDefs are the compared metrics in table order.
var metricDefs = func() []metricDef {
	var ds []metricDef
	for l, n := range latencyNames {
		for pi, p := range percentiles {
			ds = append(ds, metricDef{name: fmt.Sprintf("%s.p%g", n, p), unit: "ms", kind: kindPercentile, lat: l, p: p, pi: pi})
		}
	}
	return append(ds,
		metricDef{name: "request_throughput", unit: "req/s", higher: true, kind: kindRequestThroughput},
		metricDef{name: "output_token_throughput", unit: "tokens/s", higher: true, kind: kindOutputThroughput},
		metricDef{name: "total_token_throughput", unit: "tokens/s", higher: true, kind: kindTotalThroughput},
		metricDef{name: "goodput", unit: "req/s", higher: true, kind: kindGoodput},
		metricDef{name: "error_rate", unit: "ratio", kind: kindErrorRate},
		metricDef{name: "cache_hit_ratio", unit: "ratio", higher: true, kind: kindCacheHit},
	)
}()

// MetricNames returns the names of the compared metrics in table order
// ("ttft.p50" … "cache_hit_ratio").
func MetricNames() []string {
	out := make([]string, len(metricDefs))
	for i, d := range metricDefs {
		out[i] = d.name
	}
	return out
}

func metricByName(name string) (metricDef, bool) {
	for _, d := range metricDefs {
		if d.name == name {
			return d, true
		}
	}
	return metricDef{}, false
}
