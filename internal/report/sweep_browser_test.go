package report_test

import (
	"context"
	"fmt"
	"math"
	"os"
	"path/filepath"
	"slices"
	"sort"
	"testing"
	"time"

	"github.com/reprise-bench/reprise"
	"github.com/reprise-bench/reprise/arrowio"
	"github.com/reprise-bench/reprise/internal/mockserver"
	"github.com/reprise-bench/reprise/internal/report"
	"github.com/reprise-bench/reprise/internal/sweep"
	"github.com/reprise-bench/reprise/replay"
)

// TestBrowserParetoLoadOrder loads in headless Chromium the report of
// AIPerf's Methodology B output, five plain run directories
// pareto-c10 … pareto-c500 given in a shell glob's order (c10, c100,
// c200, c50, c500), as `reprise report artifacts/pareto-c*` builds it:
// the Pareto front is drawn joined in load order, its points those of
// sweep.Pareto, every point drawn; and a one-point front (one point
// beats the other on both axes) draws its dot.
func TestBrowserParetoLoadOrder(t *testing.T) {
	// A mock of 64 slots whose ITL grows with the running requests:
	// latency rises with concurrency, throughput until 64.
	c := mockserver.NewConfig()
	c.Addr, c.MaxNumSeqs, c.TTFT, c.ITL, c.ITLPerRunning, c.KeepLog = "127.0.0.1:0", 64, 5*time.Millisecond, 2*time.Millisecond, 100*time.Microsecond, false
	c.PrefixCacheTokens = 0
	srv, err := mockserver.Start(context.Background(), c)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { srv.Close() })
	tmp := t.TempDir()
	var dirs []string
	for _, n := range []int{10, 50, 100, 200, 500} {
		o := reprise.NewOptions()
		o.URL, o.Model = srv.URL(), mockserver.DefaultModel
		o.Synthetic = reprise.SyntheticLoad{ISL: 16, OSL: 4}
		o.Streaming = true
		o.Replay.Mode, o.Replay.Concurrency, o.Replay.RequestCount = replay.ModeConcurrency, n, 2*n
		o.Telemetry.EndpointMetrics = false
		o.Output.Dir = filepath.Join(tmp, fmt.Sprintf("pareto-c%d", n))
		if _, err := reprise.Run(context.Background(), o); err != nil {
			t.Fatal(err)
		}
		dirs = append(dirs, o.Output.Dir)
	}
	sort.Strings(dirs) // the glob's order: c10, c100, c200, c50, c500
	s, ok, err := sweep.ReadLoadSeries(dirs)
	if err != nil || !ok {
		t.Fatalf("ReadLoadSeries: ok %v, err %v", ok, err)
	}
	out := filepath.Join(t.TempDir(), "pareto.html")
	build(t, out, s.Dirs, report.Options{Sections: s.Sections})
	br := report.NewBrowser(t)
	drawn := br.LoadDrawn(t, out, "pareto-load-order.jpg", "sweep-pareto", "sweep-points")
	front, every := drawn["sweep-pareto"], drawn["sweep-points"]
	// The front as sweep.Pareto has it, in load order.
	onFront := map[int]bool{}
	for _, i := range sweep.Pareto(s.Rows) {
		onFront[i] = true
	}
	var want []string
	var wantX []float64
	for i, r := range s.Rows {
		if onFront[i] {
			want, wantX = append(want, r.Point), append(wantX, r.OutputThroughput)
		}
	}
	t.Logf("front drawn: %v at %v tokens/s; every point: %v", front.Labels, front.X, every.Labels)
	if len(want) < 2 || !slices.Equal(front.Labels, want) || !near(front.X, wantX) {
		t.Errorf("the Pareto front drawn is %v at x %v; want %v at %v (sweep.Pareto, in load order)", front.Labels, front.X, want, wantX)
	}
	loads := make([]float64, len(front.Labels))
	for i, l := range front.Labels {
		fmt.Sscanf(l, "concurrency=%g", &loads[i])
	}
	// Which loads are on the front is the machine's (a busy one can put
	// c10's p99 above c50's); that they are joined in load order, not
	// the glob's, is the report's.
	if !slices.IsSorted(loads) {
		t.Errorf("front loads %v: not in load order", loads)
	}
	if !slices.Equal(every.Labels, []string{"concurrency=10", "concurrency=50", "concurrency=100", "concurrency=200", "concurrency=500"}) || len(every.X) != 5 {
		t.Errorf("every point: %v (%d drawn)", every.Labels, len(every.X))
	}
	for _, ch := range []report.DrawnChart{front, every} {
		// A dot is a few pixels across: each point must be visible.
		if ch.Colored < 30*ch.Points {
			t.Errorf("chart %s: %d coloured pixels for %d points", ch.ID, ch.Colored, ch.Points)
		}
	}

	// A one-point front: concurrency 2 has more throughput and a lower
	// p99 than concurrency 1.
	rows := []sweep.Row{
		{Point: "concurrency_1", Settings: map[string]float64{sweep.Concurrency: 1}, Requests: 10, Throughput: 5, OutputThroughput: 100,
			TTFTP50: 40, TTFTP99: 60, ITLP50: 8, ITLP99: 12, E2EP50: 150, E2EP99: 200, PerUserTPS: 120},
		{Point: "concurrency_2", Settings: map[string]float64{sweep.Concurrency: 2}, Requests: 10, Throughput: 7.5, OutputThroughput: 150,
			TTFTP50: 35, TTFTP99: 50, ITLP50: 7, ITLP99: 10, E2EP50: 120, E2EP99: 150, PerUserTPS: 130},
	}
	m := &sweep.Manifest{SchemaVersion: sweep.SchemaVersion, Plan: sweep.Plan{Kind: "grid", Axes: []sweep.Axis{{Name: sweep.Concurrency, Values: []float64{1, 2}}}}}
	for i := range rows {
		m.Points = append(m.Points, sweep.PointStatus{Name: rows[i].Point, Settings: rows[i].Settings, Status: sweep.StatusDone, Row: &rows[i]})
	}
	for _, i := range sweep.Pareto(rows) {
		m.Pareto = append(m.Pareto, rows[i].Point)
	}
	one := filepath.Join(t.TempDir(), "one.html")
	build(t, one, s.Dirs[:1], report.Options{Sections: sweep.ReportSections(m)})
	drawn = br.LoadDrawn(t, one, "pareto-one-point.jpg", "sweep-pareto", "sweep-points")
	if f := drawn["sweep-pareto"]; !slices.Equal(f.Labels, []string{"concurrency_2"}) || !near(f.X, []float64{150}) ||
		!near(f.Y, []float64{150}) || f.Colored < 30 {
		t.Errorf("one-point front drawn as %+v; want concurrency_2 at (150, 150), its dot visible", f)
	}
}

// near reports whether a and b are equal to the report's precision
// (its data keeps about five significant digits).
func near(a, b []float64) bool {
	return slices.EqualFunc(a, b, func(x, y float64) bool { return math.Abs(x-y) <= 1e-4*math.Abs(y) })
}

func build(t *testing.T, path string, dirs []string, opts report.Options) {
	t.Helper()
	var runs []*arrowio.RunReader
	for _, d := range dirs {
		r, err := arrowio.Open(d)
		if err != nil {
			t.Fatal(err)
		}
		runs = append(runs, r)
	}
	f, err := os.Create(path)
	if err != nil {
		t.Fatal(err)
	}
	if err := report.Build(f, runs, opts); err != nil {
		f.Close()
		t.Fatal(err)
	}
	if err := f.Close(); err != nil {
		t.Fatal(err)
	}
}

// TestBrowserSweepZeroRows loads in headless Chromium the report of
// sweeps whose rows are zero where a log axis draws them: a non-streaming
// sweep (TTFT and ITL 0 at every point) and one where nothing succeeded
// (every latency and rate 0). The page must finish loading with a clean
// console, and every chart with a value to show draws it.
func TestBrowserSweepZeroRows(t *testing.T) {
	dir := filepath.Join(t.TempDir(), "run")
	c := mockserver.NewConfig()
	c.Addr, c.TTFT, c.ITL = "127.0.0.1:0", time.Millisecond, 0
	srv, err := mockserver.Start(context.Background(), c)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { srv.Close() })
	o := reprise.NewOptions()
	o.URL, o.Model, o.Output.Dir = srv.URL(), mockserver.DefaultModel, dir
	o.Synthetic = reprise.SyntheticLoad{ISL: 16, OSL: 4}
	o.Replay.Mode, o.Replay.Concurrency, o.Replay.RequestCount = replay.ModeConcurrency, 1, 4
	o.Telemetry.EndpointMetrics = false
	if _, err := reprise.Run(context.Background(), o); err != nil {
		t.Fatal(err)
	}
	nonStreaming := func(i int) sweep.Row {
		n := float64(i + 1)
		return sweep.Row{Point: fmt.Sprintf("concurrency_%d", i+1), Settings: map[string]float64{sweep.Concurrency: n}, Requests: 10,
			Throughput: 5 * n, OutputThroughput: 100 * n, E2EP50: 100 + n, E2EP99: 150 + n}
	}
	failed := func(i int) sweep.Row {
		return sweep.Row{Point: fmt.Sprintf("concurrency_%d", i+1), Settings: map[string]float64{sweep.Concurrency: float64(i + 1)}, Requests: 10, Errors: 10}
	}
	br := report.NewBrowser(t)
	for _, tc := range []struct {
		name string
		row  func(int) sweep.Row
		want []string // the charts that draw
	}{
		{"non-streaming", nonStreaming, []string{"sweep-pareto", "sweep-points"}},
		{"all-failed", failed, []string{"sweep-goodput"}},
	} {
		t.Run(tc.name, func(t *testing.T) {
			m := &sweep.Manifest{SchemaVersion: sweep.SchemaVersion, Plan: sweep.Plan{Kind: "grid", Axes: []sweep.Axis{{Name: sweep.Concurrency, Values: []float64{1, 2, 3}}}}}
			var rows []sweep.Row
			for i := range 3 {
				rows = append(rows, tc.row(i))
			}
			for i := range rows {
				m.Points = append(m.Points, sweep.PointStatus{Name: rows[i].Point, Settings: rows[i].Settings, Status: sweep.StatusDone, Row: &rows[i]})
			}
			for _, i := range sweep.Pareto(rows) {
				m.Pareto = append(m.Pareto, rows[i].Point)
			}
			out := filepath.Join(t.TempDir(), tc.name+".html")
			build(t, out, []string{dir}, report.Options{Sections: sweep.ReportSections(m)})
			br.LoadDrawn(t, out, "sweep-zero-"+tc.name+".jpg", tc.want...)
		})
	}
}
