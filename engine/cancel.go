package engine

// A request's planned cancellation (--cancel-rate, --cancel-after).

import (
	"context"
	"errors"
	"sync"
	"time"
)

// errCancelAfter is the cause of a planned cancellation.
var errCancelAfter = errors.New("planned cancellation (--cancel-rate, --cancel-after)")

// cancelPlan is one request's planned cancellation: a timer armed when
// the request was written whole, stopped when the response ended. arm and
// stop may run on different goroutines (HTTP/2's trace callbacks).
type cancelPlan struct {
	d time.Duration
	// parent is the request's context without the plan: a response that
	// ended before the timer is counted and classified under it.
	parent  context.Context
	cancel  context.CancelCauseFunc
	mu      sync.Mutex
	timer   *time.Timer
	stopped bool
}

func newCancelPlan(d time.Duration, parent context.Context) *cancelPlan {
	return &cancelPlan{d: d, parent: parent}
}

// ended stops the timer once the response was read to its end (err ==
// nil) or failed, and returns the context to finish the request under:
// the parent when the response ended first.
func (c *cancelPlan) ended(ctx context.Context, err error) context.Context {
	if c == nil {
		return ctx
	}
	c.stop()
	if err == nil {
		return c.parent
	}
	return ctx
}

// arm starts the timer (once).
func (c *cancelPlan) arm() {
	c.mu.Lock()
	defer c.mu.Unlock()
	if c.stopped || c.timer != nil {
		return
	}
	c.timer = time.AfterFunc(c.d, func() { c.cancel(errCancelAfter) })
}

// stop stops the timer: the response ended (or the request failed).
func (c *cancelPlan) stop() {
	if c == nil {
		return
	}
	c.mu.Lock()
	defer c.mu.Unlock()
	c.stopped = true
	if c.timer != nil {
		c.timer.Stop()
	}
}
