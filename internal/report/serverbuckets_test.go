package report

import (
	"encoding/json"
	"testing"

	"github.com/google/go-cmp/cmp"

	"github.com/reprise-bench/reprise/engine/summary"
)

// TestServerQuantiles: the report shows a server histogram's quantiles
// as the buckets they fall in, with the interpolated values named as
// such: a constant 10 ms ITL in the bucket (0, 10] is not "p50 5 ms".
func TestServerQuantiles(t *testing.T) {
	five, ten := 5.0, 10.0
	in := &summary.Bucket{LowMS: 0, HighMS: &ten}
	top := &summary.Bucket{LowMS: 10}
	sv := summary.ServerSummary{Target: "http://127.0.0.1:1/metrics",
		ITL: &summary.HistogramStats{Metric: "m", Count: 100, MeanMS: 10, P50MS: &five, P90MS: &ten, P99MS: &ten,
			P50Bucket: in, P90Bucket: in, P99Bucket: top},
		// Without buckets (only _sum and _count): no row.
		TTFT: &summary.HistogramStats{Metric: "t", Count: 4, MeanMS: 125}}
	b, err := json.Marshal(map[string]any{"telemetry": map[string]any{"servers": []any{map[string]any{"server": sv}}}})
	if err != nil {
		t.Fatal(err)
	}
	var js map[string]any
	if err := json.Unmarshal(b, &js); err != nil {
		t.Fatal(err)
	}
	got := serverQuantiles([]*runData{{label: "a", summaryJSON: js}})
	want := [][]Cell{{{Text: "a"}, {Text: "http://127.0.0.1:1/metrics"}, {Text: "inter_token_latency"},
		{Text: "(0, 10]", Class: "num"}, {Text: "(0, 10]", Class: "num"}, {Text: "(10, +Inf)", Class: "num"}, {Text: "5 / 10 / 10", Class: "num"}}}
	if diff := cmp.Diff(want, got.Rows); diff != "" {
		t.Errorf("rows (-want +got):\n%s", diff)
	}
}
