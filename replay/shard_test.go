package replay

import (
	"fmt"
	"math/rand/v2"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/google/go-cmp/cmp"

	"github.com/reprise-bench/reprise/trace"
)

// shardTrace is a fixed-schedule trace of n sessions of 1 to 4 turns,
// first turns at seeded random times over 10 s, later turns 50 ms apart.
func shardTrace(n int) []trace.Row {
	rng := rand.New(rand.NewPCG(7, 7))
	var rows []trace.Row
	for s := range n {
		at := time.Duration(rng.Int64N(int64(10 * time.Second)))
		for turn := range 1 + rng.IntN(4) {
			rows = append(rows, trace.Row{Offset: at + time.Duration(turn)*ms(50), HasOffset: true,
				SessionID: fmt.Sprintf("s%d", s), Turn: turn, ParentID: -1, RequestID: -1})
		}
	}
	slices.SortStableFunc(rows, func(a, b trace.Row) int { return int(a.Offset - b.Offset) })
	for i := range rows {
		rows[i].Index, rows[i].Line = int64(i), int64(i+1)
	}
	return rows
}

func TestShardFixedSchedule(t *testing.T) {
	rows := shardTrace(60)
	service := func(*Job) time.Duration { return ms(1) }
	whole := jobLog{service: service}
	runVirtual(t, NewConfig(), rows, &whole)
	want := map[int]time.Duration{} // item → intended, after wall0
	for _, j := range whole.jobs {
		want[j.Item] = time.Duration(j.IntendedNS)
	}
	for _, n := range []int{2, 3, 7} {
		t.Run(fmt.Sprint(n), func(t *testing.T) {
			got := map[int]time.Duration{}
			owner := map[string]int{} // session → shard
			starts := make([][]time.Duration, n)
			maxTurns := 0
			for i := range n {
				cfg := NewConfig()
				cfg.Shard = Shard{Index: i, Count: n}
				l := jobLog{service: service}
				runVirtual(t, cfg, rows, &l)
				if len(l.jobs) == 0 {
					t.Fatalf("shard %d sent nothing", i)
				}
				for _, j := range l.jobs {
					if _, dup := got[j.Item]; dup {
						t.Errorf("row %d sent twice", j.Item)
					}
					got[j.Item] = time.Duration(j.IntendedNS)
					sid := rows[j.Item].SessionID
					if o, ok := owner[sid]; ok && o != i {
						t.Errorf("session %s on shards %d and %d", sid, o, i)
					}
					owner[sid] = i
					starts[i] = append(starts[i], time.Duration(j.IntendedNS))
					maxTurns = max(maxTurns, rows[j.Item].Turn+1)
				}
			}
			// Every row once, at the unsharded run's time (each bubble's
			// clock starts at the same instant).
			if diff := cmp.Diff(want, got); diff != "" {
				t.Errorf("item → intended (-unsharded +sharded):\n%s", diff)
			}
			// Balanced over time: at every instant the shards' sent
			// requests differ by little (the greedy bound is one session's
			// turns, counted at session starts; later turns trail them).
			var all []time.Duration
			for _, s := range starts {
				all = append(all, s...)
			}
			for _, at := range all {
				lo, hi := len(rows), 0
				for _, s := range starts {
					c := 0
					for _, x := range s {
						if x <= at {
							c++
						}
					}
					lo, hi = min(lo, c), max(hi, c)
				}
				if hi-lo > 2*maxTurns {
					t.Fatalf("at %v the shards sent between %d and %d requests (sessions up to %d turns)", at, lo, hi, maxTurns)
				}
			}
		})
	}
}

func TestShardRateConstant(t *testing.T) {
	// 1000 req/s constant over 3 shards: shard i sends at (3k+i) ms, the
	// unsharded instants exactly, and the shards' counts sum to 12.
	cfg := NewConfig()
	cfg.RequestRate, cfg.Arrival, cfg.RequestCount = 1000, ArrivalConstant, 12
	var whole jobLog
	_, wall0 := runVirtual(t, cfg, nil, &whole)
	var want, got []time.Duration
	for _, j := range whole.jobs {
		want = append(want, time.Duration(j.IntendedNS-wall0))
	}
	for i := range 3 {
		c := cfg
		c.Shard = Shard{Index: i, Count: 3}
		var l jobLog
		runVirtual(t, c, nil, &l)
		for _, j := range l.jobs {
			got = append(got, time.Duration(j.IntendedNS-wall0))
		}
	}
	slices.Sort(want)
	slices.Sort(got)
	if diff := cmp.Diff(want, got); diff != "" {
		t.Errorf("send instants (-unsharded +sharded):\n%s", diff)
	}
}

func TestShardRatePoisson(t *testing.T) {
	// 4 shards of Poisson 500/s for 4 s: 2000 arrivals expected, ±5 %
	// (sd ≈ 45, so the band is ±2.2 sd; the seeds are fixed). Shard
	// schedules differ (their own streams), and only shard 0 sends at 0.
	total := 0
	var firsts []time.Duration
	for i := range 4 {
		cfg := NewConfig()
		cfg.RequestRate, cfg.Duration, cfg.Shard = 500, 4*time.Second, Shard{Index: i, Count: 4}
		var l jobLog
		_, wall0 := runVirtual(t, cfg, nil, &l)
		js := l.byID()
		total += len(js)
		firsts = append(firsts, time.Duration(js[0].IntendedNS-wall0))
	}
	if total < 1900 || total > 2100 {
		t.Errorf("the shards sent %d requests in 4 s at 500/s, want about 2000", total)
	}
	if firsts[0] != 0 || slices.Contains(firsts[1:], 0) || len(slices.Compact(slices.Clone(firsts))) != 4 {
		t.Errorf("first sends %v: want shard 0 at 0 and the others apart", firsts)
	}
}

func TestShareSumsToWhole(t *testing.T) {
	for _, n := range []int{1, 2, 3, 8} {
		for _, x := range []int{8, 9, 17, 1000} {
			c := NewConfig()
			c.Concurrency, c.NumUsers, c.UserCentricRate, c.RequestCount, c.WarmupRequests = x, x, 10, x, x-1
			var conc, users, count, warm int
			var rate float64
			for i := range n {
				c.Shard = Shard{Index: i, Count: n}
				s := c.Share()
				conc, users, count, warm = conc+s.Concurrency, users+s.NumUsers, count+s.RequestCount, warm+s.WarmupRequests
				rate += s.UserCentricRate
				if gap, whole := float64(s.NumUsers)/s.UserCentricRate, float64(x)/10; n > 1 && (gap-whole > 1e-9 || whole-gap > 1e-9) {
					t.Errorf("%d/%d of %d users: turn gap %v, want %v", i, n, x, gap, whole)
				}
			}
			if conc != x || users != x || count != x || warm != x-1 || rate < 10-1e-9 || rate > 10+1e-9 {
				t.Errorf("N=%d x=%d: shares sum to concurrency %d users %d count %d warmup %d rate %v", n, x, conc, users, count, warm, rate)
			}
		}
	}
}

func TestShardUserCentric(t *testing.T) {
	// 2 users over 2 shards: each shard runs one, and every session is
	// sent by one shard.
	var rows []trace.Row
	for s := range 4 {
		for turn := range 3 {
			rows = append(rows, trace.Row{Index: int64(len(rows)), Line: int64(len(rows) + 1), SessionID: fmt.Sprint(s),
				Turn: turn, ParentID: -1, RequestID: -1})
		}
	}
	seen := map[int]int{}
	for i := range 2 {
		cfg := NewConfig()
		cfg.UserCentricRate, cfg.NumUsers, cfg.Shard = 100, 2, Shard{Index: i, Count: 2}
		var l jobLog
		runVirtual(t, cfg, rows, &l)
		for _, j := range l.jobs {
			seen[j.Item]++
		}
	}
	for item, n := range seen {
		if n != 1 {
			t.Errorf("row %d sent %d times", item, n)
		}
	}
}

func TestShardValidate(t *testing.T) {
	for _, tc := range []struct {
		set  func(*Config)
		want string
	}{
		{func(c *Config) { c.Shard = Shard{Index: 4, Count: 4} }, "Shard 4/4"},
		{func(c *Config) { c.Shard = Shard{Index: 0, Count: -1} }, "Shard 0/-1"},
		{func(c *Config) { c.Shard, c.Concurrency = Shard{Index: 0, Count: 4}, 3 }, "Concurrency 3 is less than the 4 shards"},
		{func(c *Config) { c.Shard, c.RequestCount = Shard{Index: 0, Count: 4}, 2 }, "RequestCount 2 is less than the 4 shards"},
		{func(c *Config) {
			c.Shard, c.UserCentricRate, c.NumUsers = Shard{Index: 0, Count: 4}, 1, 2
		}, "NumUsers 2 is less than the 4 shards"},
	} {
		c := NewConfig()
		tc.set(&c)
		err := c.Validate()
		if err == nil || !strings.Contains(err.Error(), tc.want) {
			t.Errorf("Validate() = %v, want %q", err, tc.want)
		}
	}
	// More shards than sessions: a shard without work is an error.
	cfg := NewConfig()
	cfg.Shard = Shard{Index: 2, Count: 3}
	if _, err := NewPlan(cfg, tsRows(0, ms(1))); err == nil || !strings.Contains(err.Error(), "has no session") {
		t.Errorf("NewPlan(3 shards of 2 sessions) = %v", err)
	}
}

func TestParseShard(t *testing.T) {
	for in, want := range map[string]Shard{"0/4": {0, 4}, "3/4": {3, 4}, " 0/1 ": {0, 1}, "99999/100000": {99999, 100000}} {
		if got, err := ParseShard(in); err != nil || got != want {
			t.Errorf("ParseShard(%q) = %v, %v; want %v", in, got, err, want)
		}
	}
	for _, in := range []string{"", "4", "4/4", "-1/4", "0/0", "a/4", "1/b", "1/2/3", "0/100001", "0/1000000000000000"} {
		if _, err := ParseShard(in); err == nil {
			t.Errorf("ParseShard(%q) succeeded", in)
		}
	}
}

func TestStartAt(t *testing.T) {
	// The bubble starts at 2000-01-01T00:00:00Z; StartAt 90 s later is
	// the run's time zero: the first row goes then, the second 10 ms on.
	cfg := NewConfig()
	at := time.Date(2000, 1, 1, 0, 1, 30, 0, time.UTC)
	cfg.StartAt = at
	var l jobLog
	st, _ := runVirtual(t, cfg, tsRows(ms(100), ms(110)), &l)
	js := l.byID()
	if len(js) != 2 || js[0].IntendedNS != at.UnixNano() || js[1].IntendedNS != at.Add(ms(10)).UnixNano() ||
		js[0].DispatchedNS != js[0].IntendedNS {
		t.Errorf("jobs %+v: want the first at %v", js, at)
	}
	if st.Late != 0 {
		t.Errorf("late = %d", st.Late)
	}
	if m := cfg.Manifest(); m["start_at"] != "2000-01-01T00:01:30Z" || m["shard"] != nil {
		t.Errorf("manifest start_at %v shard %v", m["start_at"], m["shard"])
	}
}

// TestStartAtPastWithDuration: a StartAt already past by more than the
// duration still sends what fell due within the duration, late, and
// stops at the first row due after it (the dispatcher used to stop at
// once: no request, "duration reached").
func TestStartAtPastWithDuration(t *testing.T) {
	cfg := NewConfig()
	at := time.Date(1999, 12, 31, 23, 59, 58, 0, time.UTC) // 2 s before the bubble's start
	cfg.StartAt, cfg.Duration = at, time.Second
	var l jobLog
	st, _ := runVirtual(t, cfg, tsRows(ms(100), ms(110), ms(1600)), &l)
	js := l.byID()
	if len(js) != 2 || js[0].IntendedNS != at.UnixNano() || js[1].IntendedNS != at.Add(ms(10)).UnixNano() {
		t.Fatalf("jobs %+v: want the two rows due within the 1 s duration from %v", js, at)
	}
	if st.Late != 2 || js[0].DispatchedNS-js[0].IntendedNS < int64(time.Second) {
		t.Errorf("late = %d, first dispatched %v after its time; want both late by about 2 s", st.Late, time.Duration(js[0].DispatchedNS-js[0].IntendedNS))
	}
}
