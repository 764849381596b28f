package trace

import (
	"slices"
	"strings"
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

// TestFirstEntries: the first n entries are sessions whole (wherever
// their turns lie) and lone rows, counted where they first appear.
func TestFirstEntries(t *testing.T) {
	rows := []Row{
		{Index: 0, SessionID: "a", Turn: 0}, {Index: 1}, {Index: 2, SessionID: "a", Turn: 1},
		{Index: 3, SessionID: "b"}, {Index: 4}, {Index: 5, SessionID: "b", Turn: 1},
	}
	for _, tt := range []struct {
		n    int
		want []int64
	}{
		{1, []int64{0, 2}},          // session a
		{2, []int64{0, 1, 2}},       // a and the lone row 1
		{3, []int64{0, 1, 2, 3, 5}}, // and session b
		{4, []int64{0, 1, 2, 3, 4, 5}},
		{9, []int64{0, 1, 2, 3, 4, 5}}, // fewer entries than asked: all of them
	} {
		var got []int64
		for _, r := range FirstEntries(rows, tt.n) {
			got = append(got, r.Index)
		}
		if !slices.Equal(got, tt.want) {
			t.Errorf("FirstEntries(%d) = %v, want %v", tt.n, got, tt.want)
		}
	}
}

// TestSampleEntries: exactly n entries in every order, sessions whole
// and renamed when drawn again; sequential cycles in file order; shuffle
// draws every entry once per pass; equal seeds, equal draws.
func TestSampleEntries(t *testing.T) {
	rows := []Row{
		{Index: 0, SessionID: "a", Turn: 0}, {Index: 1, SessionID: "a", Turn: 1},
		{Index: 2}, {Index: 3, SessionID: "b"},
	}
	entryOf := func(r Row) string {
		if r.SessionID == "" {
			return "row2"
		}
		return r.SessionID
	}
	count := func(got []Row) (map[string]int, []string) {
		per := map[string]int{}
		var order []string
		for i, r := range got {
			if i > 0 && r.SessionID != "" && r.SessionID == got[i-1].SessionID {
				continue // a later turn of the same draw
			}
			per[entryOf(r)]++
			order = append(order, entryOf(r))
		}
		return per, order
	}
	seq := SampleEntries(rows, SampleSequential, 1, 5)
	if _, order := count(seq); !slices.Equal(order, []string{"a", "row2", "b", "a#1", "row2"}) {
		t.Errorf("sequential entries %v, want a row2 b a#1 row2", order)
	}
	if len(seq) != 7 {
		t.Errorf("sequential: %d rows, want 7 (session a twice)", len(seq))
	}
	sh := SampleEntries(rows, SampleShuffle, 7, 6)
	_, order := count(sh)
	if len(order) != 6 {
		t.Fatalf("shuffle: %d entries %v, want 6", len(order), order)
	}
	first := map[string]bool{}
	for _, e := range order[:3] {
		first[strings.SplitN(e, "#", 2)[0]] = true
	}
	if len(first) != 3 {
		t.Errorf("shuffle's first pass %v: want each entry once", order[:3])
	}
	rnd := SampleEntries(rows, SampleRandom, 3, 40)
	if _, order := count(rnd); len(order) != 40 {
		t.Errorf("random: %d entries, want 40", len(order))
	}
	again := SampleEntries(rows, SampleRandom, 3, 40)
	if !slices.EqualFunc(rnd, again, func(a, b Row) bool { return a.Index == b.Index && a.SessionID == b.SessionID }) {
		t.Error("equal seeds drew different entries")
	}
	for i := 1; i < len(rnd); i++ {
		if r := rnd[i]; r.Index == 1 && rnd[i-1].Index != 0 {
			t.Fatalf("random: session a's second turn without its first: %v", rnd)
		}
	}
	if got := SampleEntries(nil, SampleRandom, 1, 3); got != nil {
		t.Errorf("no rows: %v, want none", got)
	}
}
