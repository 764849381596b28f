package report

import (
	"strconv"
)

// serverQuantiles tabulates the quantiles of the server's own latency
// histograms (summary.json's telemetry.servers[].server) as the buckets
// they fall in: a quantile is interpolated inside its bucket
// (histogram_quantile), so the bucket is what the histogram measured and
// the interpolated value is shown as such.
func serverQuantiles(runs []*runData) Table {
	t := Table{Caption: "Server histogram quantiles: the bucket each falls in (the interpolated value is not measured)",
		Header: []string{"run", "server", "metric", "p50 bucket (ms)", "p90 bucket (ms)", "p99 bucket (ms)", "interpolated p50 / p90 / p99 (ms)"}}
	for _, d := range runs {
		tel, _ := d.summaryJSON["telemetry"].(map[string]any)
		servers, _ := tel["servers"].([]any)
		for _, sv := range servers {
			m, _ := sv.(map[string]any)
			info, _ := m["server"].(map[string]any)
			target, _ := info["target"].(string)
			for _, tag := range []string{"time_to_first_token", "inter_token_latency", "request_latency"} {
				h, _ := info[tag].(map[string]any)
				row := []Cell{{Text: d.label}, {Text: target}, {Text: tag}}
				interp := ""
				ok := true
				for _, q := range []string{"p50", "p90", "p99"} {
					b, _ := h[q+"_bucket"].(map[string]any)
					v, hasV := h[q+"_ms"].(float64)
					lo, hasLo := b["low_ms"].(float64)
					if !hasV || !hasLo {
						ok = false
						break
					}
					text := "(" + short(lo) + ", +Inf)"
					if hi, has := b["high_ms"].(float64); has {
						text = "(" + short(lo) + ", " + short(hi) + "]"
					}
					row = append(row, Cell{Text: text, Class: "num"})
					if interp != "" {
						interp += " / "
					}
					interp += short(v)
				}
				if ok {
					t.Rows = append(t.Rows, append(row, Cell{Text: interp, Class: "num"}))
				}
			}
		}
	}
	return t
}

func short(v float64) string { return strconv.FormatFloat(v, 'g', 4, 64) }
