package reprise

import (
	"context"
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/reprise-bench/reprise/arrowio"
	"github.com/reprise-bench/reprise/internal/mockserver"
)

// TestConnReuseAgainstTheMock: the mock's log names each request's
// connection (remote_addr). Pooled reuses connections across sessions,
// never gives every request its own, and sticky-user-sessions gives each
// session one connection for all its turns that no other session uses.
func TestConnReuseAgainstTheMock(t *testing.T) {
	const sessions, turns = 4, 3
	dir := t.TempDir()
	tr := filepath.Join(dir, "t.jsonl")
	var b strings.Builder
	for s := range sessions {
		fmt.Fprintf(&b, `{"timestamp":%d,"input_length":4,"output_length":2,"session_id":"s%d"}`+"\n", s, s)
		for range turns - 1 {
			fmt.Fprintf(&b, `{"delay":0,"input_length":4,"output_length":2,"session_id":"s%d"}`+"\n", s)
		}
	}
	if err := os.WriteFile(tr, []byte(b.String()), 0o644); err != nil {
		t.Fatal(err)
	}
	for _, strategy := range []string{"pooled", "never", "sticky-user-sessions"} {
		t.Run(strategy, func(t *testing.T) {
			srv := startMock(t, func(c *mockserver.Config) { c.KeepLog = true })
			o := NewOptions()
			o.URL, o.Model, o.Streaming = srv.URL(), mockserver.DefaultModel, true
			o.Trace.Path = tr
			o.ConnReuse = strategy
			o.Output.Dir = filepath.Join(t.TempDir(), "run")
			o.Telemetry.EndpointMetrics = false
			res, err := Run(context.Background(), o)
			if err != nil {
				t.Fatal(err)
			}
			if res.Summary.ErrorRequestCount != 0 {
				t.Fatalf("errors: %v", res.Summary.Errors)
			}
			conns := connsBySession(t, res.Dir, srv.Log())
			perReq, shared := 0, map[string][]string{} // connection → sessions on it
			for s, cs := range conns {
				perReq += len(cs)
				for _, c := range cs {
					if len(shared[c]) == 0 || shared[c][len(shared[c])-1] != s {
						shared[c] = append(shared[c], s)
					}
				}
			}
			t.Logf("%s: %d requests on %d connections", strategy, perReq, len(shared))
			if perReq != sessions*turns {
				t.Fatalf("%d requests in the log, want %d", perReq, sessions*turns)
			}
			switch strategy {
			case "pooled":
				if len(shared) >= perReq {
					t.Errorf("pooled: %d connections for %d requests, want reuse", len(shared), perReq)
				}
			case "never":
				if len(shared) != perReq {
					t.Errorf("never: %d connections for %d requests, want one each", len(shared), perReq)
				}
			default:
				if len(shared) != sessions {
					t.Errorf("sticky: %d connections for %d sessions, want one each: %v", len(shared), sessions, conns)
				}
				for c, ss := range shared {
					if len(ss) != 1 {
						t.Errorf("sticky: connection %s carried sessions %v", c, ss)
					}
				}
			}
		})
	}
}

// connsBySession returns, for each session of the run in dir, the
// connections (the mock's remote_addr) its requests came on, in turn order.
func connsBySession(t *testing.T, dir string, log []mockserver.RequestLog) map[string][]string {
	t.Helper()
	reqs, err := arrowio.ReadRequests(dir)
	if err != nil {
		t.Fatal(err)
	}
	addr := map[string]string{}
	for _, l := range log {
		addr[l.ClientRequestID] = l.RemoteAddr
	}
	out := map[string][]string{}
	for _, r := range reqs {
		a, ok := addr[fmt.Sprint(r.RequestID)]
		if !ok || a == "" {
			t.Fatalf("request %d (session %s): not in the mock's log with a remote_addr", r.RequestID, r.SessionID)
		}
		out[r.SessionID] = append(out[r.SessionID], a)
	}
	return out
}
