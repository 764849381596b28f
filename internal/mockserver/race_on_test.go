//go:build race

package mockserver

// raceEnabled reports whether the race detector is on; sync.Pool drops
// items at random under it, so allocation budgets do not hold.
const raceEnabled = true
