package replay

import (
	"testing"
	"time"
)

// TestClockReadings: a Clock's reading at any instant is its start's wall
// time plus the monotonic time elapsed since, exactly, whatever the wall
// clock does meanwhile.
func TestClockReadings(t *testing.T) {
	t0 := time.Now()
	start := t0.Add(-time.Hour) // keeps the monotonic reading
	c := ClockAt(start)
	if !c.Start().Equal(start) {
		t.Errorf("Start %v, want %v", c.Start(), start)
	}
	if got, want := c.at(t0), start.UnixNano()+int64(time.Hour); got != want {
		t.Errorf("reading at start+1h = %d, want %d", got, want)
	}
	if got, want := c.at(t0.Add(time.Minute)), start.UnixNano()+int64(time.Hour+time.Minute); got != want {
		t.Errorf("reading at start+61m = %d, want %d", got, want)
	}
	a := c.Now()
	now, wall := c.NowWall()
	b := c.Now()
	if a > now || now > b {
		t.Errorf("readings go backwards: %d, %d, %d", a, now, b)
	}
	if wall == 0 {
		t.Error("NowWall gave no wall time")
	}
}

// TestClockAllocs: reading the clock allocates nothing (every request
// reads it several times).
func TestClockAllocs(t *testing.T) {
	c := NewClock()
	var sink int64
	if n := testing.AllocsPerRun(1000, func() {
		now, wall := c.NowWall()
		sink += c.Now() + now + wall
	}); n != 0 {
		t.Errorf("Now+NowWall allocate %v, want 0", n)
	}
	_ = sink
}
