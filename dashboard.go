package reprise

import (
	"context"
	"fmt"
	"os"
	"sync"
	"time"

	"github.com/reprise-bench/reprise/engine/summary"
	"github.com/reprise-bench/reprise/internal/dashboard"
	"github.com/reprise-bench/reprise/replay"
)

// uiOf is the live view o gets: the dashboard when it asks for one and
// Progress is a terminal whose TERM is set and not "dumb"; else the line.
func uiOf(o *Options) string {
	term := os.Getenv("TERM")
	if o.UI == UIDashboard && o.Progress != nil && isTerminal(o.Progress) && term != "" && term != "dumb" {
		return UIDashboard
	}
	return UILine
}

// liveDashboard is a run's dashboard: the view over its progress and the
// program drawing it. A nil *liveDashboard does nothing.
type liveDashboard struct {
	mu      sync.Mutex // the view is read by the dashboard and by stop
	view    *liveView
	d       *dashboard.Dashboard
	closeIn func()
	stopped bool
}

// startDashboard shows the dashboard of prog on o.Progress. userCtx is
// done once sending stops (Ctrl-C, or the stop key), abort once in-flight
// requests are cancelled; interrupt is what a press of the stop key does.
func startDashboard(o *Options, rp *replayPlan, prog *progress, tel *telemetryRun, mode string,
	userCtx, abort context.Context, interrupt func()) *liveDashboard {
	pc := rp.plan.Config()
	length := scheduleLength(pc, rp.plan.Mode(), rp.plan.Requests(), rp.plan.Rows())
	clock := rp.engine.Clock
	budget := o.Replay.LateThreshold
	if budget == 0 {
		budget = replay.DefaultLateThreshold
	}
	v := &liveView{p: prog, budget: budget, server: tel.server,
		title: fmt.Sprintf("%s → %s · %s", orSyntheticTrace(rp.tracePath), rp.url, mode),
		now:   func() time.Duration { return time.Since(prog.start) },
		eta: func(el time.Duration, sent, done int64, intended float64) time.Duration {
			return etaOf(length, clock, prog, el, sent, done, intended)
		},
		state: func() dashboard.State {
			switch {
			case abort.Err() != nil:
				return dashboard.Aborting
			case userCtx.Err() != nil:
				return dashboard.Stopping
			case prog.planned > 0 && prog.sent.Load() >= prog.planned:
				return dashboard.Draining
			}
			return dashboard.Running
		}}
	ld := &liveDashboard{view: v}
	in, closeIn := dashboard.TerminalInput()
	ld.closeIn = closeIn
	d, err := dashboard.Start(dashboard.Config{Output: o.Progress, Input: in, Interrupt: interrupt,
		Snapshot: func() dashboard.Snapshot {
			ld.mu.Lock()
			defer ld.mu.Unlock()
			return v.snapshot()
		}})
	if err != nil {
		closeIn()
		return nil
	}
	ld.d = d
	return ld
}

// etaOf is the time left to send: by the schedule's length from its
// first send when the plan says (scheduleLength); else, for a known
// number of requests, the ones left to send at the intended rate of the
// last window (a streamed trace, a closed loop), or the ones left to end
// at the rate requests ended so far; negative when unknown.
func etaOf(length time.Duration, clock *replay.Clock, prog *progress, el time.Duration, sent, done int64, intended float64) time.Duration {
	if length >= 0 {
		first := prog.firstIntended.Load()
		if first == 0 || clock == nil {
			return length
		}
		return max(length-time.Duration(clock.Now()-first), 0)
	}
	p := prog.planned
	switch {
	case p <= 0:
		return -1
	case sent < p && intended > 0:
		return time.Duration(float64(p-sent) / intended * 1e9)
	case done > 0 && done < p:
		return time.Duration(float64(el) / float64(done) * float64(p-done))
	}
	return -1
}

// stop shows the final frame, the run's column from sum (nil: the live
// numbers), and gives the terminal back. Later calls do nothing.
func (ld *liveDashboard) stop(sum *summary.Summary) {
	if ld == nil {
		return
	}
	ld.mu.Lock()
	if ld.stopped {
		ld.mu.Unlock()
		return
	}
	ld.stopped = true
	final := ld.view.final(sum)
	ld.mu.Unlock()
	ld.d.Stop(final)
	ld.closeIn()
}

// orSyntheticTrace names the load of a run: its trace, or "synthetic".
func orSyntheticTrace(p string) string {
	switch p {
	case "":
		return "synthetic load"
	case "-":
		return "standard input"
	}
	return p
}
