package sweep

import (
	"context"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/google/go-cmp/cmp"

	"github.com/reprise-bench/reprise"
	"github.com/reprise-bench/reprise/internal/mockserver"
)

// deterministic are the columns of a row that do not depend on timing:
// what was asked and what was counted.
type deterministic struct {
	Point      string
	Settings   map[string]float64
	Status     string
	PromptSeed uint64
	Runs       int
	Requests   int
	Errors     int
	TotalISL   int64
	TotalOSL   int64
}

func table(res *Result) []deterministic {
	var out []deterministic
	for _, p := range res.Points {
		d := deterministic{Point: p.Name, Settings: p.Settings, Status: p.Status, PromptSeed: p.PromptSeed}
		if r := p.Row; r != nil {
			d.Runs, d.Requests, d.Errors, d.TotalISL, d.TotalOSL = r.Runs, r.Requests, r.Errors, r.TotalISL, r.TotalOSL
		}
		out = append(out, d)
	}
	return out
}

func TestInterruptedSweepResumesToTheStraightTable(t *testing.T) {
	srv := mockModel.start(t)
	mk := func(dir string) Config {
		cfg := NewConfig()
		cfg.Base = mockModel.base(srv, 12)
		cfg.Dir = dir
		cfg.Axes = []Axis{{Name: RequestRate, Values: []float64{10, 12}}, {Name: OSL, Values: []float64{2, 3}}}
		cfg.Stop = StopConfig{MaxErrorRate: 1}
		return cfg
	}
	straight, err := Run(context.Background(), mk(t.TempDir()))
	if err != nil {
		t.Fatal(err)
	}

	// Cancel the context when the third point's run starts: the run ends
	// interrupted, as on Ctrl-C, and the sweep stops.
	dir := t.TempDir()
	cfg := mk(dir)
	ctx, cancel := context.WithCancel(context.Background())
	defer cancel()
	var once sync.Once
	cfg.Base.OnStart = func(s reprise.Start) {
		if strings.HasSuffix(s.Dir, "request-rate=12_osl=2") {
			once.Do(cancel)
		}
	}
	first, err := Run(ctx, cfg)
	if err != nil {
		t.Fatal(err)
	}
	if !first.Interrupted {
		t.Fatal("the cancelled sweep is not marked interrupted")
	}
	got := []string{}
	for _, p := range first.Points {
		got = append(got, p.Status)
	}
	if diff := cmp.Diff([]string{StatusDone, StatusDone, StatusInterrupted, StatusPending}, got); diff != "" {
		t.Fatalf("statuses after the interruption (-want +got):\n%s", diff)
	}

	var started []string
	cfg = mk(dir)
	cfg.Base.OnStart = func(s reprise.Start) { started = append(started, s.Dir[len(dir):]) }
	resumed, err := Run(context.Background(), cfg)
	if err != nil {
		t.Fatal(err)
	}
	if diff := cmp.Diff([]string{"/points/request-rate=12_osl=2", "/points/request-rate=12_osl=3"}, started); diff != "" {
		t.Errorf("resumed runs (-want +got):\n%s", diff)
	}
	if diff := cmp.Diff(table(straight), table(resumed)); diff != "" {
		t.Errorf("resumed table differs from the straight one (-straight +resumed):\n%s", diff)
	}

	// Another plan in the same directory is refused.
	other := mk(dir)
	other.Axes[1].Values = []float64{5}
	if _, err := Run(context.Background(), other); err == nil || !strings.Contains(err.Error(), "axes") {
		t.Errorf("a changed plan: err = %v, want one naming the axes", err)
	}
}

func TestRunsIntervalsContainConfiguredTTFT(t *testing.T) {
	if raceEnabled {
		t.Skip("a calibration of measured TTFT against the mock's settings: under the race detector every TTFT is tens of ms late")
	}
	// The mock's first token comes TTFT + U(−J, J) after admission, the
	// draw seeded by (seed, request number): a repetition with seed r
	// makes five runs of 8 requests, and the t-interval of the runs'
	// median TTFT (the jitter's median is 0, as its mean) should contain
	// TTFT. The median keeps a request that a busy machine delayed from
	// moving its run's value. The client adds
	// its send and the server's timer lateness (well under a ms) to
	// every TTFT (a few ms on a loaded machine); J makes the spread of a
	// run's median (about 14 ms) large beside that. With 20 repetitions,
	// nominal 95 % intervals would meet "≥ 95 % contain it" only three
	// times in four; 99 % intervals (--confidence-level 0.99) meet it
	// with room, and the test also checks they are not uselessly wide.
	const (
		reps  = 20
		ttft  = 60 * time.Millisecond
		jit   = 45 * time.Millisecond
		level = 0.99
	)
	type outcome struct {
		lo, hi float64
		err    error
	}
	// One repetition at a time: on a busy two-core machine, replays in
	// parallel in one process delay each other's first tokens by
	// hundreds of ms.
	out := make([]outcome, reps)
	sem := make(chan struct{}, 1)
	var wg sync.WaitGroup
	for r := range reps {
		wg.Add(1)
		go func() {
			defer wg.Done()
			sem <- struct{}{}
			defer func() { <-sem }()
			c := mockserver.NewConfig()
			c.Addr, c.TTFT, c.ITL, c.Jitter, c.JitterDist, c.Seed, c.KeepLog =
				"127.0.0.1:0", ttft, time.Millisecond, jit, mockserver.JitterUniform, uint64(r+1), false
			srv, err := mockserver.Start(context.Background(), c)
			if err != nil {
				out[r].err = err
				return
			}
			defer srv.Close()
			o := reprise.NewOptions()
			o.URL, o.Model = srv.URL(), mockserver.DefaultModel
			o.Synthetic = reprise.SyntheticLoad{ISL: 16, OSL: 2}
			o.Replay.Concurrency, o.Replay.RequestCount = 8, 8
			o.Telemetry.EndpointMetrics = false
			rep, err := Repeat(context.Background(), o, t.TempDir(), RunsConfig{Runs: 5, Level: level})
			if err != nil {
				out[r].err = err
				return
			}
			iv := rep.Across.Metrics["time_to_first_token.p50"]
			if iv.N != 5 {
				out[r].err = fmtErr("repetition %d: %d runs summarized", r, iv.N)
				return
			}
			out[r].lo, out[r].hi = iv.Low, iv.High
		}()
	}
	wg.Wait()
	want := float64(ttft) / 1e6
	covered := 0
	var halves []float64
	for r, o := range out {
		halves = append(halves, (o.hi-o.lo)/2)
		if o.err != nil {
			t.Fatal(o.err)
		}
		in := o.lo <= want && want <= o.hi
		if in {
			covered++
		}
		t.Logf("seed %2d: [%.2f, %.2f] ms contains %v: %v", r+1, o.lo, o.hi, want, in)
	}
	if covered*100 < 95*reps {
		t.Errorf("%d of %d intervals contain the configured TTFT %v ms, want ≥ 95 %%", covered, reps, want)
	}
	// The median of 8 draws of U(−45, 45) ms spreads by about
	// 45/√10 ≈ 14 ms, so the t(0.995, 4) = 4.6 half-width is about
	// 4.6·14/√5 ≈ 29 ms; twice that, the TTFT itself, would contain
	// anything.
	if m := median(halves); m > want {
		t.Errorf("median half-width %.1f ms: the intervals are too wide to mean anything", m)
	}
}
