package replay

import (
	"slices"
	"time"
)

// DefaultPreflight is the self-measurement time of [Preflight] that
// `reprise replay` spends at every start, for the run's manifest: the
// fewest deadlines Preflight measures (100, 1 ms apart), so about 100 ms
// of wall time of which a few percent spin.
const DefaultPreflight = 100 * time.Millisecond

// PreflightResult is this host's timer quality, measured by [Preflight]
// with the dispatcher's own primitive. It belongs in the run's manifest.
type PreflightResult struct {
	// Primitive names the wait: "clock_nanosleep+spin" on Linux, else
	// "time.Sleep".
	Primitive string
	// Period is the gap between deadlines; Samples the number measured
	// for each of the two methods.
	Period  time.Duration
	Samples int
	// Sleep* is the wake-up error of the bare absolute clock_nanosleep
	// (timer slack 1 ns): how long after the deadline it returned.
	SleepP50, SleepP99, SleepMax time.Duration
	// P50, P99 and Max are the lateness of the full primitive, sleep then
	// spin: what a job's lateness is made of before any hand-off.
	P50, P99, Max time.Duration
	// SpinWindow is the adaptive spin window it settled on.
	SpinWindow time.Duration
}

// Preflight measures the dispatcher's timer primitive for about d (at
// least 100 deadlines): deadlines every 1 ms on absolute times, half slept
// with the bare primitive, half with sleep + spin. It locks the calling
// goroutine to its thread while it runs and spins for a few percent of d.
func Preflight(d time.Duration) PreflightResult {
	return preflight(d, time.Millisecond, newPrecisionSleeper)
}

func preflight(d, period time.Duration, newClock func(time.Time) sleeper) PreflightResult {
	n := max(100, int(d/period))
	c := newClock(time.Now())
	undo := c.setup()
	defer undo()
	raw := make([]time.Duration, 0, n/2+1)
	full := make([]time.Duration, 0, n/2+1)
	start := c.now() + int64(period)
	for i := range n {
		t := start + int64(i)*int64(period)
		if i%2 == 0 {
			c.nap(t)
			for c.now() < t { // nap may return early on a signal
				c.nap(t)
			}
			raw = append(raw, time.Duration(c.now()-t))
		} else {
			c.sleepUntil(t)
			full = append(full, time.Duration(c.now()-t))
		}
	}
	r := PreflightResult{Primitive: "time.Sleep", Period: period, Samples: len(full), SpinWindow: c.spinWindow()}
	if _, ok := c.(*plainSleeper); !ok {
		r.Primitive = "clock_nanosleep+spin"
	}
	r.SleepP50, r.SleepP99, r.SleepMax = quantiles(raw)
	r.P50, r.P99, r.Max = quantiles(full)
	return r
}

// quantiles returns the exact p50, p99 and max (nearest rank) of v,
// sorting it in place.
func quantiles(v []time.Duration) (p50, p99, mx time.Duration) {
	if len(v) == 0 {
		return 0, 0, 0
	}
	slices.Sort(v)
	rank := func(q float64) time.Duration {
		i := int(q*float64(len(v))+0.999999999) - 1
		return v[min(max(i, 0), len(v)-1)]
	}
	return rank(0.50), rank(0.99), v[len(v)-1]
}
