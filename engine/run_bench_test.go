package engine

import (
	"context"
	"strconv"
	"testing"
	"time"

	"github.com/reprise-bench/reprise/engine/summary"
	"github.com/reprise-bench/reprise/internal/mockserver"
	"github.com/reprise-bench/reprise/replay"
)

// BenchmarkTTFTError replays 100 and 1,000 concurrent streams with 10 ms ITL
// (≈100k events/s) against the in-process mock server and reports the
// client's timing error against the server's oracle log: |first token
// stamp − server write| at p50 and p99 (ms), the same for the last token
// and for ITL. Run with -benchtime=1x; client and server share the CPUs.
// The correctness of the join is TestRunAgainstMockServer's.
//
// The "ramped" variants reach the same number of concurrent streams over
// --concurrency-ramp 1s and run three requests per stream (OSL 100), so the
// error is measured in steady state rather than in the one instant where
// every stream connects and gets its first token together.
func BenchmarkTTFTError(b *testing.B) {
	for _, streams := range []int{100, 1000} {
		b.Run(strconv.Itoa(streams), func(b *testing.B) { benchTTFTError(b, streams, 0) })
		b.Run(strconv.Itoa(streams)+"-ramped", func(b *testing.B) { benchTTFTError(b, streams, time.Second) })
	}
}

func benchTTFTError(b *testing.B, streams int, ramp time.Duration) {
	osl, requests := 50.0, streams
	if ramp > 0 {
		osl, requests = 100, 3*streams
	}
	srv := startMock(b, func(c *mockserver.Config) {
		c.TTFT = 50 * time.Millisecond
		c.ITL = 10 * time.Millisecond
		c.MaxNumSeqs = streams
		c.KeepLog = true
	})
	for b.Loop() {
		srv.ResetLog()
		sink := &memSink{}
		cfg := runConfig(srv.URL(), requests, streams, sink)
		cfg.Replay.ConcurrencyRamp = ramp
		cfg.Synthetic = Synthetic{ISL: 16, OSL: osl, Seed: 1}
		cfg.Engine.Events = false
		res, err := Run(context.Background(), cfg)
		if err != nil {
			b.Fatal(err)
		}
		if res.Summary.ErrorRequestCount > 0 {
			b.Fatalf("%d errors: %v", res.Summary.ErrorRequestCount, res.Summary.Errors)
		}
		e := checkAgainstOracle(b, sink.reqs, srv.Log())
		b.ReportMetric(e.first.P50, "ttft-err-p50-ms")
		b.ReportMetric(e.first.P99, "ttft-err-p99-ms")
		b.ReportMetric(e.last.P99, "last-err-p99-ms")
		b.ReportMetric(e.itl.P99, "itl-err-p99-ms")
	}
}

// BenchmarkOpenLoopNonStreaming sends tiny non-streaming requests at a
// constant open-loop rate for 3 s and reports the schedule lateness p99
// (ms) and the achieved rate; the target is p99 < 1 ms at ≥ 10k req/s.
func BenchmarkOpenLoopNonStreaming(b *testing.B) {
	for _, rate := range []float64{2000, 5000, 10000} {
		b.Run(time.Duration(float64(time.Second)/rate).String(), func(b *testing.B) {
			srv := startMock(b, func(c *mockserver.Config) {
				c.TTFT = 0
				c.ITL = 0
				c.MaxNumSeqs = 4096
				c.KeepLog = false
			})
			for b.Loop() {
				cfg := runConfig(srv.URL(), 0, 0, nil)
				cfg.Replay = replay.NewConfig()
				cfg.Replay.RequestRate = rate
				cfg.Replay.Arrival = replay.ArrivalConstant
				cfg.Replay.Duration = 3 * time.Second
				cfg.Replay.Senders = 512
				cfg.Streaming = false
				cfg.Engine.AdapterConfig.Stream = false
				cfg.Engine.Events = false
				cfg.Synthetic = Synthetic{ISL: 8, OSL: 1, Seed: 1}
				cfg.Summary = summary.Options{}
				res, err := Run(context.Background(), cfg)
				if err != nil {
					b.Fatal(err)
				}
				s := res.Summary
				b.ReportMetric(s.Metrics["schedule_lateness"].P99, "lateness-p99-ms")
				b.ReportMetric(s.Metrics["schedule_lateness"].P50, "lateness-p50-ms")
				b.ReportMetric(s.AchievedRate, "achieved-req/s")
				b.ReportMetric(float64(s.ErrorRequestCount), "errors")
			}
		})
	}
}
