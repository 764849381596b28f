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

func TestAdaptSpinWindow(t *testing.T) {
	// adapt settles near a steady wake-up error plus 5 µs, stays within
	// [minSpin, maxSpin], and one huge error moves it boundedly.
	c := &precisionClock{spin: int64(initialSpin), errEst: int64(initialSpin) / 2}
	for range 500 {
		c.adapt(int64(40 * time.Microsecond))
	}
	if d := time.Duration(c.spin) - 45*time.Microsecond; d < -time.Microsecond || d > time.Microsecond {
		t.Errorf("window after steady 40 µs errors = %v, want 45 µs", time.Duration(c.spin))
	}
	c.adapt(int64(time.Second))
	if c.spin != int64(maxSpin) {
		t.Errorf("window after a 1 s error = %v, want the %v ceiling", time.Duration(c.spin), maxSpin)
	}
	for range 2000 {
		c.adapt(0)
	}
	if c.spin != int64(minSpin) {
		t.Errorf("window after exact wake-ups = %v, want the %v floor", time.Duration(c.spin), minSpin)
	}
}
