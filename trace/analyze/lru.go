// Hot path: multiLRU.touch runs once per hash id of every row; see
// TestAddAllocs and BenchmarkAnalyzeMooncake.

package analyze

import "slices"

// multiLRU simulates LRU caches of several capacities at once over dense
// block numbers (0, 1, 2, ...).
//
// LRU is a stack algorithm: a cache of s slots holds exactly the s most
// recently used distinct blocks, so every capacity is a prefix of ONE
// recency list. multiLRU keeps that list (an intrusive doubly linked list
// threaded through arrays indexed by block number, head = most recent) up
// to the largest capacity, and for every capacity i a boundary bnd[i]: the
// block at rank slots[i]−1, the last one inside cache i. zone[b] is the
// number of caches b is NOT in (ranks at or beyond their slot count), so b
// is in cache i iff zone[b] ≤ i; zone K = not in the list at all.
//
// Touching b moves it to the head. Every block in front of it shifts back by
// one rank, so for each cache b was not in, that cache's boundary block
// crosses out (its zone grows by one) and the boundary moves to its
// predecessor; for a cache b was in, nothing crosses, but if b was the
// boundary the boundary becomes b's predecessor. Blocks beyond the largest
// capacity are dropped. Each touch is O(K) with K small (the number of
// capacities), and one list update instead of K.
//
// The links and the zone of a block sit together in one lruNode, so a touch
// costs one cache line per block it visits, not three.
//
// Memory: 12 bytes per distinct block ever seen, whatever the capacities.
type multiLRU struct {
	slots      []int // ascending, all > 0
	bnd        []int32
	nodes      paged[lruNode] // indexed by block number
	head, tail int32
	size       int
}

// lruNode is one block's place in the recency list.
type lruNode struct {
	prev, next int32
	zone       uint8
}

// absent is the zone of a block that is in no cache.
func (l *multiLRU) absent() uint8 { return uint8(len(l.slots)) }

func newMultiLRU(slots []int) *multiLRU {
	if len(slots) > 255 {
		panic("BUG: multiLRU supports at most 255 capacities")
	}
	l := &multiLRU{slots: slots, bnd: make([]int32, len(slots)), head: -1, tail: -1}
	for i := range l.bnd {
		l.bnd[i] = -1
	}
	return l
}

// grow makes block numbers < n valid; new blocks are absent.
func (l *multiLRU) grow(n int) {
	l.nodes.growFilled(n, lruNode{zone: l.absent()})
}

// touch makes b the most recently used block.
func (l *multiLRU) touch(b int32) {
	k := len(l.slots)
	if k == 0 || l.head == b {
		return
	}
	nb := l.nodes.at(b)
	zb := int(nb.zone)
	present := zb < k
	bnd := l.bnd[:k]
	// Caches b is in: if b is their boundary, its predecessor takes over
	// (b is not the head, so it has one).
	for i := zb; i < k; i++ {
		if bnd[i] == b {
			bnd[i] = nb.prev
		}
	}
	// Caches b is not in: their boundary block crosses out. A boundary at
	// the head (one-slot cache) is replaced by b itself below.
	for i := 0; i < zb; i++ {
		if x := bnd[i]; x >= 0 {
			nx := l.nodes.at(x)
			nx.zone++
			bnd[i] = nx.prev // -1 when x is the head: fixed after the push
		}
	}
	if present {
		l.unlink(b)
	} else {
		l.size++
	}
	l.pushFront(b)
	nb.zone = 0
	for i := 0; i < zb; i++ {
		if bnd[i] < 0 && l.size >= l.slots[i] {
			if l.slots[i] == 1 {
				bnd[i] = b
			} else {
				// The cache just became full: its last block is the tail.
				bnd[i] = l.tail
			}
		}
	}
	if l.size > l.slots[k-1] {
		t := l.tail
		l.unlink(t)
		l.nodes.at(t).zone = uint8(k)
		l.size--
	}
}

func (l *multiLRU) unlink(b int32) {
	nb := l.nodes.at(b)
	p, n := nb.prev, nb.next
	if p >= 0 {
		l.nodes.at(p).next = n
	} else {
		l.head = n
	}
	if n >= 0 {
		l.nodes.at(n).prev = p
	} else {
		l.tail = p
	}
}

func (l *multiLRU) pushFront(b int32) {
	nb := l.nodes.at(b)
	nb.prev = -1
	nb.next = l.head
	if l.head >= 0 {
		l.nodes.at(l.head).prev = b
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
	// append(x, make(...)...) clears only the new tail, not the copy.
	return append(s[:cap(s)], make([]T, max(2*cap(s), n, 1024)-cap(s))...)[:n]
}

// sortedSlots returns the distinct positive slot counts in ascending order.
func sortedSlots(s []int) []int {
	out := make([]int, 0, len(s))
	for _, v := range s {
		if v > 0 {
			out = append(out, v)
		}
	}
	slices.Sort(out)
	return slices.Compact(out)
}

// check walks the whole list and panics if a link, a zone or a boundary is
// inconsistent. It is O(size): called only under -tags invariants.
func (l *multiLRU) check() {
	k := len(l.slots)
	rank := 0
	prev := int32(-1)
	for b := l.head; b >= 0; b = l.nodes.at(b).next {
		if l.nodes.at(b).prev != prev {
			panic("BUG: multiLRU: broken prev link")
		}
		z := 0
		for _, s := range l.slots {
			if rank >= s {
				z++
			}
		}
		if int(l.nodes.at(b).zone) != z {
			panic("BUG: multiLRU: zone does not match rank")
		}
		for i, s := range l.slots {
			if rank == s-1 && l.bnd[i] != b {
				panic("BUG: multiLRU: boundary is not the block at rank slots-1")
			}
		}
		prev = b
		rank++
	}
	if prev != l.tail || rank != l.size || (k > 0 && l.size > l.slots[k-1]) {
		panic("BUG: multiLRU: size or tail inconsistent")
	}
	for i, s := range l.slots {
		if l.size < s && l.bnd[i] != -1 {
			panic("BUG: multiLRU: boundary set for a cache that is not full")
		}
	}
}
