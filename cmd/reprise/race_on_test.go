//go:build race

package main

// raceEnabled reports whether the race detector is on: tests that run
// many whole replays (the doc-test) skip under it, and run in make test's
// pass without -race.
const raceEnabled = true
