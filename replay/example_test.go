package replay_test

import (
	"context"
	"errors"
	"fmt"
	"sort"
	"strings"
	"sync"
	"time"

	"github.com/reprise-bench/reprise/replay"
	"github.com/reprise-bench/reprise/trace"
)

// A fixed schedule: three rows of a trace starting at minute 40, the last
// two sharing a timestamp, replayed ten times faster. The handler only
// notes each job; a real one sends the request and returns when the
// response completed.
func ExamplePlan_Run() {
	rows := []trace.Row{
		{Index: 0, Offset: 40 * time.Minute, HasOffset: true},
		{Index: 1, Offset: 40*time.Minute + 50*time.Millisecond, HasOffset: true},
		{Index: 2, Offset: 40*time.Minute + 50*time.Millisecond, HasOffset: true},
	}
	cfg := replay.NewConfig()
	cfg.Speedup = 10
	plan, err := replay.NewPlan(cfg, rows)
	if err != nil {
		fmt.Println(err)
		return
	}
	var mu sync.Mutex
	var jobs []replay.Job // copies: a Job is valid only during Handle
	h := replay.HandlerFunc(func(_ context.Context, j *replay.Job) {
		mu.Lock()
		jobs = append(jobs, *j)
		mu.Unlock()
	})
	stats, err := plan.Run(context.Background(), h)
	if err != nil {
		fmt.Println(err)
		return
	}
	sort.Slice(jobs, func(a, b int) bool { return jobs[a].ID < jobs[b].ID })
	for _, j := range jobs {
		fmt.Printf("job %d: row %d due at +%v (%s)\n", j.ID, j.Item, time.Duration(j.IntendedNS-jobs[0].IntendedNS), j.Phase)
	}
	fmt.Println(plan.Mode(), stats.Dispatched, "dispatched,", stats.StopReason)
	// Output:
	// job 0: row 0 due at +0s (profile)
	// job 1: row 1 due at +5ms (profile)
	// job 2: row 2 due at +5ms (profile)
	// fixed 3 dispatched, end of trace
}

// Invalid combinations are rejected before anything is sent, all at once,
// each a *FieldError naming the Config field to change.
func ExampleNewPlan_invalid() {
	cfg := replay.NewConfig()
	cfg.RequestRate = 10 // a rate with a trace that has timestamps
	cfg.Late = "later"
	_, err := replay.NewPlan(cfg, []trace.Row{{Offset: 0, HasOffset: true}})
	fmt.Println(err)
	// Output:
	// Late "later": want burst, shift or skip
	// RequestRate conflicts with the trace's timestamps (fixed schedule); add Mode rate, concurrency or user-centric to ignore them
}

// A caller spells the fields its own way, as the reprise command does with
// its flags.
func ExampleFieldError_Format() {
	cfg := replay.NewConfig()
	cfg.Speedup = 2
	cfg.Concurrency = 8
	_, err := replay.NewPlan(cfg, nil) // a synthetic load, closed loop
	if fe, ok := errors.AsType[*replay.FieldError](err); ok {
		fmt.Println(fe.Field)
		fmt.Println(fe.Format(func(field string) string { return "--" + strings.ToLower(field) }))
	}
	// Output:
	// Speedup
	// --speedup needs the fixed schedule (a trace with timestamps)
}
