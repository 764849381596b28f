//go:build race

package main

// replayRowsUnderRace bounds the Mooncake replay of TestReplayMooncakeISLFidelity
// under the race detector, which makes tokenizing millions of prompt tokens
// ten times slower; without it every row of the sample is replayed.
const replayRowsUnderRace = 40
