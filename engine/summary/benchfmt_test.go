package summary

import (
	"math"
	"strings"
	"testing"

	"github.com/google/go-cmp/cmp"
)

// TestWriteBenchfmt pins the benchmark lines of a summary with every kind
// of value: configuration, the six key metrics (one not a key metric is
// left out), throughputs, the error rate and goodput (golden file).
func TestWriteBenchfmt(t *testing.T) {
	st := func(avg, p50, p90, p99 float64, n int) *Stats {
		return &Stats{Unit: "ms", Avg: avg, P50: p50, P90: p90, P99: p99, Count: n}
	}
	s := &Summary{
		Run: RunInfo{Model: "Qwen/Qwen3-8B", Endpoint: "chat", Mode: "fixed_schedule",
			Trace: "/data/traces/conversation_trace.jsonl"},
		Options: Options{Streaming: true, Goodput: []SLO{{Tag: "time_to_first_token", Value: 250},
			{Tag: "inter_token_latency", Value: 12.5}}},
		Metrics: map[string]*Stats{
			"time_to_first_token":    st(61.5, 60.08, 95.25, 180.125, 298),
			"inter_token_latency":    st(8.25, 8, 9.5, 14, 298),
			"request_latency":        st(2100, 2000, 3100, 4800.5, 298),
			"latency_from_intended":  st(2100.25, 2000.25, 3100.25, 4800.75, 298),
			"schedule_lateness":      st(0.012, 0.009, 0.02, 0.081, 300),
			"output_sequence_length": {Unit: "tokens", Avg: 250, Count: 298}, // not a key metric
		},
		RequestCount: 298, ErrorRequestCount: 2,
		RequestThroughput: 9.875, OutputTokenThroughput: 2468.75, TotalTokenThroughput: 12345.5,
		Goodput: 9.5, GoodRequestFraction: 0.95,
	}
	var b strings.Builder
	if err := s.WriteBenchfmt(&b); err != nil {
		t.Fatal(err)
	}
	golden(t, []byte(b.String()))
}

// TestWriteBenchfmtSkips checks what WriteBenchfmt leaves out: empty
// configuration values (and the trace of a synthetic run), NaN and
// infinite values, goodput lines without SLOs; white space in a value
// collapses to one space, and a metric of no request counts as one.
func TestWriteBenchfmtSkips(t *testing.T) {
	s := &Summary{
		Run: RunInfo{Model: "my  model\tv2", Mode: "concurrency"},
		Metrics: map[string]*Stats{
			"time_to_first_token": {Unit: "ms", Avg: math.NaN(), P50: 1, P90: math.Inf(1), P99: 2},
		},
		RequestThroughput: math.NaN(), OutputTokenThroughput: 4, TotalTokenThroughput: 8,
	}
	var b strings.Builder
	if err := s.WriteBenchfmt(&b); err != nil {
		t.Fatal(err)
	}
	want := `model: my model v2
mode: concurrency
streaming: false
BenchmarkReplay/ttft-p50 1 0.001 sec/op
BenchmarkReplay/ttft-p99 1 0.002 sec/op
BenchmarkReplay/output-token-throughput 1 4 tok/s
BenchmarkReplay/total-token-throughput 1 8 tok/s
BenchmarkReplay/error-rate 1 0 errors/req
`
	if d := cmp.Diff(want, b.String()); d != "" {
		t.Errorf("WriteBenchfmt (-want +got):\n%s", d)
	}
}
