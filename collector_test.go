package reprise

import (
	"log/slog"
	"sync"
	"testing"
	"testing/synctest"
	"time"

	"github.com/reprise-bench/reprise/engine/record"
	"github.com/reprise-bench/reprise/engine/summary"
	"github.com/reprise-bench/reprise/replay"
)

// gateSink blocks every write until open is closed.
type gateSink struct {
	open chan struct{}
	mu   sync.Mutex
	reqs []record.Request
}

func (g *gateSink) WriteRequests(b []record.Request) error {
	<-g.open
	g.mu.Lock()
	g.reqs = append(g.reqs, b...)
	g.mu.Unlock()
	return nil
}
func (g *gateSink) WriteEvents([]record.Event) error { return nil }
func (g *gateSink) Close() error                     { return nil }

// TestSkipNeverBlocks: with the sink stuck and the collector's queue full
// (senders would now wait), recording skipped jobs (--late skip, on the
// dispatcher's goroutine) still returns at once, and every skipped job
// reaches the sink once the sink moves again.
func TestSkipNeverBlocks(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		sink := &gateSink{open: make(chan struct{})}
		c := newCollector(sink, summary.NewAccumulator(summary.Options{}), slog.New(slog.DiscardHandler))
		c.skipRecord = func(sk *skipped, r *record.Request) {
			*r = record.Request{RequestID: sk.j.ID, ErrorKind: record.ErrNotDelivered}
		}
		// One batch in the stuck sink, 64 in the queue: the queue is full.
		full := 65 * batchRequests
		for i := range full {
			c.add(&record.Request{RequestID: uint64(i)}, nil)
		}
		synctest.Wait()
		const nSkipped = 3*batchRequests + 7
		done := make(chan struct{})
		go func() { // the dispatcher
			for i := range nSkipped {
				c.skip(&skipped{j: replay.Job{ID: uint64(full + i)}})
			}
			close(done)
		}()
		synctest.Wait()
		select {
		case <-done:
		default:
			t.Error("recording a skipped job blocked on the stuck sink")
		}
		close(sink.open)
		<-done
		if err := c.close(); err != nil {
			t.Fatal(err)
		}
		seen := make(map[uint64]int, full+nSkipped)
		for _, r := range sink.reqs {
			seen[r.RequestID]++
			if (r.RequestID >= uint64(full)) != (r.ErrorKind == record.ErrNotDelivered) {
				t.Fatalf("request %d: error kind %q", r.RequestID, r.ErrorKind)
			}
		}
		if len(sink.reqs) != full+nSkipped || len(seen) != full+nSkipped {
			t.Fatalf("sink got %d records (%d distinct), want %d", len(sink.reqs), len(seen), full+nSkipped)
		}
	})
}

// TestSinkQueueWaits: the collector's queue is the one queue in front of
// the sink. With the sink stuck, sinkQueueBatches batches wait in it; the
// sender that completes one more waits until the sink moves, and the wait
// is counted (SinkQueue: the record_writer of summary.json).
func TestSinkQueueWaits(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		sink := &gateSink{open: make(chan struct{})}
		c := newCollector(sink, summary.NewAccumulator(summary.Options{}), slog.New(slog.DiscardHandler))
		// One batch in the stuck sink, sinkQueueBatches in the queue, and
		// one more that must wait.
		n := (sinkQueueBatches + 2) * batchRequests
		for i := range batchRequests {
			c.add(&record.Request{RequestID: uint64(i)}, nil)
		}
		synctest.Wait() // the first batch is in the sink
		done := make(chan struct{})
		go func() { // a sender
			for i := batchRequests; i < n; i++ {
				c.add(&record.Request{RequestID: uint64(i)}, nil)
			}
			close(done)
		}()
		synctest.Wait()
		select {
		case <-done:
			t.Fatal("the sender did not wait for the stuck sink")
		default:
		}
		time.Sleep(10 * time.Millisecond)
		close(sink.open)
		<-done
		if err := c.close(); err != nil {
			t.Fatal(err)
		}
		if w, ns, q := c.waits.Load(), c.waitNS.Load(), c.maxQueued.Load(); w != 1 || ns != int64(10*time.Millisecond) || q != sinkQueueBatches {
			t.Errorf("waits %d, wait %v, max queued %d; want 1, 10ms, %d", w, time.Duration(ns), q, sinkQueueBatches)
		}
		if len(sink.reqs) != n {
			t.Errorf("sink got %d records, want %d", len(sink.reqs), n)
		}
		for i, r := range sink.reqs {
			if r.RequestID != uint64(i) {
				t.Fatalf("record %d is request %d: a reused batch was overwritten", i, r.RequestID)
			}
		}
	})
}
