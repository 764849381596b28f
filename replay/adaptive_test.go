package replay

import (
	"context"
	"sync"
	"testing"
	"testing/synctest"
	"time"
)

// TestAdaptiveLevelFollowsController: a closed loop of ceiling 8 started
// at 2, whose controller asks for 4 at 10 ms, 8 at 20 ms, 3 at 30 ms and
// stops at 40 ms; every request takes 3 ms. Under virtual time the
// requests in flight at every send never exceed the level in effect,
// each level is reached, and the run stops when the controller says so.
func TestAdaptiveLevelFollowsController(t *testing.T) {
	script := []int{4, 8, 3, 3}
	levels := append([]int{2}, script...)  // from 0, 10 ms, 20 ms, …
	levelAt := func(t time.Duration) int { // the level in effect at t
		k := min(int(t/ms(10)), len(levels)-1)
		if t%ms(10) == 0 && k > 0 {
			return max(levels[k-1], levels[k]) // a send at the instant of a change may see either
		}
		return levels[k]
	}
	type span struct{ start, end time.Duration }
	var (
		mu    sync.Mutex
		spans []span
		calls []time.Duration
		wall0 int64
	)
	cfg := NewConfig()
	cfg.Mode = ModeConcurrency
	cfg.Concurrency = 8
	cfg.Duration = time.Second
	cfg.Adaptive = &Adaptive{Start: 2, Period: ms(10), Assess: func(now int64) (int, bool) {
		mu.Lock()
		defer mu.Unlock()
		calls = append(calls, time.Duration(now-wall0))
		return script[len(calls)-1], len(calls) == len(script)
	}}
	h := HandlerFunc(func(ctx context.Context, j *Job) {
		s := time.Duration(time.Now().UnixNano() - wall0)
		time.Sleep(ms(3))
		mu.Lock()
		spans = append(spans, span{s, s + ms(3)})
		mu.Unlock()
	})
	var st Stats
	synctest.Test(t, func(t *testing.T) {
		wall0 = time.Now().UnixNano()
		p, err := NewPlan(cfg, nil)
		if err != nil {
			t.Fatal(err)
		}
		if st, err = p.run(t.Context(), h, func(b time.Time) sleeper { return newPlainSleeper(b) }, nil); err != nil {
			t.Fatal(err)
		}
	})
	if want := []time.Duration{ms(10), ms(20), ms(30), ms(40)}; len(calls) != 4 || calls[0] != want[0] || calls[3] != want[3] {
		t.Errorf("Assess called at %v, want %v", calls, want)
	}
	if st.StopReason != "adaptive scale done" {
		t.Errorf("StopReason %q", st.StopReason)
	}
	peak := map[int]int{} // the most in flight per 10 ms window, at a send inside it
	for _, a := range spans {
		n := 0
		for _, b := range spans {
			if b.start <= a.start && a.start < b.end {
				n++
			}
		}
		if lim := levelAt(a.start); n > lim {
			t.Errorf("a request sent at %v had %d in flight, level %d", a.start, n, lim)
		}
		if a.start%ms(10) != 0 { // strictly inside a window
			w := int(a.start / ms(10))
			peak[w] = max(peak[w], n)
		}
	}
	if peak[0] != 2 || peak[1] != 4 || peak[2] != 8 || peak[3] != 3 {
		t.Errorf("peak in flight per window %v, want 2, 4, 8, 3", peak)
	}
}
