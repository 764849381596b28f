package replay

import (
	"runtime"
	"testing"
	"time"

	"golang.org/x/sys/unix"
)

// TestSetupRestoresThread: the dispatcher's thread settings (timer slack,
// nice) are restored when the run ends, so the thread goes back to the Go
// runtime as it came.
func TestSetupRestoresThread(t *testing.T) {
	c := newPrecisionClock(time.Now())
	// Lock here too, so the thread checked after undo is the same one.
	lockAndCheck(t, func() {
		tid := unix.Gettid()
		slack0, err := unix.PrctlRetInt(unix.PR_GET_TIMERSLACK, 0, 0, 0, 0)
		if err != nil {
			t.Skip("PR_GET_TIMERSLACK:", err)
		}
		prio0, _ := unix.Getpriority(unix.PRIO_PROCESS, tid)
		undo := c.setup()
		if s, _ := unix.PrctlRetInt(unix.PR_GET_TIMERSLACK, 0, 0, 0, 0); s != 1 {
			t.Errorf("timer slack during the run = %d, want 1", s)
		}
		undo()
		if s, _ := unix.PrctlRetInt(unix.PR_GET_TIMERSLACK, 0, 0, 0, 0); s != slack0 {
			t.Errorf("timer slack after = %d, want %d", s, slack0)
		}
		if p, _ := unix.Getpriority(unix.PRIO_PROCESS, tid); p != prio0 {
			t.Errorf("priority after = %d, want %d", p, prio0)
		}
	})
}

func lockAndCheck(t *testing.T, f func()) {
	t.Helper()
	done := make(chan struct{})
	go func() {
		defer close(done)
		runtime.LockOSThread()
		defer runtime.UnlockOSThread()
		f()
	}()
	<-done
}

func TestSpinWindow(t *testing.T) {
	c := &precisionClock{}
	for _, tc := range []struct {
		spin, gap, want time.Duration
	}{
		{30 * time.Microsecond, time.Millisecond, 30 * time.Microsecond},        // adaptive window fits
		{500 * time.Microsecond, time.Millisecond, maxSpin},                     // dense: capped at maxSpin
		{500 * time.Microsecond, 30 * time.Millisecond, 500 * time.Microsecond}, // sparse: 1/20 of 30 ms allows it
		{900 * time.Microsecond, 4 * time.Millisecond, 200 * time.Microsecond},  // 1/20 of the gap
		{time.Millisecond, time.Second, maxSpinLong},
	} {
		c.spin = int64(tc.spin)
		if got := time.Duration(c.window(int64(tc.gap))); got != tc.want {
			t.Errorf("window(spin %v, gap %v) = %v, want %v", tc.spin, tc.gap, got, tc.want)
		}
	}
	// adapt settles near a steady wake-up error plus 5 µs, and one huge
	// error moves it by at most a quarter of maxSpinLong.
	c = &precisionClock{spin: int64(initialSpin), errEst: int64(initialSpin) / 2}
	for range 500 {
		c.adapt(int64(200 * time.Microsecond))
	}
	if d := time.Duration(c.spin) - 205*time.Microsecond; d < -2*time.Microsecond || d > 2*time.Microsecond {
		t.Errorf("window after steady 200 µs errors = %v", time.Duration(c.spin))
	}
	before := c.spin
	c.adapt(int64(time.Second))
	if c.spin-before > int64(maxSpinLong)/4+1 {
		t.Errorf("one 1 s error moved the window from %v to %v", time.Duration(before), time.Duration(c.spin))
	}
}
