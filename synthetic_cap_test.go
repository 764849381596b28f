package reprise

import (
	"testing"

	"github.com/reprise-bench/reprise/replay"
)

// TestSyntheticLengthsCapped: drawn synthetic lengths stay within the
// input cap (a first turn with its shared prefix and context) and int32
// output tokens, however wide the distribution; equal draws below the
// cap are unchanged.
func TestSyntheticLengthsCapped(t *testing.T) {
	const limit = 300
	s := SyntheticLoad{ISL: 200, ISLStdDev: 1e6, OSL: 4, OSLStdDev: 1e12, Sessions: 50, TurnsMean: 3, SharedPrefix: 64, UserContext: 32}
	rc := replay.Config{Seed: 7}
	rows := syntheticRows(&s, &rc, limit)
	if len(rows) == 0 {
		t.Fatal("no rows")
	}
	capped := 0
	for _, r := range rows {
		if r.InputTokens < 1 || r.InputTokens > limit {
			t.Errorf("row %d (turn %d): %d input tokens, want 1..%d", r.Index, r.Turn, r.InputTokens, limit)
		}
		if r.InputTokens == limit {
			capped++
		}
		if r.OutputTokens < 1 || int64(r.OutputTokens) > 1<<31-1 {
			t.Errorf("row %d: %d output tokens, want 1..2³¹-1", r.Index, r.OutputTokens)
		}
	}
	if capped == 0 {
		t.Errorf("no row reached the cap: the test does not test it")
	}
	for i := range 100 {
		r := synthRow(&syntheticLengths{ISL: 200, ISLStd: 1e6, OSL: 4, OSLStd: 1e12, Seed: 1, MaxISL: limit}, i)
		if r.InputTokens < 1 || r.InputTokens > limit || r.OutputTokens < 1 {
			t.Errorf("synthRow %d: %d input, %d output tokens", i, r.InputTokens, r.OutputTokens)
		}
	}
	if got, want := synthLength(511.6, limit), 300; got != want {
		t.Errorf("synthLength(511.6, %d) = %d, want %d", limit, got, want)
	}
	if got, want := synthLength(211.6, limit), 212; got != want {
		t.Errorf("synthLength(211.6, %d) = %d, want %d", limit, got, want)
	}
}
