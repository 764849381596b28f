package reprise

import (
	"github.com/reprise-bench/reprise/engine/record"
	"github.com/reprise-bench/reprise/engine/summary"
	"github.com/reprise-bench/reprise/internal/livemetrics"
	"log/slog"
	"sync"
	"sync/atomic"
	"time"
)

// recordSink receives a run's records in batches, from one goroutine (the
// run's collector, never a sender). The collector's queue
// ([sinkQueueBatches]) is the only one between the senders and the sink: a
// call may take as long as the disk needs, and once the queue is full the
// sender that completes a batch waits ([engineResult.SinkQueue] counts it). The
// sink must not keep a batch after the call returns: the collector reuses
// it. WriteEvents is only called when events are collected. Close
// flushes and completes the files. arrowio.RunWriter implements it, for
// every record format (Parquet, Arrow IPC and JSON Lines).
type recordSink interface {
	WriteRequests(batch []record.Request) error
	WriteEvents(batch []record.Event) error
	Close() error
}

// collector batches records for the sink and the summary.
type collector struct {
	mu       sync.Mutex
	reqs     []record.Request
	evs      []record.Event
	ch       chan collBatch
	sink     recordSink
	acc      *summary.Accumulator
	log      *slog.Logger
	done     chan struct{}
	err      error
	warn     sync.Once
	tick     *time.Ticker
	stop     chan struct{}
	tickDone chan struct{}

	// Skipped jobs (--late skip) are queued here by the dispatcher, which
	// must never wait for the sink, and turned into records by
	// skipRecord on the flush goroutine. A full list kicks a flush.
	skipMu     sync.Mutex
	skips      []skipped
	kick       chan struct{}
	skipRecord func(sk *skipped, r *record.Request)
	// onErr is called once, with the sink's first error.
	onErr func(error)
	// The queue's counters (SinkQueue).
	waits, waitNS, maxQueued atomic.Int64
	// free holds request batches the sink is done with, for reuse.
	free chan []record.Request
	// live, when not nil, counts every batch (--metrics-addr), beside
	// the summary.
	live *livemetrics.Metrics
	// observe, when not nil, gets every record in add, before batching.
	observe func(*record.Request)
}

type collBatch struct {
	reqs []record.Request
	evs  []record.Event
}

func newCollector(sink recordSink, acc *summary.Accumulator, log *slog.Logger) *collector {
	c := &collector{sink: sink, acc: acc, log: log, ch: make(chan collBatch, sinkQueueBatches), free: make(chan []record.Request, 4), done: make(chan struct{}),
		stop: make(chan struct{}), tickDone: make(chan struct{}), kick: make(chan struct{}, 1)}
	c.reqs = make([]record.Request, 0, batchRequests)
	go c.loop()
	c.tick = time.NewTicker(flushInterval)
	go func() {
		defer close(c.tickDone)
		for {
			select {
			case <-c.tick.C:
				c.flush()
			case <-c.kick:
				c.flush()
			case <-c.stop:
				return
			}
		}
	}()
	return c
}

// add copies r (and evs) into the current batch. It waits when the sink
// is more than 64 batches behind (senders only; see skip).
func (c *collector) add(r *record.Request, evs []record.Event) {
	if c.observe != nil {
		c.observe(r)
	}
	c.mu.Lock()
	c.reqs = append(c.reqs, *r)
	c.evs = append(c.evs, evs...)
	if len(c.reqs) < batchRequests && len(c.evs) < batchEvents {
		c.mu.Unlock()
		return
	}
	b := c.swap()
	c.mu.Unlock()
	c.send(b)
}

// skip queues a skipped job without ever blocking: the list grows (a copy
// of the job and its row's identity each, ~180 bytes) until the flush goroutine drains it, which
// a full batch wakes at once.
func (c *collector) skip(sk *skipped) {
	c.skipMu.Lock()
	c.skips = append(c.skips, *sk)
	n := len(c.skips)
	c.skipMu.Unlock()
	if n >= batchRequests {
		select {
		case c.kick <- struct{}{}:
		default:
		}
	}
}

// takeSkips moves the queued skipped jobs into the current batch as
// records. c.mu must be held.
func (c *collector) takeSkips() {
	c.skipMu.Lock()
	js := c.skips
	c.skips = nil
	c.skipMu.Unlock()
	for i := range js {
		var r record.Request
		if c.skipRecord != nil {
			c.skipRecord(&js[i], &r)
		}
		c.reqs = append(c.reqs, r)
	}
}

func (c *collector) swap() collBatch {
	b := collBatch{c.reqs, c.evs}
	select {
	case c.reqs = <-c.free:
	default:
		c.reqs = make([]record.Request, 0, batchRequests)
	}
	c.evs = nil
	return b
}

func (c *collector) flush() {
	c.mu.Lock()
	c.takeSkips()
	if len(c.reqs) == 0 && len(c.evs) == 0 {
		c.mu.Unlock()
		return
	}
	b := c.swap()
	c.mu.Unlock()
	c.send(b)
}

func (c *collector) send(b collBatch) {
	select {
	case c.ch <- b:
	default:
		c.warn.Do(func() {
			c.log.Warn("the record writer cannot keep up; senders wait for it (results stay complete, timing of later requests may suffer)")
		})
		t := time.Now()
		c.ch <- b
		c.waits.Add(1)
		c.waitNS.Add(int64(time.Since(t)))
	}
	for q := int64(len(c.ch)); ; {
		m := c.maxQueued.Load()
		if q <= m || c.maxQueued.CompareAndSwap(m, q) {
			return
		}
	}
}

func (c *collector) loop() {
	defer close(c.done)
	for b := range c.ch {
		for i := range b.reqs {
			c.acc.Add(&b.reqs[i])
		}
		if c.live != nil {
			c.live.Observe(b.reqs)
		}
		// After the sink failed, it still gets every batch: it drops the
		// rows and counts them, by table, so that the report says what
		// is missing from the files.
		if c.sink != nil && len(b.reqs) > 0 {
			c.fail(c.sink.WriteRequests(b.reqs))
		}
		if c.sink != nil && len(b.evs) > 0 {
			c.fail(c.sink.WriteEvents(b.evs))
		}
		if cap(b.reqs) == batchRequests {
			select { // the sink copied the rows: the batch is free again
			case c.free <- b.reqs[:0]:
			default:
			}
		}
	}
}

// fail keeps the sink's first error and reports it to onErr.
func (c *collector) fail(err error) {
	if err == nil || c.err != nil {
		return
	}
	c.err = err
	if c.onErr != nil {
		c.onErr(err)
	}
}

// close flushes everything and closes the sink.
func (c *collector) close() error {
	c.tick.Stop()
	close(c.stop)
	<-c.tickDone
	c.flush()
	close(c.ch)
	<-c.done
	if c.sink != nil {
		if err := c.sink.Close(); err != nil && c.err == nil {
			c.err = err
		}
	}
	return c.err
}
