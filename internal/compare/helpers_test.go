package compare

import (
	"context"
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/reprise-bench/reprise"
	"github.com/reprise-bench/reprise/internal/mockserver"
)

// writeTrace writes a Mooncake trace of n rows, one every gap
// milliseconds, with input lengths cycling through isls, and returns its
// path.
func writeTrace(t testing.TB, n, gap int, isls []int) string {
	t.Helper()
	var b strings.Builder
	for i := range n {
		fmt.Fprintf(&b, `{"timestamp": %d, "input_length": %d, "output_length": 2, "hash_ids": [%d]}`+"\n",
			i*gap, isls[i%len(isls)], i)
	}
	p := filepath.Join(t.TempDir(), "trace.jsonl")
	if err := os.WriteFile(p, []byte(b.String()), 0o644); err != nil {
		t.Fatal(err)
	}
	return p
}

// server is an in-process mock server's timing.
type server struct {
	ttft, jitter, prefill time.Duration
	seed                  uint64
}

// replayMock replays tracePath (or a synthetic load of n requests when
// empty) against a fresh in-process mock server and returns the run
// directory.
func replayMock(t testing.TB, s server, tracePath string, n int) string {
	t.Helper()
	mcfg := mockserver.NewConfig()
	mcfg.Addr, mcfg.TTFT, mcfg.ITL, mcfg.Seed = "127.0.0.1:0", s.ttft, 0, s.seed
	mcfg.Jitter, mcfg.JitterDist, mcfg.PrefillPerToken = s.jitter, mockserver.JitterNormal, s.prefill
	mcfg.KeepLog = false
	srv, err := mockserver.Start(context.Background(), mcfg)
	if err != nil {
		t.Fatal(err)
	}
	defer srv.Close()
	o := reprise.NewOptions()
	o.URL, o.Model = srv.URL(), mockserver.DefaultModel
	o.Telemetry.EndpointMetrics = false
	if tracePath != "" {
		o.Trace.Path = tracePath
	} else {
		o.Synthetic = reprise.SyntheticLoad{ISL: 16, OSL: 2}
		o.Replay.Concurrency, o.Replay.RequestCount = 16, n
	}
	o.Output.Dir = filepath.Join(t.TempDir(), "run")
	o.Output.Format = "jsonl"
	if _, err := reprise.Run(context.Background(), o); err != nil {
		t.Fatal(err)
	}
	return o.Output.Dir
}

func mustLoad(t testing.TB, dir string) *Run {
	t.Helper()
	r, err := Load(context.Background(), dir)
	if err != nil {
		t.Fatal(err)
	}
	return r
}

// replayPair replays tracePath against two mock servers at the same time
// (the second server's seed is sb.seed+1 when both are equal) and loads
// both runs.
func replayPair(t *testing.T, sa, sb server, tracePath string) (a, b *Run) {
	t.Helper()
	if sa == sb {
		sb.seed++
	}
	var dirB string
	var wg sync.WaitGroup
	wg.Go(func() { dirB = replayMock(t, sb, tracePath, 0) })
	dirA := replayMock(t, sa, tracePath, 0)
	wg.Wait()
	if t.Failed() {
		t.FailNow()
	}
	return mustLoad(t, dirA), mustLoad(t, dirB)
}

// fanOutPair replays tracePath once with --url-policy fan-out to two mock
// servers (sa is target 0, sb target 1) and loads each target's side.
func fanOutPair(t testing.TB, sa, sb server, tracePath string) (a, b *Run) {
	t.Helper()
	var urls []string
	for _, s := range []server{sa, sb} {
		mcfg := mockserver.NewConfig()
		mcfg.Addr, mcfg.TTFT, mcfg.ITL, mcfg.Seed = "127.0.0.1:0", s.ttft, 0, s.seed
		mcfg.Jitter, mcfg.JitterDist, mcfg.KeepLog = s.jitter, mockserver.JitterNormal, false
		srv, err := mockserver.Start(context.Background(), mcfg)
		if err != nil {
			t.Fatal(err)
		}
		defer srv.Close()
		urls = append(urls, srv.URL())
	}
	o := reprise.NewOptions()
	o.URL, o.Model = urls[0], mockserver.DefaultModel
	o.Targets = []reprise.Target{{URL: urls[1]}}
	o.URLPolicy = reprise.URLPolicyFanOut
	o.Trace.Path = tracePath
	o.Telemetry.EndpointMetrics = false
	o.Output.Dir, o.Output.Format = filepath.Join(t.TempDir(), "run"), "jsonl"
	if _, err := reprise.Run(context.Background(), o); err != nil {
		t.Fatal(err)
	}
	a, err := LoadTarget(context.Background(), o.Output.Dir, 0)
	if err != nil {
		t.Fatal(err)
	}
	b, err = LoadTarget(context.Background(), o.Output.Dir, 1)
	if err != nil {
		t.Fatal(err)
	}
	return a, b
}
