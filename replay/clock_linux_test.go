package replay

import (
	"runtime"
	"runtime/metrics"
	"testing"
	"time"

	"golang.org/x/sys/unix"
)

// TestSetupRestoresThread: the dispatcher's thread settings (timer slack,
// nice) are restored when the run ends, so the thread goes back to the Go
// runtime as it came.
func TestSetupRestoresThread(t *testing.T) {
	c := newPrecisionSleeper(time.Now())
	// Lock here too, so the thread checked after undo is the same one.
	lockAndCheck(t, func() {
		tid := unix.Gettid()
		slack0, err := unix.PrctlRetInt(unix.PR_GET_TIMERSLACK, 0, 0, 0, 0)
		if err != nil {
			t.Skip("PR_GET_TIMERSLACK:", err)
		}
		prio0, _ := unix.Getpriority(unix.PRIO_PROCESS, tid)
		procs0 := runtime.GOMAXPROCS(0)
		undo := c.setup()
		if s, _ := unix.PrctlRetInt(unix.PR_GET_TIMERSLACK, 0, 0, 0, 0); s != 1 {
			t.Errorf("timer slack during the run = %d, want 1", s)
		}
		if n := runtime.GOMAXPROCS(0); n != procs0+1 {
			t.Errorf("GOMAXPROCS during the run = %d, want %d (one more for the dispatcher's P)", n, procs0+1)
		}
		undo()
		if n := runtime.GOMAXPROCS(0); n != procs0 {
			t.Errorf("GOMAXPROCS after = %d, want %d", n, procs0)
		}
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
	// adapt settles at the wake-up errors' 0.8 quantile plus spinMargin,
	// stays within [minSpin, maxSpin], and a huge error moves it by one
	// step only.
	c := &precisionSleeper{spin: int64(initialSpin), errEst: int64(initialSpin - spinMargin)}
	for range 500 {
		c.adapt(int64(40 * time.Microsecond))
	}
	if d := time.Duration(c.spin) - 43*time.Microsecond; d < -time.Microsecond || d > time.Microsecond {
		t.Errorf("window after steady 40 µs errors = %v, want 43 µs", time.Duration(c.spin))
	}
	// Errors of 10, 11, …, 29 µs, interleaved (stride 7): 16 of 20 (0.8)
	// are ≤ 25 µs, so the estimate hovers at 25–27 µs. The median (19.5)
	// would give 22.5 µs, the p95 (29) 32 µs.
	for i := range 4000 {
		c.adapt(int64(10+(7*i)%20) * int64(time.Microsecond))
	}
	if w := time.Duration(c.spin); w < 26*time.Microsecond || w > 31*time.Microsecond {
		t.Errorf("window after errors spread over 10–29 µs = %v, want 26–31 µs (p80 25 µs + 3 µs, one step's play)", w)
	}
	before := c.spin
	c.adapt(int64(time.Second))
	if c.spin != before+int64(spinUp) {
		t.Errorf("window after a 1 s error = %v, want one step up from %v", time.Duration(c.spin), time.Duration(before))
	}
	for range 1000 {
		c.adapt(int64(time.Second))
	}
	if c.spin != int64(maxSpin) {
		t.Errorf("window after steady 1 s errors = %v, want the %v ceiling", time.Duration(c.spin), maxSpin)
	}
	for range 2000 {
		c.adapt(0)
	}
	if c.spin != int64(minSpin) {
		t.Errorf("window after exact wake-ups = %v, want the %v floor", time.Duration(c.spin), minSpin)
	}
}

// TestReserveP: every running dispatcher adds one P and gives it back; the
// last one restores the value found by the first; a value someone else
// set meanwhile stays.
func TestReserveP(t *testing.T) {
	base := runtime.GOMAXPROCS(0)
	undo1 := reserveP()
	undo2 := reserveP()
	if n := runtime.GOMAXPROCS(0); n != base+2 {
		t.Errorf("two dispatchers: GOMAXPROCS = %d, want %d", n, base+2)
	}
	undo1()
	if n := runtime.GOMAXPROCS(0); n != base+1 {
		t.Errorf("one dispatcher left: GOMAXPROCS = %d, want %d", n, base+1)
	}
	undo2()
	if n := runtime.GOMAXPROCS(0); n != base {
		t.Errorf("none left: GOMAXPROCS = %d, want %d", n, base)
	}

	undo := reserveP()
	runtime.GOMAXPROCS(base + 5)
	undo()
	if n := runtime.GOMAXPROCS(0); n != base+5 {
		t.Errorf("GOMAXPROCS set by the program during the run = %d after it, want %d kept", n, base+5)
	}
	runtime.GOMAXPROCS(base)
}

// TestHeldSleepKeepsP: within holdWindow of its deadline the dispatcher
// sleeps as running Go code, keeping its P (the runtime's goroutine
// states say so), while an ordinary sleep is a goroutine outside Go,
// whose P the runtime may hand to others. This is what makes the
// dispatcher run the instant its thread wakes instead of queueing for a
// P (docs/design/0001-scheduler.md).
func TestHeldSleepKeepsP(t *testing.T) {
	notInGo := func() uint64 {
		s := []metrics.Sample{{Name: "/sched/goroutines/not-in-go:goroutines"}}
		metrics.Read(s)
		if s[0].Value.Kind() != metrics.KindUint64 {
			t.Skip("runtime without /sched/goroutines/not-in-go")
		}
		return s[0].Value.Uint64()
	}
	// during returns the fewest and the most goroutines outside Go seen
	// while sleep runs on another goroutine.
	during := func(sleep func()) (lo, hi uint64) {
		started, done := make(chan struct{}), make(chan struct{})
		go func() {
			defer close(done)
			runtime.LockOSThread()
			defer runtime.UnlockOSThread()
			close(started)
			sleep()
		}()
		<-started
		time.Sleep(5 * time.Millisecond) // let it enter the sleep
		lo, hi = ^uint64(0), 0
		for range 5 {
			n := notInGo()
			lo, hi = min(lo, n), max(hi, n)
			time.Sleep(time.Millisecond)
		}
		<-done
		return lo, hi
	}
	c := newPrecisionSleeper(time.Now()).(*precisionSleeper)
	if !c.primitive {
		t.Skip("no clock_nanosleep")
	}
	const d = 30 * time.Millisecond
	heldLo, _ := during(func() {
		// The held part alone, for longer than the window, so the samples
		// all fall inside it.
		c.ts = unix.NsecToTimespec(c.monoBase + c.now() + int64(d))
		for c.sleepHeld() == unix.EINTR {
		}
	})
	ordLo, _ := during(func() {
		ts := unix.NsecToTimespec(c.monoBase + c.now() + int64(d))
		for unix.ClockNanosleep(unix.CLOCK_MONOTONIC, unix.TIMER_ABSTIME, &ts, nil) == unix.EINTR {
		}
	})
	if ordLo < 1 {
		t.Fatalf("an ordinary clock_nanosleep was never outside Go (%d): the metric does not show syscalls", ordLo)
	}
	// The fewest seen, not the most: another goroutine of the process
	// (the runtime's, or one a test left) can be in a system call at any
	// one sample, but not at all of them.
	if heldLo >= ordLo {
		t.Errorf("goroutines outside Go: held sleep at least %d, ordinary sleep at least %d; the held sleep must not leave Go", heldLo, ordLo)
	}
}

// TestSleepAllocsBothParts: a wait longer than holdWindow (released, then
// held) allocates nothing either.
func TestSleepAllocsBothParts(t *testing.T) {
	if testing.CoverMode() != "" {
		t.Skip("instrumentation allocates")
	}
	c := newPrecisionSleeper(time.Now())
	undo := c.setup()
	defer undo()
	allocs := testing.AllocsPerRun(5, func() {
		c.sleepUntil(c.now() + int64(holdWindow) + 200_000)
	})
	if allocs != 0 {
		t.Errorf("a released+held wait allocates %v, want 0", allocs)
	}
}

// TestSleepBefore: the dispatcher sleeps until the spin window before a
// deadline, and only when that sleep lasts at least minSleep; a shorter
// gap is spun through.
func TestSleepBefore(t *testing.T) {
	const us = int64(time.Microsecond)
	for _, c := range []struct {
		now, t, spin int64
		wake         int64
		sleep        bool
	}{
		{0, 200 * us, 20 * us, 180 * us, true},         // 5k req/s
		{0, 100 * us, 20 * us, 80 * us, true},          // 10k req/s
		{0, 60 * us, 20 * us, 40 * us, true},           // exactly minSleep
		{0, 59 * us, 20 * us, 39 * us, false},          // just under it
		{10 * us, 50 * us, 20 * us, 30 * us, false},    // 20k req/s, 10 µs after the last
		{0, 10 * us, 20 * us, -10 * us, false},         // inside the window already
		{500 * us, 400 * us, 20 * us, 380 * us, false}, // late
	} {
		wake, sleep := sleepBefore(c.now, c.t, c.spin)
		if wake != c.wake || sleep != c.sleep {
			t.Errorf("sleepBefore(%d, %d, %d) = %d, %v; want %d, %v", c.now, c.t, c.spin, wake, sleep, c.wake, c.sleep)
		}
	}
}
