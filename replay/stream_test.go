package replay

import (
	"bytes"
	"context"
	"errors"
	"strings"
	"sync"
	"testing"
	"testing/synctest"
	"time"

	"github.com/google/go-cmp/cmp"

	"github.com/reprise-bench/reprise/engine/record"
	"github.com/reprise-bench/reprise/trace"
)

// mooncake writes rows as Mooncake JSONL and returns a function opening
// it from the start, and the rows ReadAll makes of it.
func mooncake(t testing.TB, rows []trace.Row) (func() (*trace.Reader, error), []trace.Row) {
	t.Helper()
	var b bytes.Buffer
	w, err := trace.NewWriter(&b, trace.FormatMooncake)
	if err != nil {
		t.Fatal(err)
	}
	for i := range rows {
		if rows[i].InputTokens == 0 {
			rows[i].InputTokens, rows[i].OutputTokens = 10, 2
		}
		if err := w.Write(&rows[i]); err != nil {
			t.Fatal(err)
		}
	}
	if err := w.Flush(); err != nil {
		t.Fatal(err)
	}
	data := b.Bytes()
	open := func() (*trace.Reader, error) {
		return trace.NewReader("t.jsonl", bytes.NewReader(data), trace.Options{})
	}
	r, err := open()
	if err != nil {
		t.Fatal(err)
	}
	loaded, _, err := trace.ReadAllFrom(r)
	if err != nil {
		t.Fatal(err)
	}
	return open, loaded
}

// streamPlan surveys the trace open reads (a first pass) and plans cfg
// over it without holding it.
func streamPlan(cfg Config, open func() (*trace.Reader, error)) (*Plan, error) {
	r, err := open()
	if err != nil {
		return nil, err
	}
	defer r.Close()
	sv := NewSurvey(cfg)
	if _, err := trace.Scan(r, sv.Add); err != nil {
		return nil, err
	}
	return NewStreamPlan(sv, open)
}

// rowJob is a job as both plans must produce it: the row index instead of
// the item (a streamed plan's positions count on around the trace).
type rowJob struct {
	ID                   uint64
	Row, Session, Turn   int
	Intended, Dispatched time.Duration
	SessDelay            time.Duration
	Phase                record.Phase
	Late, Waited         bool
	Skipped              bool
}

// rowLog runs jobs for a plan: it checks that a streamed job's row is in
// the window while Handle runs, and simulates a service time by row.
type rowLog struct {
	mu      sync.Mutex
	p       *Plan
	rows    []trace.Row
	jobs    []rowJob
	service func(row int) time.Duration
	bad     error
}

func (l *rowLog) rowOf(j *Job) int {
	if w := l.p.Window(); w != nil {
		r := w.Row(int64(j.Item))
		idx := int(w.Index(int64(j.Item)))
		if r == nil || r.Index != l.rows[idx].Index {
			l.mu.Lock()
			l.bad = errors.Join(l.bad, errors.New("a job's row is not in the window during Handle"))
			l.mu.Unlock()
		}
		return idx
	}
	return j.Item
}

func (l *rowLog) add(j *Job, skipped bool) {
	row := l.rowOf(j)
	l.mu.Lock()
	l.jobs = append(l.jobs, rowJob{j.ID, row, j.Session, j.Turn, time.Duration(j.IntendedNS), time.Duration(j.DispatchedNS),
		time.Duration(j.SessionDelayNS), j.Phase, j.Late, j.Waited, skipped})
	l.mu.Unlock()
}

func (l *rowLog) Handle(ctx context.Context, j *Job) {
	if l.service != nil {
		if d := l.service(l.rowOf(j)); d > 0 {
			select {
			case <-time.After(d):
			case <-ctx.Done():
			}
		}
	}
	l.add(j, false)
}

func (l *rowLog) Skip(j *Job) { l.add(j, true) }

// runBoth runs cfg over rows loaded and streamed, in virtual time, and
// returns both job lists by id.
func runBoth(t *testing.T, cfg Config, rows []trace.Row, service func(int) time.Duration) (loaded, streamed []rowJob, lst, sst Stats) {
	t.Helper()
	open, rows := mooncake(t, rows)
	run := func(stream bool) ([]rowJob, Stats) {
		var l rowLog
		var st Stats
		var wall0 int64
		synctest.Test(t, func(t *testing.T) {
			var err error
			if stream {
				l.p, err = streamPlan(cfg, open)
			} else {
				l.p, err = NewPlan(cfg, rows)
			}
			if err != nil {
				t.Fatalf("plan (stream %v): %v", stream, err)
			}
			l.rows, l.service = rows, service
			if w := l.p.Window(); w != nil {
				w.Row(w.First()) // the reader's start-up takes virtual time
			}
			wall0 = time.Now().UnixNano()
			st, err = l.p.run(t.Context(), &l, func(b time.Time) sleeper { return newPlainSleeper(b) }, nil)
			if err != nil {
				t.Fatalf("run: %v", err)
			}
		})
		if l.bad != nil {
			t.Error(l.bad)
		}
		js := l.jobs
		for i := range js {
			js[i].Intended -= time.Duration(wall0)
			if !js[i].Skipped {
				js[i].Dispatched -= time.Duration(wall0)
			}
		}
		slicesSortByID(js)
		return js, st
	}
	loaded, lst = run(false)
	streamed, sst = run(true)
	return
}

func slicesSortByID(js []rowJob) {
	for i := 1; i < len(js); i++ {
		for k := i; k > 0 && js[k].ID < js[k-1].ID; k-- {
			js[k], js[k-1] = js[k-1], js[k]
		}
	}
}

// TestStreamPlanMatchesLoaded: a plan that reads the trace while the run
// goes sends exactly the jobs of the plan over the loaded rows — the same
// rows, sessions, intended and dispatch times (virtual time), phases,
// late/waited/skipped flags — in every mode a streamed trace can take:
// fixed schedule (speed-up, offset window, explicit zero, late skip) and
// the load modes going round the trace (request count, duration).
func TestStreamPlanMatchesLoaded(t *testing.T) {
	offs := make([]time.Duration, 60)
	for i := range offs {
		offs[i] = 40*time.Minute + time.Duration(i/2*5)*time.Millisecond // pairs share a timestamp
	}
	// Service times off the dispatcher's 50 µs grid: no completion ties
	// with a dispatcher wake-up, whose order would be the scheduler's.
	slow := func(row int) time.Duration { return time.Duration(row%7)*3*time.Millisecond + 13*time.Microsecond }
	cases := []struct {
		name    string
		mut     func(c *Config)
		service func(int) time.Duration
	}{
		{"fixed", func(c *Config) {}, nil},
		{"fixed speedup", func(c *Config) { c.Speedup = 2.5 }, slow},
		{"fixed window", func(c *Config) { c.StartOffset, c.EndOffset = ms(30), ms(100) }, nil},
		{"fixed zero at start offset", func(c *Config) { c.AutoOffset, c.StartOffset = false, ms(20) }, nil},
		{"fixed warmup and count", func(c *Config) { c.WarmupRequests, c.RequestCount = 4, 30 }, nil},
		{"fixed late skip", func(c *Config) { c.Senders, c.Late = 2, LateSkip }, slow},
		{"rate wraps by count", func(c *Config) {
			c.Mode, c.RequestRate, c.RequestCount, c.WarmupRequests = ModeRate, 500, 150, 5
		}, slow},
		{"rate wraps by duration", func(c *Config) {
			c.Mode, c.RequestRate, c.Duration, c.Arrival = ModeRate, 1000, ms(200), ArrivalPoisson
		}, nil},
		{"rate capped", func(c *Config) { c.Mode, c.RequestRate, c.Concurrency = ModeRate, 2000, 3 }, slow},
		{"concurrency wraps", func(c *Config) { c.Mode, c.Concurrency, c.RequestCount = ModeConcurrency, 4, 130 }, slow},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			cfg := NewConfig()
			c.mut(&cfg)
			loaded, streamed, lst, sst := runBoth(t, cfg, tsRows(offs...), c.service)
			if len(loaded) == 0 {
				t.Fatal("no jobs")
			}
			if diff := cmp.Diff(loaded, streamed); diff != "" {
				t.Errorf("streamed jobs differ (-loaded +streamed):\n%s", diff)
			}
			if lst.Dispatched != sst.Dispatched || lst.Skipped != sst.Skipped || lst.StopReason != sst.StopReason {
				t.Errorf("stats: loaded %d sent, %d skipped, %q; streamed %d, %d, %q",
					lst.Dispatched, lst.Skipped, lst.StopReason, sst.Dispatched, sst.Skipped, sst.StopReason)
			}
		})
	}
}

// TestStreamPlanErrors: NewStreamPlan reports what NewPlan reports for the
// same trace, word for word, and says when a trace must be loaded.
func TestStreamPlanErrors(t *testing.T) {
	delayOnly := tsRows(0, ms(1), ms(2))
	delayOnly[1].HasOffset, delayOnly[1].HasDelay = false, true
	session := tsRows(0, ms(1))
	session[0].SessionID, session[1].SessionID = "s", "s"
	unsorted := tsRows(ms(5), ms(1))
	cases := []struct {
		name string
		rows []trace.Row
		mut  func(c *Config)
		not  string // a reason to load the trace instead
	}{
		{"rate conflicts with timestamps", tsRows(0, ms(1)), func(c *Config) { c.RequestRate = 5 }, ""},
		{"empty window", tsRows(0, ms(1)), func(c *Config) { c.StartOffset = time.Hour }, ""},
		{"missing timestamp", delayOnly, func(c *Config) {}, ""},
		{"user-centric without sessions", tsRows(0, ms(1)), func(c *Config) {
			c.Mode, c.UserCentricRate, c.NumUsers = ModeUserCentric, 2, 2
		}, ""},
		{"bad config", tsRows(0), func(c *Config) { c.Speedup = -1 }, ""},
		{"multi-turn", session, func(c *Config) {}, "multi-turn sessions"},
		{"unsorted", unsorted, func(c *Config) {}, "not sorted"},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			cfg := NewConfig()
			c.mut(&cfg)
			open, rows := mooncake(t, c.rows)
			_, lerr := NewPlan(cfg, rows)
			p, serr := streamPlan(cfg, open)
			if p != nil {
				p.Close()
			}
			if c.not != "" {
				if !errors.Is(serr, ErrNotStreamable) || !strings.Contains(serr.Error(), c.not) {
					t.Fatalf("NewStreamPlan: %v, want ErrNotStreamable (%s)", serr, c.not)
				}
				return
			}
			if lerr == nil || serr == nil || lerr.Error() != serr.Error() {
				t.Fatalf("NewPlan: %v\nNewStreamPlan: %v", lerr, serr)
			}
		})
	}
}

// TestStreamRunAllocsIndependentOfLength: TestRunAllocsIndependentOfLength
// for a streamed plan: taking each row's send time from the window and
// releasing it allocate nothing per job, and the reader goroutine
// allocates nothing per plain row.
func TestStreamRunAllocsIndependentOfLength(t *testing.T) {
	checkRunAllocsFlat(t, func(cfg Config, rows []trace.Row) (*Plan, Handler) {
		open, _ := mooncake(t, rows)
		p, err := streamPlan(cfg, open)
		if err != nil {
			t.Fatal(err)
		}
		w := p.Window()
		return p, HandlerFunc(func(_ context.Context, j *Job) {
			if w.Row(int64(j.Item)) == nil {
				t.Error("row not in the window")
			}
		})
	})
}
