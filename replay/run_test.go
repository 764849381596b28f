package replay

import (
	"context"
	"slices"
	"sync"
	"testing"
	"testing/synctest"
	"time"

	"github.com/google/go-cmp/cmp"

	"github.com/reprise-bench/reprise/engine/record"
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
		st, err = p.run(t.Context(), l, func(b time.Time) sleeper { return newPlainSleeper(b) }, nil)
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

// slowSetup is a plainSleeper whose dispatcher setup takes 100 ms.
type slowSetup struct{ *plainSleeper }

func (s slowSetup) setup() func() {
	time.Sleep(100 * time.Millisecond)
	return func() {}
}

// TestTimeZeroAfterSetup: the run's time zero is taken once its senders
// and the dispatcher's thread are set up, so requests due at zero are
// not late by the set-up (GOMAXPROCS stops the world; a run's first burst
// was 0.7–2.5 ms late on a 2-core VM).
func TestTimeZeroAfterSetup(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		p, err := NewPlan(NewConfig(), tsRows(0, 0, ms(5)))
		if err != nil {
			t.Fatal(err)
		}
		var l jobLog
		if _, err := p.run(t.Context(), &l, func(b time.Time) sleeper { return slowSetup{newPlainSleeper(b)} }, nil); err != nil {
			t.Fatal(err)
		}
		if len(l.jobs) != 3 {
			t.Fatalf("%d jobs, want 3", len(l.jobs))
		}
		for _, j := range l.byID() {
			if j.Lateness() != 0 {
				t.Errorf("item %d dispatched %v late; want on time", j.Item, j.Lateness())
			}
		}
	})
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

func sessionRows() []trace.Row {
	// Session a: turn 0 at 0, turn 1 at 10ms (timestamped), turn 2 with
	// delay 3ms. Session b: turn 0 at 2ms, turn 1 with no time at all.
	r := tsRows(0, ms(2), ms(10), 0, 0)
	r[0].SessionID, r[0].Turn = "a", 0
	r[1].SessionID, r[1].Turn = "b", 0
	r[2].SessionID, r[2].Turn = "a", 1
	r[3].SessionID, r[3].Turn, r[3].HasOffset, r[3].Delay, r[3].HasDelay = "a", 2, false, ms(3), true
	r[4].SessionID, r[4].Turn, r[4].HasOffset = "b", 1, false
	return r
}

func TestFixedScheduleSessions(t *testing.T) {
	// Turn a0 takes 15 ms, so a1 (due at 10 ms) waits for it: intended 15
	// ms with 5 ms session delay; a2 follows 3 ms after a1 completes
	// (a1 takes 15 ms too: 30 ms + 3 ms). b0 takes 15 ms; b1 has neither
	// timestamp nor delay, so it follows b0's completion at once (17 ms).
	rows := sessionRows()
	l := jobLog{service: func(*Job) time.Duration { return ms(15) }}
	st, wall0 := runVirtual(t, NewConfig(), rows, &l)
	want := []sched{
		{0, 0, 0, 0, 0},
		{1, ms(2), ms(2), 0, 0},
		{4, ms(17), ms(17), 0, 0},
		{2, ms(15), ms(15), ms(5), 0},
		{3, ms(33), ms(33), 0, 0},
	}
	got := schedOf(l.byID(), wall0)
	slices.SortStableFunc(got, func(a, b sched) int { return int(a.Dispatched - b.Dispatched) })
	slices.SortStableFunc(want, func(a, b sched) int { return int(a.Dispatched - b.Dispatched) })
	if diff := cmp.Diff(want, got); diff != "" {
		t.Errorf("schedule (-want +got):\n%s", diff)
	}
	if st.SessionDelayTotal != ms(5) || st.SessionDelayMax != ms(5) {
		t.Errorf("session delay total %v max %v, want 5ms", st.SessionDelayTotal, st.SessionDelayMax)
	}
	for _, j := range l.jobs {
		if j.Session != map[string]int{"a": 0, "b": 1}[rows[j.Item].SessionID] || j.Turn != rows[j.Item].Turn {
			t.Errorf("job %+v: wrong session/turn", j)
		}
	}
}

func TestRateConstantWithRamp(t *testing.T) {
	// Synthetic load at 1000 req/s constant, ramp 10 ms: arrival i at
	// sqrt(2·D·i/R) while i ≤ R·D/2 = 5, then D + (i − 5)/R.
	cfg := NewConfig()
	cfg.RequestRate = 1000
	cfg.Arrival = ArrivalConstant
	cfg.RateRamp = ms(10)
	cfg.RequestCount = 8
	var l jobLog
	st, wall0 := runVirtual(t, cfg, nil, &l)
	var got, want []time.Duration
	for i, j := range l.byID() {
		got = append(got, time.Duration(j.DispatchedNS-wall0))
		want = append(want, time.Duration(rampTime(float64(i), 1000, ms(10))))
		if j.Item != i || j.DispatchedNS != j.IntendedNS {
			t.Errorf("job %d: item %d, lateness %v", i, j.Item, j.Lateness())
		}
	}
	if diff := cmp.Diff(want, got); diff != "" {
		t.Errorf("send times (-want +got):\n%s", diff)
	}
	if want[6] != ms(11) || want[5] != ms(10) {
		t.Errorf("ramp maths: t6 %v t5 %v", want[6], want[5])
	}
	if st.Dispatched != 8 || st.StopReason != "request count reached" {
		t.Errorf("stats %+v", st)
	}
}

func TestRateSeededReproducible(t *testing.T) {
	run := func(seed uint64) []time.Duration {
		cfg := NewConfig()
		cfg.RequestRate = 500
		cfg.Arrival = ArrivalGamma
		cfg.Smoothness = 0.5
		cfg.Seed = seed
		cfg.RequestCount = 50
		var l jobLog
		_, wall0 := runVirtual(t, cfg, nil, &l)
		var out []time.Duration
		for _, j := range l.byID() {
			out = append(out, time.Duration(j.IntendedNS-wall0))
		}
		return out
	}
	a, b, c := run(7), run(7), run(8)
	if !slices.Equal(a, b) {
		t.Errorf("same seed, different schedules:\n%v\n%v", a, b)
	}
	if slices.Equal(a, c) {
		t.Errorf("different seeds, same schedule")
	}
	if len(a) != 50 {
		t.Errorf("%d jobs, want 50", len(a))
	}
}

func TestRateSessionsConsumeTicks(t *testing.T) {
	// Two 2-turn sessions at 100 req/s constant (ticks every 10 ms), each
	// turn 5 ms: tick 0 → s0t0, tick 1 (10ms) → s0t1 (ready since 5ms),
	// tick 2 (20ms) → s1t0, tick 3 (30ms) → s1t1.
	r := tsRows(0, 0, 0, 0)
	for i := range r {
		r[i].HasOffset = false
		r[i].SessionID = []string{"x", "x", "y", "y"}[i]
		r[i].Turn = []int{0, 1, 0, 1}[i]
	}
	cfg := NewConfig()
	cfg.RequestRate = 100
	cfg.Arrival = ArrivalConstant
	l := jobLog{service: func(*Job) time.Duration { return ms(5) }}
	st, wall0 := runVirtual(t, cfg, r, &l)
	got := schedOf(l.byID(), wall0)
	want := []sched{{0, 0, 0, 0, 0}, {1, ms(10), ms(10), 0, 0}, {2, ms(20), ms(20), 0, 0}, {3, ms(30), ms(30), 0, 0}}
	if diff := cmp.Diff(want, got); diff != "" {
		t.Errorf("schedule (-want +got):\n%s", diff)
	}
	if st.StopReason != "end of trace" {
		t.Errorf("StopReason %q", st.StopReason)
	}
}

func TestConcurrencyClosedLoopRamp(t *testing.T) {
	// Closed loop of 3 with a 20 ms ramp: level 1 at 0, 2 at 10 ms, 3 at
	// 20 ms; every request takes 4 ms; 30 ms run. Level k runs one request
	// per 4 ms per session: 0..30 for the first chain (8 requests: 0,4,..,28),
	// 10..30 for the second (5), 20..30 for the third (3) = 16.
	cfg := NewConfig()
	cfg.Concurrency = 3
	cfg.ConcurrencyRamp = ms(20)
	cfg.Duration = ms(30)
	l := jobLog{service: func(*Job) time.Duration { return ms(4) }}
	st, wall0 := runVirtual(t, cfg, nil, &l)
	count := map[time.Duration]int{}
	for _, j := range l.jobs {
		count[time.Duration(j.IntendedNS-wall0)]++
		if j.Lateness() != 0 {
			t.Errorf("job %d late by %v", j.ID, j.Lateness())
		}
	}
	if st.Dispatched != 16 || count[0] != 1 || count[ms(10)] != 1 || count[ms(20)] != 2 || count[ms(28)] != 2 {
		t.Errorf("dispatched %d, per time %v", st.Dispatched, count)
	}
	if st.StopReason != "duration reached" {
		t.Errorf("StopReason %q", st.StopReason)
	}
}

func TestStopDurationGraceCancels(t *testing.T) {
	// Requests every 10 ms for 25 ms (0, 10, 20), each taking 100 ms;
	// grace 30 ms: at 55 ms the handlers' context is cancelled.
	cfg := NewConfig()
	cfg.RequestRate = 100
	cfg.Arrival = ArrivalConstant
	cfg.Duration = ms(25)
	cfg.Grace = ms(30)
	var mu sync.Mutex
	var ends []time.Duration
	var wall0 int64
	h := HandlerFunc(func(ctx context.Context, j *Job) {
		select {
		case <-time.After(100 * time.Millisecond):
		case <-ctx.Done():
		}
		mu.Lock()
		ends = append(ends, time.Duration(time.Now().UnixNano()-wall0))
		mu.Unlock()
	})
	synctest.Test(t, func(t *testing.T) {
		wall0 = time.Now().UnixNano()
		p, err := NewPlan(cfg, nil)
		if err != nil {
			t.Fatal(err)
		}
		st, err := p.run(t.Context(), h, func(b time.Time) sleeper { return newPlainSleeper(b) }, nil)
		if err != nil {
			t.Fatal(err)
		}
		if st.Dispatched != 3 || st.Completed != 3 {
			t.Errorf("stats %+v", st)
		}
	})
	for _, e := range ends {
		if e != ms(55) {
			t.Errorf("handler ended at %v, want cancelled at 55ms", e)
		}
	}
}

func TestWarmupMarkedAndExcluded(t *testing.T) {
	cfg := NewConfig()
	cfg.RequestRate = 1000
	cfg.Arrival = ArrivalConstant
	cfg.WarmupRequests = 3
	cfg.RequestCount = 5
	var l jobLog
	st, wall0 := runVirtual(t, cfg, nil, &l)
	js := l.byID()
	if len(js) != 8 {
		t.Fatalf("%d jobs, want 3 warmup + 5", len(js))
	}
	for i, j := range js {
		want := record.PhaseProfile
		if i < 3 {
			want = record.PhaseWarmup
		}
		if j.Phase != want || j.IntendedNS-wall0 != int64(i)*int64(time.Millisecond) {
			t.Errorf("job %d: phase %v at %v", i, j.Phase, time.Duration(j.IntendedNS-wall0))
		}
	}
	if st.Dispatched != 5 || st.Warmup != 3 {
		t.Errorf("stats %+v", st)
	}

	// Warmup by duration: the first 2.5 ms.
	cfg.WarmupRequests = 0
	cfg.WarmupDuration = 2500 * time.Microsecond
	l = jobLog{}
	st, _ = runVirtual(t, cfg, nil, &l)
	if st.Warmup != 3 || st.Dispatched != 5 {
		t.Errorf("warmup-duration: stats %+v", st)
	}
}

func TestLatePolicies(t *testing.T) {
	// One sender; requests due every 1 ms; each takes 2.5 ms. burst: every
	// job goes out as soon as the sender frees, lateness growing. shift:
	// the first late job moves the rest. skip: jobs more than the
	// threshold (1 ms) late are dropped.
	base := NewConfig()
	base.RequestRate = 1000
	base.Arrival = ArrivalConstant
	base.RequestCount = 6
	base.Senders = 1
	const service = 2520 * time.Microsecond
	for _, tc := range []struct {
		late          LatePolicy
		sent, skipped int64
		// want is every sent job's (intended, dispatched) in ms. A job
		// waiting for the sender goes out at the first wait step
		// (waitInterval, 50 µs) after the sender freed.
		want [][2]float64
	}{
		{LateBurst, 6, 0, [][2]float64{{0, 0}, {1, 2.55}, {2, 5.1}, {3, 7.65}, {4, 10.2}, {5, 12.75}}},
		// Each late job moves the rest by its lateness: 1.55, then 1.55
		// (job 2 due 3.55, out 5.1), …
		{LateShift, 6, 0, [][2]float64{{0, 0}, {1, 2.55}, {3.55, 5.1}, {6.1, 7.65}, {8.65, 10.2}, {11.2, 12.75}}},
		// Job 1 is dropped at 2.05 (over 1 ms late), job 2 goes out at
		// 2.55 (0.55 late), 3 and 4 are dropped, 5 goes at 5.1.
		{LateSkip, 3, 3, [][2]float64{{0, 0}, {2, 2.55}, {5, 5.1}}},
	} {
		t.Run(string(tc.late), func(t *testing.T) {
			cfg := base
			cfg.Late = tc.late
			l := jobLog{service: func(*Job) time.Duration { return service }}
			st, wall0 := runVirtual(t, cfg, nil, &l)
			var got [][2]float64
			for _, j := range l.byID() {
				got = append(got, [2]float64{float64(j.IntendedNS-wall0) / 1e6, float64(j.DispatchedNS-wall0) / 1e6})
			}
			if diff := cmp.Diff(tc.want, got); diff != "" {
				t.Errorf("(intended, dispatched) ms (-want +got):\n%s", diff)
			}
			if st.Dispatched != tc.sent || st.Skipped != tc.skipped || int64(len(l.skipped)) != tc.skipped {
				t.Errorf("sent %d skipped %d (handler saw %d), want %d/%d", st.Dispatched, st.Skipped, len(l.skipped), tc.sent, tc.skipped)
			}
			if tc.late == LateShift && (st.Shift == 0 || st.Shifted == 0) {
				t.Errorf("shift: %+v", st)
			}
			if tc.late == LateBurst && (st.Late == 0 || st.Waited == 0 || st.Lateness.Max == 0) {
				t.Errorf("burst: lateness not reported: %+v", st)
			}
			ids := map[uint64]bool{}
			for _, j := range append(l.jobs, l.skipped...) {
				ids[j.ID] = true
			}
			for i := range uint64(len(ids)) {
				if !ids[i] {
					t.Errorf("ids not dense: missing %d of %d", i, len(ids))
				}
			}
		})
	}
}

func TestUserCentric(t *testing.T) {
	// U=2 users at R=100 turns/s: gap U/R = 20 ms, stagger 10 ms; three
	// 3-turn sessions, so T=3, L=2. User 0 has no turns left (skipped);
	// user 1 resumes with the last turn of its session at order 1 ×
	// stagger = 10 ms; the fresh user starts session 0 at 0 and is
	// replaced 3 × 20 ms later by session 2. Turns take 5 ms, so each
	// next turn is due at previous intended + 20 ms.
	var rows []trace.Row
	for s, id := range []string{"s0", "s1", "s2"} {
		for turn := range 3 {
			rows = append(rows, trace.Row{Index: int64(len(rows)), Line: int64(len(rows) + 1), SessionID: id, Turn: turn,
				Offset: time.Duration(s) * time.Second, HasOffset: true})
		}
	}
	cfg := NewConfig()
	cfg.Mode = ModeUserCentric
	cfg.UserCentricRate = 100
	cfg.NumUsers = 2
	l := jobLog{service: func(*Job) time.Duration { return ms(5) }}
	_, wall0 := runVirtual(t, cfg, rows, &l)
	got := schedOf(l.byID(), wall0)
	want := []sched{
		{0, 0, 0, 0, 0},
		{5, ms(10), ms(10), 0, 0},
		{1, ms(20), ms(20), 0, 0},
		{2, ms(40), ms(40), 0, 0},
		{6, ms(60), ms(60), 0, 0},
		{7, ms(80), ms(80), 0, 0},
		{8, ms(100), ms(100), 0, 0},
	}
	if diff := cmp.Diff(want, got); diff != "" {
		t.Errorf("schedule (-want +got):\n%s", diff)
	}
}

func TestFixedScheduleConcurrencyCap(t *testing.T) {
	// One session slot: rows due at 0, 1 and 2 ms each wait for the
	// previous (1.52 ms each) and go out at the next 50 µs wait step.
	cfg := NewConfig()
	cfg.Concurrency = 1
	l := jobLog{service: func(*Job) time.Duration { return 1520 * time.Microsecond }}
	st, wall0 := runVirtual(t, cfg, tsRows(0, ms(1), ms(2)), &l)
	want := []sched{{0, 0, 0, 0, 0}, {1, ms(1), ms(1.55), 0, 0}, {2, ms(2), ms(3.1), 0, 0}}
	if diff := cmp.Diff(want, schedOf(l.byID(), wall0)); diff != "" {
		t.Errorf("schedule (-want +got):\n%s", diff)
	}
	if st.Waited != 2 || st.Late != 1 {
		t.Errorf("waited %d late %d, want 2 and 1", st.Waited, st.Late)
	}
}

func TestFixedScheduleOffsets(t *testing.T) {
	rows := tsRows(ms(10), ms(20), ms(30), ms(40))
	for _, tc := range []struct {
		name       string
		auto       bool
		start, end time.Duration
		want       []sched
	}{
		{"window auto", true, ms(20), ms(30), []sched{{1, 0, 0, 0, 0}, {2, ms(10), ms(10), 0, 0}}},
		// Without auto-offset time zero is the start offset.
		{"window absolute", false, ms(20), ms(30), []sched{{1, 0, 0, 0, 0}, {2, ms(10), ms(10), 0, 0}}},
		// Without both, time zero is trace time 0: the first row waits 10 ms.
		{"absolute", false, 0, 0, []sched{{0, ms(10), ms(10), 0, 0}, {1, ms(20), ms(20), 0, 0}, {2, ms(30), ms(30), 0, 0}, {3, ms(40), ms(40), 0, 0}}},
		{"open end", true, ms(30), 0, []sched{{2, 0, 0, 0, 0}, {3, ms(10), ms(10), 0, 0}}},
	} {
		t.Run(tc.name, func(t *testing.T) {
			cfg := NewConfig()
			cfg.AutoOffset, cfg.StartOffset, cfg.EndOffset = tc.auto, tc.start, tc.end
			var l jobLog
			_, wall0 := runVirtual(t, cfg, rows, &l)
			if diff := cmp.Diff(tc.want, schedOf(l.byID(), wall0)); diff != "" {
				t.Errorf("schedule (-want +got):\n%s", diff)
			}
		})
	}
}

func TestRequestCountCapsTrace(t *testing.T) {
	cfg := NewConfig()
	cfg.RequestCount = 2
	var l jobLog
	st, _ := runVirtual(t, cfg, tsRows(0, ms(1), ms(2), ms(3)), &l)
	if len(l.jobs) != 2 || st.StopReason != "request count reached" {
		t.Errorf("%d jobs, stop %q", len(l.jobs), st.StopReason)
	}
}

func TestCancel(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		ctx, cancel := context.WithCancel(t.Context())
		cfg := NewConfig()
		cfg.RequestRate = 1000
		cfg.Duration = time.Hour
		p, err := NewPlan(cfg, nil)
		if err != nil {
			t.Fatal(err)
		}
		h := HandlerFunc(func(ctx context.Context, j *Job) {
			if j.ID == 10 {
				cancel()
			}
		})
		st, err := p.run(ctx, h, func(b time.Time) sleeper { return newPlainSleeper(b) }, nil)
		if err != context.Canceled || st.StopReason != "cancelled" || st.Dispatched < 11 || st.Dispatched > 12 {
			t.Errorf("err %v, stats %+v", err, st)
		}
	})
}

func TestSkipReleasesSessionSlot(t *testing.T) {
	// A later turn dropped by --late skip ends its session: the rest of
	// the session is skipped too and the session's slot is released (a
	// leaked slot would block every later session under --concurrency).
	rows := sessionRows() // session a: items 0, 2, 3
	cfg := NewConfig()
	cfg.Late = LateSkip
	cfg.Concurrency = 1
	cfg.Senders = 1
	p, err := NewPlan(cfg, rows)
	if err != nil {
		t.Fatal(err)
	}
	var l jobLog
	r := newRunner(p, &l, newPlainSleeper(time.Now()), nil, 0, t.Context())
	// No sender started: none is free, so the 2 ms late turn is dropped.
	r.active.Store(1)
	if res := r.fire(2, r.sl.now()-int64(2*time.Millisecond), 0, 7); res != fired {
		t.Fatalf("fire = %d, want fired (skipped)", res)
	}
	if r.active.Load() != 0 {
		t.Errorf("active sessions = %d after the skip, want 0", r.active.Load())
	}
	var items []int
	for _, j := range l.skipped {
		items = append(items, j.Item)
		if !j.Skipped || j.DispatchedNS != 0 {
			t.Errorf("skipped job %+v", j)
		}
	}
	if !slices.Equal(items, []int{2, 3}) || r.st.skipped.Load() != 2 {
		t.Errorf("skipped items %v (count %d), want [2 3]", items, r.st.skipped.Load())
	}
}

// TestRunOnClock: with an epoch, every time of the run is on the clock
// epoch.UnixNano() + (time since epoch), the clock the engine stamps its
// own times with, while the schedule still starts when the run starts.
func TestRunOnClock(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		epoch := time.Now()
		time.Sleep(3 * time.Second) // the run starts 3 s after the clock did
		rows := []trace.Row{{Index: 0, HasOffset: true}, {Index: 1, Offset: time.Second, HasOffset: true}}
		cfg := NewConfig()
		p, err := NewPlan(cfg, rows)
		if err != nil {
			t.Fatal(err)
		}
		var mu sync.Mutex
		var got [][3]int64 // intended, dispatched, NowNS − caller's clock
		h := HandlerFunc(func(_ context.Context, j *Job) {
			callers := epoch.UnixNano() + int64(time.Since(epoch))
			mu.Lock()
			got = append(got, [3]int64{j.IntendedNS, j.DispatchedNS, j.NowNS() - callers})
			mu.Unlock()
		})
		if _, err := p.run(t.Context(), h, func(b time.Time) sleeper { return newPlainSleeper(b) }, ClockAt(epoch)); err != nil {
			t.Fatal(err)
		}
		slices.SortFunc(got, func(a, b [3]int64) int { return int(a[0] - b[0]) })
		e := epoch.UnixNano()
		want := [][3]int64{{e + 3e9, e + 3e9, 0}, {e + 4e9, e + 4e9, 0}}
		if d := cmp.Diff(want, got); d != "" {
			t.Errorf("times (-want +got):\n%s", d)
		}
	})
}

// TestSessionRun: the turns of one run of a session share a SessionRun no
// other run has; a closed loop that wraps around the trace starts each
// session again under a new one, even while an earlier run of it may
// still be going.
func TestSessionRun(t *testing.T) {
	rows := tsRows(0, 0, 0, 0)
	for i, sess := range []string{"a", "b", "a", "b"} {
		rows[i].SessionID, rows[i].Turn = sess, i/2
	}
	cfg := NewConfig()
	cfg.Mode = ModeConcurrency
	cfg.Concurrency = 3 // more slots than sessions: runs of one session overlap
	cfg.RequestCount = 12
	var l jobLog
	l.service = func(*Job) time.Duration { return time.Millisecond }
	runVirtual(t, cfg, rows, &l)
	turns := map[uint64][]int{} // run → items in turn order
	for _, j := range l.byID() {
		if j.SessionRun == 0 {
			t.Fatalf("job %d has no session run", j.ID)
		}
		turns[j.SessionRun] = append(turns[j.SessionRun], j.Item)
	}
	for run, items := range turns {
		// Each run is one session's turns, in order, at most once each
		// (the last runs may be cut by the request count).
		if len(items) > 2 || items[0] > 1 || (len(items) == 2 && items[1] != items[0]+2) {
			t.Errorf("run %d carries items %v, want one session's turns in order", run, items)
		}
	}
	if len(turns) < 6 {
		t.Errorf("%d session runs for 12 requests of 2-turn sessions, want ≥ 6", len(turns))
	}
}
