package replay

import (
	"runtime"
	"time"

	"golang.org/x/sys/unix"
)

// Hot path: TestDispatchAllocs covers sleepUntil and nap.

// Spin window bounds. The window adapts to the measured wake-up error of
// clock_nanosleep (see adapt); it starts at initialSpin.
const (
	minSpin     = 10 * time.Microsecond
	maxSpin     = 50 * time.Microsecond
	initialSpin = 30 * time.Microsecond
)

// precisionClock sleeps on absolute CLOCK_MONOTONIC deadlines with
// clock_nanosleep(TIMER_ABSTIME) on a thread whose timer slack is 1 ns,
// until spin before the target, then spins on the vDSO clock (time.Since)
// until the target. It never chains relative sleeps.
type precisionClock struct {
	base time.Time
	// monoBase is CLOCK_MONOTONIC at base, so that a deadline t (ns since
	// base) is monoBase+t on the kernel's clock. Go's monotonic clock is
	// CLOCK_MONOTONIC, so only this offset needs calibrating; an error in
	// it is absorbed by the spin.
	monoBase  int64
	spin      int64 // current spin window, ns
	errEst    int64 // high-quantile estimate of the wake-up error, ns
	spun      int64 // total ns spent spinning
	primitive bool  // false when clock_nanosleep failed and time.Sleep is used
}

func newPrecisionClock(base time.Time) clock {
	c := &precisionClock{base: base, spin: int64(initialSpin), errEst: int64(initialSpin) / 2, primitive: true}
	c.calibrate()
	return c
}

// calibrate measures monoBase: CLOCK_MONOTONIC read between two reads of
// the Go clock, taken at the midpoint.
func (c *precisionClock) calibrate() {
	best := int64(1 << 62)
	for range 5 {
		var ts unix.Timespec
		t1 := c.now()
		if err := unix.ClockGettime(unix.CLOCK_MONOTONIC, &ts); err != nil {
			c.primitive = false
			return
		}
		t2 := c.now()
		if t2-t1 < best {
			best = t2 - t1
			c.monoBase = ts.Nano() - (t1+t2)/2
		}
	}
}

// dispatcherNice is the nice value the dispatcher thread asks for: on a
// busy host the kernel then runs it first when its timer fires (measured
// on a 2-vCPU VM at load 23: p99 lateness 38–45 ms at nice 0, 4–9 ms at
// −20). It needs CAP_SYS_NICE; without it the thread keeps its nice value.
const dispatcherNice = -20

// setup locks the goroutine to its thread, sets the thread's timer slack
// to 1 ns (PR_SET_TIMERSLACK is per thread, hence the lock) and, best
// effort, raises the thread's priority. undo restores both.
func (c *precisionClock) setup() func() {
	runtime.LockOSThread()
	oldSlack, errSlack := unix.PrctlRetInt(unix.PR_GET_TIMERSLACK, 0, 0, 0, 0)
	// A failure leaves the run correct, only less precise: the preflight
	// and the lateness statistics show it.
	_ = unix.Prctl(unix.PR_SET_TIMERSLACK, 1, 0, 0, 0)
	tid := unix.Gettid()
	// The raw getpriority syscall returns 20 − nice.
	oldPrio, errPrio := unix.Getpriority(unix.PRIO_PROCESS, tid)
	niced := errPrio == nil && unix.Setpriority(unix.PRIO_PROCESS, tid, dispatcherNice) == nil
	return func() {
		if niced {
			_ = unix.Setpriority(unix.PRIO_PROCESS, tid, 20-oldPrio)
		}
		if errSlack == nil {
			_ = unix.Prctl(unix.PR_SET_TIMERSLACK, uintptr(oldSlack), 0, 0, 0)
		}
		runtime.UnlockOSThread()
	}
}

func (c *precisionClock) now() int64                { return int64(time.Since(c.base)) }
func (c *precisionClock) spinNS() int64             { return c.spun }
func (c *precisionClock) spinWindow() time.Duration { return time.Duration(c.spin) }

// sleepAbs blocks until CLOCK_MONOTONIC reaches the run time t, or a
// signal interrupts it (callers re-check the time).
func (c *precisionClock) sleepAbs(t int64) {
	if !c.primitive {
		if d := t - c.now(); d > 0 {
			time.Sleep(time.Duration(d))
		}
		return
	}
	ts := unix.NsecToTimespec(c.monoBase + t)
	for {
		err := unix.ClockNanosleep(unix.CLOCK_MONOTONIC, unix.TIMER_ABSTIME, &ts, nil)
		if err != unix.EINTR {
			return
		}
	}
}

func (c *precisionClock) nap(t int64) { c.sleepAbs(t) }

func (c *precisionClock) sleepUntil(t int64) {
	wake := t - c.spin
	if now := c.now(); wake > now {
		c.sleepAbs(wake)
		c.adapt(c.now() - wake)
	}
	s := c.now()
	n := s
	for n < t {
		n = c.now()
	}
	c.spun += n - s
}

// adapt updates the spin window from one wake-up error e (ns after the
// requested wake-up). errEst tracks a high quantile of e: it rises by 1/4
// of an excess and decays by 1/64 of a shortfall, so it settles where
// about 1 in 16 wake-ups exceed it (≈ p94). The window is that plus 5 µs,
// within [minSpin, maxSpin]: widening it further costs a core share of
// spin × rate (20 µs at 1k req/s = 2 %), and the rare late wake-ups above
// the window are vCPU preemptions that no window fixes.
func (c *precisionClock) adapt(e int64) {
	if e < 0 {
		e = 0
	}
	if e > 4*int64(maxSpin) {
		e = 4 * int64(maxSpin) // one preemption must not blow the window up
	}
	if e > c.errEst {
		c.errEst += (e - c.errEst) / 4
	} else {
		c.errEst -= (c.errEst - e) / 64
	}
	c.spin = min(max(c.errEst+int64(5*time.Microsecond), int64(minSpin)), int64(maxSpin))
}

// threadCPU returns the calling thread's CPU time (user + system).
func threadCPU() time.Duration {
	var ru unix.Rusage
	if err := unix.Getrusage(unix.RUSAGE_THREAD, &ru); err != nil {
		return 0
	}
	return time.Duration(ru.Utime.Nano() + ru.Stime.Nano())
}
