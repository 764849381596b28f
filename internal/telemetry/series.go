package telemetry

import (
	"math"
	"slices"
	"strings"

	"github.com/reprise-bench/reprise/engine/record"
	"github.com/reprise-bench/reprise/engine/summary"
)

// histQuantiles are the histogram estimates of SeriesStats, as AIPerf
// names them (p1_estimate … p99_estimate).
var histQuantiles = []struct {
	Name string
	Q    float64
}{{"p1", 0.01}, {"p5", 0.05}, {"p10", 0.10}, {"p25", 0.25}, {"p50", 0.50},
	{"p75", 0.75}, {"p90", 0.90}, {"p95", 0.95}, {"p99", 0.99}}

// SeriesStats returns the statistics of every series in the server_metrics
// samples (in the order the scraper wrote them) over the window
// [startNS, endNS]: one per target, family and label set, by target in
// order of appearance, then family and labels. They are computed as
// Summarize computes its known families (the same baseline, resets and
// bucket quantiles), but per label set: a known family with one label set
// has the numbers of summary.json's servers section. Reprise's own
// reprise:* series and summaries are left out.
func SeriesStats(samples []record.MetricSample, startNS, endNS int64) []summary.MetricSeries {
	a := &Accumulator{targets: map[string]*targetSeries{}, every: true}
	a.AddAll(samples)
	secs := float64(endNS-startNS) / 1e9
	var out []summary.MetricSeries
	for _, name := range a.order {
		ts := a.targets[name]
		keys := slices.Sorted(func(yield func(string) bool) {
			for k := range ts.scalars {
				if !yield(k) {
					return
				}
			}
			for k := range ts.hists {
				if !yield(k) {
					return
				}
			}
		})
		for _, k := range keys {
			metric, labels, _ := strings.Cut(k, seriesSep)
			ms := summary.MetricSeries{Target: name, Metric: metric, Labels: record.LabelMap(labels)}
			var ok bool
			switch ts.types[k] {
			case "histogram":
				ms.Type = "histogram"
				ms.Stats, ms.Buckets, ok = histSeries(ts.hists[k], ts.ok, startNS, secs)
			case "counter":
				ms.Type = "counter"
				ms.Stats, ok = counterSeries(ts.scalars[k], ts.ok, startNS, secs)
			default:
				ms.Type = "gauge"
				ms.Stats, ok = gaugeSeries(ts.scalars[k], startNS, endNS)
			}
			if ok {
				out = append(out, ms)
			}
		}
	}
	return out
}

func counterSeries(pts []point, ok []int64, startNS int64, secs float64) (map[string]float64, bool) {
	d := counterDelta(pts, ok, startNS)
	if d == nil {
		return nil, false
	}
	st := map[string]float64{"total": *d}
	if secs > 0 {
		st["rate"] = *d / secs
	}
	return st, true
}

// gaugeSeries summarises the gauge's scrapes inside the window with the
// summary's statistics (summary.Compute: population standard deviation,
// numpy's linear percentiles, as AIPerf).
func gaugeSeries(pts []point, startNS, endNS int64) (map[string]float64, bool) {
	var vs []float64
	for _, p := range pts {
		if p.t >= startNS && p.t <= endNS {
			vs = append(vs, p.v)
		}
	}
	if len(vs) == 0 {
		return nil, false
	}
	c := summary.Compute(vs)
	return map[string]float64{"avg": c.Avg, "min": c.Min, "max": c.Max, "std": c.Std,
		"p1": c.P1, "p5": c.P5, "p10": c.P10, "p25": c.P25, "p50": c.P50, "p75": c.P75, "p90": c.P90, "p95": c.P95, "p99": c.P99}, true
}

func histSeries(hs []histPoint, ok []int64, startNS int64, secs float64) (map[string]float64, []summary.BucketCount, bool) {
	d, seen := histDelta(hs, ok, startNS)
	if !seen {
		return nil, nil, false
	}
	st := map[string]float64{"count": d.count, "sum": d.sum}
	if secs > 0 {
		st["count_rate"], st["sum_rate"] = d.count/secs, d.sum/secs
	}
	if d.count > 0 {
		st["avg"] = d.sum / d.count
		for _, q := range histQuantiles {
			if v := bucketQuantile(q.Q, d.bounds, d.counts); !math.IsNaN(v) {
				st[q.Name+"_estimate"] = v
			}
		}
	}
	buckets := make([]summary.BucketCount, len(d.bounds))
	for i, b := range d.bounds {
		buckets[i] = summary.BucketCount{LE: b, Count: d.counts[i]}
	}
	return st, buckets, true
}
