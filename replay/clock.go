package replay

import "time"

// clock is the dispatcher's notion of time: a monotonic nanosecond count
// since the run's start and two ways to wait for a point of it. The
// production clock (newPrecisionClock) sleeps with clock_nanosleep on a
// locked thread and spins the rest; tests inject sleepClock, whose
// time.Sleep is exact under testing/synctest. A clock is used by one
// goroutine at a time (its methods are not safe for concurrent use),
// except now, which any goroutine may call.
type clock interface {
	// setup prepares the calling goroutine to be the dispatcher and
	// returns the function that undoes it.
	setup() (undo func())
	// now returns the ns elapsed since the clock's base time.
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

// sleepClock waits with time.Sleep. It is the clock of the tests (under
// testing/synctest its sleeps end exactly on time) and of platforms without
// clock_nanosleep.
type sleepClock struct{ base time.Time }

func newSleepClock(base time.Time) *sleepClock { return &sleepClock{base: base} }

func (c *sleepClock) setup() func()             { return func() {} }
func (c *sleepClock) now() int64                { return int64(time.Since(c.base)) }
func (c *sleepClock) spinNS() int64             { return 0 }
func (c *sleepClock) spinWindow() time.Duration { return 0 }
func (c *sleepClock) nap(t int64)               { c.sleepUntil(t) }
func (c *sleepClock) sleepUntil(t int64) {
	for {
		d := t - c.now()
		if d <= 0 {
			return
		}
		time.Sleep(time.Duration(d))
	}
}
