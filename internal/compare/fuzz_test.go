package compare

import (
	"slices"
	"testing"
)

// FuzzParseThresholds: any input parses or fails without a panic; a
// parsed gate names a known metric, a finite change ≥ 0, and parses again
// from its own Spec to the same gate.
func FuzzParseThresholds(f *testing.F) {
	for _, s := range []string{"ttft.p99:+5%", "e2e.p50:+20ms,output_token_throughput:-3%", "error_rate:0.01",
		"ttft.p99:-5%", "x:1", "itl.p90:", ":", "goodput:-1e309", "cache_hit_ratio:-2ratio"} {
		f.Add(s)
	}
	names := MetricNames()
	f.Fuzz(func(t *testing.T, s string) {
		ts, err := ParseThresholds([]string{s})
		if err != nil {
			return
		}
		for _, th := range ts {
			if !slices.Contains(names, th.Metric) || !(th.Value >= 0) {
				t.Fatalf("%q: gate %+v", s, th)
			}
			again, err := ParseThresholds([]string{th.Spec})
			if err != nil || len(again) != 1 || again[0] != th {
				t.Fatalf("%q: gate %+v parses again as %+v, %v", s, th, again, err)
			}
		}
	})
}

func TestParseThresholds(t *testing.T) {
	ts, err := ParseThresholds([]string{"ttft.p99:+5%, e2e.p50:20ms", "output_token_throughput:3%"})
	if err != nil {
		t.Fatal(err)
	}
	want := []Threshold{
		{Metric: "ttft.p99", Value: 0.05, Relative: true, Spec: "ttft.p99:+5%"},
		{Metric: "e2e.p50", Value: 20, Spec: "e2e.p50:20ms"},
		{Metric: "output_token_throughput", Value: 0.03, Relative: true, Spec: "output_token_throughput:3%"},
	}
	if !slices.Equal(ts, want) {
		t.Errorf("got %+v\nwant %+v", ts, want)
	}
	for _, bad := range []string{"ttft.p99:-5%", "output_token_throughput:+3%", "speed:1", "ttft.p99", "ttft.p99:fast", "ttft.p99:+5tokens/s"} {
		if _, err := ParseThresholds([]string{bad}); err == nil {
			t.Errorf("%q parsed", bad)
		}
	}
}
