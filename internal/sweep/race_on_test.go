//go:build race

package sweep

// raceEnabled: the race detector slows the client and the mock server
// about tenfold, so measured latencies and capacities no longer follow
// the mock's settings.
const raceEnabled = true
