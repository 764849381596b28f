package engine

import "time"

// Clock gives Unix nanoseconds on one clock for a whole run: the wall clock
// read once at start plus monotonic time elapsed since, so stamps never go
// backwards and intervals are exact even if the system clock steps. The
// zero value is not usable; build it with [NewClock] or [ClockAt]. It is
// safe for concurrent use.
type Clock struct {
	start   time.Time // carries the monotonic reading
	startNS int64
}

// NewClock returns a clock starting now.
func NewClock() *Clock { return ClockAt(time.Now()) }

// ClockAt returns a clock whose reading at t (which must carry a monotonic
// reading, as time.Now does) is t.UnixNano(). Sharing one start with the
// scheduler puts intended and measured times on the same clock.
func ClockAt(t time.Time) *Clock { return &Clock{start: t, startNS: t.UnixNano()} }

// Now returns the current time in Unix ns. It does not allocate.
func (c *Clock) Now() int64 { return c.startNS + int64(time.Since(c.start)) }

// Start returns the clock's start time.
func (c *Clock) Start() time.Time { return c.start }

// NowWall returns the clock's reading and the system real-time clock's
// (Unix ns) at the same instant, from one time.Now: their difference
// converts a kernel timestamp, which is on the real-time clock, to this
// clock.
func (c *Clock) NowWall() (now, wall int64) {
	t := time.Now()
	return c.startNS + int64(t.Sub(c.start)), t.UnixNano()
}
