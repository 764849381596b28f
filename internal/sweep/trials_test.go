package sweep

import (
	"bytes"
	"context"
	"math"
	"path/filepath"
	"strings"
	"testing"

	"github.com/google/go-cmp/cmp"

	"github.com/reprise-bench/reprise/replay"
)

// TestRepeatedSweepAggregatesTrials: a repeated sweep (AIPerf's
// --parameter-sweep-mode repeated, three trials of two concurrencies)
// runs every trial in profile_runs/trial_000K/, and sweep.json, the table
// and the report carry each point's mean over its trials with a
// confidence interval: the mean of the trials' own rows, inside the
// interval, which holds the per-trial values.
func TestRepeatedSweepAggregatesTrials(t *testing.T) {
	m := mockModel
	srv := m.start(t)
	cfg := NewConfig()
	cfg.Base = m.base(srv, 6)
	cfg.Base.Replay.Mode, cfg.Base.Replay.Arrival, cfg.Base.Replay.RequestRate, cfg.Base.Replay.Concurrency = replay.ModeConcurrency, replay.DefaultArrival, 0, 1
	cfg.Base.Streaming = true
	cfg.Stop = StopConfig{MaxErrorRate: 1}
	cfg.Dir, cfg.PointsDir = t.TempDir(), "."
	var table bytes.Buffer
	cfg.Table = &table
	points := []Point{{Names: []string{Concurrency}, Values: []float64{1}}, {Names: []string{Concurrency}, Values: []float64{4}}}
	for i := range points {
		points[i].Label = AIPerfLabel(points[i])
	}
	cfg.Points = Trials(points, 3)
	res, err := Run(context.Background(), cfg)
	if err != nil {
		t.Fatal(err)
	}
	var dirs []string
	for _, p := range res.Points {
		dirs = append(dirs, p.Dir)
	}
	want := []string{"profile_runs/trial_0001/concurrency_1", "profile_runs/trial_0001/concurrency_4",
		"profile_runs/trial_0002/concurrency_1", "profile_runs/trial_0002/concurrency_4",
		"profile_runs/trial_0003/concurrency_1", "profile_runs/trial_0003/concurrency_4"}
	for i := range want {
		want[i] = filepath.FromSlash(want[i])
	}
	if d := cmp.Diff(want, dirs); d != "" {
		t.Fatalf("trial directories (-want +got):\n%s", d)
	}
	mf, err := Read(cfg.Dir)
	if err != nil {
		t.Fatal(err)
	}
	if len(mf.Trials) != 2 || mf.Trials[0].Point != "concurrency_1" || mf.Trials[1].Point != "concurrency_4" {
		t.Fatalf("sweep.json trials: %+v", mf.Trials)
	}
	for _, a := range mf.Trials {
		var tput, e2e []float64
		for _, r := range res.Rows {
			if filepath.Base(r.Point) == a.Point {
				tput, e2e = append(tput, r.OutputThroughput), append(e2e, r.E2EP99)
			}
		}
		if a.Trials != 3 || len(a.Points) != 3 || a.Settings[Concurrency] == 0 || a.Level != 0.95 {
			t.Errorf("%s: %d trials %v, settings %v, level %v", a.Point, a.Trials, a.Points, a.Settings, a.Level)
		}
		for key, vals := range map[string][]float64{"output_token_throughput": tput, "request_latency.p99": e2e} {
			iv, ok := a.Metrics[key]
			if !ok || iv.N != 3 {
				t.Errorf("%s: %s missing or not over 3 trials: %+v", a.Point, key, iv)
				continue
			}
			// The rows' latencies are ms, summary's too.
			if got, want := iv.Mean, mean(vals); math.Abs(got-want) > 1e-6*math.Abs(want) {
				t.Errorf("%s: %s mean %v, the trials' rows say %v", a.Point, key, got, want)
			}
			for _, v := range vals {
				if v < iv.Min || v > iv.Max {
					t.Errorf("%s: %s trial value %v outside [%v, %v]", a.Point, key, v, iv.Min, iv.Max)
				}
			}
			if !(iv.Low <= iv.Mean && iv.Mean <= iv.High) || iv.High-iv.Low <= 0 && iv.Std > 0 {
				t.Errorf("%s: %s interval [%v, %v] about %v (std %v)", a.Point, key, iv.Low, iv.High, iv.Mean, iv.Std)
			}
		}
	}
	// More concurrency, more output throughput: the aggregates are the
	// points' own, not pooled.
	if a, b := mf.Trials[0].Metrics["output_token_throughput"].Mean, mf.Trials[1].Metrics["output_token_throughput"].Mean; !(b > 1.5*a) {
		t.Errorf("output throughput at concurrency 4 %v, at 1 %v: want about 4×", b, a)
	}
	out := table.String()
	for _, a := range mf.Trials {
		if !strings.Contains(out, a.Text()) || !strings.Contains(a.Text(), "over 3 trials (95% CI): done/s ") {
			t.Errorf("the table lacks %q:\n%s", a.Text(), out)
		}
	}
	var found bool
	for _, s := range ReportSections(mf) {
		if s.ID == "sweep-trials" {
			found = len(s.Tables) == 1 && len(s.Tables[0].Rows) == 2 && s.Tables[0].Rows[1][0].Text == "concurrency_4" &&
				strings.Contains(s.Tables[0].Rows[1][3].Text, " [")
		}
	}
	if !found {
		t.Error("the report has no across-trials table of both points")
	}
	if got := Trials(points, 1); len(got) != 2 || got[0].Trial != 0 {
		t.Errorf("Trials(points, 1) = %+v, want points", got)
	}
}
