package reprise

import (
	"context"
	"os"
	"runtime"
	"slices"
	"strconv"
	"sync"
	"testing"
	"time"

	"github.com/reprise-bench/reprise/engine/record"
	"github.com/reprise-bench/reprise/engine/summary"
	"github.com/reprise-bench/reprise/internal/livemetrics"
	"github.com/reprise-bench/reprise/internal/mockserver"
	"github.com/reprise-bench/reprise/replay"
)

// BenchmarkOpenLoopNonStreaming sends tiny non-streaming requests at a
// constant open-loop rate of 2k, 5k, 10k, 15k and 20k req/s, 1 s of
// warmup then 3 s measured, and reports per rate (run it with
// -benchtime=1x):
//
//   - achieved-req/s: the dispatch rate of the measured phase;
//   - lat-p50-µs, lat-p90-µs, lat-p99-µs: the schedule lateness
//     (DispatchedNS − IntendedNS) of the measured requests, which the
//     issue's target is about (p99 < 1 ms at 20k req/s);
//   - sent-p50-µs, sent-p99-µs: SentNS − IntendedNS, when the sender
//     began writing the request (hand-off and sender wake-up included);
//   - client-cpu-µs/req, client-allocs/req, client-B/req: the replay
//     process's CPU time (getrusage RUSAGE_SELF, user + system), heap
//     allocations and bytes per request, warmup included;
//   - server-cpu-µs/req: the mock server process's CPU time per request
//     (server=proc only);
//   - disp-cpu-%: the dispatcher thread's CPU share (mostly its spin);
//   - waited: measured requests that found no free sender (late by
//     construction: the server or the machine stalled for ≈ 1024 senders /
//     rate, 100 ms at 10k req/s);
//   - errors: failed requests (must be 0).
//
// The warmup keeps the connection set-up out of the measurement: the first
// ~0.4 s at 10k req/s dial a few hundred connections, and requests wait
// for them (tens of ms), which says nothing about the steady rate.
//
// server=proc runs the mock server in a child process (this test binary
// re-executed, mockproc_test.go), as a server on the same machine is;
// server=inproc runs it inside the replay's own Go runtime,
// where it competes for the same Ps and GC (client-cpu then includes the
// server). The harness is checked by TestBenchmarkOpenLoop.
//
//	go test -run='^$' -bench=OpenLoopNonStreaming -benchtime=1x .
//
// noQuietGC runs the truth benchmarks with the collector's proportional
// mode on (REPRISE_BENCH_GC=on), to see what QuietGC is worth.
var noQuietGC = os.Getenv("REPRISE_BENCH_GC") == "on"

func BenchmarkOpenLoopNonStreaming(b *testing.B) {
	for _, where := range []string{"proc", "inproc"} {
		for _, rate := range []float64{2000, 5000, 10000, 15000, 20000} {
			name := "server=" + where + "/rate=" + strconv.Itoa(int(rate/1000)) + "k"
			b.Run(name, func(b *testing.B) {
				srv := startOpenLoopServer(b, where == "proc")
				var m openLoopResult
				for b.Loop() {
					m = runOpenLoop(b, srv, rate, time.Second, 3*time.Second, 0)
				}
				b.ReportMetric(m.achieved, "achieved-req/s")
				b.ReportMetric(us(pctNS(m.lateness, 0.50)), "lat-p50-µs")
				b.ReportMetric(us(pctNS(m.lateness, 0.90)), "lat-p90-µs")
				b.ReportMetric(us(pctNS(m.lateness, 0.99)), "lat-p99-µs")
				b.ReportMetric(us(pctNS(m.sent, 0.50)), "sent-p50-µs")
				b.ReportMetric(us(pctNS(m.sent, 0.99)), "sent-p99-µs")
				n := float64(max(m.all, 1))
				b.ReportMetric(us(m.clientCPU)/n, "client-cpu-µs/req")
				b.ReportMetric(float64(m.allocs)/n, "client-allocs/req")
				b.ReportMetric(float64(m.bytes)/n, "client-B/req")
				if where == "proc" {
					b.ReportMetric(us(m.serverCPU)/n, "server-cpu-µs/req")
				}
				b.ReportMetric(float64(m.errors), "errors")
				b.ReportMetric(float64(m.stats.Waited), "waited")
				b.ReportMetric(100*float64(m.stats.DispatcherCPU)/float64(m.stats.Elapsed), "disp-cpu-%")
			})
		}
	}
}

// TestBenchmarkOpenLoop checks the benchmark's harness on a short run
// against a mock server in a child process: every request is recorded
// (warmup apart) and succeeds, every time is on one clock (dispatched ≥
// intended, sent ≥ dispatched), and the rate and both processes' CPU
// times are measured.
func TestBenchmarkOpenLoop(t *testing.T) {
	if testing.Short() {
		t.Skip("starts a child process")
	}
	srv := startOpenLoopServer(t, true)
	m := runOpenLoop(t, srv, 1000, 0, 0, 300)
	if m.errors != 0 || m.requests != 300 || m.all != 400 {
		t.Fatalf("%d measured requests (%d with warmup), %d errors; want 300 (400) without errors", m.requests, m.all, m.errors)
	}
	if len(m.lateness) != m.requests || len(m.sent) != m.requests {
		t.Fatalf("%d lateness and %d sent samples for %d requests", len(m.lateness), len(m.sent), m.requests)
	}
	for i := range m.lateness {
		if m.lateness[i] < 0 || m.sent[i] < m.lateness[i] {
			t.Fatalf("request %d: lateness %d ns, sent %d ns after its intended time", i, m.lateness[i], m.sent[i])
		}
	}
	if m.achieved <= 0 {
		t.Errorf("achieved rate %v", m.achieved)
	}
	if m.clientCPU <= 0 {
		t.Errorf("client CPU %v", m.clientCPU)
	}
	if m.serverCPU < 0 || srv.cpu() <= 0 {
		t.Errorf("server process CPU %v ns in the run, %v ns in all", m.serverCPU, srv.cpu())
	}
}

// openLoopResult is one open-loop run's measurements; times in ns.
type openLoopResult struct {
	requests, errors int
	all              int // requests of both phases, for the per-request costs
	allocs, bytes    uint64
	achieved         float64
	lateness, sent   []int64
	dispatched       []int64 // run clock, Unix ns; lateness' order
	clientCPU        int64
	serverCPU        int64 // 0 for a server in this process
	stats            replay.Stats
}

// runOpenLoop replays tiny non-streaming requests to srv at rate: warm of
// warmup then d measured, or, with n > 0, n/3 warmup requests then n
// measured ones.
func runOpenLoop(tb testing.TB, srv *openLoopServer, rate float64, warm, d time.Duration, n int) openLoopResult {
	tb.Helper()
	return runOpenLoopWith(tb, srv, rate, warm, d, n, nil)
}

// runOpenLoopLive is runOpenLoop with live metrics fed (nil: none).
func runOpenLoopLive(tb testing.TB, srv *openLoopServer, rate float64, warm, d time.Duration, n int, live *livemetrics.Metrics) openLoopResult {
	tb.Helper()
	return runOpenLoopWith(tb, srv, rate, warm, d, n, func(c *runConfig) func() {
		c.Live = live
		return func() {}
	})
}

// runOpenLoopWith is runOpenLoop with setup, when not nil, called on the
// run's configuration before the run; what it returns is called once the
// run and its CPU measurement are over.
func runOpenLoopWith(tb testing.TB, srv *openLoopServer, rate float64, warm, d time.Duration, n int, setup func(*runConfig) func()) openLoopResult {
	tb.Helper()
	sink := &timesSink{}
	rc := replay.NewConfig()
	rc.RequestRate = rate
	rc.Arrival = replay.ArrivalConstant
	if n > 0 {
		rc.RequestCount, rc.WarmupRequests = n, n/3
	} else {
		rc.Duration, rc.WarmupDuration = d, warm
	}
	rc.Senders = 0 // replay.DefaultSenders (1024), as the CLI
	cfg := mockRunConfig(srv.url, mustPlan(tb, rc, nil), sink)
	cfg.Streaming = false
	cfg.Engine.AdapterConfig.Stream = false
	cfg.Engine.Events = false
	cfg.Synthetic = syntheticLengths{ISL: 8, OSL: 1, Seed: 1}
	cfg.Summary = summary.Options{}
	cfg.QuietGC = !noQuietGC // as reprise replay runs
	if setup != nil {
		defer setup(&cfg)()
	}
	var ms0, ms1 runtime.MemStats
	runtime.ReadMemStats(&ms0)
	srv.reset()
	srv0, cpu0 := srv.cpu(), int64(processCPU())
	res, err := runEngine(context.Background(), cfg)
	cpu, srvCPU := int64(processCPU())-cpu0, srv.cpu()-srv0
	runtime.ReadMemStats(&ms1)
	if err != nil {
		tb.Fatal(err)
	}
	return openLoopResult{requests: len(sink.lateness), all: sink.all, errors: sink.errors,
		allocs: ms1.Mallocs - ms0.Mallocs, bytes: ms1.TotalAlloc - ms0.TotalAlloc, achieved: res.Summary.AchievedRate,
		lateness: sink.lateness, sent: sink.sent, dispatched: sink.dispatched, clientCPU: cpu, serverCPU: srvCPU, stats: res.Stats}
}

// timesSink keeps only what the benchmark needs of each record, so that
// the measurement itself adds little memory and GC work.
type timesSink struct {
	mu                         sync.Mutex
	lateness, sent, dispatched []int64
	errors                     int
	all                        int // records of both phases
}

func (s *timesSink) WriteRequests(b []record.Request) error {
	s.mu.Lock()
	defer s.mu.Unlock()
	for i := range b {
		r := &b[i]
		s.all++
		if r.Phase != record.PhaseProfile {
			continue
		}
		if !r.OK() {
			s.errors++
		}
		s.lateness = append(s.lateness, r.DispatchedNS-r.IntendedNS)
		s.sent = append(s.sent, r.SentNS-r.IntendedNS)
		s.dispatched = append(s.dispatched, r.DispatchedNS)
	}
	return nil
}
func (s *timesSink) WriteEvents([]record.Event) error { return nil }
func (s *timesSink) Close() error                     { return nil }

func us(ns int64) float64 { return float64(ns) / 1e3 }

// pctNS is the q-quantile of v (nearest rank); 0 for no samples.
func pctNS(v []int64, q float64) int64 {
	if len(v) == 0 {
		return 0
	}
	w := slices.Clone(v)
	slices.Sort(w)
	i := int(q*float64(len(w))+0.999999999) - 1
	return w[min(max(i, 0), len(w)-1)]
}

// openLoopServer is the benchmark's mock server, in this process or in a
// child process (mockproc_test.go), with no latency model: a request
// costs only its CPU.
type openLoopServer struct {
	url   string
	cpu   func() int64 // the child's CPU time so far, ns; 0 in-process
	reset func()       // drops the child's oracle log between runs
}

func startOpenLoopServer(tb testing.TB, child bool) *openLoopServer {
	tb.Helper()
	if !child {
		srv := startMock(tb, func(c *mockserver.Config) {
			c.TTFT, c.ITL, c.MaxNumSeqs, c.KeepLog = 0, 0, 4096, false
		})
		return &openLoopServer{url: srv.URL(), cpu: func() int64 { return 0 }, reset: func() {}}
	}
	p := startMockProcess(tb, mockChildConfig{MaxNumSeqs: 4096})
	return &openLoopServer{url: p.url, cpu: func() int64 { return int64(p.cpu(tb)) }, reset: func() { p.reset(tb) }}
}
