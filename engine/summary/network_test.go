package summary

import (
	"testing"

	"github.com/reprise-bench/reprise/engine/record"
)

// TestNetworkAdjusted: with a round trip of 15 ms, every statistic of
// TTFT and request latency is the raw one less 15, clamped at 0 (TTFT's
// 10 ms minimum goes to 0), std and count unchanged; ITL is not
// adjusted. Without a round trip there is no adjusted metric.
func TestNetworkAdjusted(t *testing.T) {
	var reqs []record.Request
	for i, ttft := range []int64{10, 20, 30, 40} {
		reqs = append(reqs, record.Request{RequestID: uint64(i), Phase: record.PhaseProfile, SentNS: 1e9, IntendedNS: 1e9,
			FirstTokenNS: 1e9 + ttft*1e6, TTFTNS: ttft * 1e6, E2ENS: (ttft + 50) * 1e6, LastTokenNS: 1e9 + (ttft+50)*1e6,
			EndNS: 1e9 + (ttft+50)*1e6, OutputTokens: 2, ITLNS: 50e6, ServerCompletionTokens: -1, ServerPromptTokens: -1, ServerCachedTokens: -1})
	}
	plain := Summarize(reqs, RunInfo{}, Options{Streaming: true})
	if _, ok := plain.Metrics["network_adjusted_time_to_first_token"]; ok {
		t.Fatal("adjusted metrics without a round trip")
	}
	s := Summarize(reqs, RunInfo{NetworkRTT: &NetworkRTT{Source: "mean", MeanNS: 15e6}}, Options{Streaming: true})
	if r := s.Metrics["network_rtt"]; r == nil || r.Avg != 15 || r.Count != 1 {
		t.Fatalf("network_rtt %+v, want 15 ms", r)
	}
	for adj, src := range map[string]string{"network_adjusted_time_to_first_token": "time_to_first_token", "network_adjusted_request_latency": "request_latency"} {
		a, raw := s.Metrics[adj], s.Metrics[src]
		if a == nil || raw == nil {
			t.Fatalf("%s or %s missing", adj, src)
		}
		pairs := [][2]float64{{a.Avg, raw.Avg}, {a.Min, raw.Min}, {a.Max, raw.Max}, {a.P1, raw.P1}, {a.P50, raw.P50}, {a.P90, raw.P90}, {a.P99, raw.P99}}
		for i, p := range pairs {
			if want := max(p[1]-15, 0); p[0] != want {
				t.Errorf("%s stat %d: %v, want %v − 15 = %v", adj, i, p[0], p[1], want)
			}
		}
		if a.Std != raw.Std || a.Count != raw.Count || a.Sum != a.Avg*float64(a.Count) {
			t.Errorf("%s: std %v count %d sum %v; want %v, %d, avg × count", adj, a.Std, a.Count, a.Sum, raw.Std, raw.Count)
		}
	}
	if got := s.Metrics["network_adjusted_time_to_first_token"].Min; got != 0 {
		t.Errorf("TTFT min 10 − 15 = %v, want clamped to 0", got)
	}
	if _, ok := s.Metrics["network_adjusted_inter_token_latency"]; ok {
		t.Error("ITL adjusted: it holds no round trip")
	}
	if got := MeanRTT([]int64{1, 2, 4}); got != 2 {
		t.Errorf("MeanRTT(1, 2, 4) = %d, want 2 (2.33 rounded)", got)
	}
}
