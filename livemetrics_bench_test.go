package reprise

import (
	"strconv"
	"testing"
	"time"

	"github.com/reprise-bench/reprise/internal/livemetrics"
)

// BenchmarkOpenLoopLiveMetrics is BenchmarkOpenLoopNonStreaming's run at
// 2k and 5k req/s against a mock server in a child process, with the
// live metrics (--metrics-addr) off and on: what feeding them from the
// collector costs the hot path, in schedule lateness and client CPU per
// request. Compare the two with benchstat:
//
//	go test -run='^$' -bench=OpenLoopLiveMetrics -benchtime=1x -count=6 . > live.txt
//	benchstat -col /live live.txt
//
// TestLiveMetricsCountRun checks what the live metrics count.
func BenchmarkOpenLoopLiveMetrics(b *testing.B) {
	srv := startOpenLoopServer(b, true)
	for _, rate := range []float64{2000, 5000} {
		for _, live := range []bool{false, true} {
			name := "rate=" + strconv.Itoa(int(rate/1000)) + "k/live=" + map[bool]string{false: "off", true: "on"}[live]
			b.Run(name, func(b *testing.B) {
				var m openLoopResult
				for b.Loop() {
					var lm *livemetrics.Metrics
					if live {
						lm = livemetrics.New(livemetrics.Config{RunID: "bench", Go: true})
					}
					m = runOpenLoopLive(b, srv, rate, time.Second, 3*time.Second, 0, lm)
				}
				b.ReportMetric(us(pctNS(m.lateness, 0.50)), "lat-p50-µs")
				b.ReportMetric(us(pctNS(m.lateness, 0.99)), "lat-p99-µs")
				n := float64(max(m.all, 1))
				b.ReportMetric(us(m.clientCPU)/n, "client-cpu-µs/req")
				b.ReportMetric(float64(m.allocs)/n, "client-allocs/req")
				b.ReportMetric(float64(m.errors), "errors")
			})
		}
	}
}

// TestLiveMetricsCountRun runs the benchmark's harness with live metrics
// on: they count every request of both phases and every measured
// request's lateness, as the records do.
func TestLiveMetricsCountRun(t *testing.T) {
	if testing.Short() {
		t.Skip("starts a child process")
	}
	srv := startOpenLoopServer(t, true)
	lm := livemetrics.New(livemetrics.Config{RunID: "t"})
	m := runOpenLoopLive(t, srv, 1000, 0, 0, 300, lm)
	fams, err := lm.Gatherer().Gather()
	if err != nil {
		t.Fatal(err)
	}
	var requests, lateness float64
	for _, f := range fams {
		for _, mt := range f.GetMetric() {
			switch f.GetName() {
			case livemetrics.NameRequests:
				requests += mt.GetCounter().GetValue()
			case livemetrics.NameLateness:
				lateness += float64(mt.GetHistogram().GetSampleCount())
			}
		}
	}
	if requests != float64(m.all) || lateness != float64(m.requests) || m.all != 400 {
		t.Errorf("live metrics: %v requests and %v lateness samples; the records: %d requests, %d measured (want 400, 300)",
			requests, lateness, m.all, m.requests)
	}
}
