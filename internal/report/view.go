// What the charts use of one request, and the latencies of it the CDFs
// plot.

package report

// reqView is what the charts use of one request. Times are Unix ns (0:
// did not happen); latencies ms, NaN when the summary counts none for
// the request (summary.EachValue says which).
type reqView struct {
	intended, sent, first, last, end int64
	ttft, ttfo, itl, e2e             float32
	lateness, readLag, cacheErr      float32
	isl, osl                         int32
	kind                             uint8 // index in kinds; 0 = ok
	warm                             bool
}

// intendedOrSent is the request's intended time, or its send time for a
// request without a schedule.
func (v *reqView) intendedOrSent() int64 {
	if v.intended != 0 {
		return v.intended
	}
	return v.sent
}

// latencyMetrics are the distributions plotted as CDFs and bars.
var latencyMetrics = []struct {
	tag, name, long string
	col             func(*reqView) float32
}{
	{"time_to_first_token", "TTFT", "time to first token", func(v *reqView) float32 { return v.ttft }},
	{"time_to_first_output_token", "TTFO", "time to first output (non-reasoning) token", func(v *reqView) float32 { return v.ttfo }},
	{"inter_token_latency", "ITL", "inter-token latency", func(v *reqView) float32 { return v.itl }},
	{"request_latency", "E2E", "end-to-end request latency", func(v *reqView) float32 { return v.e2e }},
}
