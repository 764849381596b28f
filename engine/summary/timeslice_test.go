package summary

import (
	"testing"
	"time"

	"github.com/reprise-bench/reprise/engine/record"
)

// TestSlicer: requests go to the slice of their send time counted from
// the first measured send; warmup is in none; empty slices are left out.
func TestSlicer(t *testing.T) {
	const ms = int64(time.Millisecond)
	base := int64(1_700_000_000) * int64(time.Second)
	reqs := []record.Request{
		{Phase: record.PhaseWarmup, SentNS: base - 50*ms, EndNS: base, StatusCode: 200},
		{SentNS: base + 250*ms, EndNS: base + 260*ms, StatusCode: 200},
		{SentNS: base, EndNS: base + 10*ms, StatusCode: 200},
		{SentNS: base + 99*ms, EndNS: base + 120*ms, StatusCode: 200},
		{SentNS: base + 100*ms, EndNS: base + 130*ms, StatusCode: 200},
	}
	s := NewSlicer(100*time.Millisecond, Options{})
	for i := range reqs {
		s.Start(&reqs[i])
	}
	for i := range reqs {
		s.Add(&reqs[i])
	}
	got := s.Slices(RunInfo{})
	want := []struct {
		index int
		n     int
	}{{0, 2}, {1, 1}, {2, 1}}
	if len(got) != len(want) {
		t.Fatalf("%d slices, want %d", len(got), len(want))
	}
	for i, w := range want {
		if got[i].Index != w.index || got[i].Summary.RequestCount != w.n {
			t.Errorf("slice %d: index %d with %d requests, want index %d with %d", i, got[i].Index, got[i].Summary.RequestCount, w.index, w.n)
		}
		if got[i].StartNS != base+int64(w.index)*100*ms || got[i].EndNS != got[i].StartNS+100*ms {
			t.Errorf("slice %d: [%d, %d)", i, got[i].StartNS, got[i].EndNS)
		}
	}
}
