package reprise

import (
	"context"
	"encoding/json"
	"fmt"
	"net/http"
	"net/http/httptest"
	"os"
	"path/filepath"
	"slices"
	"sync"
	"testing"
	"time"

	"github.com/reprise-bench/reprise/engine/record"
	"github.com/reprise-bench/reprise/internal/mockserver"
)

// TestCancelPlanPicks: the planned cancellations are a seeded draw: the
// rate is met over many requests, equal seeds pick the same requests,
// another seed others.
func TestCancelPlanPicks(t *testing.T) {
	count := func(c cancelPlan) (n int, picked []uint64) {
		for id := range uint64(10_000) {
			if c.picks(id) {
				n++
				picked = append(picked, id)
			}
		}
		return n, picked
	}
	n, a := count(cancelPlan{Rate: 0.3, Seed: 7})
	if n < 2850 || n > 3150 {
		t.Errorf("rate 0.3 picked %d of 10000", n)
	}
	if _, b := count(cancelPlan{Rate: 0.3, Seed: 7}); !slices.Equal(a, b) {
		t.Error("equal seeds picked different requests")
	}
	if _, c := count(cancelPlan{Rate: 0.3, Seed: 8}); slices.Equal(a, c) {
		t.Error("another seed picked the same requests")
	}
	if n, _ := count(cancelPlan{Rate: 0, Seed: 7}); n != 0 {
		t.Errorf("rate 0 picked %d", n)
	}
	if n, _ := count(cancelPlan{Rate: 1, Seed: 7}); n != 10_000 {
		t.Errorf("rate 1 picked %d of 10000", n)
	}
}

// TestCancelAfter: requests picked by --cancel-rate are cancelled
// --cancel-after after they were sent when the response is slower (ITL
// 40 ms × 12 tokens against 60 ms), over HTTP/1.1 and HTTP/2; they are
// recorded as cancelled with their cancel_after_ns, and the summary counts
// them apart from errors and latencies. A long --cancel-after lets every
// response end: ordinary requests with cancel_after_ns set.
func TestCancelAfter(t *testing.T) {
	for _, h2 := range []bool{false, true} {
		for _, after := range []time.Duration{60 * time.Millisecond, time.Minute} {
			name := fmt.Sprintf("http2=%v,after=%v", h2, after)
			srv := startMock(t, func(c *mockserver.Config) { c.TTFT, c.ITL = time.Millisecond, 40*time.Millisecond })
			sink := &memSink{}
			cfg := mockRunConfig(srv.URL(), mustPlan(t, closedLoop(8, 4), nil), sink)
			cfg.Engine.HTTP2 = h2
			cfg.Cancel = cancelPlan{Rate: 0.5, After: after, Seed: 3}
			res, err := runEngine(context.Background(), cfg)
			if err != nil {
				t.Fatal(err)
			}
			planned, cancelled := 0, 0
			for _, r := range sink.reqs {
				picked := cfg.Cancel.picks(r.RequestID)
				if picked != (r.CancelAfterNS == int64(after)) {
					t.Errorf("%s: request %d picked %v, cancel_after_ns %d", name, r.RequestID, picked, r.CancelAfterNS)
				}
				if picked {
					planned++
				}
				switch {
				case picked && after < time.Minute:
					if r.ErrorKind != record.ErrCancelled || !r.PlannedCancel() {
						t.Errorf("%s: request %d: %s %q, want cancelled", name, r.RequestID, r.ErrorKind, r.ErrorMessage)
					}
					if r.EndNS-r.SentNS < int64(after) {
						t.Errorf("%s: request %d ended %v after it was sent, before --cancel-after", name, r.RequestID, time.Duration(r.EndNS-r.SentNS))
					}
					cancelled++
				case !r.OK():
					t.Errorf("%s: request %d: %s %q", name, r.RequestID, r.ErrorKind, r.ErrorMessage)
				}
			}
			if planned == 0 || planned == 8 {
				t.Fatalf("%s: seed 3 planned %d of 8 cancellations; pick another seed", name, planned)
			}
			s := res.Summary
			if s.CancelledRequestCount != cancelled || s.ErrorRequestCount != 0 || s.RequestCount != 8-cancelled || s.ErrorRate() != 0 {
				t.Errorf("%s: summary ok %d, errors %d, cancelled %d, error rate %v; want %d, 0, %d, 0",
					name, s.RequestCount, s.ErrorRequestCount, s.CancelledRequestCount, s.ErrorRate(), 8-cancelled, cancelled)
			}
			if st := s.Metrics["request_latency"]; st == nil || st.Count != 8-cancelled {
				t.Errorf("%s: request_latency over %v requests, want the %d ok ones", name, st, 8-cancelled)
			}
		}
	}
}

// TestSessionHeaderAndRowHeaders: --session-header sends each row's
// session id, and a row's "headers" are sent with its request, winning
// over --header.
func TestSessionHeaderAndRowHeaders(t *testing.T) {
	var mu sync.Mutex
	got := map[string]http.Header{}
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		if r.Method == http.MethodGet {
			http.NotFound(w, r) // no /v1/models for the preflight: it passes on any answer
			return
		}
		var body struct {
			Messages []struct{ Content string } `json:"messages"`
		}
		json.NewDecoder(r.Body).Decode(&body)
		mu.Lock()
		got[r.Header.Get("X-Session")+"/"+r.Header.Get("X-Tenant")] = r.Header.Clone()
		mu.Unlock()
		w.Header().Set("Content-Type", "application/json")
		fmt.Fprint(w, `{"id":"x","object":"chat.completion","choices":[{"index":0,"finish_reason":"stop","message":{"role":"assistant","content":"hi"}}],"usage":{"prompt_tokens":3,"completion_tokens":1}}`)
	}))
	defer srv.Close()
	dir := t.TempDir()
	tr := filepath.Join(dir, "t.jsonl")
	rows := `{"timestamp":0,"input_length":4,"output_length":1,"session_id":"s1","headers":{"X-Tenant":"a","X-Route":"r1"}}
{"timestamp":1,"input_length":4,"output_length":1,"session_id":"s2"}
{"timestamp":2,"input_length":4,"output_length":1}
`
	if err := os.WriteFile(tr, []byte(rows), 0o644); err != nil {
		t.Fatal(err)
	}
	o := NewOptions()
	o.URL, o.Model, o.Streaming = srv.URL, "m", false
	o.Trace.Path = tr
	o.SessionHeader = "X-Session"
	o.Headers = []string{"X-Tenant: global"}
	o.Output.Dir = filepath.Join(dir, "run")
	o.Telemetry.EndpointMetrics = false
	res, err := Run(context.Background(), o)
	if err != nil {
		t.Fatal(err)
	}
	if res.Summary.ErrorRequestCount != 0 {
		t.Fatalf("errors: %v", res.Summary.Errors)
	}
	want := map[string]string{"s1/a": "r1", "s2/global": "", "/global": ""}
	if len(got) != len(want) {
		t.Fatalf("requests by session/tenant %v, want %v", keys(got), want)
	}
	for k, route := range want {
		h, ok := got[k]
		if !ok || h.Get("X-Route") != route {
			t.Errorf("request %s: headers %v, want X-Route %q", k, h, route)
		}
	}
}

func keys[V any](m map[string]V) []string {
	var out []string
	for k := range m {
		out = append(out, k)
	}
	slices.Sort(out)
	return out
}
