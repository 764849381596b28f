package report

import (
	"math"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/reprise-bench/reprise/arrowio"
	"github.com/reprise-bench/reprise/engine/summary"
)

// loadRuns reads run directories as Build's first pass does.
func loadRuns(t *testing.T, dirs ...string) []*runData {
	t.Helper()
	var out []*runData
	for _, dir := range dirs {
		r, err := arrowio.Open(dir)
		if err != nil {
			t.Fatal(err)
		}
		d, err := load(r, filepath.Base(dir), RunColor(0), -1)
		if err != nil {
			t.Fatal(err)
		}
		t.Cleanup(func() { d.views.close() })
		out = append(out, d)
	}
	return out
}

// TestGoodputWithoutSLO: without --goodput the summary table says there
// is no goodput, not "goodput req/s 0", and the headline has no tile.
func TestGoodputWithoutSLO(t *testing.T) {
	dir := filepath.Join(t.TempDir(), "run")
	synthRun{n: 40, rate: 20, ttft: 20 * time.Millisecond, itl: 5 * time.Millisecond, seed: 1}.write(t, dir)
	runs := loadRuns(t, dir)
	if c := goodputCell(runs[0].sum); c.Text == "0" || !strings.Contains(c.Text, "no --goodput") {
		t.Errorf("goodput cell without SLO: %q", c.Text)
	}
	for _, tl := range runRow(runs[0]).Tiles {
		if strings.HasPrefix(tl.Metric, "goodput") {
			t.Errorf("headline shows goodput %q without an SLO", tl.Text)
		}
	}
	s := *runs[0].sum
	s.Options.Goodput = []summary.SLO{{Tag: "time_to_first_token", Value: 100}}
	s.Goodput = 3.5
	if c := goodputCell(&s); c.Text != "3.5" {
		t.Errorf("goodput cell with an SLO: %q, want 3.5", c.Text)
	}
}

// TestLatenessWithoutBudget: a 132 ms p99 lateness without
// --max-lateness is not shaded as passed (it is past the 1 ms lateness
// threshold); 0.1 ms is judged neither way; with a budget it fails.
func TestLatenessWithoutBudget(t *testing.T) {
	for _, c := range []struct {
		name      string
		p99       float64
		budget    string
		wantClass string
	}{
		{"132 ms, no budget", 132, "0s", "warn"},
		{"0.1 ms, no budget", 0.1, "0s", ""},
		{"132 ms over 100 ms", 132, "100ms", "bad"},
		{"50 ms within 100 ms", 50, "100ms", "good"},
	} {
		t.Run(c.name, func(t *testing.T) {
			d := &runData{label: "run", sum: &summary.Summary{Metrics: map[string]*summary.Stats{"schedule_lateness": {P99: c.p99}}},
				manifest: map[string]any{"replay": map[string]any{"max_lateness": c.budget}}}
			sec := verdictSection([]*runData{d})
			var cell Cell
			for _, row := range sec.Tables[0].Rows {
				if row[0].Text == "p99 schedule lateness" {
					cell = row[1]
				}
			}
			if cell.Class != c.wantClass {
				t.Errorf("lateness cell %q class %q, want %q", cell.Text, cell.Class, c.wantClass)
			}
		})
	}
}

// TestHitRatioTinyInterval: the last scrape of a run, whose interval
// looked up one request's 300 tokens of which 81 hit (27 %), is not
// drawn; the ratios of the run's intervals are.
func TestHitRatioTinyInterval(t *testing.T) {
	var pts []hitPoint
	for i := range 10 {
		pts = append(pts, hitPoint{target: "a", t: int64(i), hits: 400, queries: 10000})
	}
	pts = append(pts, hitPoint{target: "a", t: 10, hits: 81, queries: 300})
	got := hitRatios(pts)
	if len(got) != 10 {
		t.Fatalf("%d intervals kept, want the 10 of the run", len(got))
	}
	for _, p := range got {
		if r := p.hits / p.queries; r > 0.05 {
			t.Errorf("kept a ratio of %.0f %% at t=%d", 100*r, p.t)
		}
	}
	// Each target is judged against its own intervals.
	pts = append(pts, hitPoint{target: "b", t: 1, hits: 10, queries: 100}, hitPoint{target: "b", t: 2, hits: 10, queries: 100})
	if n := len(hitRatios(pts)); n != 12 {
		t.Errorf("%d intervals kept with a second, smaller target, want 12", n)
	}
}

// TestProvenanceNumbers: the manifest's nested numbers read as numbers
// and durations, not in Go's float formatting.
func TestProvenanceNumbers(t *testing.T) {
	d := &runData{manifest: map[string]any{
		"preflight":  map[string]any{"took_ns": 1.00321883e+08, "samples": 50.0, "primitive": "clock_nanosleep+spin", "p99_ns": 34401.0},
		"trace_rows": 1.5e6,
	}}
	got := provenanceValue(d, "preflight")
	want := "p99_ns=34.401µs primitive=clock_nanosleep+spin samples=50 took_ns=100.32ms"
	if got != want {
		t.Errorf("preflight %q, want %q", got, want)
	}
	if got := provenanceValue(d, "trace_rows"); got != "1500000" {
		t.Errorf("trace_rows %q, want 1500000", got)
	}
	if strings.Contains(got, "e+") {
		t.Errorf("exponent in %q", got)
	}
}

// TestClientServerNamed: the client − server column says what the
// difference measures (time outside the server's clock), so that a
// reader does not take it for the client's error.
func TestClientServerNamed(t *testing.T) {
	d := &runData{label: "run", summaryJSON: map[string]any{"telemetry": map[string]any{"servers": []any{map[string]any{
		"server":                map[string]any{"target": "http://m/metrics"},
		"client_vs_server_mean": map[string]any{"time_to_first_token": map[string]any{"client_mean_ms": 144.9, "server_mean_ms": 68.15}},
	}}}}}
	tb := clientVsServer([]*runData{d})
	if h := tb.Header[len(tb.Header)-1]; !strings.Contains(h, "outside the server's clock") {
		t.Errorf("difference column %q does not name what it measures", h)
	}
	if !strings.Contains(tb.Caption, "uploading the request") || !strings.Contains(tb.Caption, "not an error of the client") {
		t.Errorf("caption %q does not explain the difference", tb.Caption)
	}
	if got := tb.Rows[0][5].Text; got != "76.75" {
		t.Errorf("difference %q, want 76.75", got)
	}
}

// TestOverTimePercentiles: the TTFT over time chart's p50/p90/p99 per
// bucket are the summary's percentiles of the requests sent in that
// bucket, and the error rate is failed over ended per bucket.
func TestOverTimePercentiles(t *testing.T) {
	dir := filepath.Join(t.TempDir(), "run")
	synthRun{n: 400, rate: 100, ttft: 20 * time.Millisecond, itl: 5 * time.Millisecond, errEvery: 10, seed: 2}.write(t, dir)
	runs := loadRuns(t, dir)
	tl := newTimeline(runs)
	if err := runs[0].scan(tl, cdfGrids(runs), DefaultMaxPoints); err != nil {
		t.Fatal(err)
	}
	sec := overTimeSection(runs, tl)
	charts := map[string]Chart{}
	for _, c := range sec.Charts {
		charts[c.ID] = c
	}
	c, ok := charts["ttft-over-time"]
	if !ok || len(c.Series) != 3 || len(c.Bands) != 1 {
		t.Fatalf("ttft-over-time: %+v", c.Series)
	}
	// Oracle: the TTFTs of the ok requests sent in bucket 1, by hand.
	var vals []float64
	d := runs[0]
	err := d.views.each(func(v *reqView) {
		if v.kind == 0 && !math.IsNaN(float64(v.ttft)) && tl.b.at(d.t0, v.intendedOrSent()) == 1 {
			vals = append(vals, float64(v.ttft))
		}
	})
	if err != nil {
		t.Fatal(err)
	}
	want := summary.Compute(vals)
	if got := [3]float64{c.Series[0].Y[1], c.Series[1].Y[1], c.Series[2].Y[1]}; got != [3]float64{want.P50, want.P90, want.P99} {
		t.Errorf("bucket 1 p50/p90/p99 %v, want %v (%d values)", got, [3]float64{want.P50, want.P90, want.P99}, len(vals))
	}
	er := charts["error-rate"]
	total := 0.0
	for k, v := range er.Series[0].Y {
		if !math.IsNaN(v) && (v < 0 || v > 100) {
			t.Errorf("error rate %v in bucket %d", v, k)
		}
		total += d.sc.failed[k]
	}
	if total != 40 {
		t.Errorf("%v failed requests in the error-rate buckets, want 40", total)
	}
}
