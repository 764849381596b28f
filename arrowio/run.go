package arrowio

import (
	"errors"
	"sync"
	"sync/atomic"
	"time"

	"github.com/reprise-bench/reprise/engine/record"
)

// ErrClosed is returned by writes to a closed [RunWriter].
var ErrClosed = errors.New("arrowio: run writer closed")

// Stats is a snapshot of a [RunWriter]'s counters. Dropped rows are rows the
// caller handed over while the queue was full (the disk could not keep up);
// they are missing from the files.
type Stats struct {
	RequestsWritten int64 // rows appended to the records table
	EventsWritten   int64 // rows appended to the events table
	RequestsDropped int64
	EventsDropped   int64
	// QueuedBatches is the number of batches waiting for the writer
	// goroutine now; MaxQueuedBatches the most seen (a lag high-water mark).
	QueuedBatches    int64
	MaxQueuedBatches int64
	// Waits and WaitNS count calls that waited for queue space, and how
	// long, with Config.Block.
	Waits  int64
	WaitNS int64
	// Files and Bytes count completed files of both tables.
	Files int64
	Bytes int64
	// UnknownErrorKinds counts rows whose ErrorKind was not a known
	// constant (written as "unknown").
	UnknownErrorKinds int64
}

// RunWriter writes a run's records and events tables. It is the engine's
// record sink: WriteRequests and WriteEvents are safe for concurrent use and
// never block (unless Config.Block) — they hand the batch to one writer
// goroutine through a bounded queue. Close drains the queue and completes
// every file.
//
// Files: dir/records/part-NNNNN.parquet (or dir/records.parquet with
// SingleFile), and dir/events/… once the first event batch arrives.
type RunWriter struct {
	dir string
	cfg Config

	mu     sync.RWMutex // write lock only to close the queues
	closed bool
	reqs   chan []record.Request
	evs    chan []record.Event
	done   chan struct{}

	err atomic.Pointer[error] // first writer error

	reqWritten, evWritten  atomic.Int64
	reqDropped, evDropped  atomic.Int64
	queued, maxQueued      atomic.Int64
	waits, waitNS          atomic.Int64
	files, bytes, unknowns atomic.Int64
}

// NewRunWriter validates cfg, creates dir and the records table and starts
// the writer goroutine. The events table is created on the first
// WriteEvents call.
func NewRunWriter(dir string, cfg Config) (*RunWriter, error) {
	if err := cfg.Validate(); err != nil {
		return nil, err
	}
	cfg = cfg.withDefaults()
	recs, err := NewTableWriter(dir, RecordsTable, RecordsSchema(), cfg)
	if err != nil {
		return nil, err
	}
	w := &RunWriter{
		dir:  dir,
		cfg:  cfg,
		reqs: make(chan []record.Request, cfg.QueueBatches),
		evs:  make(chan []record.Event, cfg.QueueBatches),
		done: make(chan struct{}),
	}
	go w.loop(recs)
	return w, nil
}

// Dir returns the run directory.
func (w *RunWriter) Dir() string { return w.dir }

// WriteRequests queues batch for writing. The RunWriter owns batch after the
// call: the caller must not modify or reuse it. If the queue is full, the
// batch is dropped and counted (Stats.RequestsDropped) unless Config.Block.
// It returns the writer's first error, if any, or ErrClosed after Close.
// Hot path: no allocation.
func (w *RunWriter) WriteRequests(batch []record.Request) error {
	if len(batch) == 0 {
		return w.Err()
	}
	w.mu.RLock()
	defer w.mu.RUnlock()
	if w.closed {
		return ErrClosed
	}
	// Count the batch as queued before sending, so the writer goroutine
	// never sees (and decrements) a batch not yet counted.
	q := w.queued.Add(1)
	select {
	case w.reqs <- batch:
		w.noteMax(q)
	default:
		if !w.cfg.Block {
			w.queued.Add(-1)
			w.reqDropped.Add(int64(len(batch)))
			return w.Err()
		}
		t := time.Now()
		w.reqs <- batch
		w.noteWait(t, q)
	}
	return w.Err()
}

// WriteEvents queues batch for the events table, like WriteRequests.
func (w *RunWriter) WriteEvents(batch []record.Event) error {
	if len(batch) == 0 {
		return w.Err()
	}
	w.mu.RLock()
	defer w.mu.RUnlock()
	if w.closed {
		return ErrClosed
	}
	// Count the batch as queued before sending, so the writer goroutine
	// never sees (and decrements) a batch not yet counted.
	q := w.queued.Add(1)
	select {
	case w.evs <- batch:
		w.noteMax(q)
	default:
		if !w.cfg.Block {
			w.queued.Add(-1)
			w.evDropped.Add(int64(len(batch)))
			return w.Err()
		}
		t := time.Now()
		w.evs <- batch
		w.noteWait(t, q)
	}
	return w.Err()
}

func (w *RunWriter) noteMax(q int64) {
	for {
		m := w.maxQueued.Load()
		if q <= m || w.maxQueued.CompareAndSwap(m, q) {
			return
		}
	}
}

func (w *RunWriter) noteWait(t time.Time, q int64) {
	w.waits.Add(1)
	w.waitNS.Add(int64(time.Since(t)))
	w.noteMax(q)
}

// Err returns the first error the writer goroutine hit (disk full, …), or
// nil. After an error the writer discards further rows (counted as dropped).
func (w *RunWriter) Err() error {
	if p := w.err.Load(); p != nil {
		return *p
	}
	return nil
}

func (w *RunWriter) setErr(err error) {
	if err != nil {
		w.err.CompareAndSwap(nil, &err)
	}
}

// Dropped returns the number of rows (requests plus events) dropped because
// the queue was full or the writer had failed.
func (w *RunWriter) Dropped() int64 { return w.reqDropped.Load() + w.evDropped.Load() }

// Lag returns the number of batches queued and not yet written.
func (w *RunWriter) Lag() int { return int(w.queued.Load()) }

// Stats returns a snapshot of the counters. Safe for concurrent use.
func (w *RunWriter) Stats() Stats {
	return Stats{
		RequestsWritten: w.reqWritten.Load(), EventsWritten: w.evWritten.Load(),
		RequestsDropped: w.reqDropped.Load(), EventsDropped: w.evDropped.Load(),
		QueuedBatches: w.queued.Load(), MaxQueuedBatches: w.maxQueued.Load(),
		Waits: w.waits.Load(), WaitNS: w.waitNS.Load(),
		Files: w.files.Load(), Bytes: w.bytes.Load(), UnknownErrorKinds: w.unknowns.Load(),
	}
}

// Close stops accepting batches, writes everything queued, completes all
// files and returns the first error. Safe to call more than once.
func (w *RunWriter) Close() error {
	w.mu.Lock()
	if !w.closed {
		w.closed = true
		close(w.reqs)
		close(w.evs)
	}
	w.mu.Unlock()
	<-w.done
	return w.Err()
}

// tableState is one table on the writer goroutine: builder plus file writer.
type tableState[T any] struct {
	tw      *TableWriter
	rows    func() int
	reserve func(int)
	add     func(*T)
	flush   func() error // builder → record → tw.Write
	written *atomic.Int64
	dropped *atomic.Int64
	// since is when the first row of the current part arrived (zero when
	// the part is empty); PartInterval is measured from it.
	since time.Time
}

// put appends batch to the builder, flushing full row groups and the rows
// that complete a part.
func (t *tableState[T]) put(w *RunWriter, batch []T, rg int) {
	if w.Err() != nil {
		t.dropped.Add(int64(len(batch)))
		return
	}
	if t.since.IsZero() {
		t.since = time.Now()
	}
	for len(batch) > 0 {
		if t.rows() == 0 {
			t.reserve(rg)
		}
		// Flush at a full row group, or at the row that completes the
		// part: PartRows is exact, whatever the row group size.
		limit := rg
		if t.tw.splits() {
			limit = min(limit, w.cfg.PartRows-t.tw.curRows)
		}
		n := min(len(batch), limit-t.rows())
		for i := range batch[:n] {
			t.add(&batch[i])
		}
		batch = batch[n:]
		t.written.Add(int64(n))
		if t.rows() == limit {
			if err := t.flush(); err != nil {
				w.setErr(err)
				t.dropped.Add(int64(len(batch)))
				return
			}
			if t.tw.curRows == 0 { // the part filled up and was completed
				t.since = time.Time{}
				if len(batch) > 0 {
					t.since = time.Now()
				}
			}
		}
	}
}

// settleCounts, after the table failed, counts the rows that are not in
// its files (those of the file being written when it failed) as dropped
// instead of written.
func (t *tableState[T]) settleCounts() {
	if t.tw.err == nil {
		return
	}
	if lost := t.written.Load() - t.tw.stats.Rows; lost > 0 {
		t.written.Add(-lost)
		t.dropped.Add(lost)
	}
}

// tick completes the current part when its first row would otherwise be
// older than PartInterval at the next tick (every period).
func (t *tableState[T]) tick(w *RunWriter, now time.Time, period time.Duration) {
	if t.since.IsZero() || now.Sub(t.since)+period < w.cfg.PartInterval || w.Err() != nil {
		return
	}
	t.since = time.Time{}
	if err := t.flush(); err != nil {
		w.setErr(err)
		return
	}
	w.setErr(t.tw.Roll())
}

func (w *RunWriter) fileStats(ts ...*TableWriter) {
	var files, bytes int64
	for _, t := range ts {
		if t != nil {
			files += int64(t.stats.Files)
			bytes += t.stats.Bytes
		}
	}
	w.files.Store(files)
	w.bytes.Store(bytes)
}

func (w *RunWriter) loop(recs *TableWriter) {
	defer close(w.done)
	mem := bufferPool
	rb := newRequestBuilder(mem)
	defer rb.release()
	eb := newEventBuilder(mem)
	defer eb.release()

	rt := &tableState[record.Request]{tw: recs, rows: func() int { return rb.rows }, reserve: rb.reserve,
		add: rb.appendRequest, written: &w.reqWritten, dropped: &w.reqDropped}
	et := &tableState[record.Event]{rows: func() int { return eb.rows }, reserve: eb.reserve,
		add: eb.appendEvent, written: &w.evWritten, dropped: &w.evDropped}
	rt.flush = func() error {
		defer w.fileStats(recs, et.tw)
		if rb.rows == 0 {
			return nil
		}
		rec := rb.newRecord()
		defer rec.Release()
		w.unknowns.Store(rb.unknownKinds)
		return recs.Write(rec)
	}
	et.flush = func() error {
		defer w.fileStats(recs, et.tw)
		if eb.rows == 0 {
			return nil
		}
		rec := eb.newRecord()
		defer rec.Release()
		return et.tw.Write(rec)
	}

	var (
		tickC  <-chan time.Time
		period time.Duration
	)
	if w.cfg.PartInterval > 0 && recs.splits() {
		// Check ten times per interval and complete a part at the last
		// check before its first row is PartInterval old: parts are
		// completed between 0.9 and 1 interval after their first row.
		period = max(w.cfg.PartInterval/10, time.Millisecond)
		tk := time.NewTicker(period)
		defer tk.Stop()
		tickC = tk.C
	}
	reqs, evs := w.reqs, w.evs
	rg := w.cfg.RowGroupRows
	for reqs != nil || evs != nil {
		select {
		case b, ok := <-reqs:
			if !ok {
				reqs = nil
				continue
			}
			w.queued.Add(-1)
			rt.put(w, b, rg)
		case b, ok := <-evs:
			if !ok {
				evs = nil
				continue
			}
			w.queued.Add(-1)
			if et.tw == nil && w.Err() == nil {
				tw, err := NewTableWriter(w.dir, EventsTable, EventsSchema(), w.cfg)
				if err != nil && w.cfg.OnError != nil {
					w.cfg.OnError(err)
				}
				w.setErr(err)
				et.tw = tw
			}
			et.put(w, b, rg)
		case now := <-tickC:
			rt.tick(w, now, period)
			if et.tw != nil {
				et.tick(w, now, period)
			}
		}
	}
	// Drained: complete the files, whatever happened before.
	w.setErr(rt.flush())
	w.setErr(recs.Close())
	rt.settleCounts()
	if et.tw != nil {
		w.setErr(et.flush())
		w.setErr(et.tw.Close())
		et.settleCounts()
	}
	w.fileStats(recs, et.tw)
}
