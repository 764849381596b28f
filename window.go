package reprise

import (
	"context"
	"github.com/reprise-bench/reprise/engine"
	"github.com/reprise-bench/reprise/trace"
	"sync"
	"sync/atomic"
	"time"
)

// window holds requests built ahead: slot i%size holds item i, as one
// Prepared per target (element k for target k; a target an item is not
// sent to has a zero Prepared).
type window struct {
	size     int64
	targets  int
	total    int64 // items that exist (-1 unbounded)
	maxBytes int64
	bytes    atomic.Int64 // body bytes held by built, untaken slots
	slots    []slot
	next     atomic.Int64 // next item a builder claims
	built    atomic.Int64 // items the builders finished
	high     atomic.Int64 // highest item taken + 1
	wake     chan struct{}
	quit     chan struct{}
	once     sync.Once
}

type slot struct {
	mu     sync.Mutex
	item   int64
	ready  bool
	inline bool // taken before it was built: builders skip it
	p      []engine.Prepared
}

// bodyBytes is the body bytes of an item's requests.
func bodyBytes(ps []engine.Prepared) int64 {
	var n int64
	for i := range ps {
		n += int64(len(ps[i].Body))
	}
	return n
}

func newWindow(size int, total int64, targets int) *window {
	w := &window{size: int64(size), total: total, targets: max(targets, 1), slots: make([]slot, size), wake: make(chan struct{}, 1), quit: make(chan struct{})}
	for i := range w.slots {
		w.slots[i].item = -1
	}
	return w
}

func (w *window) close() { w.once.Do(func() { close(w.quit) }) }

// rowPins gives builders the rows they build (see runner.pin).
type rowPins interface {
	pin(item int64) (*trace.Row, bool)
	unpin(item int64)
}

// builderLoop claims items in order and builds them, staying at most
// size items ahead of the highest item taken. It pins each item's row
// before taking the item's slot lock, so that it never waits for a
// streamed trace's reader while holding the lock a sender needs.
func (w *window) builderLoop(quit <-chan struct{}, rows rowPins, build func(int64, *trace.Row, []engine.Prepared)) {
	// One timer for all the waits (a time.After per wait allocated a
	// timer per request sent).
	poll := time.NewTimer(time.Hour)
	defer poll.Stop()
	for {
		i := w.next.Add(1) - 1
		if w.total >= 0 && i >= w.total {
			return
		}
		// Stay within size items and maxBytes of bodies ahead; the next
		// item to send (i == high) is always built.
		for i >= w.high.Load()+w.size || (i > w.high.Load() && w.bytes.Load() > w.maxBytes) {
			poll.Reset(10 * time.Millisecond)
			select {
			case <-w.wake:
			case <-quit:
				return
			case <-w.quit:
				return
			case <-poll.C:
			}
		}
		row, ok := rows.pin(i)
		if !ok {
			w.built.Add(1) // settled: prefill counts it
			continue
		}
		sl := &w.slots[i%w.size]
		sl.mu.Lock()
		if sl.item == i && sl.inline {
			sl.mu.Unlock()
			rows.unpin(i)
			continue
		}
		p := make([]engine.Prepared, w.targets)
		build(i, row, p)
		if sl.ready && sl.p != nil { // evict an item that was never taken
			w.bytes.Add(-bodyBytes(sl.p))
		}
		sl.item, sl.ready, sl.inline, sl.p = i, true, false, p
		w.bytes.Add(bodyBytes(p))
		sl.mu.Unlock()
		rows.unpin(i)
		w.built.Add(1)
	}
}

// prefill waits until the builders have filled the lookahead — size items
// from first, the items that exist, or maxBytes of bodies — or for at
// most max, or until ctx is done, and returns how many it built. A run
// calls it before its time zero, so that its first requests are not built
// on the send path: the first seconds of a trace are often dense, and at
// a high --speedup the whole lookahead can fall due at once.
func (w *window) prefill(ctx context.Context, first int64, max time.Duration) int64 {
	want := w.size
	if w.total >= 0 {
		want = min(want, w.total-first)
	}
	deadline := time.Now().Add(max)
	for w.built.Load() < want && w.bytes.Load() < w.maxBytes && ctx.Err() == nil && time.Now().Before(deadline) {
		time.Sleep(time.Millisecond)
	}
	return w.built.Load()
}

// take returns the prebuilt requests for item, one per target, or nil
// when they are not built (the caller builds them inline).
func (w *window) take(item int64) []engine.Prepared {
	if item < 0 {
		return nil
	}
	sl := &w.slots[item%w.size]
	sl.mu.Lock()
	var p []engine.Prepared
	if sl.item == item && sl.ready {
		p = sl.p
		sl.p, sl.ready = nil, false
		w.bytes.Add(-bodyBytes(p))
	} else if sl.item < item {
		if sl.ready && sl.p != nil {
			w.bytes.Add(-bodyBytes(sl.p))
		}
		sl.item, sl.ready, sl.inline, sl.p = item, false, true, nil
	}
	sl.mu.Unlock()
	for {
		h := w.high.Load()
		if item+1 <= h || w.high.CompareAndSwap(h, item+1) {
			break
		}
	}
	select {
	case w.wake <- struct{}{}:
	default:
	}
	return p
}
