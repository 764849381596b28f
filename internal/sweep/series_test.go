package sweep

import (
	"context"
	"path/filepath"
	"slices"
	"testing"
	"time"

	"github.com/reprise-bench/reprise"
	"github.com/reprise-bench/reprise/internal/mockserver"
	"github.com/reprise-bench/reprise/replay"
)

// TestReadLoadSeries replays three concurrencies into directories named
// so that their glob order is not their load order, and checks that
// ReadLoadSeries orders them by load, builds a sweep's rows and
// sections from them, and refuses runs that are not one series.
func TestReadLoadSeries(t *testing.T) {
	c := mockserver.NewConfig()
	c.Addr, c.TTFT, c.ITL, c.KeepLog = "127.0.0.1:0", 5*time.Millisecond, 3*time.Millisecond, false
	srv, err := mockserver.Start(context.Background(), c)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { srv.Close() })
	tmp := t.TempDir()
	run := func(name string, mut func(*reprise.Options)) string {
		o := reprise.NewOptions()
		o.URL, o.Model = srv.URL(), mockserver.DefaultModel
		o.Synthetic = reprise.SyntheticLoad{ISL: 16, OSL: 8}
		o.Replay.RequestCount = 8
		o.Telemetry.EndpointMetrics = false
		o.Output.Dir = filepath.Join(tmp, name)
		mut(&o)
		if _, err := reprise.Run(context.Background(), o); err != nil {
			t.Fatal(err)
		}
		return o.Output.Dir
	}
	conc := func(n int) func(*reprise.Options) {
		return func(o *reprise.Options) { o.Replay.Mode, o.Replay.Concurrency = replay.ModeConcurrency, n }
	}
	c1, c10, c4 := run("pareto-c1", conc(1)), run("pareto-c10", conc(10)), run("pareto-c4", conc(4))

	s, ok, err := ReadLoadSeries([]string{c1, c10, c4}) // the glob's order
	if err != nil || !ok {
		t.Fatalf("ReadLoadSeries: ok %v, err %v", ok, err)
	}
	if s.Setting != Concurrency || !slices.Equal(s.Values, []float64{1, 4, 10}) || !slices.Equal(s.Order, []int{0, 2, 1}) ||
		!slices.Equal(s.Dirs, []string{c1, c4, c10}) {
		t.Errorf("series %s %v, order %v, dirs %v; want concurrency 1, 4, 10", s.Setting, s.Values, s.Order, s.Dirs)
	}
	var points []string
	for _, r := range s.Rows {
		points = append(points, r.Point)
	}
	if !slices.Equal(points, []string{"concurrency=1", "concurrency=4", "concurrency=10"}) {
		t.Errorf("rows %v", points)
	}
	ids := map[string]bool{}
	for _, sec := range s.Sections {
		for _, ch := range sec.Charts {
			ids[ch.ID] = true
			// A point whose tokens all arrived in one read (a busy
			// machine) has no per-user rate: the curve skips it.
			var rated []string
			for _, r := range s.Rows {
				if r.PerUserTPS > 0 {
					rated = append(rated, r.Point)
				}
			}
			if ch.ID == "sweep-per-user" && (!slices.Equal(ch.Series[0].Labels, rated) || len(rated) < 2) {
				t.Errorf("per-user curve labels %v, want the rated points in load order %v", ch.Series[0].Labels, rated)
			}
		}
	}
	for _, id := range []string{"sweep-pareto", "sweep-points", "sweep-per-user", "sweep-ttft", "sweep-goodput"} {
		if !ids[id] {
			t.Errorf("no chart %s; have %v", id, ids)
		}
	}

	// Not a series: one run; the same load twice; a mode change.
	rate := run("rate-5", func(o *reprise.Options) { o.Replay.Mode, o.Replay.RequestRate = replay.ModeRate, 50 })
	again := run("again-c4", conc(4))
	longer := run("longer-c8", func(o *reprise.Options) { conc(8)(o); o.Synthetic.ISL = 32 })
	for _, dirs := range [][]string{{c1}, {c4, again}, {c1, rate}, {c1, longer}} {
		if _, ok, err := ReadLoadSeries(dirs); ok || err != nil {
			t.Errorf("ReadLoadSeries(%v): ok %v, err %v; want not a series", dirs, ok, err)
		}
	}
}
