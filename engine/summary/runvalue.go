package summary

// RunMetricValue returns run s's value of key, a key of [RunMetricKey]
// ("time_to_first_token.p99", "output_token_throughput"); ok is false
// for a key it does not know or a metric the run does not have.
func RunMetricValue(s *Summary, key string) (v float64, ok bool) {
	h, ok := runMetric(key)
	if !ok {
		return 0, false
	}
	return h.get(s)
}
