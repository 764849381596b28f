package trace

import (
	"slices"
	"testing"
)

// TestSample: sequential keeps the rows; shuffle is a permutation per
// pass and random draws with replacement, both keeping every session's
// turns together and in order, renaming a session drawn again, and
// equal seeds giving equal orders.
func TestSample(t *testing.T) {
	rows := []Row{
		{Index: 0, SessionID: "a", Turn: 0}, {Index: 1}, {Index: 2, SessionID: "a", Turn: 1},
		{Index: 3}, {Index: 4, SessionID: "b"}, {Index: 5},
	}
	if got := Sample(rows, SampleSequential, 1, 100); len(got) != len(rows) {
		t.Fatalf("sequential changed the rows: %v", got)
	}
	check := func(s Sampling, got []Row, n int) {
		t.Helper()
		if len(got) < n {
			t.Fatalf("%s: %d rows, want ≥ %d", s, len(got), n)
		}
		last := map[string]int{}
		for i, r := range got {
			if r.SessionID == "" {
				continue
			}
			if p, ok := last[r.SessionID]; ok && (p != i-1 || got[p].Turn >= r.Turn) {
				t.Fatalf("%s: session %s not whole and in order: %v", s, r.SessionID, got)
			}
			last[r.SessionID] = i
		}
	}
	sh := Sample(rows, SampleShuffle, 7, 0)
	check(SampleShuffle, sh, len(rows))
	idx := func(rs []Row) []int64 {
		var out []int64
		for _, r := range rs {
			out = append(out, r.Index)
		}
		return out
	}
	got := idx(sh)
	slices.Sort(got)
	if !slices.Equal(got, []int64{0, 1, 2, 3, 4, 5}) {
		t.Errorf("shuffle is not a permutation: %v", idx(sh))
	}
	if !slices.Equal(idx(Sample(rows, SampleShuffle, 7, 0)), idx(sh)) {
		t.Errorf("equal seeds gave different orders")
	}
	two := Sample(rows, SampleShuffle, 7, 8)
	check(SampleShuffle, two, 8)
	if len(two) != 12 {
		t.Errorf("shuffle for 8 rows: %d rows, want two passes (12)", len(two))
	}
	rnd := Sample(rows, SampleRandom, 3, 50)
	check(SampleRandom, rnd, 50)
	renamed := false
	for _, r := range rnd {
		renamed = renamed || r.SessionID == "a#1" || r.SessionID == "b#1"
	}
	if !renamed {
		t.Errorf("no session drawn twice was renamed in 50 draws: %v", rnd)
	}
	if _, err := ParseSampling("sideways"); err == nil {
		t.Error("ParseSampling accepted sideways")
	}
}
