package replay

import (
	"os"
	"runtime"
	"sync"
	"time"
	"unsafe"

	"golang.org/x/sys/unix"
)

// Hot path: TestDispatchAllocs covers sleepUntil and nap.

// holdWindow is how close to its deadline the dispatcher sleeps without
// giving up its P (see sleepAbs). Waking from an ordinary sleep, a thread
// whose P was handed to other goroutines queues for a P; on a 2-core host
// at 10k req/s that wait was 0.13–0.4 ms on average with a tail of tens
// of ms (go tool trace, docs/design/0001-scheduler.md). The window has to
// cover that tail, and costs nothing but the P: the thread is asleep.
const holdWindow = 2 * time.Millisecond

// Spin window bounds. The window follows the measured wake-up error of
// clock_nanosleep (see adapt); it starts at initialSpin.
const (
	minSpin     = 5 * time.Microsecond
	maxSpin     = 50 * time.Microsecond
	initialSpin = 30 * time.Microsecond
)

// How adapt tracks the wake-up error: errEst moves up by spinUp after a
// wake-up later than it and down by spinDown after one earlier, so it
// settles where spinUp·P(later) = spinDown·P(earlier), the
// spinDown/(spinUp+spinDown) quantile (0.8), and one wake-up moves it by
// a step whatever its size. spinMargin is added to make the window.
const (
	spinUp     = 800 * time.Nanosecond
	spinDown   = 200 * time.Nanosecond
	spinMargin = 3 * time.Microsecond
)

// precisionSleeper sleeps on absolute CLOCK_MONOTONIC deadlines with
// clock_nanosleep(TIMER_ABSTIME) on a thread whose timer slack is 1 ns,
// until spin before the target, then spins on the vDSO clock (time.Since)
// until the target. It never chains relative sleeps.
type precisionSleeper struct {
	base time.Time
	// monoBase is CLOCK_MONOTONIC at base, so that a deadline t (ns since
	// base) is monoBase+t on the kernel's clock. Go's monotonic clock is
	// CLOCK_MONOTONIC, so only this offset needs calibrating; an error in
	// it is absorbed by the spin.
	monoBase  int64
	spin      int64         // current spin window, ns
	errEst    int64         // the wake-up error's 0.8 quantile, estimated (adapt), ns
	spun      int64         // total ns spent spinning
	primitive bool          // false when clock_nanosleep failed and time.Sleep is used
	ts        unix.Timespec // the held sleep's deadline (off the stack: see sleepHeld)
}

func newPrecisionSleeper(base time.Time) sleeper {
	c := &precisionSleeper{base: base, spin: int64(initialSpin), errEst: int64(initialSpin - spinMargin), primitive: true}
	c.calibrate()
	return c
}

// calibrate measures monoBase: CLOCK_MONOTONIC read between two reads of
// the Go clock, taken at the midpoint.
func (c *precisionSleeper) calibrate() {
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
// to 1 ns (PR_SET_TIMERSLACK is per thread, hence the lock), best effort
// raises the thread's priority, and adds the P the dispatcher keeps to
// GOMAXPROCS (reserveP). undo restores all of it.
func (c *precisionSleeper) setup() func() {
	unreserve := reserveP()
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
		unreserve()
	}
}

func (c *precisionSleeper) rebase(base time.Time) {
	c.base = base
	if c.primitive {
		c.calibrate()
	}
}

func (c *precisionSleeper) now() int64                { return int64(time.Since(c.base)) }
func (c *precisionSleeper) spinNS() int64             { return c.spun }
func (c *precisionSleeper) spinWindow() time.Duration { return time.Duration(c.spin) }

// sleepAbs blocks until CLOCK_MONOTONIC reaches the run time t, or a
// signal interrupts the held part (callers re-check the time).
//
// The last holdWindow before t is slept holding the goroutine's P: a raw
// clock_nanosleep, which the Go scheduler sees as running code, so the P
// cannot be handed to another goroutine meanwhile and the dispatcher runs
// the instant the kernel wakes its thread. Before that, an ordinary
// clock_nanosleep lets the runtime give the P to others; getting one
// back on waking (which can take milliseconds when every P is busy) then
// happens inside the window, before the deadline. reserveP compensates
// for the P kept out of the pool. Preemption still works: the signal the
// runtime sends to stop the world (or that sysmon sends after 10 ms on one
// P) interrupts the raw sleep with EINTR, and sleepHeld's call in the
// loop below is a preemption point.
func (c *precisionSleeper) sleepAbs(t int64) {
	if !c.primitive {
		if d := t - c.now(); d > 0 {
			time.Sleep(time.Duration(d))
		}
		return
	}
	if rel := t - int64(holdWindow); rel > c.now() {
		ts := unix.NsecToTimespec(c.monoBase + rel)
		for unix.ClockNanosleep(unix.CLOCK_MONOTONIC, unix.TIMER_ABSTIME, &ts, nil) == unix.EINTR {
		}
	}
	c.ts = unix.NsecToTimespec(c.monoBase + t)
	for c.sleepHeld() == unix.EINTR && c.now() < t {
	}
}

// sleepHeld sleeps until c.ts without leaving the Go scheduler's running
// state (RawSyscall does not call entersyscall), so the P stays with the
// thread. It must not be inlined: its call in sleepAbs's retry loop is
// where a pending preemption is taken after a signal.
//
//go:noinline
func (c *precisionSleeper) sleepHeld() unix.Errno {
	_, _, e := unix.RawSyscall6(unix.SYS_CLOCK_NANOSLEEP, unix.CLOCK_MONOTONIC, unix.TIMER_ABSTIME,
		uintptr(unsafe.Pointer(&c.ts)), 0, 0, 0)
	return e
}

func (c *precisionSleeper) nap(t int64) { c.sleepAbs(t) }

func (c *precisionSleeper) sleepUntil(t int64) {
	if wake, ok := sleepBefore(c.now(), t, c.spin); ok {
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

// minSleep is the shortest sleep sleepUntil takes before spinning: a
// shorter one saves little CPU (the sleep's system call and the two
// context switches cost several µs) and, on a busy host, may wake late
// because the CPU went to another thread meanwhile. A dense schedule
// (20k req/s: a deadline every 50 µs) is therefore spun through, with
// sub-µs lateness at the cost of a core, as before the window followed
// the errors' body; from about 10k req/s down the dispatcher sleeps
// between deadlines (BenchmarkDispatch, replay/20k: p50 lateness 0.2–0.3
// µs when spun, 0.3–0.4 ms when it slept ~25 µs per deadline at load 13).
const minSleep = 40 * time.Microsecond

// sleepBefore returns when to wake from the sleep before a deadline t
// (ns), now being now and the spin window spin: spin before t, and
// whether to sleep at all (only for at least minSleep).
func sleepBefore(now, t, spin int64) (wake int64, sleep bool) {
	wake = t - spin
	return wake, wake-now >= int64(minSleep)
}

// adapt updates the spin window from one wake-up error e (ns after the
// requested wake-up). errEst tracks the error's 0.8 quantile with fixed
// steps (spinUp, spinDown): a late wake-up, however late, moves it up by
// less than a µs, so the rare preemptions of a shared host (milliseconds)
// do not widen the window, and a quiet host's window follows the body of
// its errors. The window is that plus spinMargin, within [minSpin,
// maxSpin].
//
// Why the 0.8 quantile: the spin costs a core share of about (window −
// typical error) × rate, and only wake-ups earlier than the window are
// on time. On the 2-vCPU VM the errors' body is 15–27 µs with a tail of
// milliseconds when the host is busy; a window at the p94, which
// proportional updates of an estimate gave, sat at the 50 µs ceiling
// there and spun ~30 µs per job. At the 0.8 quantile the median job is
// still sent within a µs of its time; the slowest fifth of the wake-ups
// are late by their excess over the window instead of by nothing
// (RATIONALE.md, "Why does the replay dispatcher spin").
func (c *precisionSleeper) adapt(e int64) {
	if e > c.errEst {
		c.errEst += int64(spinUp)
	} else {
		c.errEst = max(c.errEst-int64(spinDown), 0)
	}
	c.errEst = min(c.errEst, int64(maxSpin))
	c.spin = min(max(c.errEst+int64(spinMargin), int64(minSpin)), int64(maxSpin))
}

// threadCPU returns the calling thread's CPU time (user + system).
func threadCPU() time.Duration {
	var ru unix.Rusage
	if err := unix.Getrusage(unix.RUSAGE_THREAD, &ru); err != nil {
		return 0
	}
	return time.Duration(ru.Utime.Nano() + ru.Stime.Nano())
}

// reserved counts the running dispatchers, each keeping one P (see
// sleepAbs); baseProcs is GOMAXPROCS before the first of them started.
var (
	reserveMu sync.Mutex
	reserved  int
	baseProcs int
)

// reserveP raises GOMAXPROCS by one for as long as a dispatcher runs, so
// that the P it keeps while it sleeps is not taken from the senders and
// the rest of the program, and undo lowers it again; the last undo
// restores the value found by the first call (or the runtime's default
// when GOMAXPROCS was not set, so it follows CPU limit changes again). A
// GOMAXPROCS someone else set meanwhile is left alone.
func reserveP() (undo func()) {
	reserveMu.Lock()
	defer reserveMu.Unlock()
	if reserved == 0 {
		baseProcs = runtime.GOMAXPROCS(0)
	}
	reserved++
	runtime.GOMAXPROCS(baseProcs + reserved)
	return func() {
		reserveMu.Lock()
		defer reserveMu.Unlock()
		reserved--
		if runtime.GOMAXPROCS(0) != baseProcs+reserved+1 {
			return // changed by someone else: theirs now
		}
		if reserved > 0 {
			runtime.GOMAXPROCS(baseProcs + reserved)
			return
		}
		if os.Getenv("GOMAXPROCS") == "" {
			runtime.SetDefaultGOMAXPROCS()
			if runtime.GOMAXPROCS(0) == baseProcs {
				return
			}
		}
		runtime.GOMAXPROCS(baseProcs)
	}
}
