package replay

import (
	"context"
	"runtime"
	"sync/atomic"
	"testing"
	"time"

	"github.com/reprise-bench/reprise/trace"
)

// TestDispatchAllocs proves the hot path allocates nothing per job: the
// dispatcher's fire (admit, idle-stack pop, mailbox write, wake token,
// stats) and the sender's side (Handle call, complete, idle-stack push).
func TestDispatchAllocs(t *testing.T) {
	if testing.CoverMode() != "" {
		t.Skip("instrumentation allocates")
	}
	cfg := NewConfig()
	cfg.RequestRate = 1
	cfg.RequestCount = 1 << 30
	cfg.Senders = 4
	p, err := NewPlan(cfg, nil)
	if err != nil {
		t.Fatal(err)
	}
	var stamps atomic.Int64
	h := HandlerFunc(func(_ context.Context, j *Job) { stamps.Add(j.NowNS()) }) // a handler stamps on the run's clock
	t0 := time.Now()
	clk := ClockAt(t0)
	r := newRunner(p, h, newPlainSleeper(t0), clk, clk.at(t0), t.Context())
	r.startSenders()
	defer r.stopSenders()
	item := int32(0)
	allocs := testing.AllocsPerRun(2000, func() {
		for res := r.fire(item, r.sl.now(), 0, 0); res != fired; res = r.fire(item, r.sl.now(), 0, 0) {
			if res != blocked {
				t.Fatalf("fire = %d", res)
			}
			runtime.Gosched() // the last sender is between completion and the idle stack
		}
		item++
		for r.outstanding.Load() > 0 {
			runtime.Gosched()
		}
	})
	if allocs != 0 {
		t.Errorf("dispatch allocates %v per job, want 0", allocs)
	}
}

// TestSleepAllocs: the precision clock's waits allocate nothing.
func TestSleepAllocs(t *testing.T) {
	if testing.CoverMode() != "" {
		t.Skip("instrumentation allocates")
	}
	c := newPrecisionSleeper(time.Now())
	undo := c.setup()
	defer undo()
	allocs := testing.AllocsPerRun(200, func() {
		c.sleepUntil(c.now() + 20_000)
		c.nap(c.now() + 20_000)
	})
	if allocs != 0 {
		t.Errorf("sleepUntil+nap allocate %v, want 0", allocs)
	}
}

// TestRunAllocsIndependentOfLength: a whole fixed-schedule run with the
// production clock allocates the same whether it sends 500 or 5000 jobs,
// so nothing in the loop allocates per job (AllocsPerRun cannot see a
// whole run: it has setup).
func TestRunAllocsIndependentOfLength(t *testing.T) {
	checkRunAllocsFlat(t, func(cfg Config, rows []trace.Row) (*Plan, Handler) {
		p, err := NewPlan(cfg, rows)
		if err != nil {
			t.Fatal(err)
		}
		return p, HandlerFunc(func(context.Context, *Job) {})
	})
}

// checkRunAllocsFlat runs the plan that build makes of 100 (warm-up), 500
// and 5000 rows 20 µs apart and fails when the larger run allocates more
// than runtime noise (timers, GC bookkeeping) beyond the smaller: far
// below one allocation per job for the 4500 more jobs.
func checkRunAllocsFlat(t *testing.T, build func(Config, []trace.Row) (*Plan, Handler)) {
	t.Helper()
	if testing.CoverMode() != "" {
		t.Skip("instrumentation allocates")
	}
	measure := func(n int) uint64 {
		offs := make([]time.Duration, n)
		for i := range offs {
			offs[i] = time.Duration(i) * 20 * time.Microsecond
		}
		cfg := NewConfig()
		cfg.Senders = 8
		p, h := build(cfg, tsRows(offs...))
		var a, b runtime.MemStats
		runtime.GC()
		runtime.ReadMemStats(&a)
		if _, err := p.Run(t.Context(), h); err != nil {
			t.Fatal(err)
		}
		runtime.ReadMemStats(&b)
		return b.Mallocs - a.Mallocs
	}
	measure(100) // warm up lazily initialised runtime state
	small, large := measure(500), measure(5000)
	if large > small+45 {
		t.Errorf("run allocations grow with length: %d for 500 jobs, %d for 5000", small, large)
	}
}
