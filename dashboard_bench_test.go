package reprise

import (
	"io"
	"runtime"
	"sync"
	"testing"
	"time"

	"github.com/reprise-bench/reprise/engine/record"
	"github.com/reprise-bench/reprise/internal/dashboard"
)

// BenchmarkDashboard is what the live view costs a run: the open-loop
// harness of BenchmarkOpenLoopNonStreaming at 2,000 req/s (1 s of warmup,
// then 3 s measured; the mock server in a child process), once with the
// progress line redrawn as on a terminal (ui=line, every 250 ms) and once
// with the dashboard taking snapshots and drawing at
// dashboard.DefaultFPS on an 80×24 screen whose bytes are discarded
// (ui=dashboard). It reports, per UI:
//
//   - lat-p50-µs, lat-p99-µs: the schedule lateness of the measured
//     requests (DispatchedNS − IntendedNS);
//   - client-cpu-µs/req: the replay process's CPU time per request, the
//     view's goroutine included;
//   - achieved-req/s and errors (must be 0).
//
// The target (issue 36) is that the dashboard's lateness p99 and CPU per
// request differ from the line's by less than 5 %; compare with benchstat
// over -count runs (docs/design/0018-dashboard.md has the numbers):
//
//	go test -run='^$' -bench=Dashboard -benchtime=1x -count=6 . | tee ui.txt
//	benchstat -col /ui ui.txt
func BenchmarkDashboard(b *testing.B) {
	srv := startOpenLoopServer(b, true)
	for _, ui := range []string{UILine, UIDashboard} {
		b.Run("ui="+ui+"/rate=2k", func(b *testing.B) {
			var m openLoopResult
			for b.Loop() {
				m = runOpenLoopWith(b, srv, 2000, time.Second, 3*time.Second, 0, withUI(ui, nil))
			}
			b.ReportMetric(m.achieved, "achieved-req/s")
			b.ReportMetric(us(pctNS(m.lateness, 0.50)), "lat-p50-µs")
			b.ReportMetric(us(pctNS(m.lateness, 0.99)), "lat-p99-µs")
			b.ReportMetric(us(m.clientCPU)/float64(max(m.all, 1)), "client-cpu-µs/req")
			b.ReportMetric(float64(m.errors), "errors")
		})
	}
}

// withUI sets a run up with the live view ui, as a terminal gets it:
// the line redrawn in place, or the dashboard over the run's progress
// (the liveView and dashboard program `reprise replay --ui dashboard`
// runs). The returned teardown stops the dashboard and, when final is
// not nil, stores its last snapshot there.
func withUI(ui string, final *dashboard.Snapshot) func(*runConfig) func() {
	return func(cfg *runConfig) func() {
		return withUIProgress(ui, newProgress(cfg.Plan), final)(cfg)
	}
}

// withUIProgress is withUI over the progress prog.
func withUIProgress(ui string, prog *progress, final *dashboard.Snapshot) func(*runConfig) func() {
	return func(cfg *runConfig) func() {
		cfg.Prog = prog
		if ui == UILine {
			cfg.Progress, cfg.TTY = io.Discard, true
			return func() {}
		}
		v := &liveView{p: prog, title: "benchmark", budget: time.Millisecond,
			now:   func() time.Duration { return time.Since(prog.start) },
			state: func() dashboard.State { return dashboard.Running },
			eta: func(el time.Duration, sent, done int64, intended float64) time.Duration {
				return etaOf(-1, nil, prog, el, sent, done, intended)
			}}
		var mu sync.Mutex
		d, err := dashboard.Start(dashboard.Config{Output: io.Discard, Width: dashboard.MinWidth, Height: dashboard.MinHeight,
			Snapshot: func() dashboard.Snapshot {
				mu.Lock()
				defer mu.Unlock()
				return v.snapshot()
			}})
		if err != nil {
			panic(err)
		}
		return func() {
			mu.Lock()
			f := v.final(nil)
			mu.Unlock()
			d.Stop(f)
			if final != nil {
				*final = f
			}
		}
	}
}

// TestBenchmarkDashboard checks BenchmarkDashboard's harness on a short
// run of each UI: every request is recorded and succeeds, and with the
// dashboard its last snapshot counts what the run sent (warmup included)
// and measured (the lateness of the measured requests).
func TestBenchmarkDashboard(t *testing.T) {
	if testing.Short() {
		t.Skip("starts a child process")
	}
	srv := startOpenLoopServer(t, true)
	for _, ui := range []string{UILine, UIDashboard} {
		var final dashboard.Snapshot
		m := runOpenLoopWith(t, srv, 1000, 0, 0, 300, withUI(ui, &final))
		if m.errors != 0 || m.requests != 300 || m.all != 400 || m.clientCPU <= 0 {
			t.Fatalf("%s: %d measured requests (%d with warmup), %d errors, CPU %d ns", ui, m.requests, m.all, m.errors, m.clientCPU)
		}
		if ui != UIDashboard {
			continue
		}
		if final.Sent != 400 || final.Done != 400 || final.Failed != 0 || final.InFlight != 0 || final.State != dashboard.Finished {
			t.Errorf("dashboard's last snapshot: sent %d done %d failed %d in flight %d, %v; want 400 400 0 0 finished",
				final.Sent, final.Done, final.Failed, final.InFlight, final.State)
		}
		if n := final.Metrics[liveLateness].Run.N; n != 300 {
			t.Errorf("dashboard's lateness counts %d requests, want the 300 measured", n)
		}
	}
}

// filledProgress is the progress of a run 60 s in at 2,000 req/s: 120k
// requests ended, their latencies spread over the histograms' range.
func filledProgress() *progress {
	p := &progress{planned: 1_000_000, start: time.Now().Add(-time.Minute)}
	for i := range int64(120_000) {
		r := record.Request{Phase: record.PhaseProfile, IntendedNS: 1e18 + i*5e5, LatenessNS: i % 5000, TTFTNS: 1e6 + i*37%5e8,
			TTFONS: 1e6 + i*41%5e8, ITLNS: float64(1e5 + i*7%3e7), E2ENS: 1e7 + i*53%9e9, ReadLagNS: i * 3 % 1e6, OutputTokens: 100}
		p.sent.Add(1)
		p.done.Add(1)
		p.intended(r.IntendedNS)
		p.ended(&r)
	}
	return p
}

// BenchmarkDashboardFrame is one redraw's work on the dashboard's
// goroutine: a snapshot of a full progress (copies of six histograms,
// the window's and the run's quantiles, a sparkline step) and its 80×24
// layout. At dashboard.DefaultFPS it runs 4 times a second, whatever the
// request rate, so its cost per request at 2,000 req/s is ns/op × 4 /
// 2000.
func BenchmarkDashboardFrame(b *testing.B) {
	p := filledProgress()
	var el time.Duration
	v := &liveView{p: p, title: "benchmark", budget: time.Millisecond, now: func() time.Duration { return el }}
	b.ReportAllocs()
	for b.Loop() {
		el += time.Second / dashboard.DefaultFPS
		s := v.snapshot()
		dashboard.Render(&s, dashboard.MinWidth, dashboard.MinHeight, false)
	}
}

// BenchmarkUIIdle is the CPU a live view takes with nothing else
// running, per second of a run: the progress line redrawn every 250 ms
// (ui=line), or the dashboard program (snapshots, layout, bubbletea's
// renderer writing the changed cells) at dashboard.DefaultFPS
// (ui=dashboard), each over a full progress for 3 s. cpu-µs/s is the
// process's CPU time per second; cpu-µs/req@2k the same spread over the
// requests of a second at 2,000 req/s (what the view adds to
// BenchmarkDashboard's client-cpu-µs/req, measured without its noise).
func BenchmarkUIIdle(b *testing.B) {
	const d = 3 * time.Second
	for _, ui := range []string{UILine, UIDashboard} {
		b.Run("ui="+ui, func(b *testing.B) {
			var cpu time.Duration
			for b.Loop() {
				p := filledProgress()
				runtime.GC()
				c0 := processCPU()
				if ui == UILine {
					stop, done := make(chan struct{}), make(chan struct{})
					go p.run(io.Discard, true, stop, done)
					time.Sleep(d)
					close(stop)
					<-done
				} else {
					cfg := &runConfig{}
					teardown := withUIProgress(ui, p, nil)(cfg)
					time.Sleep(d)
					teardown()
				}
				cpu = processCPU() - c0
			}
			perSec := float64(cpu.Microseconds()) / d.Seconds()
			b.ReportMetric(perSec, "cpu-µs/s")
			b.ReportMetric(perSec/2000, "cpu-µs/req@2k")
		})
	}
}
