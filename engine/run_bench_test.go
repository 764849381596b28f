package engine

import (
	"context"
	"strconv"
	"syscall"
	"testing"
	"time"

	"github.com/reprise-bench/reprise/engine/summary"
	"github.com/reprise-bench/reprise/internal/mockserver"
)

// BenchmarkTTFTError replays 100, 300 and 1,000 concurrent streams with
// 10 ms ITL (1,000 streams ≈ 100k events/s) against the mock server in a
// child process (mockproc_test.go) and reports the client's timing error
// against the server's oracle log: |first token stamp − server write| at
// p50 and p99 (ms), the same for the last token, and for ITL. The streams
// ramp up over 1 s and each runs three requests (OSL 100), so the error is
// measured in steady state. Run with -benchtime=1x.
//
// It also reports what bounds the numbers: client and server CPU per
// response event (µs, from rusage and /proc), the client's read lag p99
// (how long bytes waited in its sockets; event times are the kernel's
// receive times and exclude it, but a read that finds two events queued
// stamps both at the later one's arrival) and the server's own lateness
// p99 (its write − when the latency model scheduled it: when this grows,
// the machine is saturated and the oracle stamps themselves are late).
// The correctness of the join is TestRunAgainstMockServer's.
func BenchmarkTTFTError(b *testing.B) {
	for _, streams := range []int{100, 300, 1000} {
		b.Run(strconv.Itoa(streams), func(b *testing.B) { benchTTFTError(b, streams) })
	}
}

func benchTTFTError(b *testing.B, streams int) {
	srv := startMockProcess(b, mockChildConfig{TTFT: 50 * time.Millisecond, ITL: 10 * time.Millisecond, MaxNumSeqs: streams})
	for b.Loop() {
		srv.reset(b)
		sink := &memSink{}
		cfg := runConfig(srv.url, 3*streams, streams, sink)
		cfg.Replay.ConcurrencyRamp = time.Second
		cfg.Synthetic = Synthetic{ISL: 16, OSL: 100, Seed: 1}
		cfg.Engine.Events = false
		cfg.QuietGC = !noQuietGC // as reprise replay runs
		cpu0, srv0 := processCPU(), srv.cpu(b)
		res, err := Run(context.Background(), cfg)
		cpu, srvCPU := processCPU()-cpu0, srv.cpu(b)-srv0
		if err != nil {
			b.Fatal(err)
		}
		if res.Summary.ErrorRequestCount > 0 {
			b.Fatalf("%d errors: %v", res.Summary.ErrorRequestCount, res.Summary.Errors)
		}
		log := srv.log(b)
		e := checkAgainstOracle(b, sink.reqs, log)
		var events int64
		var lag []float64
		for i := range sink.reqs {
			events += int64(sink.reqs[i].Events)
			lag = append(lag, float64(sink.reqs[i].ReadLagNS)/1e6)
		}
		var late []float64
		for i := range log {
			for _, ev := range log[i].Events {
				if ev.DueNS > 0 && (ev.Kind == mockserver.EventContent || ev.Kind == mockserver.EventReasoning) {
					late = append(late, float64(ev.TimeNS-ev.DueNS)/1e6)
				}
			}
		}
		b.ReportMetric(e.first.P50, "ttft-err-p50-ms")
		b.ReportMetric(e.first.P99, "ttft-err-p99-ms")
		b.ReportMetric(e.last.P99, "last-err-p99-ms")
		b.ReportMetric(e.itl.P99, "itl-err-p99-ms")
		b.ReportMetric(float64(cpu.Microseconds())/float64(events), "client-µs/event")
		b.ReportMetric(float64(srvCPU.Microseconds())/float64(events), "server-µs/event")
		b.ReportMetric(summary.Compute(lag).P99, "read-lag-p99-ms")
		b.ReportMetric(summary.Compute(late).P99, "server-late-p99-ms")
	}
}

// processCPU returns this process's user+system CPU time so far.
func processCPU() time.Duration {
	var ru syscall.Rusage
	if err := syscall.Getrusage(syscall.RUSAGE_SELF, &ru); err != nil {
		return 0
	}
	return time.Duration(ru.Utime.Nano() + ru.Stime.Nano())
}
