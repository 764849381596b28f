package summary

import "slices"

// networkMetrics are the rows network calibration adds to the table.
var networkMetrics = []metric{
	{tag: "network_rtt", header: "Network round trip (subtracted)", unit: "ms"},
	{tag: "network_adjusted_time_to_first_token", header: "Network-adjusted time to first token", unit: "ms"},
	{tag: "network_adjusted_time_to_first_output_token", header: "Network-adjusted time to first output token", unit: "ms"},
	{tag: "network_adjusted_request_latency", header: "Network-adjusted request latency", unit: "ms"},
}

// tableMetrics are the table's rows, in order: the HTTP timing metrics
// have their own table (WriteHTTPTable).
var tableMetrics = append(slices.DeleteFunc(slices.Clone(metrics), func(m metric) bool { return m.trace }), networkMetrics...)

// networkAdjusted maps each adjusted metric to its source: the metrics
// whose interval starts at the send. TTST, ITL and ICL are gaps inside
// the stream, which hold no round trip, and are not adjusted (AIPerf's
// list).
var networkAdjusted = [...][2]string{
	{"network_adjusted_time_to_first_token", "time_to_first_token"},
	{"network_adjusted_time_to_first_output_token", "time_to_first_output_token"},
	{"network_adjusted_request_latency", "request_latency"},
}

// adjustForNetwork adds network_rtt and the network_adjusted_* metrics
// of s.Run.NetworkRTT to s.Metrics: every statistic of the source less
// the mean round trip, clamped at 0, as AIPerf adjusts the aggregated
// results (a constant shifts the mean and every percentile by itself;
// std is unchanged).
func (s *Summary) adjustForNetwork() {
	n := s.Run.NetworkRTT
	if n == nil || n.MeanNS <= 0 {
		return
	}
	vals := []float64{ms(n.MeanNS)}
	if len(n.SamplesNS) > 0 {
		vals = vals[:0]
		for _, v := range n.SamplesNS {
			vals = append(vals, ms(v))
		}
	}
	rtt := Compute(vals)
	rtt.Unit = "ms"
	s.Metrics["network_rtt"] = &rtt
	d := ms(n.MeanNS)
	for _, p := range networkAdjusted {
		if src, ok := s.Metrics[p[1]]; ok {
			st := shifted(*src, d)
			s.Metrics[p[0]] = &st
		}
	}
}

// shifted returns st less d (in st's unit), each statistic clamped at 0;
// Std and Count are st's, Sum stays Avg × Count.
func shifted(st Stats, d float64) Stats {
	for _, x := range []*float64{&st.Avg, &st.Min, &st.Max, &st.P1, &st.P5, &st.P10, &st.P25, &st.P50, &st.P75, &st.P90, &st.P95, &st.P99} {
		*x = max(*x-d, 0)
	}
	st.Sum = st.Avg * float64(st.Count)
	return st
}

// MeanRTT returns the mean of samples in ns (0 for none).
func MeanRTT(samples []int64) int64 {
	if len(samples) == 0 {
		return 0
	}
	var sum float64
	for _, v := range samples {
		sum += float64(v)
	}
	return int64(sum/float64(len(samples)) + 0.5)
}
