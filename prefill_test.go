package reprise

import (
	"context"
	"path/filepath"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/reprise-bench/reprise/internal/mockserver"
)

// maxOverlap returns the most intervals [from, to] open at one instant.
func maxOverlap(from, to []int64) int {
	type edge struct {
		t int64
		d int
	}
	var es []edge
	for i := range from {
		es = append(es, edge{from[i], 1}, edge{to[i], -1})
	}
	// At equal times an end comes first: the interval that ended freed
	// its slot.
	slices.SortFunc(es, func(a, b edge) int {
		if a.t != b.t {
			return int(a.t - b.t)
		}
		return a.d - b.d
	})
	n, most := 0, 0
	for _, e := range es {
		n += e.d
		most = max(most, n)
	}
	return most
}

// TestPrefillConcurrencyMockOracle: with 8 sessions in flight and
// PrefillConcurrency 2, the mock's oracle log never has more than 2
// requests between their arrival and their first token, and has 2 at
// some instant (the cap binds), while more than 2 are in flight in all
// (decode is not capped). A request waits from its arrival to the
// start of its first token's write. The same load without the cap has more than 2
// waiting for their first token at once, so the check can fail.
func TestPrefillConcurrencyMockOracle(t *testing.T) {
	srv := startMock(t, func(c *mockserver.Config) { c.TTFT, c.ITL = 20*time.Millisecond, 5*time.Millisecond })
	run := func(prefill int) (waiting, inFlight int) {
		t.Helper()
		srv.ResetLog()
		o := NewOptions()
		o.URL, o.Model = srv.URL(), mockserver.DefaultModel
		o.Synthetic = SyntheticLoad{ISL: 16, OSL: 12}
		o.Replay.Concurrency, o.Replay.RequestCount = 8, 32
		o.Replay.PrefillConcurrency = prefill
		o.Output.Dir = filepath.Join(t.TempDir(), "run")
		o.Telemetry.EndpointMetrics = false
		res, err := Run(context.Background(), o)
		if err != nil {
			t.Fatal(err)
		}
		if res.Summary.ErrorRequestCount != 0 {
			t.Fatalf("%d requests failed", res.Summary.ErrorRequestCount)
		}
		if err := srv.WaitIdle(context.Background()); err != nil {
			t.Fatal(err)
		}
		var recv, first, end []int64
		for _, l := range srv.Log() {
			// The first token's bytes left the server within [StartNS,
			// TimeNS] of its event: the client can have read it from
			// StartNS on.
			var ft int64
			for _, e := range l.Events {
				if e.Kind == mockserver.EventContent {
					ft = e.StartNS
					break
				}
			}
			if ft == 0 {
				t.Fatalf("request %d has no first token", l.Seq)
			}
			recv, first, end = append(recv, l.ReceivedNS), append(first, ft), append(end, l.EndNS)
		}
		if len(recv) != 32 {
			t.Fatalf("%d requests logged, want 32", len(recv))
		}
		return maxOverlap(recv, first), maxOverlap(recv, end)
	}
	waiting, inFlight := run(2)
	t.Logf("cap 2: %d waiting at most, %d in flight at most", waiting, inFlight)
	if waiting != 2 || inFlight <= 2 {
		t.Errorf("prefill cap 2: at most %d waiting for the first token (want exactly 2), %d in flight (want > 2)", waiting, inFlight)
	}
	waiting, inFlight = run(0)
	t.Logf("no cap: %d waiting at most, %d in flight at most", waiting, inFlight)
	if waiting <= 2 {
		t.Errorf("without a cap at most %d waited for the first token at once; the test cannot tell the cap", waiting)
	}
}

// TestPrefillConcurrencyNeedsStreaming: the cap is refused for
// non-streamed responses, whose first token is their end.
func TestPrefillConcurrencyNeedsStreaming(t *testing.T) {
	o := NewOptions()
	o.Model, o.Streaming = "m", false
	o.Synthetic = SyntheticLoad{ISL: 8, OSL: 8}
	o.Replay.PrefillConcurrency = 2
	o.Output.Dir = filepath.Join(t.TempDir(), "run")
	o.Preflight.Skip = true
	_, err := Run(context.Background(), o)
	if err == nil || !strings.Contains(err.Error(), "Replay.PrefillConcurrency needs Streaming") {
		t.Fatalf("err = %v", err)
	}
}
