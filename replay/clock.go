package replay

import "time"

// Clock gives Unix nanoseconds on one clock for a whole run: the wall clock
// read once at its start plus monotonic time elapsed since, so readings
// never go backwards and intervals are exact even if the system clock
// steps. A run's intended and dispatch times ([Job.IntendedNS],
// [Job.DispatchedNS]) are read on the Clock given to [Plan.RunOnClock],
// and whoever stamps a request's other times (the engine), samples
// telemetry or names the run's window reads the same Clock, so every time
// of a run is on it. The zero value is not usable; build it with
// [NewClock] or [ClockAt]. It is safe for concurrent use.
type Clock struct {
	start   time.Time // carries the monotonic reading
	startNS int64
}

// NewClock returns a clock starting now.
func NewClock() *Clock { return ClockAt(time.Now()) }

// ClockAt returns a clock whose reading at t (which must carry a monotonic
// reading, as time.Now's does) is t.UnixNano().
func ClockAt(t time.Time) *Clock { return &Clock{start: t, startNS: t.UnixNano()} }

// Now returns the current time in Unix ns. It does not allocate.
func (c *Clock) Now() int64 { return c.startNS + int64(time.Since(c.start)) }

// Start returns the clock's start time.
func (c *Clock) Start() time.Time { return c.start }

// NowWall returns the clock's reading and the system real-time clock's
// (Unix ns) at the same instant, from one time.Now: their difference
// converts a kernel timestamp, which is on the real-time clock, to this
// clock. It does not allocate.
func (c *Clock) NowWall() (now, wall int64) {
	t := time.Now()
	return c.at(t), t.UnixNano()
}

// at returns the clock's reading at t (which carries a monotonic reading).
func (c *Clock) at(t time.Time) int64 { return c.startNS + int64(t.Sub(c.start)) }

// sleeper is the dispatcher's precision sleeping primitive: a monotonic
// nanosecond count since the run's start and two ways to wait for a point
// of it. The production sleeper (newPrecisionSleeper) sleeps with
// clock_nanosleep on a locked thread and spins the rest; tests inject
// plainSleeper, whose time.Sleep is exact under testing/synctest. A
// sleeper is used by one goroutine at a time (its methods are not safe for
// concurrent use), except now, which any goroutine may call. Its times are
// offsets from the run's start; the run's [Clock] turns them into Unix ns.
type sleeper interface {
	// setup prepares the calling goroutine to be the dispatcher and
	// returns the function that undoes it.
	setup() (undo func())
	// rebase makes base the sleeper's time zero (before the run starts).
	rebase(base time.Time)
	// now returns the ns elapsed since the sleeper's base time.
	now() int64
	// sleepUntil returns once now() ≥ t, as close to t as it can.
	sleepUntil(t int64)
	// nap waits until about t without spinning; it may return early, so
	// callers re-check their condition.
	nap(t int64)
	// spinNS is the total time sleepUntil spent spinning.
	spinNS() int64
	// spinWindow is the current spin window.
	spinWindow() time.Duration
}

// plainSleeper waits with time.Sleep. It is the sleeper of the tests
// (under testing/synctest its sleeps end exactly on time) and of platforms
// without clock_nanosleep.
type plainSleeper struct{ base time.Time }

func newPlainSleeper(base time.Time) *plainSleeper { return &plainSleeper{base: base} }

func (c *plainSleeper) setup() func()             { return func() {} }
func (c *plainSleeper) rebase(base time.Time)     { c.base = base }
func (c *plainSleeper) now() int64                { return int64(time.Since(c.base)) }
func (c *plainSleeper) spinNS() int64             { return 0 }
func (c *plainSleeper) spinWindow() time.Duration { return 0 }
func (c *plainSleeper) nap(t int64)               { c.sleepUntil(t) }
func (c *plainSleeper) sleepUntil(t int64) {
	for {
		d := t - c.now()
		if d <= 0 {
			return
		}
		time.Sleep(time.Duration(d))
	}
}
