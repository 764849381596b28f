package analyze

// lru is a least-recently-used set of dense block numbers (0, 1, 2, ...)
// with room for slots blocks: an intrusive doubly linked list threaded
// through arrays indexed by block number, so every operation is O(1) and
// allocation-free once the arrays cover the block numbers in use. The
// caller grows the arrays with grow as new block numbers appear.
//
// Memory: 9 bytes per distinct block ever seen, whatever the capacity.
type lru struct {
	slots      int
	size       int
	head, tail int32 // most and least recently used; -1 when empty
	prev, next []int32
	in         []bool
}

func newLRU(slots int) *lru {
	return &lru{slots: slots, head: -1, tail: -1}
}

// grow makes block numbers < n valid (prev and next of a block are only
// read while it is in the list, so new entries need no initialisation).
func (l *lru) grow(n int) {
	if d := n - len(l.in); d > 0 {
		l.prev = growTo(l.prev, n)
		l.next = growTo(l.next, n)
		l.in = growTo(l.in, n)
	}
}

// touch marks block b as most recently used, inserting it (and evicting
// the least recently used block when full) if absent.
func (l *lru) touch(b int32) {
	if l.in[b] {
		if l.head == b {
			return
		}
		l.unlink(b)
		l.pushFront(b)
		return
	}
	if l.slots <= 0 {
		return
	}
	if l.size == l.slots {
		t := l.tail
		l.unlink(t)
		l.in[t] = false
		l.size--
	}
	l.in[b] = true
	l.size++
	l.pushFront(b)
}

func (l *lru) unlink(b int32) {
	p, n := l.prev[b], l.next[b]
	if p >= 0 {
		l.next[p] = n
	} else {
		l.head = n
	}
	if n >= 0 {
		l.prev[n] = p
	} else {
		l.tail = p
	}
	l.prev[b], l.next[b] = -1, -1
}

func (l *lru) pushFront(b int32) {
	l.prev[b] = -1
	l.next[b] = l.head
	if l.head >= 0 {
		l.prev[l.head] = b
	}
	l.head = b
	if l.tail < 0 {
		l.tail = b
	}
}

// growTo returns s extended to length n (new elements zero), doubling the
// capacity when it must reallocate so that growing one block at a time
// copies each element O(1) times.
func growTo[T any](s []T, n int) []T {
	if n <= cap(s) {
		return s[:n]
	}
	t := make([]T, n, max(2*cap(s), n, 1024))
	copy(t, s)
	return t
}
