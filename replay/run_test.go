package replay

import (
	"context"
	"slices"
	"sync"
	"testing"
	"testing/synctest"
	"time"

	"github.com/google/go-cmp/cmp"

	"github.com/reprise-bench/reprise/internal/record"
	"github.com/reprise-bench/reprise/trace"
)

// jobLog records the jobs a handler saw, in completion order.
type jobLog struct {
	mu      sync.Mutex
	jobs    []Job
	skipped []Job
	service func(j *Job) time.Duration // simulated request time; nil = 0
}

func (l *jobLog) Handle(ctx context.Context, j *Job) {
	if l.service != nil {
		if d := l.service(j); d > 0 {
			select {
			case <-time.After(d):
			case <-ctx.Done():
			}
		}
	}
	l.mu.Lock()
	l.jobs = append(l.jobs, *j)
	l.mu.Unlock()
}

func (l *jobLog) Skip(j *Job) {
	l.mu.Lock()
	l.skipped = append(l.skipped, *j)
	l.mu.Unlock()
}

// byID returns the jobs sorted by id.
func (l *jobLog) byID() []Job {
	js := slices.Clone(l.jobs)
	slices.SortFunc(js, func(a, b Job) int { return int(a.ID) - int(b.ID) })
	return js
}

// runVirtual runs the plan under testing/synctest with the time.Sleep
// clock, so every time is exact: the bubble's clock starts at
// 2000-01-01T00:00:00Z, which is the run's wall0.
func runVirtual(t *testing.T, cfg Config, rows []trace.Row, l *jobLog) (Stats, int64) {
	t.Helper()
	var st Stats
	var wall0 int64
	synctest.Test(t, func(t *testing.T) {
		p, err := NewPlan(cfg, rows)
		if err != nil {
			t.Fatalf("NewPlan: %v", err)
		}
		wall0 = time.Now().UnixNano()
		st, err = p.run(t.Context(), l, func(b time.Time) clock { return newSleepClock(b) })
		if err != nil {
			t.Fatalf("run: %v", err)
		}
	})
	return st, wall0
}

func ms(n float64) time.Duration { return time.Duration(n * float64(time.Millisecond)) }

func tsRows(offsets ...time.Duration) []trace.Row {
	rows := make([]trace.Row, len(offsets))
	for i, o := range offsets {
		rows[i] = trace.Row{Index: int64(i), Line: int64(i + 1), Offset: o, HasOffset: true, ParentID: -1, RequestID: -1}
	}
	return rows
}

// sched is the (intended, dispatched) pair of a job relative to wall0.
type sched struct {
	Item       int
	Intended   time.Duration
	Dispatched time.Duration
	SessDelay  time.Duration
	Phase      record.Phase
}

func schedOf(js []Job, wall0 int64) []sched {
	out := make([]sched, len(js))
	for i, j := range js {
		out[i] = sched{j.Item, time.Duration(j.IntendedNS - wall0), time.Duration(j.DispatchedNS - wall0),
			time.Duration(j.SessionDelayNS), j.Phase}
	}
	return out
}

func TestFixedScheduleExact(t *testing.T) {
	// A trace starting at 40 min: auto-offset starts it now; the batch at
	// 40m+10ms goes out together; speed-up 2 halves every gap.
	rows := tsRows(40*time.Minute, 40*time.Minute+ms(10), 40*time.Minute+ms(10), 40*time.Minute+ms(15))
	cfg := NewConfig()
	cfg.Speedup = 2
	var l jobLog
	st, wall0 := runVirtual(t, cfg, rows, &l)
	want := []sched{
		{0, 0, 0, 0, record.PhaseProfile},
		{1, ms(5), ms(5), 0, record.PhaseProfile},
		{2, ms(5), ms(5), 0, record.PhaseProfile},
		{3, ms(7.5), ms(7.5), 0, record.PhaseProfile},
	}
	if diff := cmp.Diff(want, schedOf(l.byID(), wall0)); diff != "" {
		t.Errorf("schedule (-want +got):\n%s", diff)
	}
	if st.Dispatched != 4 || st.Completed != 4 || st.Late != 0 || st.Lateness.Max != 0 {
		t.Errorf("stats = %+v", st)
	}
	if st.StopReason != "end of trace" {
		t.Errorf("StopReason = %q", st.StopReason)
	}
}
