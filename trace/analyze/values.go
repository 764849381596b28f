package analyze

// ratio returns a/b, or 0 when b is 0 (a share of nothing is none).
func ratio(a, b int64) float64 {
	if b == 0 {
		return 0
	}
	return float64(a) / float64(b)
}
