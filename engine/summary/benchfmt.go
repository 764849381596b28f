package summary

import (
	"fmt"
	"io"
	"math"
	"path/filepath"
	"strconv"
	"strings"
)

// benchMetrics are the per-request metrics written by
// [Summary.WriteBenchfmt], with the short names of --goodput.
var benchMetrics = []struct{ tag, name string }{
	{"time_to_first_token", "ttft"},
	{"time_to_first_output_token", "ttfo"},
	{"inter_token_latency", "itl"},
	{"request_latency", "e2e"},
	{"latency_from_intended", "e2e-from-intended"},
	{"schedule_lateness", "lateness"},
}

// WriteBenchfmt writes s in the Go benchmark format
// (golang.org/design/14313-benchmark-format), one result line per key
// value, so benchstat can compare runs (docs/format/summary.md, "Benchmark
// lines"):
//
//	model: M
//	BenchmarkReplay/ttft-p50 300 0.06008 sec/op
//
// Configuration lines name what must be equal for two runs to be
// comparable (benchstat puts other values in separate tables). The
// iteration count is the number of requests behind the value. Times are in
// sec/op, which benchstat shows with SI prefixes (60.08m). A value that is
// NaN or infinite gets no line. The text is written with one Write call.
func (s *Summary) WriteBenchfmt(w io.Writer) error {
	var b strings.Builder
	config := func(k, v string) {
		if v = strings.Join(strings.Fields(v), " "); v != "" {
			fmt.Fprintf(&b, "%s: %s\n", k, v)
		}
	}
	config("model", s.Run.Model)
	config("endpoint", s.Run.Endpoint)
	config("mode", s.Run.Mode)
	if s.Run.Trace != "" {
		config("trace", filepath.Base(s.Run.Trace))
	}
	config("streaming", strconv.FormatBool(s.Options.Streaming))
	if len(s.Options.Goodput) > 0 {
		slo := make([]string, len(s.Options.Goodput))
		for i, g := range s.Options.Goodput {
			slo[i] = g.Tag + ":" + strconv.FormatFloat(g.Value, 'g', -1, 64)
		}
		config("goodput", strings.Join(slo, " "))
	}
	line := func(name string, n int, v float64, unit string) {
		if math.IsNaN(v) || math.IsInf(v, 0) {
			return
		}
		// Nine significant digits: more than any comparison needs, and
		// no float noise such as 8.999999999999999e-06 for 0.009 ms.
		fmt.Fprintf(&b, "BenchmarkReplay/%s %d %s %s\n", name, max(n, 1), strconv.FormatFloat(v, 'g', 9, 64), unit)
	}
	for _, m := range benchMetrics {
		st, ok := s.Metrics[m.tag]
		if !ok {
			continue
		}
		for _, q := range []struct {
			name string
			v    float64
		}{{"mean", st.Avg}, {"p50", st.P50}, {"p90", st.P90}, {"p99", st.P99}} {
			line(m.name+"-"+q.name, st.Count, q.v/1000, "sec/op") // ms → s
		}
	}
	n := s.RequestCount + s.ErrorRequestCount
	line("request-throughput", n, s.RequestThroughput, "req/s")
	line("output-token-throughput", n, s.OutputTokenThroughput, "tok/s")
	line("total-token-throughput", n, s.TotalTokenThroughput, "tok/s")
	line("error-rate", n, s.ErrorRate(), "errors/req")
	if len(s.Options.Goodput) > 0 {
		line("goodput", n, s.Goodput, "req/s")
		line("good-fraction", n, s.GoodRequestFraction, "good/req")
	}
	_, err := io.WriteString(w, b.String())
	return err
}
