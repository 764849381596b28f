package replay

import (
	"math/bits"
	"sync/atomic"
)

// Hot path: TestDispatchAllocs covers push and pop.

// ring is a bounded lock-free multi-producer multi-consumer queue of T
// (Dmitry Vyukov's bounded MPMC queue): each cell carries a sequence number
// that tells producers and consumers whose turn it is, so push and pop are
// one CAS each and never block. The replay uses it for continuations
// posted by senders to the dispatcher (idle senders are on an idleStack).
// The zero value is not usable; see newRing.
type ring[T any] struct {
	_     [64]byte // keep the hot indices off the neighbours' cache lines
	head  atomic.Uint64
	_     [56]byte
	tail  atomic.Uint64
	_     [56]byte
	mask  uint64
	cells []ringCell[T]
}

type ringCell[T any] struct {
	seq atomic.Uint64
	val T
}

// newRing returns a ring holding at least n values (rounded up to a power
// of two).
func newRing[T any](n int) *ring[T] {
	size := uint64(1)
	if n > 1 {
		size = 1 << bits.Len64(uint64(n-1))
	}
	r := &ring[T]{mask: size - 1, cells: make([]ringCell[T], size)}
	for i := range r.cells {
		r.cells[i].seq.Store(uint64(i))
	}
	return r
}

// push appends v; it reports false when the ring is full.
func (r *ring[T]) push(v T) bool {
	pos := r.tail.Load()
	for {
		c := &r.cells[pos&r.mask]
		seq := c.seq.Load()
		switch dif := int64(seq) - int64(pos); {
		case dif == 0:
			if r.tail.CompareAndSwap(pos, pos+1) {
				c.val = v
				c.seq.Store(pos + 1)
				return true
			}
			pos = r.tail.Load()
		case dif < 0:
			return false
		default:
			pos = r.tail.Load()
		}
	}
}

// pop removes the oldest value; it reports false when the ring is empty.
func (r *ring[T]) pop() (T, bool) {
	pos := r.head.Load()
	for {
		c := &r.cells[pos&r.mask]
		seq := c.seq.Load()
		switch dif := int64(seq) - int64(pos+1); {
		case dif == 0:
			if r.head.CompareAndSwap(pos, pos+1) {
				v := c.val
				c.seq.Store(pos + r.mask + 1)
				return v, true
			}
			pos = r.head.Load()
		case dif < 0:
			var zero T
			return zero, false
		default:
			pos = r.head.Load()
		}
	}
}

// idleStack is the idle-sender list: a lock-free stack of sender ids
// (Treiber's), pushed by any goroutine (a sender going idle, the
// dispatcher giving one back) and popped only by the dispatcher. Last in,
// first out: the sender freed most recently runs the next job, so a run
// touches only as many senders — their stacks, read buffers and adapter
// instances — as it keeps busy at once, and those stay warm in the caches;
// a FIFO hands out every sender in turn (1,024 by default). With a single
// popper a pop's compare-and-swap cannot suffer ABA: only pushes can move
// the head meanwhile, and they make it fail. The zero value is not usable;
// see newIdleStack.
type idleStack struct {
	_    [64]byte // keep the head off the neighbours' cache lines
	head atomic.Int64
	_    [56]byte
	next []atomic.Int32 // next[id] is the id+1 below id; 0 = bottom
}

// newIdleStack returns an empty stack for ids 0 … n−1.
func newIdleStack(n int) *idleStack { return &idleStack{next: make([]atomic.Int32, n)} }

// push puts id on top. id must not be in the stack.
func (s *idleStack) push(id int32) {
	for {
		h := s.head.Load()
		s.next[id].Store(int32(h))
		if s.head.CompareAndSwap(h, int64(id)+1) {
			return
		}
	}
}

// pop removes the top id; false when the stack is empty. Only one
// goroutine may pop.
func (s *idleStack) pop() (int32, bool) {
	for {
		h := s.head.Load()
		if h == 0 {
			return -1, false
		}
		id := int32(h - 1)
		if s.head.CompareAndSwap(h, int64(s.next[id].Load())) {
			return id, true
		}
	}
}
