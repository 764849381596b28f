package sweep

import (
	"context"
	"testing"
	"time"
)

// TestRepeatCooldown: with a cooldown each run after the first starts
// at least that long after the run before ended (a lower bound, which
// no busy machine breaks).
func TestRepeatCooldown(t *testing.T) {
	srv := mockModel.start(t)
	o := mockModel.base(srv, 2)
	o.Replay.RequestRate = 50
	const cool = 300 * time.Millisecond
	rep, err := Repeat(context.Background(), o, t.TempDir(), RunsConfig{Runs: 3, Cooldown: cool})
	if err != nil {
		t.Fatal(err)
	}
	s := rep.summaries()
	if len(s) != 3 {
		t.Fatalf("%d runs, want 3", len(s))
	}
	for k := 1; k < len(s); k++ {
		if gap := s[k].Run.Start.Sub(s[k-1].Run.End); gap < cool {
			t.Errorf("run %d started %v after run %d ended; want ≥ %v", k+1, gap, k, cool)
		}
	}
}
