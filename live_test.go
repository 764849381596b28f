package reprise

import (
	"math"
	"math/rand/v2"
	"os"
	"slices"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/google/go-cmp/cmp"

	"github.com/reprise-bench/reprise/engine/record"
	"github.com/reprise-bench/reprise/engine/summary"
	"github.com/reprise-bench/reprise/internal/dashboard"
	"github.com/reprise-bench/reprise/internal/telemetry"
	"github.com/reprise-bench/reprise/replay"
	"github.com/reprise-bench/reprise/trace"
)

// exactQuantile is the oracle of quantiles: the value of rank
// floor(q·(n−1))+1 of the sorted values, the rank the histogram walks to.
func exactQuantile(sorted []int64, q float64) int64 {
	return sorted[int(q*float64(len(sorted)-1))]
}

// TestLiveQuantiles checks the dashboard's quantiles, of the whole run
// and of a window (the difference of two copies), against exact ones:
// each is the middle of its bucket, so within 1/64 of the value (exact
// below 64 ns).
func TestLiveQuantiles(t *testing.T) {
	rng := rand.New(rand.NewPCG(1, 2))
	var h hist
	var before, all []int64
	draw := func() int64 { return int64(math.Exp(rng.NormFloat64()*2 + 14)) } // ~1 ms, spread over decades
	for range 5000 {
		v := draw()
		h.add(v)
		before = append(before, v)
	}
	base := make([]uint64, histBuckets)
	h.copyTo(base)
	var window []int64
	for range 3000 {
		v := draw()
		h.add(v)
		window = append(window, v)
	}
	h.add(3) // exact below 64
	window = append(window, 3)
	cur := make([]uint64, histBuckets)
	if n := h.copyTo(cur); n != 8001 {
		t.Fatalf("copy holds %d values, want 8001", n)
	}
	all = slices.Concat(before, window)
	slices.Sort(all)
	slices.Sort(window)
	for _, tc := range []struct {
		name   string
		base   []uint64
		values []int64
	}{{"run", nil, all}, {"window", base, window}} {
		got := quantiles(cur, tc.base)
		if got.N != int64(len(tc.values)) {
			t.Errorf("%s: N %d, want %d", tc.name, got.N, len(tc.values))
		}
		for _, q := range []struct {
			q   float64
			got time.Duration
		}{{0.5, got.P50}, {0.9, got.P90}, {0.99, got.P99}} {
			exact := exactQuantile(tc.values, q.q)
			if d := math.Abs(float64(int64(q.got)-exact)) / float64(exact); d > 1.0/64 {
				t.Errorf("%s p%v = %d, exact %d (%.2f%% off)", tc.name, 100*q.q, q.got, exact, 100*d)
			}
		}
	}
	if q := quantiles(cur, cur); q.N != 0 {
		t.Errorf("an empty window has %d values", q.N)
	}
}

// TestLiveView drives a view on a fake clock: a step a second, requests
// ended each step. The window covers the last 10 steps, rates are per
// second, the sparklines get a point per step, the errors are by kind.
func TestLiveView(t *testing.T) {
	p := &progress{planned: 1000, start: time.Now()}
	var now time.Duration
	v := &liveView{p: p, now: func() time.Duration { return now }, budget: time.Millisecond,
		state: func() dashboard.State { return dashboard.Running },
		eta: func(el time.Duration, sent, done int64, intended float64) time.Duration {
			return etaOf(-1, nil, p, el, sent, done, intended)
		}}
	v.snapshot() // the baseline, before any request
	const perStep = 20
	for step := 1; step <= 15; step++ {
		now = time.Duration(step) * time.Second
		for i := range perStep {
			r := record.Request{Phase: record.PhaseProfile, IntendedNS: int64(step)*1e9 + int64(i)*5e7, TTFTNS: int64(step) * 1e6,
				E2ENS: 5e6, OutputTokens: 10, LatenessNS: 100}
			p.sent.Add(1)
			p.intended(r.IntendedNS)
			p.done.Add(1)
			p.ended(&r)
		}
		v.snapshot()
	}
	p.sent.Add(1)
	p.inflight.Add(1)
	fail := record.Request{Phase: record.PhaseProfile, ErrorKind: record.ErrTimeout}
	p.ended(&fail)
	p.failed(record.ErrNotDelivered)
	p.failed(record.ErrNotDelivered)
	s := v.snapshot()
	if s.Sent != 15*perStep+1 || s.Done != 15*perStep || s.InFlight != 1 || s.Failed != 3 {
		t.Errorf("sent %d done %d in flight %d failed %d", s.Sent, s.Done, s.InFlight, s.Failed)
	}
	if d := cmp.Diff([]dashboard.KindCount{{Kind: "skipped", Count: 2}, {Kind: "timeout", Count: 1}}, s.Errors); d != "" {
		t.Errorf("errors by kind (-want +got):\n%s", d)
	}
	if s.Window != 10*time.Second {
		t.Errorf("window %v, want 10s", s.Window)
	}
	// The window holds steps 6..15 (TTFT 6..15 ms): p50 is step 10's.
	win, run := s.Metrics[liveTTFT].Window, s.Metrics[liveTTFT].Run
	if win.N != 10*perStep || run.N != 15*perStep {
		t.Errorf("TTFT window N %d, run N %d", win.N, run.N)
	}
	if d := math.Abs(float64(win.P50-10*time.Millisecond)) / 1e7; d > 1.0/64 {
		t.Errorf("window TTFT p50 %v, want 10ms", win.P50)
	}
	if d := math.Abs(float64(run.P50-8*time.Millisecond)) / 8e6; d > 1.0/64 {
		t.Errorf("run TTFT p50 %v, want 8ms", run.P50)
	}
	if s.Achieved.Window < 20 || s.Achieved.Window > 20.1 || s.OutputTokens.Window != 200 {
		t.Errorf("achieved %v req/s, %v tokens/s in the window; want 20 (+1 just sent), 200", s.Achieved.Window, s.OutputTokens.Window)
	}
	// 20 requests per second of intended time.
	if math.Abs(s.Intended.Window-20) > 0.5 || math.Abs(s.Intended.Run-20) > 0.5 {
		t.Errorf("intended %v req/s in the window, %v in the run; want 20", s.Intended.Window, s.Intended.Run)
	}
	for _, se := range s.Series[:5] {
		if len(se.Points) != 15 {
			t.Errorf("%s: %d points, want one a step (15)", se.Name, len(se.Points))
		}
	}
	if got := s.Series[0].Points[3]; got != perStep {
		t.Errorf("req/s point %v, want %d", got, perStep)
	}
	if s.Quality.Verdict != summary.QualityGood {
		t.Errorf("quality %+v", s.Quality)
	}
	if want := time.Duration(float64(1000-s.Sent) / s.Intended.Window * 1e9); s.ETA != want {
		t.Errorf("ETA %v, want %v: the requests left at the intended rate", s.ETA, want)
	}
	// Lateness over the budget degrades the verdict.
	for range 100 {
		p.lateness.add(int64(5 * time.Millisecond))
	}
	if q := v.snapshot().Quality; q.Verdict != summary.QualityDegraded || !strings.Contains(q.Reasons[0], "schedule lateness p99") {
		t.Errorf("quality with late requests: %+v", q)
	}
	// The final frame takes the run's column from the summary.
	sum := &summary.Summary{Metrics: map[string]*summary.Stats{"time_to_first_token": {P50: 7.25, P90: 8.5, P99: 9.75, Count: 300}},
		IntendedRate: 19.5, AchievedRate: 19.25, OutputTokenThroughput: 190}
	f := v.final(sum)
	if f.State != dashboard.Finished || f.Metrics[liveTTFT].Run != (dashboard.Quantiles{N: 300, P50: 7250 * time.Microsecond, P90: 8500 * time.Microsecond, P99: 9750 * time.Microsecond}) {
		t.Errorf("final: state %v, TTFT run %+v", f.State, f.Metrics[liveTTFT].Run)
	}
	if f.Metrics[liveITL].Run.N != 0 || f.Intended.Run != 19.5 || f.Achieved.Run != 19.25 || f.OutputTokens.Run != 190 {
		t.Errorf("final: ITL %+v (the summary has none), rates %+v %+v %+v", f.Metrics[liveITL].Run, f.Intended, f.Achieved, f.OutputTokens)
	}
}

// TestScheduleLength: the schedule's length from its first send, by mode.
func TestScheduleLength(t *testing.T) {
	rows := []trace.Row{{Offset: 2 * time.Second, HasOffset: true}, {Offset: 12 * time.Second, HasOffset: true}, {}}
	for _, tc := range []struct {
		name     string
		c        replay.Config
		mode     replay.Mode
		requests int
		rows     []trace.Row
		want     time.Duration
	}{
		{"rate", replay.Config{RequestRate: 10}, replay.ModeRate, 100, nil, 10 * time.Second},
		// Ramp to 10/s over 4 s sends 20 in the ramp, the other 80 in 8 s.
		{"ramp, past it", replay.Config{RequestRate: 10, RateRamp: 4 * time.Second}, replay.ModeRate, 100, nil, 12 * time.Second},
		// 5 requests within the ramp: √(2·5·4/10) = 2 s.
		{"ramp, within it", replay.Config{RequestRate: 10, RateRamp: 4 * time.Second}, replay.ModeRate, 5, nil, 2 * time.Second},
		{"fixed at 10x", replay.Config{Speedup: 10}, replay.ModeFixed, 3, rows, time.Second},
		{"duration caps", replay.Config{RequestRate: 10, Duration: 3 * time.Second}, replay.ModeRate, 100, nil, 3 * time.Second},
		{"duration alone", replay.Config{Concurrency: 4, Duration: 5 * time.Second}, replay.ModeConcurrency, -1, nil, 5 * time.Second},
		{"closed loop", replay.Config{Concurrency: 4}, replay.ModeConcurrency, 100, nil, -1},
		{"streamed trace", replay.Config{Speedup: 1}, replay.ModeFixed, 100, nil, -1},
	} {
		if got := scheduleLength(tc.c, tc.mode, tc.requests, tc.rows); got != tc.want {
			t.Errorf("%s: %v, want %v", tc.name, got, tc.want)
		}
	}
}

// TestLiveServer: the last scrape of the first target, each role from the
// server's current family summed over its label sets.
func TestLiveServer(t *testing.T) {
	var l liveServer
	if l.get() != nil {
		t.Fatal("a server before any scrape")
	}
	a, b := "http://a/metrics", "http://b/metrics"
	sample := func(target, metric, labels string, v float64) record.MetricSample {
		return record.MetricSample{Target: target, Metric: metric, Type: "gauge", Labels: labels, Value: v, Bound: math.NaN()}
	}
	l.add([]record.MetricSample{
		sample(a, "vllm:kv_cache_usage_perc", `engine="0"`, 0.25),
		sample(a, "vllm:kv_cache_usage_perc", `engine="1"`, 0.125),
		sample(a, "vllm:gpu_cache_usage_perc", "", 0.9), // the old name: ignored beside the new
		sample(a, "vllm:num_requests_running", "", 6),
		sample(a, telemetry.MetricScrapeUp, "", 1),
	})
	l.add([]record.MetricSample{sample(b, "vllm:num_requests_running", "", 99)}) // another target
	got := l.get()
	if got == nil || got.Target != a || got.KVUsage != 0.375 || got.Running != 6 || got.Waiting != -1 || !got.Up {
		t.Fatalf("server %+v", got)
	}
	l.add([]record.MetricSample{sample(a, telemetry.MetricScrapeUp, "", 0)})
	if got := l.get(); got.Up || got.KVUsage != -1 {
		t.Errorf("a failed scrape: %+v", got)
	}
}

// TestUIOf: the dashboard only on a terminal whose TERM is set and not
// dumb; the line otherwise.
func TestUIOf(t *testing.T) {
	f, err := os.CreateTemp(t.TempDir(), "progress")
	if err != nil {
		t.Fatal(err)
	}
	defer f.Close()
	t.Setenv("TERM", "xterm")
	for _, o := range []Options{{UI: UIDashboard, Progress: f}, {UI: UIDashboard}, {UI: UILine, Progress: f}} {
		if got := uiOf(&o); got != UILine {
			t.Errorf("UI %q on %v: %s, want the line", o.UI, o.Progress, got)
		}
	}
	tty, err := os.OpenFile("/dev/tty", os.O_WRONLY, 0)
	if err != nil {
		return // no controlling terminal here; the tmux test covers it
	}
	defer tty.Close()
	for term, want := range map[string]string{"xterm": UIDashboard, "dumb": UILine, "": UILine} {
		t.Setenv("TERM", term)
		if got := uiOf(&Options{UI: UIDashboard, Progress: tty}); got != want {
			t.Errorf("TERM=%q: %s, want %s", term, got, want)
		}
	}
}

// TestProgressHammer: senders counting requests on P goroutines at once
// while the dashboard takes snapshots; at the end every count is exact and
// the latest intended time is the largest.
func TestProgressHammer(t *testing.T) {
	const P, N = 8, 2000
	p := &progress{planned: P * N, start: time.Now()}
	var el time.Duration
	v := &liveView{p: p, now: func() time.Duration { return el }}
	start := make(chan struct{})
	done := make(chan struct{})
	var wg sync.WaitGroup
	for g := range P {
		wg.Go(func() {
			<-start
			for i := range N {
				r := record.Request{Phase: record.PhaseProfile, IntendedNS: int64(1e9 + i*P + g), TTFTNS: int64(i + 1), ITLNS: 5,
					E2ENS: 9, OutputTokens: 2}
				if i%10 == 0 {
					r.ErrorKind = record.ErrReset
				}
				p.sent.Add(1)
				p.intended(r.IntendedNS)
				p.done.Add(1)
				p.ended(&r)
			}
		})
	}
	go func() {
		defer close(done)
		<-start
		for {
			el += liveStep
			s := v.snapshot()
			if s.Done > s.Sent || s.Failed > s.Done {
				t.Errorf("snapshot: done %d > sent %d, or failed %d > done", s.Done, s.Sent, s.Failed)
			}
			if s.Done == P*N {
				return
			}
		}
	}()
	close(start)
	wg.Wait()
	<-done
	s := v.snapshot()
	if s.Sent != P*N || s.Done != P*N || s.Failed != P*N/10 || s.Metrics[liveTTFT].Run.N != P*N || s.Metrics[liveITL].Run.N != P*N*9/10 {
		t.Errorf("sent %d done %d failed %d, TTFT over %d, ITL over %d", s.Sent, s.Done, s.Failed, s.Metrics[liveTTFT].Run.N, s.Metrics[liveITL].Run.N)
	}
	if got, want := p.maxIntended.Load(), int64(1e9+(N-1)*P+P-1); got != want {
		t.Errorf("latest intended %d, want %d", got, want)
	}
	if got := p.outTokens.Load(); got != P*N*9/10*2 {
		t.Errorf("output tokens %d", got)
	}
}

// TestETA: the time left to send, by what the plan says.
func TestETA(t *testing.T) {
	p := &progress{planned: 100}
	for _, tc := range []struct {
		name       string
		length     time.Duration
		sent, done int64
		intended   float64
		el, want   time.Duration
	}{
		{"schedule, nothing sent yet", 10 * time.Second, 0, 0, 0, 0, 10 * time.Second},
		{"requests left at the intended rate", -1, 60, 50, 20, 3 * time.Second, 2 * time.Second},
		{"no rate yet: the completion rate", -1, 60, 50, 0, 3 * time.Second, 3 * time.Second},
		{"all sent and done", -1, 100, 100, 20, time.Second, -1},
	} {
		if got := etaOf(tc.length, nil, p, tc.el, tc.sent, tc.done, tc.intended); got != tc.want {
			t.Errorf("%s: %v, want %v", tc.name, got, tc.want)
		}
	}
	if got := etaOf(-1, nil, &progress{}, time.Second, 5, 5, 10); got != -1 {
		t.Errorf("no plan: %v", got)
	}
}
