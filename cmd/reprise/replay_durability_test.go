package main

import (
	"bytes"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/reprise-bench/reprise/arrowio"
	"github.com/reprise-bench/reprise/internal/mockserver"
)

// firstEnd returns when the first request the server logged ended (Unix
// ns; 0 when none has).
func firstEnd(srv *mockserver.Server) int64 {
	var first int64
	for _, l := range srv.Log() {
		if l.EndNS != 0 && (first == 0 || l.EndNS < first) {
			first = l.EndNS
		}
	}
	return first
}

// TestReplayKill9KeepsRecords: a replay killed with SIGKILL keeps, in
// complete files, the record of every request that ended more than
// --part-interval (default) plus the engine's one-second hand-over before
// the kill (plus a margin for a loaded machine).
func TestReplayKill9KeepsRecords(t *testing.T) {
	if testing.Short() {
		t.Skip("runs a replay for 9 s in a child process")
	}
	srv := startMockServer(t, func(c *mockserver.Config) { c.TTFT = 5 * time.Millisecond })
	out := t.TempDir()
	cmd := cliChild(t, "", "replay", "--url", srv.URL(), "--model", "reprise-mock", "--isl", "16", "--osl", "4",
		"--request-rate", "50", "--duration", "10m", "--quiet", "--out", out, "--no-server-metrics")
	var stderr bytes.Buffer
	cmd.Stderr = &stderr
	if err := cmd.Start(); err != nil {
		t.Fatal(err)
	}
	const margin = 2 * time.Second
	promise := arrowio.DefaultPartInterval + time.Second + margin
	// Kill once some requests ended well over the promise ago: a loaded
	// machine may take seconds to start the child, so wait on the server's
	// log, not on a fixed sleep.
	for guard := time.Now().Add(2 * time.Minute); ; time.Sleep(100 * time.Millisecond) {
		if first := firstEnd(srv); first != 0 && time.Since(time.Unix(0, first)) > promise+2*time.Second {
			break
		}
		if time.Now().After(guard) {
			cmd.Process.Kill()
			t.Fatalf("no request ended within 2 minutes; stderr:\n%s", stderr.String())
		}
	}
	killed := time.Now()
	if err := cmd.Process.Kill(); err != nil {
		t.Fatal(err)
	}
	if err := cmd.Wait(); err == nil || !strings.Contains(err.Error(), "killed") {
		t.Fatalf("child exit: %v, want killed; stderr:\n%s", err, stderr.String())
	}
	reqs, err := arrowio.ReadRequests(out)
	if err != nil {
		t.Fatalf("read the killed run's records: %v; stderr:\n%s", err, stderr.String())
	}
	onDisk := map[string]bool{}
	for _, r := range reqs {
		onDisk[strconv.FormatUint(r.RequestID, 10)] = true
	}
	old := 0
	for _, l := range srv.Log() {
		if l.EndNS == 0 || killed.Sub(time.Unix(0, l.EndNS)) <= promise {
			continue
		}
		old++
		if !onDisk[l.ClientRequestID] {
			t.Errorf("request %s ended %v before kill -9 and has no record on disk",
				l.ClientRequestID, killed.Sub(time.Unix(0, l.EndNS)).Round(time.Millisecond))
		}
	}
	if old == 0 {
		t.Fatalf("no request ended more than %v before the kill: the test proves nothing; stderr:\n%s", promise, stderr.String())
	}
	t.Logf("%d requests served, %d on disk after kill -9, all %d that ended over %v before it among them", len(srv.Log()), len(reqs), old, promise)
}
