//go:build !race

package compare

// raceEnabled reports whether the race detector is on.
const raceEnabled = false
