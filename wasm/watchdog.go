package wasm

import (
	"slices"
	"time"
)

// watch registers m with the watchdog, starting it on first use.
func (a *Adapter) watch(m *module) {
	a.mu.Lock()
	defer a.mu.Unlock()
	a.modules = append(a.modules, m)
	a.once.Do(func() { go a.watchdog() })
}

func (a *Adapter) unwatch(m *module) {
	a.mu.Lock()
	defer a.mu.Unlock()
	if i := slices.Index(a.modules, m); i >= 0 {
		a.modules = slices.Delete(a.modules, i, i+1)
	}
}

// watchdog cancels calls that run past the deadline. One goroutine per
// adapter polls every Timeout/4 (at least 1 ms), so a runaway call ends
// within 1.25 × Timeout without a timer per call.
func (a *Adapter) watchdog() {
	tick := max(a.cfg.Timeout/4, time.Millisecond)
	t := time.NewTicker(tick)
	defer t.Stop()
	for {
		select {
		case <-a.stop:
			return
		case <-t.C:
		}
		now := time.Since(epoch).Nanoseconds()
		a.mu.Lock()
		for _, in := range a.modules {
			// Claim the overrunning call before cancelling (see beginCall).
			if s := in.callStart.Load(); s > 0 && now-s > int64(a.cfg.Timeout) && in.callStart.CompareAndSwap(s, -1) {
				in.timedOut.Store(true)
				in.cancelMu.Lock()
				in.cancel()
				in.cancelMu.Unlock()
			}
		}
		a.mu.Unlock()
	}
}
