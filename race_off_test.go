//go:build !race

package reprise_test

// raceEnabled reports whether the race detector is on.
const raceEnabled = false
