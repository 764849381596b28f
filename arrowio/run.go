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

// Stats is a snapshot of a [RunWriter]'s counters. Dropped rows are rows
// handed over after the writer failed (a full disk), or rows of the file
// being written when it failed: they are missing from the files.
type Stats struct {
	RequestsWritten int64 // rows in the records table's files
	EventsWritten   int64 // rows in the events table's files
	RequestsDropped int64
	EventsDropped   int64
	// Files and Bytes count completed files of both tables.
	Files int64
	Bytes int64
	// UnknownErrorKinds counts rows whose ErrorKind was not a known
	// constant (written as "unknown").
	UnknownErrorKinds int64
}

// RunWriter writes a run's records and events tables. It is the engine's
// record sink, and has no queue of its own: WriteRequests and WriteEvents
// append the rows to the column builders on the caller's goroutine (the
// run's collector (package reprise), which is the one queue between the senders and the
// disk), encode a row group when one is full and complete a part when it
// is due. They are safe for concurrent use (a mutex orders them). A
// goroutine of the writer's own completes parts on time (PartInterval)
// when no rows arrive. Close completes every file.
//
// Files: dir/records/part-NNNNN.parquet (or dir/records.parquet with
// SingleFile), and dir/events/… once the first event batch arrives.
type RunWriter struct {
	dir string
	cfg Config

	mu     sync.Mutex // guards everything below but the counters
	closed bool
	recs   *TableWriter
	rb     *requestBuilder
	eb     *eventBuilder
	rt     *tableState[record.Request]
	et     *tableState[record.Event]
	period time.Duration // of the part ticker, 0 without
	stop   chan struct{} // closes the part ticker
	done   chan struct{} // closed when the part ticker is gone

	err atomic.Pointer[error] // first error

	reqWritten, evWritten  atomic.Int64
	reqDropped, evDropped  atomic.Int64
	files, bytes, unknowns atomic.Int64
}

// NewRunWriter validates cfg, creates dir and the records table and, when
// parts are completed on time, starts the part ticker. The events table
// is created on the first WriteEvents call.
func NewRunWriter(dir string, cfg Config) (*RunWriter, error) {
	if err := cfg.Validate(); err != nil {
		return nil, err
	}
	cfg = cfg.withDefaults()
	recs, err := NewTableWriter(dir, RecordsTable, RecordsSchema(), cfg)
	if err != nil {
		return nil, err
	}
	mem := bufferPool
	w := &RunWriter{dir: dir, cfg: cfg, recs: recs, rb: newRequestBuilder(mem), eb: newEventBuilder(mem),
		stop: make(chan struct{}), done: make(chan struct{})}
	w.rt = &tableState[record.Request]{tw: recs, rows: func() int { return w.rb.rows }, reserve: w.rb.reserve,
		add: w.rb.appendRequest, written: &w.reqWritten, dropped: &w.reqDropped}
	w.et = &tableState[record.Event]{rows: func() int { return w.eb.rows }, reserve: w.eb.reserve,
		add: w.eb.appendEvent, written: &w.evWritten, dropped: &w.evDropped}
	w.rt.flush = func() error {
		defer w.fileStats()
		if w.rb.rows == 0 {
			return nil
		}
		rec := w.rb.newRecord()
		defer rec.Release()
		w.unknowns.Store(w.rb.unknownKinds)
		return recs.Write(rec)
	}
	w.et.flush = func() error {
		defer w.fileStats()
		if w.eb.rows == 0 {
			return nil
		}
		rec := w.eb.newRecord()
		defer rec.Release()
		return w.et.tw.Write(rec)
	}
	if cfg.PartInterval > 0 && recs.splits() {
		// Check ten times per interval and complete a part at the last
		// check before its first row is PartInterval old: parts are
		// completed between 0.9 and 1 interval after their first row.
		w.period = max(cfg.PartInterval/10, time.Millisecond)
		go w.ticker()
	} else {
		close(w.done)
	}
	return w, nil
}

// Dir returns the run directory.
func (w *RunWriter) Dir() string { return w.dir }

// WriteRequests appends batch to the records table; the caller keeps
// batch (the rows are copied into the column builders). It returns the
// writer's first error, if any (the rows are then dropped and counted),
// or ErrClosed after Close. It allocates nothing unless it completes a
// row group or a part (TestWriteRequestsAllocs).
func (w *RunWriter) WriteRequests(batch []record.Request) error {
	if len(batch) == 0 {
		return w.Err()
	}
	w.mu.Lock()
	defer w.mu.Unlock()
	if w.closed {
		return ErrClosed
	}
	w.rt.put(w, batch, w.cfg.RowGroupRows)
	return w.Err()
}

// WriteEvents appends batch to the events table, like WriteRequests. The
// first call creates the table.
func (w *RunWriter) WriteEvents(batch []record.Event) error {
	if len(batch) == 0 {
		return w.Err()
	}
	w.mu.Lock()
	defer w.mu.Unlock()
	if w.closed {
		return ErrClosed
	}
	if w.et.tw == nil && w.Err() == nil {
		tw, err := NewTableWriter(w.dir, EventsTable, EventsSchema(), w.cfg)
		if err != nil && w.cfg.OnError != nil {
			w.cfg.OnError(err)
		}
		w.setErr(err)
		w.et.tw = tw
	}
	w.et.put(w, batch, w.cfg.RowGroupRows)
	return w.Err()
}

// Err returns the first error the writer hit (disk full, …), or nil.
// After an error the writer discards further rows (counted as dropped).
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

// Dropped returns the number of rows (requests plus events) missing from
// the files because the writer had failed.
func (w *RunWriter) Dropped() int64 { return w.reqDropped.Load() + w.evDropped.Load() }

// Stats returns a snapshot of the counters. Safe for concurrent use.
func (w *RunWriter) Stats() Stats {
	return Stats{
		RequestsWritten: w.reqWritten.Load(), EventsWritten: w.evWritten.Load(),
		RequestsDropped: w.reqDropped.Load(), EventsDropped: w.evDropped.Load(),
		Files: w.files.Load(), Bytes: w.bytes.Load(), UnknownErrorKinds: w.unknowns.Load(),
	}
}

// Close stops accepting rows, writes what the builders hold, completes all
// files and returns the first error. Safe to call more than once.
func (w *RunWriter) Close() error {
	w.mu.Lock()
	if w.closed {
		w.mu.Unlock()
		return w.Err()
	}
	w.closed = true
	w.mu.Unlock()
	close(w.stop)
	<-w.done
	w.mu.Lock()
	defer w.mu.Unlock()
	// Complete the files, whatever happened before.
	w.setErr(w.rt.flush())
	w.setErr(w.recs.Close())
	w.rt.settleCounts()
	if w.et.tw != nil {
		w.setErr(w.et.flush())
		w.setErr(w.et.tw.Close())
		w.et.settleCounts()
	}
	w.fileStats()
	w.rb.release()
	w.eb.release()
	return w.Err()
}

// ticker completes parts on time while rows are not arriving.
func (w *RunWriter) ticker() {
	defer close(w.done)
	tk := time.NewTicker(w.period)
	defer tk.Stop()
	for {
		select {
		case <-w.stop:
			return
		case now := <-tk.C:
			w.mu.Lock()
			w.rt.tick(w, now, w.period)
			if w.et.tw != nil {
				w.et.tick(w, now, w.period)
			}
			w.mu.Unlock()
		}
	}
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

func (w *RunWriter) fileStats() {
	var files, bytes int64
	for _, t := range []*TableWriter{w.recs, w.et.tw} {
		if t != nil {
			files += int64(t.stats.Files)
			bytes += t.stats.Bytes
		}
	}
	w.files.Store(files)
	w.bytes.Store(bytes)
}
