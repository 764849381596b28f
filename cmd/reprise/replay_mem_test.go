package main

import (
	"context"
	"encoding/json"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"runtime/metrics"
	"strconv"
	"strings"
	"sync/atomic"
	"syscall"
	"testing"
	"time"

	"github.com/reprise-bench/reprise/internal/mockserver"
)

// The memory helper: TestReplayMemory replays a synthesized trace of
// $REPRISE_MEMTEST_ROWS rows (e.g. 1000000) against the in-process mock
// server at --speedup 1e6 and reports the replay's peak RSS and peak live
// heap (design 0006). The replay runs in a child process (this test
// binary re-executed, calling run as main does), so its RSS is its own,
// without the server's. Skipped unless the variable is set:
//
//	REPRISE_MEMTEST_ROWS=1000000 go test -run '^TestReplayMemory$' -v -timeout 30m ./cmd/reprise
//
// $REPRISE_MEMTEST_DIR keeps the synthesized traces between runs;
// REPRISE_MEMTEST_LOAD=1 holds the trace in memory (the path before
// design 0006), for a before/after pair from one build.
const (
	memRowsEnv  = "REPRISE_MEMTEST_ROWS"
	memDirEnv   = "REPRISE_MEMTEST_DIR"
	memChildEnv = "REPRISE_MEMTEST_CHILD"
	memLoadEnv  = "REPRISE_MEMTEST_LOAD"
)

// memResult is what the child reports.
type memResult struct {
	Exit        int    `json:"exit"`
	Stderr      string `json:"stderr"`
	PeakHeap    uint64 `json:"peak_heap"`     // max of live+dead heap objects, bytes, sampled every 5 ms
	PeakHeapPre uint64 `json:"peak_heap_pre"` // the same before the first request
	FirstSend   int64  `json:"first_send_ms"` // when the first request went out, ms after start
}

func TestReplayMemory(t *testing.T) {
	if os.Getenv(memChildEnv) != "" {
		memChild(t)
		return
	}
	n, _ := strconv.Atoi(os.Getenv(memRowsEnv))
	if n <= 0 {
		t.Skip("set " + memRowsEnv + " to the number of rows (e.g. 1000000)")
	}
	dir := os.Getenv(memDirEnv)
	if dir == "" {
		dir = t.TempDir()
	}
	tracePath := filepath.Join(dir, fmt.Sprintf("mem-%d.jsonl", n))
	if _, err := os.Stat(tracePath); err != nil {
		code, _, stderr := runCLI(t, "", "synthesize", "--requests", strconv.Itoa(n), "--rate", "1000",
			"--isl", "64", "--osl", "4", "-o", tracePath, "--quiet")
		if code != 0 {
			t.Fatalf("synthesize: exit %d: %s", code, stderr)
		}
	}
	srv := startMockServer(t, func(c *mockserver.Config) {
		c.TTFT, c.ITL, c.KeepLog, c.MaxNumSeqs = 0, 0, false, 1024
		c.PrefixCacheTokens = 1 << 16
	})
	out := t.TempDir()
	args := []string{"replay", tracePath, "--url", srv.URL(), "--model", "reprise-mock", "--speedup", "1000000",
		"--no-streaming", "--quiet", "--out", out, "--format", "jsonl"}
	resFile := filepath.Join(t.TempDir(), "mem.json")
	cmd := exec.Command(os.Args[0], "-test.run=^TestReplayMemory$")
	spec, _ := json.Marshal(args)
	cmd.Env = append(os.Environ(), memChildEnv+"="+string(spec), memChildEnv+"_OUT="+resFile)
	cmd.Stderr = os.Stderr
	start := time.Now()
	if err := cmd.Run(); err != nil {
		t.Fatalf("child: %v", err)
	}
	wall := time.Since(start)
	ru := cmd.ProcessState.SysUsage().(*syscall.Rusage)
	b, err := os.ReadFile(resFile)
	if err != nil {
		t.Fatal(err)
	}
	var res memResult
	if err := json.Unmarshal(b, &res); err != nil {
		t.Fatal(err)
	}
	if res.Exit != 0 {
		t.Fatalf("replay exit %d: %s", res.Exit, res.Stderr)
	}
	recs, err := os.ReadFile(filepath.Join(out, "records.jsonl"))
	if err != nil {
		t.Fatal(err)
	}
	if got := strings.Count(string(recs), "\n"); got != n {
		t.Fatalf("%d records for %d rows", got, n)
	}
	const mb = 1 << 20
	t.Logf("rows %d, loaded %v: peak RSS %.1f MiB, peak heap %.1f MiB (%.1f MiB before the first request, first request at %d ms), wall %v, CPU %v",
		n, os.Getenv(memLoadEnv) == "1", float64(ru.Maxrss)/1024, float64(res.PeakHeap)/mb, float64(res.PeakHeapPre)/mb, res.FirstSend,
		wall.Round(time.Second), (time.Duration(ru.Utime.Nano()) + time.Duration(ru.Stime.Nano())).Round(time.Second))
}

// memChild runs the replay of the parent's arguments while sampling the
// heap, and writes a memResult.
func memChild(t *testing.T) {
	var args []string
	if err := json.Unmarshal([]byte(os.Getenv(memChildEnv)), &args); err != nil {
		t.Fatal(err)
	}
	outDir := ""
	for i, a := range args {
		if a == "--out" && i+1 < len(args) {
			outDir = args[i+1]
		}
	}
	var peak, pre atomic.Uint64
	var sent atomic.Bool
	var firstSend atomic.Int64
	start := time.Now()
	stop := make(chan struct{})
	done := make(chan struct{})
	go func() {
		defer close(done)
		s := []metrics.Sample{{Name: "/memory/classes/heap/objects:bytes"}}
		tk := time.NewTicker(5 * time.Millisecond)
		defer tk.Stop()
		for {
			metrics.Read(s)
			v := s[0].Value.Uint64()
			if v > peak.Load() {
				peak.Store(v)
			}
			if !sent.Load() {
				pre.Store(peak.Load())
				// The manifest is written just before the run starts.
				if _, err := os.Stat(filepath.Join(outDir, "manifest.json")); err == nil {
					sent.Store(true)
					firstSend.Store(time.Since(start).Milliseconds())
				}
			}
			select {
			case <-tk.C:
			case <-stop:
				return
			}
		}
	}()
	loadTraces = os.Getenv(memLoadEnv) == "1"
	var errb strings.Builder
	code := run(context.Background(), append([]string{"reprise"}, args...), strings.NewReader(""), os.Stdout, &errb)
	close(stop)
	<-done
	res := memResult{Exit: code, Stderr: errb.String(), PeakHeap: peak.Load(), PeakHeapPre: pre.Load(), FirstSend: firstSend.Load()}
	b, _ := json.Marshal(res)
	if err := os.WriteFile(os.Getenv(memChildEnv+"_OUT"), b, 0o644); err != nil {
		t.Fatal(err)
	}
}
