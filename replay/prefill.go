package replay

import (
	"context"
	"time"
)

// newPrefillGate returns a gate of n slots ramped over ramp, waking at
// most senders waiters per release, on the run clock now. The gate's
// type is declared in job.go, beside the Job that holds a slot.
func newPrefillGate(n int, ramp time.Duration, senders int, now func() int64) *prefillGate {
	return &prefillGate{n: n, ramp: ramp, now: now, freed: make(chan struct{}, max(senders, 1))}
}

// acquire takes a slot for j, waiting for one; false when ctx ended
// first (the job is then handled without one and fails on ctx).
func (g *prefillGate) acquire(ctx context.Context, j *Job) bool {
	for {
		t := g.now()
		lvl := rampLevel(t, g.n, g.ramp)
		g.mu.Lock()
		if g.held < lvl {
			g.held++
			g.mu.Unlock()
			j.prefill = g
			return true
		}
		g.mu.Unlock()
		var tm *time.Timer
		var step <-chan time.Time
		if lvl < g.n {
			// The next ramp step adds a slot without a release.
			tm = time.NewTimer(time.Duration(max(rampStepTime(lvl, g.n, g.ramp)-t, 0)))
			step = tm.C
		}
		done := false
		select {
		case <-g.freed:
		case <-step:
		case <-ctx.Done():
			done = true
		}
		if tm != nil {
			tm.Stop()
		}
		if done {
			return false
		}
	}
}

// release gives a slot back.
func (g *prefillGate) release() {
	g.mu.Lock()
	g.held--
	g.mu.Unlock()
	select {
	case g.freed <- struct{}{}:
	default: // enough wake-ups are pending
	}
}

// FirstToken tells the run that j's response carried its first token:
// with Config.PrefillConcurrency the job's prefill slot is given back
// (once; later calls do nothing). The Handler calls it on the sender
// goroutine running j, between Handle's start and its return; without a
// prefill cap it does nothing. It allocates nothing.
func (j *Job) FirstToken() {
	if g := j.prefill; g != nil {
		j.prefill = nil
		g.release()
	}
}
