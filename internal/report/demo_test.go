package report

import (
	"context"
	"path/filepath"
	"testing"
	"time"

	"github.com/reprise-bench/reprise"
	"github.com/reprise-bench/reprise/internal/mockserver"
)

// replayRun replays a load against the in-process mock server (with the
// demo's prefill cost and prefix cache), scraping the server's /metrics
// every 250 ms, and returns the run directory. With demo, the load is
// the demo's trace (traces/mooncake-sample.jsonl, as scripts/demo.sh
// replays it) at a higher speed-up and a shorter ITL, which takes about
// ten seconds; without, 100 synthetic requests at 100/s after 10 warmup
// requests, which take about a second.
func replayRun(t testing.TB, dir string, demo bool) string {
	t.Helper()
	mcfg := mockserver.NewConfig()
	mcfg.Addr, mcfg.TTFT, mcfg.ITL = "127.0.0.1:0", 30*time.Millisecond, time.Millisecond
	mcfg.PrefillPerToken, mcfg.PrefixCacheTokens = 2*time.Microsecond, 50_000_000
	mcfg.Jitter, mcfg.JitterDist = 5*time.Millisecond, mockserver.JitterExponential
	srv, err := mockserver.Start(context.Background(), mcfg)
	if err != nil {
		t.Fatal(err)
	}
	defer srv.Close()
	o := reprise.NewOptions()
	o.URL, o.Model = srv.URL(), mockserver.DefaultModel
	if demo {
		o.Trace.Path = filepath.Join("..", "..", "traces", "mooncake-sample.jsonl")
		o.Replay.Speedup = 100
	} else {
		o.Synthetic = reprise.SyntheticLoad{ISL: 512, ISLStdDev: 256, OSL: 64, OSLStdDev: 32}
		o.Replay.RequestRate, o.Replay.RequestCount, o.Replay.WarmupRequests = 100, 100, 10
	}
	o.Telemetry.Interval = 250 * time.Millisecond
	o.Output.Dir = dir
	res, err := reprise.Run(context.Background(), o)
	if err != nil {
		t.Fatal(err)
	}
	if res.Summary.RequestCount == 0 {
		t.Fatalf("the replay had no successful request: %+v", res.Summary.Errors)
	}
	return res.Dir
}
