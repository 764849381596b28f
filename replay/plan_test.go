package replay

import (
	"cmp"
	"fmt"
	"math/rand/v2"
	"slices"
	"testing"
	"time"

	gocmp "github.com/google/go-cmp/cmp"

	"github.com/reprise-bench/reprise/trace"
)

// planOracle is the obvious session grouping: a slice of members per
// session, in first-appearance order, each sorted stably by turn.
func planOracle(rows []trace.Row, keep func(*trace.Row) bool) (sessOf, sessLen, next []int32, firsts []int32) {
	var members [][]int32
	by := map[string]int{}
	sessOf = make([]int32, len(rows))
	for i := range rows {
		r := &rows[i]
		if !keep(r) {
			continue
		}
		s, ok := by[r.SessionID]
		if !ok || r.SessionID == "" {
			s = len(members)
			members = append(members, nil)
			if r.SessionID != "" {
				by[r.SessionID] = s
			}
		}
		members[s] = append(members[s], int32(i))
	}
	multi := false
	for s, m := range members {
		slices.SortStableFunc(m, func(a, b int32) int { return cmp.Compare(rows[a].Turn, rows[b].Turn) })
		for _, it := range m {
			sessOf[it] = int32(s)
		}
		sessLen = append(sessLen, int32(len(m)))
		firsts = append(firsts, m[0])
		multi = multi || len(m) > 1
	}
	if multi {
		next = make([]int32, len(rows))
		for i := range next {
			next[i] = -1
		}
		for _, m := range members {
			for k := 0; k+1 < len(m); k++ {
				next[m[k]] = m[k+1]
			}
		}
	}
	return sessOf, sessLen, next, firsts
}

// TestPlanSessionsOracle compares the plan's session structure (one flat
// member array) with planOracle on random traces: interleaved sessions,
// turns out of order, rows without a session, rows outside the window.
func TestPlanSessionsOracle(t *testing.T) {
	for seed := range uint64(20) {
		t.Run(fmt.Sprint(seed), func(t *testing.T) {
			rng := rand.New(rand.NewPCG(seed, 9))
			n := 1 + rng.IntN(300)
			nsess := 1 + rng.IntN(40)
			rows := make([]trace.Row, n)
			turns := map[string]int{}
			for i := range rows {
				r := &rows[i]
				r.Index, r.Line = int64(i), int64(i+1)
				r.Offset, r.HasOffset = time.Duration(i)*time.Millisecond, true
				r.InputTokens, r.OutputTokens = 10, 10
				if seed%4 != 0 && rng.IntN(5) > 0 {
					r.SessionID = fmt.Sprintf("s%d", rng.IntN(nsess))
					r.Turn = turns[r.SessionID] + rng.IntN(3) - 1 // sometimes out of order
					turns[r.SessionID]++
					if r.Turn > 0 && rng.IntN(2) == 0 {
						r.Delay, r.HasDelay = time.Duration(rng.IntN(1000))*time.Millisecond, true
					}
				}
			}
			cfg := NewConfig()
			cfg.StartOffset = time.Duration(n/10) * time.Millisecond
			keep := func(r *trace.Row) bool { return r.Offset >= cfg.StartOffset }
			if seed%3 == 0 {
				cfg.StartOffset = 0
				keep = func(*trace.Row) bool { return true }
			}
			if !slices.ContainsFunc(rows, func(r trace.Row) bool { return keep(&r) }) {
				t.Skip("no row in the window")
			}
			p, err := NewPlan(cfg, rows)
			if err != nil {
				t.Fatal(err)
			}
			sessOf, sessLen, next, firsts := planOracle(rows, keep)
			if d := gocmp.Diff(sessOf, p.sessOf); d != "" {
				t.Errorf("sessOf (-oracle +plan):\n%s", d)
			}
			if d := gocmp.Diff(sessLen, p.sessLen); d != "" {
				t.Errorf("sessLen (-oracle +plan):\n%s", d)
			}
			if d := gocmp.Diff(next, p.next); d != "" {
				t.Errorf("next (-oracle +plan):\n%s", d)
			}
			// Fixed schedule: first turns sorted stably by due time.
			slices.SortStableFunc(firsts, func(a, b int32) int { return cmp.Compare(p.due[a], p.due[b]) })
			if d := gocmp.Diff(firsts, p.sessFirst); d != "" {
				t.Errorf("sessFirst (-oracle +plan):\n%s", d)
			}
			if (p.delay != nil) != (next != nil) {
				t.Fatalf("delay allocated %v, next %v", p.delay != nil, next != nil)
			}
			for i := range p.delay {
				r := &rows[i]
				want := int64(-1)
				if keep(r) && r.HasDelay {
					want = int64(r.Delay)
				}
				if p.delay[i] != want {
					t.Errorf("delay[%d] = %d, want %d", i, p.delay[i], want)
				}
			}
			if want := float64(len(slices.DeleteFunc(slices.Clone(rows), func(r trace.Row) bool { return !keep(&r) }))) / float64(len(sessLen)); p.meanTurns != want {
				t.Errorf("meanTurns %v, want %v", p.meanTurns, want)
			}
		})
	}
}
