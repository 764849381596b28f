package reprise

import (
	"context"
	"os"
	"runtime/metrics"
	"slices"
	"strconv"
	"syscall"
	"testing"
	"time"

	"github.com/reprise-bench/reprise/engine/record"
	"github.com/reprise-bench/reprise/engine/summary"
	"github.com/reprise-bench/reprise/internal/mockserver"
	"github.com/reprise-bench/reprise/internal/prio"
)

// BenchmarkTTFTError replays 100 to 1,000 concurrent streams with
// 10 ms ITL (1,000 streams ≈ 100k events/s) against the mock server in a
// child process (mockproc_test.go) and reports the client's timing error
// against the server's oracle log: the first token stamp's distance from
// the interval in which the server wrote it (its write's start and return;
// 0 inside) at p50 and p99 (ms), the same for the last token, |client −
// server| mean ITL, and the p99 width of those intervals (how precisely
// the server itself knows; it grows when the server is descheduled
// around its writes). The streams
// ramp up over 1 s; that first round of requests is warmup, and each
// stream then runs two measured requests (OSL 100), so the error is
// measured in steady state (ttft-err-p99-with-ramp-ms includes the ramp).
// Run with -benchtime=1x.
//
// The client runs as `reprise replay --nice -20` would, at nice −20
// (REPRISE_BENCH_CLIENT_NICE sets another value; without the privilege
// to lower it, it stays as it was and the log says so), and the child
// server at nice 0 (REPRISE_BENCH_MOCK_NICE). At 1,000 streams the two
// need more than the machine's two cores, and whichever the kernel makes
// wait has its error: the client's in its stamps, the server's in how
// late it writes (RATIONALE.md has both configurations' numbers).
//
// It also reports what bounds the numbers: client and server CPU per
// response event (µs, from rusage and /proc), the client's read lag p99
// (how long bytes waited in its sockets; event times are the kernel's
// receive times and exclude it, but a read that finds two events queued
// stamps both at the later one's arrival), the server's own lateness
// p99 (its write − when the latency model scheduled it: when this grows,
// the machine is saturated and fewer events are written than scheduled)
// and the rate of token events it actually wrote, reads per event and the
// client goroutines' scheduling delay p99 (go-sched-p99-ms: how long a
// ready goroutine waited for a P). REPRISE_BENCH_NO_REACTOR=1 reads each
// stream on its sender's goroutine instead of on the reactors.
// The correctness of the join is TestRunAgainstMockServer's.
func BenchmarkTTFTError(b *testing.B) {
	for _, streams := range []int{100, 300, 500, 700, 1000} {
		b.Run(strconv.Itoa(streams), func(b *testing.B) { benchTTFTError(b, streams) })
	}
}

func benchTTFTError(b *testing.B, streams int) {
	clientNice := benchNice(b, "REPRISE_BENCH_CLIENT_NICE", -20)
	serverNice := benchNice(b, "REPRISE_BENCH_MOCK_NICE", 0)
	if have, err := prio.Nice(); err == nil && have != clientNice {
		if err := prio.SetNice(clientNice); err != nil {
			b.Logf("client stays at nice %d: %v", have, err)
		} else {
			b.Cleanup(func() { _ = prio.SetNice(have) })
		}
	}
	if n, err := prio.Nice(); err == nil {
		b.Logf("client at nice %d, server at nice %d", n, serverNice)
	}
	srv := startMockProcess(b, mockChildConfig{TTFT: 50 * time.Millisecond, ITL: 10 * time.Millisecond, MaxNumSeqs: streams, Nice: serverNice})
	for b.Loop() {
		srv.reset(b)
		sink := &memSink{}
		rc := closedLoop(2*streams, streams)
		rc.WarmupRequests = streams // the ramp's round
		rc.ConcurrencyRamp = time.Second
		cfg := mockRunConfig(srv.url, mustPlan(b, rc, nil), sink)
		cfg.Synthetic = syntheticLengths{ISL: 16, OSL: 100, Seed: 1}
		cfg.Engine.Events = false
		cfg.Engine.NoReactor = noReactor
		cfg.QuietGC = !noQuietGC // as reprise replay runs
		cpu0, srv0 := processCPU(), srv.cpu(b)
		sched0 := schedLatencies()
		res, err := runEngine(context.Background(), cfg)
		sched := schedLatencies()
		cpu, srvCPU := processCPU()-cpu0, srv.cpu(b)-srv0
		if err != nil {
			b.Fatal(err)
		}
		if res.Summary.ErrorRequestCount > 0 {
			b.Fatalf("%d errors: %v", res.Summary.ErrorRequestCount, res.Summary.Errors)
		}
		log := srv.log(b)
		all := checkAgainstOracle(b, sink.reqs, log)
		measured := slices.DeleteFunc(slices.Clone(sink.reqs), func(r record.Request) bool { return r.Phase == record.PhaseWarmup })
		e := checkAgainstOracle(b, measured, log)
		var events, reads int64
		var lag []float64
		for i := range sink.reqs {
			events += int64(sink.reqs[i].Events)
			reads += int64(sink.reqs[i].Reads)
			lag = append(lag, float64(sink.reqs[i].ReadLagNS)/1e6)
		}
		var late []float64
		var written []int64
		for i := range log {
			for _, ev := range log[i].Events {
				if ev.DueNS > 0 && (ev.Kind == mockserver.EventContent || ev.Kind == mockserver.EventReasoning) {
					late = append(late, float64(ev.TimeNS-ev.DueNS)/1e6)
					written = append(written, ev.TimeNS)
				}
			}
		}
		b.ReportMetric(e.first.P50, "ttft-err-p50-ms")
		b.ReportMetric(e.first.P99, "ttft-err-p99-ms")
		b.ReportMetric(all.first.P99, "ttft-err-p99-with-ramp-ms")
		b.ReportMetric(e.last.P99, "last-err-p99-ms")
		b.ReportMetric(e.itl.P99, "itl-err-p99-ms")
		b.ReportMetric(e.width.P99, "oracle-width-p99-ms")
		b.ReportMetric(float64(cpu.Microseconds())/float64(events), "client-µs/event")
		b.ReportMetric(float64(srvCPU.Microseconds())/float64(events), "server-µs/event")
		b.ReportMetric(float64(reads)/float64(events), "reads/event")
		b.ReportMetric(histQuantile(sched0, sched, 0.99)*1e3, "go-sched-p99-ms")
		b.ReportMetric(summary.Compute(lag).P99, "read-lag-p99-ms")
		b.ReportMetric(summary.Compute(late).P99, "server-late-p99-ms")
		b.ReportMetric(medianRate(written, 100*time.Millisecond), "server-tokens/s")
	}
}

// benchNice reads a nice value from the environment variable env.
func benchNice(b *testing.B, env string, def int) int {
	v, ok := os.LookupEnv(env)
	if !ok {
		return def
	}
	n, err := strconv.Atoi(v)
	if err == nil {
		err = prio.Check(n)
	}
	if err != nil {
		b.Fatalf("%s=%q: want a nice value, -20 to 19", env, v)
	}
	return n
}

// noReactor runs BenchmarkTTFTError with each stream read on its sender's
// goroutine, for comparison with the reactors (Config.NoReactor).
var noReactor = os.Getenv("REPRISE_BENCH_NO_REACTOR") == "1"

// schedLatencies reads the runtime's histogram of how long goroutines
// waited to run once ready: the client's own queueing.
func schedLatencies() *metrics.Float64Histogram {
	s := []metrics.Sample{{Name: "/sched/latencies:seconds"}}
	metrics.Read(s)
	return s[0].Value.Float64Histogram()
}

// histQuantile returns the q quantile (seconds, a bucket's upper bound) of
// the waits counted between the readings a and b of one histogram.
func histQuantile(a, b *metrics.Float64Histogram, q float64) float64 {
	var total uint64
	for i := range b.Counts {
		total += b.Counts[i] - a.Counts[i]
	}
	var n uint64
	for i := range b.Counts {
		n += b.Counts[i] - a.Counts[i]
		if float64(n) >= q*float64(total) {
			return b.Buckets[i+1]
		}
	}
	return 0
}

// medianRate is the median, over the windows of length w from the first
// stamp to the last, of the stamps per second in each: the rate of the
// run's steady middle, which spans more windows than its ramp and tail.
func medianRate(stamps []int64, w time.Duration) float64 {
	if len(stamps) == 0 {
		return 0
	}
	first, last := slices.Min(stamps), slices.Max(stamps)
	counts := make([]float64, (last-first)/int64(w)+1)
	for _, t := range stamps {
		counts[(t-first)/int64(w)]++
	}
	return summary.Compute(counts).P50 * float64(time.Second/w)
}

// processCPU returns this process's user+system CPU time so far.
func processCPU() time.Duration {
	var ru syscall.Rusage
	if err := syscall.Getrusage(syscall.RUSAGE_SELF, &ru); err != nil {
		return 0
	}
	return time.Duration(ru.Utime.Nano() + ru.Stime.Nano())
}
