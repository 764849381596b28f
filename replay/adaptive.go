package replay

import (
	"time"
)

// Adaptive lets a controller change the closed-loop level of
// [ModeConcurrency] while the run goes (adaptive scaling, AIPerf's
// --adaptive-scale; docs/design/0032-adaptive-scale.md). The run starts
// Start sessions; every Period from time zero Assess is called, from a
// goroutine of its own (never the dispatcher's), and the level it
// returns applies from then on, clamped to [1, Concurrency]:
//
//   - a higher level starts the extra sessions at once (the dispatcher
//     sees it within its poll interval, as a ramp step);
//   - a lower level ends sessions as they end: a session that completes
//     while more sessions run than the level is not replaced, so no
//     request is sent while the sessions in flight are at the level or
//     above it.
//
// Assess returning stop ends the run as its Duration would. Concurrency
// is the ceiling (the senders are started for it).
type Adaptive struct {
	Start  int
	Period time.Duration
	// Assess gets the reading of the run's clock (the time base of
	// [Job.DispatchedNS]).
	Assess func(nowNS int64) (level int, stop bool)
}

// validate checks a's fields against c; bad reports a problem.
func (a *Adaptive) validate(c *Config, bad func(field, format string, args ...any)) {
	if a.Assess == nil {
		bad("Adaptive", "{Adaptive} needs an Assess function")
	}
	if a.Period <= 0 {
		bad("Adaptive", "{Adaptive} period %v: want > 0", a.Period)
	}
	if a.Start < 1 || a.Start > c.Concurrency {
		bad("Adaptive", "{Adaptive} start %d: want 1 … {Concurrency} (%d)", a.Start, c.Concurrency)
	}
	if c.ConcurrencyRamp > 0 {
		bad("Adaptive", "{Adaptive} and {ConcurrencyRamp} both move the level: use one")
	}
	if c.Mode != ModeAuto && c.Mode != ModeConcurrency {
		bad("Adaptive", "{Adaptive} needs {Mode} concurrency, not %s", c.Mode)
	}
}

// startControl runs the controller's goroutine: Assess at every period
// from time zero (absolute deadlines, so the windows do not drift),
// until the run stops.
func (r *runner) startControl() {
	a := r.cfg.Adaptive
	if a == nil {
		return
	}
	r.level.Store(int64(a.Start))
	r.wg.Add(1)
	go func() {
		defer r.wg.Done()
		t := time.NewTimer(0)
		defer t.Stop()
		for k := int64(1); ; k++ {
			t.Reset(time.Duration(k*int64(a.Period) - r.sl.now()))
			select {
			case <-t.C:
			case <-r.quit:
				return
			}
			if r.stopped.Load() {
				return
			}
			level, stop := a.Assess(r.wall0 + r.sl.now())
			r.level.Store(int64(min(max(level, 1), r.cfg.Concurrency)))
			if stop {
				r.stop("adaptive scale done")
				return
			}
		}
	}()
}

// follow starts the sessions a raised level asks for (dispatcher only).
// chains counts the closed loop's sessions: those in flight and those
// waiting in the heap to start.
func (r *runner) follow() {
	for r.chains.Load() < r.level.Load() {
		r.chains.Add(1)
		r.push(event{due: r.sl.now(), kind: evSession})
	}
}

// shed ends a session's chain when the level fell below the chains
// (senders, at a session's end); true means the session is not
// replaced.
func (r *runner) shed() bool {
	for {
		c := r.chains.Load()
		if c <= r.level.Load() {
			return false
		}
		if r.chains.CompareAndSwap(c, c-1) {
			return true
		}
	}
}
