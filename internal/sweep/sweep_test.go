package sweep

import (
	"context"
	"math"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/google/go-cmp/cmp"

	"github.com/reprise-bench/reprise"
	"github.com/reprise-bench/reprise/arrowio"
	"github.com/reprise-bench/reprise/internal/mockserver"
	"github.com/reprise-bench/reprise/replay"
)

// capacityMock is a mock server whose capacity follows from its settings
// (internal/mockserver, the timing model in sched.go):
//
//	a request holds one of S = MaxNumSeqs slots from admission to its
//	last token: TTFT + PrefillPerToken·ISL (no prefix cache) for the
//	first token, then OSL−1 gaps of ITL + ITLPerRunning·(running−1).
//	Past capacity every slot is busy, running = S, so a slot is held for
//	T = TTFT + P·ISL + (OSL−1)·(ITL + R·(S−1)),
//	and the server completes at most C = S/T requests per second.
//
// Below C an open-loop load at constant rate queues nothing and every
// TTFT is TTFT + P·ISL; above it the queue, and TTFT, grow without bound.
type capacityMock struct {
	S          int
	TTFT, P    time.Duration
	ITL, R     time.Duration
	ISL, OSL   int
	baseTTFTMS float64
}

// mockModel holds a slot for T = 20 + 1·16 + 5·(30 + 5·7) = 361 ms, so
// C = 8/0.361 s ≈ 22.2 requests/s. Few tokens and requests per second
// keep the client and the server light on a busy test machine, and slow
// tokens keep the few ms a loaded machine adds to each hand-over of a
// slot small beside T.
var mockModel = capacityMock{S: 8, TTFT: 20 * time.Millisecond, P: time.Millisecond,
	ITL: 30 * time.Millisecond, R: 5 * time.Millisecond, ISL: 16, OSL: 6}

// capacity is C = S/T in requests/s.
func (m capacityMock) capacity() float64 {
	t := m.TTFT + time.Duration(m.ISL)*m.P + time.Duration(m.OSL-1)*(m.ITL+time.Duration(m.S-1)*m.R)
	return float64(m.S) / t.Seconds()
}

// firstToken is the TTFT below capacity, ms.
func (m capacityMock) firstToken() float64 {
	return (m.TTFT + time.Duration(m.ISL)*m.P).Seconds() * 1e3
}

func (m capacityMock) start(t *testing.T) *mockserver.Server { return m.startWith(t, false) }

// startLogged starts the mock with its oracle log kept ([mockserver.Server.Log]).
func (m capacityMock) startLogged(t *testing.T) *mockserver.Server { return m.startWith(t, true) }

func (m capacityMock) startWith(t *testing.T, keepLog bool) *mockserver.Server {
	t.Helper()
	c := mockserver.NewConfig()
	c.Addr, c.MaxNumSeqs, c.TTFT, c.PrefillPerToken, c.ITL, c.ITLPerRunning = "127.0.0.1:0", m.S, m.TTFT, m.P, m.ITL, m.R
	c.PrefixCacheTokens, c.KeepLog = 0, keepLog
	srv, err := mockserver.Start(context.Background(), c)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { srv.Close() })
	return srv
}

// base is a synthetic open-loop load of n requests at a constant rate.
func (m capacityMock) base(srv *mockserver.Server, n int) reprise.Options {
	o := reprise.NewOptions()
	o.URL, o.Model = srv.URL(), mockserver.DefaultModel
	o.Synthetic = reprise.SyntheticLoad{ISL: float64(m.ISL), OSL: float64(m.OSL)}
	o.Replay.Mode, o.Replay.Arrival, o.Replay.RequestCount = replay.ModeRate, replay.ArrivalConstant, n
	o.Replay.RequestRate = 1
	// A send that a busy machine makes late moves the rest of the
	// schedule instead of bunching the next sends into a burst, which a
	// server near capacity would take long to drain.
	o.Replay.Late = replay.LateShift
	o.Telemetry.EndpointMetrics = false
	return o
}

func TestCapacityAssumptions(t *testing.T) {
	// The derivation assumes the server counts ISL prompt tokens and
	// sends OSL output tokens for the synthetic load: check it on a run.
	srv := mockModel.start(t)
	o := mockModel.base(srv, 4)
	o.Replay.RequestRate = 20
	o.Output.Dir = t.TempDir()
	if _, err := reprise.Run(context.Background(), o); err != nil {
		t.Fatal(err)
	}
	rr, err := arrowio.Open(o.Output.Dir)
	if err != nil {
		t.Fatal(err)
	}
	for r, err := range rr.Requests() {
		if err != nil {
			t.Fatal(err)
		}
		if r.ServerPromptTokens != int32(mockModel.ISL) || r.ServerCompletionTokens != int32(mockModel.OSL) {
			t.Fatalf("server counted %d prompt and %d completion tokens, the derivation assumes %d and %d",
				r.ServerPromptTokens, r.ServerCompletionTokens, mockModel.ISL, mockModel.OSL)
		}
	}
}

func TestSaturationStopsAtFirstPointPastCapacity(t *testing.T) {
	if raceEnabled {
		t.Skip("a calibration against the mock's capacity: the race detector slows the mock below it")
	}
	srv := mockModel.start(t)
	c := mockModel.capacity()
	cfg := NewConfig()
	cfg.Base = mockModel.base(srv, 40)
	cfg.Dir = t.TempDir()
	// 0.5C and 0.7C are below capacity, 1.3C is the first point past it.
	rates := []float64{roundSig(0.5*c, 3), roundSig(0.7*c, 3), roundSig(1.3*c, 3), roundSig(1.6*c, 3)}
	cfg.Axes = []Axis{{Name: RequestRate, Values: rates}}
	cfg.Stop.SLOFailures = 0
	res, err := Run(context.Background(), cfg)
	if err != nil {
		t.Fatal(err)
	}
	var got []string
	for _, p := range res.Points {
		s := p.Status
		if p.Row != nil && p.Row.Saturated {
			s += "+saturated"
		}
		got = append(got, s)
	}
	want := []string{"done", "done", "done+saturated", "skipped"}
	if diff := cmp.Diff(want, got); diff != "" {
		for _, r := range res.Rows {
			t.Logf("%s: %+v", r.Point, r)
		}
		t.Fatalf("capacity %.1f/s, rates %v: statuses (-want +got):\n%s", c, rates, diff)
	}
	if len(res.Stops) != 1 || !strings.Contains(res.Stops[0], "saturated") {
		t.Errorf("stops = %q", res.Stops)
	}
	if _, err := os.Stat(filepath.Join(cfg.Dir, TableFile)); err != nil {
		t.Error(err)
	}
}

func TestFindMaxRateWithinFivePercentOfCapacity(t *testing.T) {
	if raceEnabled {
		t.Skip("a calibration against the mock's capacity: the race detector slows the mock below it")
	}
	// Near capacity every late write of the server is paid many times
	// over (a queue drains at C − r): on a machine whose cores are so
	// busy that this process gets under a third of one, the client and
	// the mock wait for a CPU for tens of ms and the mock no longer has
	// the capacity its settings give it.
	if share := cpuShare(); share < 0.33 {
		t.Skipf("this process gets %.0f%% of a CPU; the capacity calibration needs a third of one", 100*share)
	}
	// Two slots held T = 20 + 1·16 + 5·(60 + 12·1) = 396 ms each: C =
	// 2/0.396 s ≈ 5.05 requests/s. Near capacity a queue drains at
	// C − r, so every delay of a busy machine is paid many times over;
	// at 5 requests/s the client and the server need little CPU, and
	// below C each slot idles 2/r − T (44 ms at 0.9·C) before the next
	// arrival, which absorbs a late write of that much.
	m := capacityMock{S: 2, TTFT: 20 * time.Millisecond, P: time.Millisecond,
		ITL: 60 * time.Millisecond, R: 12 * time.Millisecond, ISL: 16, OSL: 6}
	srv := m.start(t)
	c := m.capacity()
	cfg := NewConfig()
	cfg.Base = m.base(srv, 12)
	// Below capacity TTFT is firstToken (36 ms); a TTFT SLO 60 ms above
	// it is met until requests queue, which starts at C. Above C the
	// n-th request waits n·(1/C − 1/r) = n·198 ms·(1 − C/r): at
	// r = 1.03·C the 11th of 12 (90 % good) waits 64 ms, at 1.02·C 43 ms,
	// so the boundary is resolved to about 3 %.
	cfg.Base.Goodput = "ttft:" + formatValue(m.firstToken()+60)
	cfg.Base.MinGoodFraction = 0.9
	cfg.Dir = t.TempDir()
	// Start at 0.9·C with a factor of 1.25: the bracket is [0.9·C,
	// 1.125·C], and bisection to 3 % takes three more probes.
	cfg.Find = NewFindConfig(RequestRate, roundSig(0.9*c, 3))
	cfg.Find.Factor, cfg.Find.Precision = 1.25, 0.03
	// The derivation above is for 12-request probes.
	cfg.Find.MinRounds, cfg.Find.MinProbeTime = 0, 0
	res, err := Run(context.Background(), cfg)
	if err != nil {
		t.Fatal(err)
	}
	f := res.Found
	for _, p := range f.Probes {
		t.Logf("probe %v: %d/%d good, pass %v", p.Value, p.Good, p.Total, p.Pass)
	}
	t.Log(f.Text)
	if rel := math.Abs(f.Value-c) / c; rel > 0.05 {
		t.Errorf("found max rate %v, capacity %.2f: off by %.1f%% (> 5%%)", f.Value, c, 100*rel)
	}
}

// TestFindFloor: a search whose SLO no load meets halves the load from
// its start down to the floor, probes the floor and stops there with no
// load found; a probe bound reached first ends it above the floor, and
// the answer says which.
func TestFindFloor(t *testing.T) {
	m := mockModel
	srv := m.start(t)
	tests := []struct {
		name      string
		floor     float64
		maxProbes int
		want      []float64
		text      string
	}{
		// 8 → 4 → 2, the floor: 0.125 + 0.25 + 0.5 s of sends.
		{"down to the floor", 2, DefaultFindMaxProbes, []float64{8, 4, 2},
			`find: no request-rate met "ttft:1" with ≥ 0.95 good down to 2 (the floor): 2 good 0.0%`},
		// A floor between two halvings is probed itself: 8 → 4 → 3.
		{"a floor between halvings", 3, DefaultFindMaxProbes, []float64{8, 4, 3},
			`down to 3 (the floor)`},
		{"the probe bound first", 1, 2, []float64{8, 4},
			`find: no request-rate met "ttft:1" with ≥ 0.95 good down to 4, the lowest probed within the 2-probe bound (the floor is 1): 4 good 0.0%`},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			cfg := NewConfig()
			// Two requests a probe; the mock's TTFT is at least 36 ms, so
			// an SLO of 1 ms fails at every load.
			cfg.Base = m.base(srv, 2)
			cfg.Base.Goodput = "ttft:1"
			cfg.Dir = t.TempDir()
			cfg.Find = NewFindConfig(RequestRate, 8)
			cfg.Find.Floor, cfg.Find.MaxProbes = tt.floor, tt.maxProbes
			// Every probe fails: the probe-length rule, which lengthens
			// passes, does not change the path.
			cfg.Find.MinRounds, cfg.Find.MinProbeTime = 0, 0
			res, err := Run(context.Background(), cfg)
			if err != nil {
				t.Fatal(err)
			}
			// The path is that of the valid probes: on a busy machine a
			// probe the client could not keep on schedule is run again
			// (an invalid try is no outcome).
			var probed []float64
			for _, p := range res.Found.Probes {
				if p.Valid {
					probed = append(probed, p.Value)
				}
			}
			if diff := cmp.Diff(tt.want, probed); diff != "" {
				t.Errorf("probed loads (-want +got):\n%s", diff)
			}
			if f := res.Found; f.Value != 0 || f.Above != tt.want[len(tt.want)-1] || !strings.Contains(f.Text, tt.text) {
				t.Errorf("found value %v above %v, %q; want 0 above %v, %q", f.Value, f.Above, f.Text, tt.want[len(tt.want)-1], tt.text)
			}
		})
	}
}

// TestFindFloorDefaultAndValidation: the default floor is the start / 16
// (at least 1, whole, for concurrency), and a floor above the start, at
// or below 0, or fractional for concurrency is refused.
func TestFindFloorDefaultAndValidation(t *testing.T) {
	for _, tt := range []struct {
		setting      string
		start, floor float64
	}{
		{RequestRate, 1, 0.0625},
		{RequestRate, 10, 0.625},
		{Speedup, 3, 0.1875},
		{Concurrency, 64, 4},
		{Concurrency, 8, 1},
		{Concurrency, 40, 2},
	} {
		if got := NewFindConfig(tt.setting, tt.start).Floor; got != tt.floor {
			t.Errorf("%s from %v: floor %v, want %v", tt.setting, tt.start, got, tt.floor)
		}
	}
	o := reprise.NewOptions()
	o.Goodput = "ttft:1"
	for _, tt := range []struct {
		setting      string
		start, floor float64
		ok           bool
	}{
		{RequestRate, 8, 8, true},
		{RequestRate, 8, 0.01, true},
		{RequestRate, 8, 9, false},
		{RequestRate, 8, 0, false},
		{RequestRate, 8, -1, false},
		{Concurrency, 8, 1.5, false},
	} {
		f := NewFindConfig(tt.setting, tt.start)
		f.Floor = tt.floor
		err := f.validate(&o)
		if (err == nil) != tt.ok {
			t.Errorf("%s from %v, floor %v: %v, want ok %v", tt.setting, tt.start, tt.floor, err, tt.ok)
		}
		if err != nil && !strings.Contains(err.Error(), "find floor") {
			t.Errorf("the error does not name the floor: %v", err)
		}
	}
}

// TestFindMaxRateDefensible: against a mock of 33.3 requests/s (8 slots
// held 240 ms each), a search lands within 10 % of capacity and not above
// it by more than the rate check's resolution τ = 2 % (33.75/s, 1.25 %
// over, passed two of three 6 s probes in one run: its queue grows by 2–3
// requests a probe), or stops saying it cannot measure the load on this
// machine.
func TestFindMaxRateDefensible(t *testing.T) {
	if raceEnabled {
		t.Skip("a calibration against the mock's capacity: the race detector slows the mock below it")
	}
	// T = 40 + 5·40 = 240 ms, C = 8/0.24 s = 33.3 requests/s. The mock's
	// timers only ever fire late, so on a busy machine its capacity is at
	// most C.
	m := capacityMock{S: 8, TTFT: 40 * time.Millisecond, ITL: 40 * time.Millisecond, ISL: 16, OSL: 6}
	srv := m.start(t)
	c := m.capacity()
	cfg := NewConfig()
	cfg.Base = m.base(srv, 10)
	// Below capacity TTFT is 40 ms; the SLO allows 60 ms of queueing.
	cfg.Base.Goodput = "ttft:" + formatValue(m.firstToken()+60)
	cfg.Base.MinGoodFraction = 0.9
	cfg.Dir = t.TempDir()
	// From 20 ×2: 20, 40, then bisection 30, 35, 32.5, 33.75, 33.12, …:
	// the loads nearest C are 0.6 % below and 1.25 % above it. 6 s
	// probes (201 requests at C) keep the search near a minute; at
	// 33.75/s the 203rd request waits 203·(1/C − 1/33.75) = 76 ms, past
	// the SLO's 60, and a third of the requests do.
	cfg.Find = NewFindConfig(RequestRate, 20)
	cfg.Find.MinProbeTime, cfg.Find.MaxProbes = 6*time.Second, 12
	res, err := Run(context.Background(), cfg)
	if err != nil {
		t.Fatal(err)
	}
	f := res.Found
	for _, p := range f.Probes {
		t.Logf("probe %s (%s): %s", p.Point, p.Why, probeVerdict(&p))
	}
	t.Log(f.Text)
	if f.Unmeasurable {
		if !strings.Contains(f.Text, "cannot measure this load on this machine") {
			t.Errorf("unmeasurable, but the answer does not say so: %q", f.Text)
		}
		return
	}
	if f.Value > c*(1+DefaultSaturationTolerance) || f.Value < 0.9*c {
		t.Errorf("found max rate %v, capacity %.2f: want within 10 %% below it (or %g %% above)", f.Value, c, DefaultSaturationTolerance*100)
	}
	if !strings.Contains(f.Text, "probes: ") || !strings.Contains(f.Text, " valid") {
		t.Errorf("the answer does not count the probes: %q", f.Text)
	}
}

// TestFindCannotMeasure: a search whose client cannot keep the schedule
// (here a lateness budget no client keeps) re-runs each probe and then
// stops, saying it cannot measure the load, instead of counting the
// client's failure as the server's.
func TestFindCannotMeasure(t *testing.T) {
	srv := mockModel.start(t)
	cfg := NewConfig()
	cfg.Base = mockModel.base(srv, 4)
	cfg.Base.Goodput = "ttft:1000"
	cfg.Dir = t.TempDir()
	cfg.Find = NewFindConfig(RequestRate, 4)
	cfg.Find.MinRounds, cfg.Find.MinProbeTime = 0, 0
	cfg.Find.MaxLateness, cfg.Find.MaxReruns = time.Nanosecond, 1
	res, err := Run(context.Background(), cfg)
	if err != nil {
		t.Fatal(err)
	}
	f := res.Found
	var probed []string
	for _, p := range f.Probes {
		probed = append(probed, p.Point+" "+p.Why)
	}
	if diff := cmp.Diff([]string{"request-rate=4 search", "request-rate=4_try=2 rerun"}, probed); diff != "" {
		t.Errorf("probes (-want +got):\n%s", diff)
	}
	if !f.Unmeasurable || f.Unmeasured != 4 || f.Value != 0 || f.Invalid != 2 ||
		!strings.Contains(f.Text, "find: cannot measure this load on this machine: request-rate 4") ||
		!strings.Contains(f.Text, "schedule lateness p99") {
		t.Errorf("found %+v", f)
	}
	// The same search again reads its tries back: the same answer, and
	// no new try.
	again, err := Run(context.Background(), cfg)
	if err != nil {
		t.Fatal(err)
	}
	if again.Found.Text != f.Text || len(again.Points) != len(res.Points) {
		t.Errorf("resumed: %q with %d points; want %q with %d", again.Found.Text, len(again.Points), f.Text, len(res.Points))
	}
	if entries, _ := os.ReadDir(filepath.Join(cfg.Dir, PointsDir)); len(entries) != 2 {
		t.Errorf("resumed: %d point directories, want 2", len(entries))
	}
}
