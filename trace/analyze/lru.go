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

// grow makes block numbers < n valid.
func (l *lru) grow(n int) {
	for len(l.in) < n {
		l.prev = append(l.prev, -1)
		l.next = append(l.next, -1)
		l.in = append(l.in, false)
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
