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

// countingFailSink is a record writer that fails like a full disk after
// its first batch of requests and keeps what it is handed after that too
// (arrowio.RunWriter counts it, by table, as missing from its files).
type countingFailSink struct {
	mu            sync.Mutex
	failed        bool
	kept, dropped int            // requests before and after the failure
	reqs          map[uint64]int // records handed, by request id
	evs           map[uint64]int // events handed, by request id
}

func (f *countingFailSink) WriteRequests(b []record.Request) error {
	f.mu.Lock()
	defer f.mu.Unlock()
	for i := range b {
		f.reqs[b[i].RequestID]++
	}
	if f.failed {
		f.dropped += len(b)
		return errDiskFull
	}
	f.failed = true // this batch is kept; the next fails
	f.kept += len(b)
	return nil
}

func (f *countingFailSink) WriteEvents(b []record.Event) error {
	f.mu.Lock()
	defer f.mu.Unlock()
	for i := range b {
		f.evs[b[i].RequestID]++
	}
	if f.failed {
		return errDiskFull
	}
	return nil
}

func (f *countingFailSink) Close() error { return errDiskFull }

// TestSinkGetsEveryRowAfterItFails: after the record writer fails, the
// collector still hands it every record and event, so that it can count
// what is missing from its files, by table: the records handed are the
// run's, one per request the summary counts, each once, and every one of
// them has its events handed (issue 37, item 22: the rows after the
// failure were never handed over, and the note's count matched neither
// table).
func TestSinkGetsEveryRowAfterItFails(t *testing.T) {
	srv := startMock(t, func(c *mockserver.Config) { c.TTFT = time.Millisecond; c.ITL = 0 })
	sink := &countingFailSink{reqs: map[uint64]int{}, evs: map[uint64]int{}}
	cfg := mockRunConfig(srv.URL(), mustPlan(t, closedLoop(20000, 4), nil), sink)
	cfg.Synthetic = syntheticLengths{ISL: 8, OSL: 2, Seed: 1}
	res, err := runEngine(context.Background(), cfg)
	if !errors.Is(err, errDiskFull) || res == nil {
		t.Fatalf("Run error %v, want the sink's", err)
	}
	made := res.Summary.RequestCount + res.Summary.ErrorRequestCount + res.Summary.CancelledRequestCount
	if sink.dropped == 0 || sink.kept+sink.dropped != made || len(sink.reqs) != made {
		t.Errorf("sink kept %d requests and was handed %d more after it failed (%d distinct); the run made %d",
			sink.kept, sink.dropped, len(sink.reqs), made)
	}
	for id, n := range sink.reqs {
		if n != 1 || sink.evs[id] == 0 {
			t.Errorf("request %d: handed %d times, %d events", id, n, sink.evs[id])
		}
	}
	if len(sink.evs) != made {
		t.Errorf("events of %d requests handed, want of all %d", len(sink.evs), made)
	}
}
