package reprise

import (
	"context"
	"errors"
	"sync"
	"testing"
	"time"

	"github.com/reprise-bench/reprise/engine/record"
	"github.com/reprise-bench/reprise/internal/mockserver"
)

var errDiskFull = errors.New("records table: write part-00001.parquet.tmp: no space left on device")

// failSink accepts one batch of requests, then fails like a full disk.
type failSink struct {
	mu    sync.Mutex
	calls int
	rows  int
}

func (f *failSink) WriteRequests(b []record.Request) error {
	f.mu.Lock()
	defer f.mu.Unlock()
	f.calls++
	if f.calls > 1 {
		return errDiskFull
	}
	f.rows += len(b)
	return nil
}
func (f *failSink) WriteEvents([]record.Event) error { return nil }
func (f *failSink) Close() error                     { return errDiskFull }

// TestRunStopsOnSinkError: when the record sink fails, the run stops
// sending at once instead of running its whole schedule with nowhere to
// put the records; Run returns the sink's error with the summary of every
// request that was sent.
func TestRunStopsOnSinkError(t *testing.T) {
	srv := startMock(t, func(c *mockserver.Config) { c.TTFT = time.Millisecond; c.ITL = 0 })
	const planned = 20000
	cfg := mockRunConfig(srv.URL(), mustPlan(t, closedLoop(planned, 4), nil), &failSink{})
	cfg.Synthetic = syntheticLengths{ISL: 8, OSL: 2, Seed: 1}
	res, err := runEngine(context.Background(), cfg)
	if !errors.Is(err, errDiskFull) {
		t.Fatalf("Run error %v, want the sink's", err)
	}
	if res == nil || !res.Interrupted || !res.Summary.Run.Cancelled {
		t.Fatalf("result %+v: want the run reported as stopped early", res)
	}
	sent := res.Summary.RequestCount + res.Summary.ErrorRequestCount
	if sent == 0 || sent >= planned/2 {
		t.Errorf("%d of %d requests sent after the sink failed: the run did not stop", sent, planned)
	}
	t.Logf("stopped after %d of %d requests: %v", sent, planned, err)
}
