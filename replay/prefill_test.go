package replay

import (
	"context"
	"sync"
	"testing"
	"testing/synctest"
	"time"
)

// TestPrefillGateRamp: a cap of 3 ramped over 2 s has 1 slot at 0, 2
// from 1 s and 3 from 2 s: three jobs that never see a first token start
// at 0, 1 s and 2 s; a release lets the next waiter in at once.
func TestPrefillGateRamp(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		start := time.Now()
		g := newPrefillGate(3, 2*time.Second, 4, func() int64 { return int64(time.Since(start)) })
		var mu sync.Mutex
		var got []time.Duration
		var wg sync.WaitGroup
		jobs := make([]Job, 4)
		for i := range 3 {
			wg.Go(func() {
				if !g.acquire(context.Background(), &jobs[i]) {
					t.Error("acquire failed")
				}
				mu.Lock()
				got = append(got, time.Since(start))
				mu.Unlock()
			})
			synctest.Wait()
		}
		wg.Wait()
		want := []time.Duration{0, time.Second, 2 * time.Second}
		for i := range want {
			if got[i] != want[i] {
				t.Fatalf("slots taken at %v, want %v", got, want)
			}
		}
		// Full: a fourth waits until a first token frees a slot.
		took := make(chan time.Duration)
		go func() {
			g.acquire(context.Background(), &jobs[3])
			took <- time.Since(start)
		}()
		time.Sleep(time.Second)
		synctest.Wait()
		jobs[0].FirstToken()
		jobs[0].FirstToken() // a second call frees nothing more
		if at := <-took; at != 3*time.Second {
			t.Errorf("fourth job started at %v, want 3s (when the first token came)", at)
		}
		if g.held != 3 {
			t.Errorf("%d slots held, want 3", g.held)
		}
		// A cancelled wait gives up.
		ctx, cancel := context.WithCancel(context.Background())
		cancel()
		var j Job
		if g.acquire(ctx, &j) || j.prefill != nil {
			t.Error("a cancelled acquire took a slot")
		}
	})
}
