package replay

import (
	"context"
	"sync"
	"testing"
	"testing/synctest"
	"time"
)

// TestWatchStopsRun: an open-loop run of a second whose watch, called
// every 10 ms from time zero, stops it at its third call. Under virtual
// time Check is called at 10, 20 and 30 ms, nothing is sent after the
// stop, and the stop reason is the watch's.
func TestWatchStopsRun(t *testing.T) {
	var (
		mu    sync.Mutex
		calls []time.Duration
		sends []time.Duration
		wall0 int64
	)
	cfg := NewConfig()
	cfg.Mode = ModeRate
	cfg.RequestRate = 1000
	cfg.Arrival = "constant"
	cfg.Duration = time.Second
	cfg.Watch = &Watch{Period: ms(10), Check: func(now int64) (bool, string) {
		mu.Lock()
		defer mu.Unlock()
		calls = append(calls, time.Duration(now-wall0))
		return len(calls) == 3, "stable"
	}}
	h := HandlerFunc(func(ctx context.Context, j *Job) {
		mu.Lock()
		sends = append(sends, time.Duration(time.Now().UnixNano()-wall0))
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
	if len(calls) != 3 || calls[0] != ms(10) || calls[2] != ms(30) {
		t.Errorf("Check called at %v, want 10, 20, 30 ms", calls)
	}
	if st.StopReason != "stable" {
		t.Errorf("StopReason %q, want the watch's", st.StopReason)
	}
	if len(sends) == 0 {
		t.Fatal("nothing was sent")
	}
	if last := sends[len(sends)-1]; last > ms(30) {
		t.Errorf("%d sends, the last at %v: want none after the stop at 30 ms", len(sends), last)
	}
}

// TestWatchValidate: a watch needs a Check and a period.
func TestWatchValidate(t *testing.T) {
	cfg := NewConfig()
	cfg.Mode = ModeRate
	cfg.RequestRate = 1
	cfg.Duration = time.Second
	cfg.Watch = &Watch{Period: 0, Check: func(int64) (bool, string) { return false, "" }}
	if err := cfg.Validate(); err == nil {
		t.Error("a watch of period 0 is valid")
	}
}
