package reprise

import (
	"context"
	"encoding/json"
	"errors"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/reprise-bench/reprise/internal/mockserver"
)

// thresholdOptions is a 200-request closed loop at concurrency 2 against
// url that only --failed-request-threshold (t) may stop early.
func thresholdOptions(t *testing.T, url string, threshold float64) Options {
	o := NewOptions()
	o.URL, o.Model, o.Synthetic = url, mockserver.DefaultModel, SyntheticLoad{ISL: 8, OSL: 2}
	o.Replay.Concurrency, o.Replay.RequestCount = 2, 200
	o.Replay.Grace = 5 * time.Second
	o.Telemetry.EndpointMetrics = false
	o.MaxErrorRate = 1
	o.FailedRequestThreshold = &threshold
	o.Output.Dir = filepath.Join(t.TempDir(), "run")
	return o
}

// TestFailedRequestThreshold: against a mock server that answers every
// request with HTTP 500, a run with a threshold of 0.1 stops as soon as
// max(concurrency, 10) = 10 measured requests have ended (all failed):
// the server saw only those and the few in flight, every one it saw is
// a record, summary.json's run_info.stopped says why, and Run returns a
// *FailedRequestsError with the counts. A server failing 30 % of the
// requests under a threshold of 0.9 gets every request sent, and no
// error.
func TestFailedRequestThreshold(t *testing.T) {
	srv := startMock(t, func(c *mockserver.Config) {
		c.TTFT, c.ITL, c.KeepLog, c.Seed = time.Millisecond, time.Millisecond, true, 7
		c.Faults = []mockserver.FaultRate{{Fault: mockserver.Fault{Kind: mockserver.Fault500}, Rate: 1}}
	})
	o := thresholdOptions(t, srv.URL(), 0.1)
	res, err := Run(context.Background(), o)
	fe, ok := errors.AsType[*FailedRequestsError](err)
	if !ok {
		t.Fatalf("err = %v, want a *FailedRequestsError", err)
	}
	if fe.Failed != 10 || fe.Ended != 10 || fe.Threshold != 0.1 {
		t.Errorf("error %+v, want 10 of 10 failed over 0.1", *fe)
	}
	if res == nil {
		t.Fatal("no result with the error")
	}
	if err := srv.WaitIdle(context.Background()); err != nil {
		t.Fatal(err)
	}
	seen := len(srv.Log())
	// The 10 judged, those in flight, and the few the senders started
	// while the stop went from the watch to the dispatcher.
	if seen < 10 || seen > 20 {
		t.Errorf("the server saw %d requests, want 10 to 20 of the 200", seen)
	}
	s := res.Summary
	if got := s.RequestCount + s.ErrorRequestCount; got != seen {
		t.Errorf("%d records, the server saw %d", got, seen)
	}
	if res.Interrupted {
		t.Error("the abort is reported as an interruption")
	}
	b, err := os.ReadFile(filepath.Join(res.Dir, "summary.json"))
	if err != nil {
		t.Fatal(err)
	}
	var sum struct {
		RunInfo struct {
			Stopped   string `json:"stopped"`
			Cancelled bool   `json:"was_cancelled"`
		} `json:"run_info"`
	}
	if err := json.Unmarshal(b, &sum); err != nil {
		t.Fatal(err)
	}
	if want := "10 of 10 measured requests failed (100.0 %), over the failed-request threshold of 10.0 %"; sum.RunInfo.Stopped != want {
		t.Errorf("run_info.stopped = %q, want %q", sum.RunInfo.Stopped, want)
	}

	partial := startMock(t, func(c *mockserver.Config) {
		c.TTFT, c.ITL, c.KeepLog, c.Seed = time.Millisecond, time.Millisecond, true, 7
		c.Faults = []mockserver.FaultRate{{Fault: mockserver.Fault{Kind: mockserver.Fault500}, Rate: 0.3}}
	})
	res, err = Run(context.Background(), thresholdOptions(t, partial.URL(), 0.9))
	if err != nil {
		t.Fatal(err)
	}
	if n := res.Summary.RequestCount + res.Summary.ErrorRequestCount; n != 200 {
		t.Errorf("%d records under a threshold the failures stay below, want 200", n)
	}
	if n := res.Summary.ErrorRequestCount; n < 30 || n > 90 || res.Summary.Run.Stopped != "" {
		t.Errorf("%d failures, stopped %q: want about 60 of 200 and no stop", n, res.Summary.Run.Stopped)
	}
}

// TestFailedRequestThresholdValidation: a threshold outside [0, 1] is
// a configuration error naming the field.
func TestFailedRequestThresholdValidation(t *testing.T) {
	for _, v := range []float64{-0.1, 1.5} {
		o := thresholdOptions(t, "http://127.0.0.1:1", v)
		_, err := Run(context.Background(), o)
		if err == nil || !strings.Contains(err.Error(), "FailedRequestThreshold") {
			t.Errorf("threshold %v: err = %v, want one naming FailedRequestThreshold", v, err)
		}
	}
}
