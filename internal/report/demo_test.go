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
// demo's TTFT, prefill cost and prefix cache), scraping the server's
// /metrics every 250 ms, and returns the run directory. With demo, it is
// scripts/demo.sh's replay: the demo's trace (traces/mooncake-sample.jsonl)
// at speed-up 10 with a 10 ms ITL, about 20 s; without, 60 synthetic
// requests at 100/s after 6 warmup requests, with a 1 ms ITL and
// exponential jitter, under a second.
func replayRun(t testing.TB, dir string, demo bool) string {
	t.Helper()
	mcfg := mockserver.NewConfig()
	mcfg.Addr, mcfg.TTFT, mcfg.ITL = "127.0.0.1:0", 30*time.Millisecond, 10*time.Millisecond
	mcfg.PrefillPerToken, mcfg.PrefixCacheTokens = 2*time.Microsecond, 50_000_000
	if !demo {
		mcfg.ITL, mcfg.Jitter, mcfg.JitterDist = time.Millisecond, 5*time.Millisecond, mockserver.JitterExponential
	}
	srv, err := mockserver.Start(context.Background(), mcfg)
	if err != nil {
		t.Fatal(err)
	}
	defer srv.Close()
	o := reprise.NewOptions()
	o.URL, o.Model = srv.URL(), mockserver.DefaultModel
	if demo {
		o.Trace.Path = filepath.Join("..", "..", "traces", "mooncake-sample.jsonl")
		o.Replay.Speedup = 10
	} else {
		o.Synthetic = reprise.SyntheticLoad{ISL: 256, ISLStdDev: 128, OSL: 48, OSLStdDev: 24}
		o.Replay.RequestRate, o.Replay.RequestCount, o.Replay.WarmupRequests = 100, 60, 6
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
