package trace

import (
	"errors"
	"fmt"
	"io"
	"slices"
	"sync"
	"sync/atomic"
	"time"
)

// DefaultWindowSize is the number of rows a [Window] holds when
// WindowConfig.Size is 0.
const DefaultWindowSize = 1 << 14

// WindowConfig configures a [Window].
type WindowConfig struct {
	// Open opens the trace from its beginning, with the Options of the
	// pass that validated it. It is called once per pass over the trace
	// (more than once only with Wrap).
	Open func() (*Reader, error)
	// First is the index of the window's first row among the rows the
	// Reader returns (the rows before it are read and dropped), Count the
	// number of rows from there. Both count rows as [ReadAll] indexes
	// them, which for a sorted trace is file order.
	First, Count int64
	// Wrap starts again from row First (re-opening the trace) after the
	// last row, for runs that go round a trace more than once.
	Wrap bool
	// Size is the number of rows held at once (0: DefaultWindowSize).
	Size int
}

// Window is a sliding window over the rows of a trace, read ahead in file
// order by one goroutine into a fixed ring of Size rows, so that a run can
// replay a trace without holding it. Rows are addressed by position: row
// positions start at First and count on across passes, so position p is
// row First + (p − First) mod Count of the trace (see [Window.Index]).
//
// A position's row is in the window from when the reader has read it
// until the position is released ([Window.Release]) and no pin
// ([Window.Pin]) holds it; then its slot takes the row Size positions
// later. The reader waits while every slot is held: positions that are
// never released stop it, so release every position a run uses (a run
// that stops early ends with [Window.Close]).
//
// The trace must not change while the window reads it: a read error, or
// a trace that ends before First+Count rows, stops the reader and is
// reported by [Window.Err]; the positions not read then return nil.
//
// A Window is safe for concurrent use. The reader starts at the first
// call of Row or Pin. [Window.Row] allocates nothing and takes no lock
// when the row is there.
type Window struct {
	cfg   WindowConfig
	slots []windowSlot

	start     sync.Once
	closeOnce sync.Once
	quit      chan struct{}
	done      chan struct{} // closed when the reader has ended (or never started)
	free      chan struct{} // a slot became free (1-buffered)
	read      atomic.Int64  // positions below read have been read
	ended     atomic.Bool   // the reader ended: end of trace, error or Close
	errMu     sync.Mutex
	err       error
}

type windowSlot struct {
	pos atomic.Int64 // position held; -1 none. Stored after row is written.

	mu       sync.Mutex // guards pins and released, and the reader's reuse
	pins     int32
	released bool
	row      Row
	ids      []uint64 // backing array of row.HashIDs, reused
	raw      []byte   // backing array of row.Raw, reused
}

// NewWindow returns a Window over the rows cfg describes. It does not
// read anything until the first Row or Pin.
func NewWindow(cfg WindowConfig) *Window {
	if cfg.Open == nil || cfg.First < 0 || cfg.Count <= 0 {
		panic("BUG: trace.NewWindow: want Open, First ≥ 0 and Count > 0")
	}
	if cfg.Size <= 0 {
		cfg.Size = DefaultWindowSize
	}
	w := &Window{cfg: cfg, slots: make([]windowSlot, cfg.Size),
		quit: make(chan struct{}), done: make(chan struct{}), free: make(chan struct{}, 1)}
	for i := range w.slots {
		w.slots[i].pos.Store(-1)
	}
	w.read.Store(cfg.First)
	return w
}

// Size returns the number of rows the window holds at once.
func (w *Window) Size() int { return len(w.slots) }

// Index returns the index of position p's row among the trace's rows (as
// [ReadAll] indexes them): First + (p − First) mod Count.
func (w *Window) Index(p int64) int64 {
	return w.cfg.First + (p-w.cfg.First)%w.cfg.Count
}

// inRange reports whether position p exists.
func (w *Window) inRange(p int64) bool {
	return p >= w.cfg.First && (w.cfg.Wrap || p < w.cfg.First+w.cfg.Count)
}

// Row returns position p's row, waiting for the reader if it has not read
// it yet. The caller must hold p: p is not released yet and the caller
// releases it (or holds a pin). The row and its slices are valid until p
// is released and unpinned; do not modify them. Row returns nil when p
// does not exist, was released and its slot reused, or cannot be read
// (see [Window.Err]). With the row there, Row allocates nothing and takes
// no lock.
func (w *Window) Row(p int64) *Row {
	if !w.inRange(p) {
		return nil
	}
	s := &w.slots[p%int64(len(w.slots))]
	if s.pos.Load() == p {
		return &s.row
	}
	if !w.wait(p) {
		return nil
	}
	return &s.row
}

// wait waits until position p is read into its slot: true when it is
// there, false when it will not be (reused, or the reader ended).
func (w *Window) wait(p int64) bool {
	w.start.Do(func() { go w.run() })
	s := &w.slots[p%int64(len(w.slots))]
	nap := 20 * time.Microsecond
	for {
		switch got := s.pos.Load(); {
		case got == p:
			return true
		case got > p:
			return false
		}
		if w.read.Load() > p || w.ended.Load() {
			return s.pos.Load() == p
		}
		// The reader runs ahead of every user, so this is rare: poll.
		time.Sleep(nap)
		nap = min(2*nap, time.Millisecond)
	}
}

// Pin returns position p's row and holds it in the window until Unpin(p),
// even if p is released meanwhile. It waits for the reader like Row. It
// returns nil (and holds nothing) when Row would, and when p was already
// released: a pin is for work that is only useful before p's release.
func (w *Window) Pin(p int64) *Row {
	if !w.inRange(p) || !w.wait(p) {
		return nil
	}
	s := &w.slots[p%int64(len(w.slots))]
	s.mu.Lock()
	defer s.mu.Unlock()
	if s.pos.Load() != p || s.released {
		return nil
	}
	s.pins++
	return &s.row
}

// Unpin drops a pin Pin(p) took.
func (w *Window) Unpin(p int64) {
	if p < 0 {
		return
	}
	s := &w.slots[p%int64(len(w.slots))]
	s.mu.Lock()
	if s.pos.Load() == p && s.pins > 0 {
		s.pins--
		if s.pins == 0 && s.released {
			w.notify()
		}
	}
	s.mu.Unlock()
}

// Release tells the window that position p's row is no longer needed
// (but by the holders of its pins): its slot can take a later row. It is
// idempotent and does nothing for a position the window does not hold.
// It never waits and allocates nothing.
func (w *Window) Release(p int64) {
	if p < 0 {
		return
	}
	s := &w.slots[p%int64(len(w.slots))]
	s.mu.Lock()
	if s.pos.Load() == p && !s.released {
		s.released = true
		if s.pins == 0 {
			w.notify()
		}
	}
	s.mu.Unlock()
}

func (w *Window) notify() {
	select {
	case w.free <- struct{}{}:
	default:
	}
}

// Err returns the error that stopped the reader (a read error, or a
// trace that changed since it was validated), or nil.
func (w *Window) Err() error {
	w.errMu.Lock()
	defer w.errMu.Unlock()
	return w.err
}

func (w *Window) fail(err error) {
	w.errMu.Lock()
	if w.err == nil {
		w.err = err
	}
	w.errMu.Unlock()
}

// Close stops the reader and closes the trace. Rows not read by then
// stay unread (Row returns nil for them). It is safe to call more than
// once and concurrently with the other methods.
func (w *Window) Close() error {
	w.closeOnce.Do(func() {
		w.start.Do(func() { w.ended.Store(true); close(w.done) }) // never started
		close(w.quit)
	})
	<-w.done
	return nil
}

// errChanged reports a trace that ended early on a later pass.
var errChanged = errors.New("the trace changed since it was validated")

// run is the reader goroutine.
func (w *Window) run() {
	defer close(w.done)
	defer w.ended.Store(true)
	pos := w.cfg.First
	last := w.cfg.First + w.cfg.Count
	var row Row
	for {
		r, err := w.cfg.Open()
		if err != nil {
			w.fail(fmt.Errorf("read the trace again: %w", err))
			return
		}
		r.quit = w.quit // Close stops the reader wherever it is
		idx := int64(0)
		for idx < last {
			err := r.Next(&row)
			if errors.Is(err, io.EOF) {
				break
			}
			if errors.Is(err, errWindowClosed) {
				r.Close()
				return
			}
			if err != nil {
				r.Close()
				w.fail(fmt.Errorf("read the trace again: %w: %w", errChanged, err))
				return
			}
			idx++
			if idx <= w.cfg.First {
				continue
			}
			if !w.put(pos, &row) {
				r.Close()
				return
			}
			pos++
		}
		r.Close()
		if idx < last {
			w.fail(fmt.Errorf("read the trace again: %w: it has %d rows, %d before", errChanged, idx, last))
			return
		}
		if !w.cfg.Wrap {
			return
		}
	}
}

// put copies row into position p's slot once the slot is free; false when
// the window was closed meanwhile.
func (w *Window) put(p int64, row *Row) bool {
	s := &w.slots[p%int64(len(w.slots))]
	var t *time.Timer
	for {
		s.mu.Lock()
		if s.pos.Load() < 0 || (s.released && s.pins == 0) {
			break // still locked
		}
		s.mu.Unlock()
		if t == nil {
			t = time.NewTimer(10 * time.Millisecond)
			defer t.Stop()
		} else {
			t.Reset(10 * time.Millisecond)
		}
		// A release notifies; the timer is a safety net.
		select {
		case <-w.free:
		case <-t.C:
		case <-w.quit:
			return false
		}
	}
	s.row = *row
	if row.HashIDs != nil {
		s.ids = append(s.ids[:0], row.HashIDs...)
		if s.ids == nil {
			s.ids = make([]uint64, 0, 8)
		}
		s.row.HashIDs = s.ids[:len(row.HashIDs):len(row.HashIDs)]
	}
	if row.WaitFor != nil {
		s.row.WaitFor = slices.Clone(row.WaitFor) // dependent rows are rare in a streamed trace
	}
	if row.Raw != nil {
		s.raw = append(s.raw[:0], row.Raw...)
		if s.raw == nil {
			s.raw = make([]byte, 0, 64)
		}
		s.row.Raw = s.raw[:len(row.Raw):len(row.Raw)]
	}
	s.pins, s.released = 0, false
	s.pos.Store(p)
	s.mu.Unlock()
	w.read.Store(p + 1)
	select {
	case <-w.quit:
		return false
	default:
		return true
	}
}

// First returns the position of the window's first row (WindowConfig.First).
func (w *Window) First() int64 { return w.cfg.First }
