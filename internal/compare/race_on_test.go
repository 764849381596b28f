//go:build race

package compare

// raceEnabled reports whether the race detector is on: it slows the
// bootstrap tenfold, so the calibration test runs fewer comparisons.
const raceEnabled = true
