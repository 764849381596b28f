package replay

import (
	"context"
	"sync/atomic"
	"testing"
	"testing/synctest"
	"time"
)

// TestCancelStopsSendersStartingSessions: in the closed loop a sender that
// completes a job starts the next session itself. Once the run's context
// is cancelled it must not, even before the dispatcher wakes up to notice:
// requests cancelled together (a second Ctrl-C) end at once, and their
// senders would otherwise run the rest of the plan as instantly cancelled
// requests.
func TestCancelStopsSendersStartingSessions(t *testing.T) {
	cfg := NewConfig()
	cfg.Concurrency = 4
	cfg.RequestCount = 1000
	synctest.Test(t, func(t *testing.T) {
		release := make(chan struct{}) // in the bubble: waiting on it is durable
		var handled atomic.Int64
		h := HandlerFunc(func(context.Context, *Job) {
			if handled.Add(1) <= 4 {
				<-release // the first four are in flight when the run is cancelled
			}
		})
		p, err := NewPlan(cfg, nil)
		if err != nil {
			t.Fatal(err)
		}
		ctx, cancel := context.WithCancel(t.Context())
		var st Stats
		done := make(chan struct{})
		go func() {
			defer close(done)
			st, _ = p.run(ctx, h, func(b time.Time) sleeper { return newPlainSleeper(b) }, nil)
		}()
		synctest.Wait() // four jobs held, the dispatcher asleep
		cancel()
		close(release) // they end at once, as cancelled requests do
		<-done
		if st.Dispatched != 4 || handled.Load() != 4 || st.StopReason != "cancelled" {
			t.Errorf("dispatched %d, handled %d, stop %q; want the 4 in flight only, stopped as cancelled",
				st.Dispatched, handled.Load(), st.StopReason)
		}
	})
}
