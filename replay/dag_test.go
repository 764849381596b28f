package replay

import (
	"context"
	"errors"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/google/go-cmp/cmp"

	"github.com/reprise-bench/reprise/trace"
)

// dagRows is a task of depth 3 with a fan-out of 4 and a join:
//
//	line 1  A  root at 0
//	line 2-5 B0..B3 wait for A, think 1 ms + tool 1 ms (B2 also has its
//	        own timestamp, 30 ms)
//	line 6  J  waits for B0..B3, tool 5 ms
//	line 7  R  an independent root at 4 ms
func dagRows() []trace.Row {
	rows := make([]trace.Row, 7)
	for i := range rows {
		rows[i] = trace.Row{Index: int64(i), Line: int64(i + 1), RequestID: int64(100 + i), ParentID: -1}
	}
	rows[0].HasOffset = true
	for k := 1; k <= 4; k++ {
		rows[k].WaitFor = []int64{100}
		rows[k].Delay, rows[k].HasDelay, rows[k].ToolWait = ms(1), true, ms(1)
	}
	rows[3].Offset, rows[3].HasOffset, rows[3].HasDelay, rows[3].Delay = ms(30), true, false, 0
	rows[5].WaitFor = []int64{101, 102, 103, 104}
	rows[5].ToolWait = ms(5)
	rows[6].Offset, rows[6].HasOffset = ms(4), true
	return rows
}

// dagService: A takes 10 ms, B_k takes 5·(k+1) ms, the rest 3 ms.
func dagService(j *Job) time.Duration {
	switch {
	case j.Item == 0:
		return ms(10)
	case j.Item >= 1 && j.Item <= 4:
		return ms(5 * float64(j.Item))
	}
	return ms(3)
}

func TestDependenciesPolicies(t *testing.T) {
	tests := []struct {
		name   string
		policy DepPolicy
		want   []sched // by item
	}{
		// A ends at 10; B0, B1, B3 are due at 12 and go out together;
		// B2's own time (30 ms) is later than 12, so it waits for it. B_k
		// ends at 12+5(k+1) (B2 at 30+15 = 45); J waits for the last
		// (45) plus 5 ms: 50.
		{"open", DepsOpen, []sched{
			{0, 0, 0, 0, 0}, {1, ms(12), ms(12), 0, 0}, {2, ms(12), ms(12), 0, 0},
			{3, ms(30), ms(30), 0, 0}, {4, ms(12), ms(12), 0, 0},
			{5, ms(50), ms(50), 0, 0}, {6, ms(4), ms(4), 0, 0},
		}},
		// Closed: B2's timestamp is ignored, so it goes after its tool
		// wait alone (no think time), at 11; the last to end is B3
		// (12+20 = 32); J at 37.
		{"closed", DepsClosed, []sched{
			{0, 0, 0, 0, 0}, {1, ms(12), ms(12), 0, 0}, {2, ms(12), ms(12), 0, 0},
			{3, ms(11), ms(11), 0, 0}, {4, ms(12), ms(12), 0, 0},
			{5, ms(37), ms(37), 0, 0}, {6, ms(4), ms(4), 0, 0},
		}},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			cfg := NewConfig()
			cfg.Dependencies = tc.policy
			l := jobLog{service: dagService}
			st, wall0 := runVirtual(t, cfg, dagRows(), &l)
			got := schedOf(l.jobs, wall0)
			slices.SortFunc(got, func(a, b sched) int { return a.Item - b.Item })
			if diff := cmp.Diff(tc.want, got); diff != "" {
				t.Errorf("schedule (-want +got):\n%s", diff)
			}
			if st.Dispatched != 7 || st.Completed != 7 || st.Late != 0 || st.StopReason != "end of trace" {
				t.Errorf("stats = %+v", st)
			}
			// Depth and the releasing job: A and R are roots; each B was
			// released by A's job; J by the B that ended last (B2 in open,
			// B3 in closed).
			last := map[DepPolicy]int{DepsOpen: 3, DepsClosed: 4}[tc.policy]
			jobOf := map[int]Job{}
			for _, j := range l.jobs {
				jobOf[j.Item] = j
			}
			for item, want := range map[int]struct {
				depth int
				by    int // item whose job released it, -1 none
			}{0: {0, -1}, 1: {1, 0}, 2: {1, 0}, 3: {1, 0}, 4: {1, 0}, 5: {2, last}, 6: {0, -1}} {
				j := jobOf[item]
				by := uint64(0)
				if want.by >= 0 {
					by = jobOf[want.by].ID + 1
				}
				if j.Depth != want.depth || j.ReleasedBy != by {
					t.Errorf("item %d: depth %d released by %d, want %d and %d", item, j.Depth, j.ReleasedBy, want.depth, by)
				}
			}
			// Every dependency, not only the releasing one, in wait_for
			// order: J waits for all four Bs.
			for item, deps := range map[int][]int{0: nil, 1: {0}, 4: {0}, 5: {1, 2, 3, 4}, 6: nil} {
				var want []uint64
				for _, d := range deps {
					want = append(want, jobOf[d].ID)
				}
				if diff := cmp.Diff(want, jobOf[item].DependsOn); diff != "" {
					t.Errorf("item %d: DependsOn (-want +got):\n%s", item, diff)
				}
			}
			for _, j := range l.jobs {
				task := 0
				if j.Item == 6 {
					task = 1
				}
				if j.Session != task || j.SessionRun != uint64(task)+1 {
					t.Errorf("item %d: session %d run %d, want task %d", j.Item, j.Session, j.SessionRun, task)
				}
			}
		})
	}
}

// TestDependenciesOpenLateParent: in the open policy a dependent row with
// its own timestamp that its dependency makes late carries that part as
// session delay, not lateness.
func TestDependenciesOpenLateParent(t *testing.T) {
	rows := dagRows()[:2]
	rows[1].Offset, rows[1].HasOffset, rows[1].HasDelay, rows[1].Delay, rows[1].ToolWait = ms(5), true, false, 0, ms(2)
	l := jobLog{service: dagService}
	st, wall0 := runVirtual(t, NewConfig(), rows, &l)
	got := schedOf(l.jobs, wall0)
	slices.SortFunc(got, func(a, b sched) int { return a.Item - b.Item })
	// A ends at 10, + 2 ms tool: 12, 7 ms after B0's own 5 ms.
	want := []sched{{0, 0, 0, 0, 0}, {1, ms(12), ms(12), ms(7), 0}}
	if diff := cmp.Diff(want, got); diff != "" {
		t.Errorf("schedule (-want +got):\n%s", diff)
	}
	if st.SessionDelayTotal != ms(7) || st.Late != 0 {
		t.Errorf("stats = %+v", st)
	}
}

func TestDependenciesStrict(t *testing.T) {
	rows := dagRows()
	for i := range rows {
		rows[i].Offset, rows[i].HasOffset = ms(float64(i)), true
	}
	cfg := NewConfig()
	cfg.Dependencies = DepsStrict
	l := jobLog{service: dagService}
	_, wall0 := runVirtual(t, cfg, rows, &l)
	got := schedOf(l.jobs, wall0)
	slices.SortFunc(got, func(a, b sched) int { return a.Item - b.Item })
	for i, s := range got {
		if s.Intended != ms(float64(i)) || s.Dispatched != s.Intended {
			t.Errorf("item %d: %+v, want sent at its timestamp %v", i, s, ms(float64(i)))
		}
	}
	// Without timestamps, strict has nothing to go by.
	_, err := NewPlan(cfg, dagRows())
	if fe, ok := errors.AsType[*FieldError](err); !ok || fe.Field != "Dependencies" || !strings.Contains(err.Error(), "line 2") {
		t.Errorf("strict without timestamps: %v, want a Dependencies field error naming line 2", err)
	}
}

// TestDependencyFailureCancelsDependents: B1 fails, so J (and what waits
// for J) are skipped, not sent; the rest runs.
func TestDependencyFailureCancelsDependents(t *testing.T) {
	rows := append(dagRows(), trace.Row{Index: 7, Line: 8, RequestID: 200, ParentID: -1, WaitFor: []int64{105}})
	l := jobLog{service: func(j *Job) time.Duration {
		j.Failed = j.Item == 2
		return dagService(j)
	}}
	st, _ := runVirtual(t, NewConfig(), rows, &l)
	var sent, skipped []int
	for _, j := range l.jobs {
		sent = append(sent, j.Item)
	}
	for _, j := range l.skipped {
		skipped = append(skipped, j.Item)
		if !j.DepFailed || !j.Skipped {
			t.Errorf("skipped item %d: DepFailed %v Skipped %v", j.Item, j.DepFailed, j.Skipped)
		}
	}
	slices.Sort(sent)
	if !slices.Equal(sent, []int{0, 1, 2, 3, 4, 6}) || !slices.Equal(skipped, []int{5, 7}) {
		t.Errorf("sent %v skipped %v, want J and its dependent skipped", sent, skipped)
	}
	if st.Skipped != 2 || st.StopReason != "end of trace" {
		t.Errorf("stats = %+v", st)
	}
}

func TestDependenciesPlanErrors(t *testing.T) {
	tests := []struct {
		name string
		edit func([]trace.Row)
		cfg  func(*Config)
		want string
	}{
		{"unknown id", func(r []trace.Row) { r[5].WaitFor = []int64{101, 999} }, nil, "line 6 waits for request 999"},
		{"cycle", func(r []trace.Row) { r[0].WaitFor = []int64{105} }, nil, "cycle"},
		{"root without time", func(r []trace.Row) { r[6].HasOffset = false }, nil, "line 7"},
		{"duplicate id", func(r []trace.Row) { r[6].RequestID = 100 }, nil, "line 7 (request 100)"},
		{"load mode", nil, func(c *Config) { c.Mode, c.Concurrency = ModeConcurrency, 2 }, "dependent requests"},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			rows := dagRows()
			if tc.edit != nil {
				tc.edit(rows)
			}
			cfg := NewConfig()
			if tc.cfg != nil {
				tc.cfg(&cfg)
			}
			if _, err := NewPlan(cfg, rows); err == nil || !strings.Contains(err.Error(), tc.want) {
				t.Errorf("NewPlan: %v, want an error containing %q", err, tc.want)
			}
		})
	}
}

// TestDAGRunAllocsIndependentOfLength: a plan with dependencies (every
// odd row waits for the row before it) allocates per run, not per job.
func TestDAGRunAllocsIndependentOfLength(t *testing.T) {
	checkRunAllocsFlat(t, func(cfg Config, rows []trace.Row) (*Plan, Handler) {
		for i := range rows {
			rows[i].RequestID = int64(i)
			if i%2 == 1 {
				rows[i].WaitFor = []int64{int64(i - 1)}
			}
		}
		p, err := NewPlan(cfg, rows)
		if err != nil {
			t.Fatal(err)
		}
		if !p.Dependent() || p.Sessions() != len(rows)/2 {
			t.Fatalf("plan: dependent %v, %d tasks", p.Dependent(), p.Sessions())
		}
		return p, HandlerFunc(func(context.Context, *Job) {})
	})
}
