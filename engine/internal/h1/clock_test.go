package h1

import "time"

// testClock is the engine's clock: the wall clock read once plus
// monotonic time since.
type testClock struct {
	start   time.Time
	startNS int64
}

func newTestClock() *testClock {
	t := time.Now()
	return &testClock{start: t, startNS: t.UnixNano()}
}

func (c *testClock) Now() int64 { return c.startNS + int64(time.Since(c.start)) }

func (c *testClock) NowWall() (now, wall int64) {
	t := time.Now()
	return c.startNS + int64(t.Sub(c.start)), t.UnixNano()
}
