//go:build !race

package main

// replayRowsUnderRace is 0 (all rows) without the race detector.
const replayRowsUnderRace = 0
