//go:build race

package reprise_test

// raceEnabled reports whether the race detector is on: it slows the
// client several times, so load tests send less.
const raceEnabled = true
