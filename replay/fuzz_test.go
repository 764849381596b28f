package replay

import (
	"context"
	"fmt"
	"math/rand/v2"
	"sync"
	"testing"
	"testing/synctest"
	"time"

	"github.com/reprise-bench/reprise/trace"
)

// randomScenario derives a configuration and a trace (nil = synthetic)
// from a seed: every mode, late policy, cap, warmup and stop condition.
func randomScenario(seed uint64) (Config, []trace.Row, func(*Job) time.Duration) {
	rng := rand.New(rand.NewPCG(seed, seed^0x9e3779b97f4a7c15))
	c := NewConfig()
	c.Seed = rng.Uint64()
	c.Late = []LatePolicy{LateBurst, LateShift, LateSkip}[rng.IntN(3)]
	c.LateThreshold = time.Duration(rng.IntN(3)) * time.Millisecond
	c.Senders = 1 + rng.IntN(6)
	var rows []trace.Row
	if rng.IntN(4) > 0 {
		n := 1 + rng.IntN(25)
		sessions := 1 + rng.IntN(6)
		turn := map[string]int{}
		off := time.Duration(0)
		for i := range n {
			off += time.Duration(rng.IntN(4)) * time.Millisecond
			r := trace.Row{Index: int64(i), Line: int64(i + 1), Offset: off, HasOffset: true, ParentID: -1, RequestID: -1}
			if rng.IntN(3) > 0 {
				r.SessionID = fmt.Sprint("s", rng.IntN(sessions))
				r.Turn = turn[r.SessionID]
				turn[r.SessionID]++
				if r.Turn > 0 && rng.IntN(2) == 0 {
					r.HasOffset, r.Offset = false, 0
					r.Delay, r.HasDelay = time.Duration(rng.IntN(3))*time.Millisecond, rng.IntN(2) == 0
				}
			}
			rows = append(rows, r)
		}
	}
	switch rng.IntN(4) {
	case 0: // auto: fixed for a trace
		if rows == nil {
			c.RequestRate = 100 + float64(rng.IntN(2000))
		}
		c.Speedup = []float64{1, 2, 0.5}[rng.IntN(3)]
		if rows == nil {
			c.Speedup = 1
		}
	case 1:
		c.Mode = ModeRate
		c.RequestRate = 100 + float64(rng.IntN(2000))
		c.Arrival = []Arrival{ArrivalConstant, ArrivalPoisson, ArrivalGamma}[rng.IntN(3)]
		if c.Arrival == ArrivalGamma {
			c.Smoothness = 0.25 + rng.Float64()*4
		}
		if rng.IntN(2) == 0 {
			c.RateRamp = time.Duration(rng.IntN(20)) * time.Millisecond
		}
	case 2:
		c.Mode = ModeConcurrency
		c.Concurrency = 1 + rng.IntN(c.Senders)
		if c.Concurrency >= 2 && rng.IntN(2) == 0 {
			c.ConcurrencyRamp = time.Duration(1+rng.IntN(20)) * time.Millisecond
		}
	case 3:
		c.Mode = ModeUserCentric
		c.UserCentricRate = 100 + float64(rng.IntN(1000))
		c.NumUsers = 1 + rng.IntN(5)
	}
	if c.Mode != ModeConcurrency && rng.IntN(3) == 0 {
		c.Concurrency = 1 + rng.IntN(c.Senders)
	}
	switch rng.IntN(3) {
	case 0:
		c.RequestCount = 1 + rng.IntN(30)
	case 1:
		c.Duration = time.Duration(1+rng.IntN(40)) * time.Millisecond
		c.Grace = time.Duration(rng.IntN(10)) * time.Millisecond
	}
	if rng.IntN(3) == 0 {
		c.WarmupRequests = rng.IntN(4)
	}
	service := rng.IntN(3000) // µs
	return c, rows, func(j *Job) time.Duration {
		return time.Duration((j.ID*7919)%uint64(service+1)) * time.Microsecond
	}
}

// checkScenario runs a scenario in virtual time and checks the
// invariants every mode must keep.
func checkScenario(t *testing.T, seed uint64) {
	cfg, rows, service := randomScenario(seed)
	p, err := NewPlan(cfg, rows)
	if err != nil {
		return // invalid combinations are fine; NewPlan must only not panic
	}
	synctest.Test(t, func(t *testing.T) {
		var mu sync.Mutex
		type done struct {
			j   Job
			end int64
		}
		var ran []done
		var skipped []Job
		h := skipFunc{
			handle: func(ctx context.Context, j *Job) {
				if d := service(j); d > 0 {
					select {
					case <-time.After(d):
					case <-ctx.Done():
					}
				}
				mu.Lock()
				ran = append(ran, done{*j, j.NowNS()})
				mu.Unlock()
			},
			skip: func(j *Job) { skipped = append(skipped, *j) },
		}
		st, err := p.run(t.Context(), h, func(b time.Time) sleeper { return newPlainSleeper(b) }, nil)
		if err != nil {
			t.Fatalf("seed %d: %v", seed, err)
		}
		ids := map[uint64]bool{}
		endOf := map[int]int64{} // item → completion
		for _, d := range ran {
			j := d.j
			if ids[j.ID] {
				t.Fatalf("seed %d: id %d twice", seed, j.ID)
			}
			ids[j.ID] = true
			if j.DispatchedNS < j.IntendedNS {
				t.Fatalf("seed %d: job %d dispatched %v early", seed, j.ID, j.IntendedNS-j.DispatchedNS)
			}
			if j.Sender < 0 || j.Sender >= max(cfg.Senders, 1) {
				t.Fatalf("seed %d: job %d on sender %d", seed, j.ID, j.Sender)
			}
			endOf[j.Item] = d.end
		}
		for _, j := range skipped {
			if ids[j.ID] {
				t.Fatalf("seed %d: id %d twice", seed, j.ID)
			}
			ids[j.ID] = true
		}
		for i := range uint64(len(ids)) {
			if !ids[i] {
				t.Fatalf("seed %d: ids not dense, %d missing of %d", seed, i, len(ids))
			}
		}
		// A later turn never goes before its predecessor completed (only
		// checkable without wrap-around, where items are unique).
		if p.next != nil && !p.wrap {
			for _, d := range ran {
				for prev, nx := range p.next {
					if int(nx) == d.j.Item {
						if e, ok := endOf[prev]; ok && d.j.DispatchedNS < e {
							t.Fatalf("seed %d: turn item %d sent before item %d completed", seed, d.j.Item, prev)
						}
					}
				}
			}
		}
		if st.Dispatched+st.Warmup != int64(len(ran)) || st.Skipped < int64(len(skipped)) || st.Completed != int64(len(ran)) {
			t.Fatalf("seed %d: stats %+v vs %d ran, %d skipped", seed, st, len(ran), len(skipped))
		}
		if cfg.RequestCount > 0 && st.Dispatched > int64(cfg.RequestCount) {
			t.Fatalf("seed %d: %d measured requests, limit %d", seed, st.Dispatched, cfg.RequestCount)
		}
	})
}

type skipFunc struct {
	handle func(context.Context, *Job)
	skip   func(*Job)
}

func (s skipFunc) Handle(ctx context.Context, j *Job) { s.handle(ctx, j) }
func (s skipFunc) Skip(j *Job)                        { s.skip(j) }

func TestRandomScenarios(t *testing.T) {
	n := uint64(300)
	if testing.Short() {
		n = 50
	}
	for seed := range n {
		checkScenario(t, seed)
	}
}

// FuzzSchedule explores scenarios beyond the fixed seeds of
// TestRandomScenarios.
func FuzzSchedule(f *testing.F) {
	for _, s := range []uint64{1, 2, 3, 42, 1 << 40} {
		f.Add(s)
	}
	f.Fuzz(func(t *testing.T, seed uint64) { checkScenario(t, seed) })
}
