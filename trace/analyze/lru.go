// Hot path: lruStack.rank and lruStack.touchAll run once per hash id of
// every row; see TestAddAllocs and BenchmarkAnalyzeMooncake.

package analyze

import (
	"math/bits"
	"slices"
)

// lruStack simulates LRU caches of every capacity at once over dense block
// numbers (0, 1, 2, ...), with Mattson's stack algorithm.
//
// LRU is a stack algorithm: a cache of s slots holds exactly the s most
// recently used distinct blocks, so block b is in it iff b's recency rank
// (its stack distance: the number of distinct blocks used since b was last
// used) is below s. lruStack computes that rank; nothing moves when a block
// is used, whatever the number of capacities.
//
// Every use of a block gets the next time t (0, 1, 2, ...); last[b] is the
// time of b's last use and bit t of the bitmap is set iff t is some block's
// last use. The rank of b is then the number of set bits after last[b]:
// live − (set bits ≤ last[b]). Using b clears its old bit and sets the new
// one. The bits up to a word are counted by popcount within the word and a
// Fenwick tree over the completed 64-bit words for the words before it, so
// a rank costs O(log(words)) and a use O(1) plus O(log(words)) when the
// cleared bit lies in a completed word.
//
// Two facts make the common case cheaper than that. The blocks of a shared
// prefix were usually last used together, by one earlier row, so their old
// times are neighbours, often consecutive: a block whose old time follows
// the previous block's has rank one less, with nothing read
// (leadingRuns); otherwise rank keeps the word count of the last word it
// looked at (rankCache) and moves by one word with a popcount; and
// touchAll gathers the bits it clears in one word, and those it sets in
// the current one, in masks (one write and one tree update per word, not
// per block). New blocks only set a bit at the end: the tree node of a
// word is computed once, when the word is complete, from its popcount and
// the nodes below it.
//
// Times grow with the number of uses, not of blocks: when the bitmap is
// full and under half of its times are live, the live times are renumbered
// 0..live−1 in order (compact), which costs O(blocks) every ≥ 2·blocks uses
// and keeps the bitmap at most 4 bits per distinct block; when more are
// live (a trace of mostly new blocks), the bitmap doubles instead. No block is ever evicted (ranks beyond the largest
// capacity are simply not in any cache), so live is the number of distinct
// blocks seen.
//
// Memory: 4 bytes per distinct block ever seen plus the bitmap and the tree
// (under one byte per block), whatever the number of capacities.
type lruStack struct {
	slots []int         // ascending, all > 0
	last  paged[uint32] // indexed by block number: time of its last use
	bits  []uint64      // bit t set: t is some block's last use
	tree  []int32       // Fenwick tree over words (1-based), valid up to done
	done  int           // completed words: all words before cur's
	cur   int           // the next time
	live  int           // blocks with a time (set bits)
	pre   []int32       // compact's scratch: set bits before each word
}

// rankCache remembers, during the lookups of one row (when nothing
// changes), the number of set bits before word w.
type rankCache struct {
	w, n int
}

func newLRUStack(slots []int) *lruStack {
	return &lruStack{slots: slots}
}

// grow makes block numbers < n valid.
func (l *lruStack) grow(n int) { l.last.grow(n) }

// rank returns the recency rank of block b (0 = the most recently used),
// which must have been used. c holds the state of earlier calls for the
// same row; start each row with rankCache{w: -1}.
func (l *lruStack) rank(b int32, c *rankCache) int { return l.rankAt(int(*l.last.at(b)), c) }

// rankAt is rank for the block whose last use is time x.
func (l *lruStack) rankAt(x int, c *rankCache) int {
	w := x >> 6
	switch {
	case w == c.w:
	case w == c.w+1 && c.w >= 0:
		c.n += bits.OnesCount64(l.bits[c.w])
		c.w = w
	case w == c.w-1 && c.w >= 0:
		c.n -= bits.OnesCount64(l.bits[w])
		c.w = w
	default:
		// Words before w are complete (w ≤ cur's word).
		n := 0
		for i := w; i > 0; i &= i - 1 {
			n += int(l.tree[i])
		}
		c.w, c.n = w, n
	}
	upTo := c.n + bits.OnesCount64(l.bits[w]&(uint64(2)<<(x&63)-1))
	return l.live - upTo
}

// leadingRuns sets runs[i], for each capacity slots[i], to the number of
// leading blocks of idx (all used before) that a cache of slots[i] blocks
// holds: the index of the first block of rank ≥ slots[i], or len(idx).
// Nothing changes during the lookups of a row, so ranks are those before
// it.
//
// A block whose last use directly follows the previous block's (time x =
// x′+1, as when one earlier row used a shared prefix) has rank one less:
// bit x is set and no other bit lies between them, so no bitmap word is
// read for it.
func (l *lruStack) leadingRuns(idx []int32, runs []int) {
	K := len(l.slots)
	cur := 0
	rc := rankCache{w: -1}
	prev, r := -2, 0
	for j, b := range idx {
		x := int(*l.last.at(b))
		if x == prev+1 {
			r--
		} else {
			r = l.rankAt(x, &rc)
		}
		prev = x
		for ; cur < K && r >= l.slots[cur]; cur++ {
			runs[cur] = j
		}
		if cur == K {
			return
		}
	}
	for ; cur < K; cur++ {
		runs[cur] = len(idx)
	}
}

// reserve makes room for n more uses; call it before a row's touches.
// When at least half of the times are still some block's last use, the
// bitmap and the tree grow (doubling: the tree nodes of complete words do
// not depend on the length); otherwise the times are renumbered (compact).
func (l *lruStack) reserve(n int) {
	if l.cur+n <= len(l.bits)*64 {
		return
	}
	if 2*l.live >= l.cur {
		words := max(2*len(l.bits), (l.cur+n+63)/64, 64)
		l.bits = append(l.bits, make([]uint64, words-len(l.bits))...)
		l.tree = append(l.tree, make([]int32, words+1-len(l.tree))...)
		return
	}
	l.compact(n)
}

// touchAll uses the blocks of a row in order: each becomes the most
// recently used. A block is new when it has never been used: then it must
// equal live (blocks are numbered in order of first use).
//
// The bits a row clears in one completed word, and those it sets in the
// current word, are gathered in a mask and written once (a row's blocks
// were mostly last used together, so their old times share a word): one
// read-modify-write and one tree update per word, not per block. A time in
// the current word that this row set is still in the mask, so a block used
// twice in a row clears its bit there.
func (l *lruStack) touchAll(idx []int32) {
	l.reserve(len(idx))
	t := l.cur
	sw, sm := t>>6, uint64(0) // the current word and the bits set in it
	cw, cm := -1, uint64(0)   // a completed word and the bits cleared in it
	for _, b := range idx {
		p := l.last.at(b)
		if int(b) < l.live {
			x := int(*p)
			w, bit := x>>6, uint64(1)<<(x&63)
			switch {
			case w == cw:
				cm |= bit
			case w == sw:
				l.bits[w] &^= bit
				sm &^= bit
			default:
				l.clearBits(cw, cm)
				cw, cm = w, bit
			}
		} else {
			l.live++
		}
		sm |= uint64(1) << (t & 63)
		*p = uint32(t)
		t++
		if t&63 == 0 {
			// The word is full: the tree node of a word counts the words
			// below it, which must be up to date first.
			l.bits[sw] |= sm
			l.clearBits(cw, cm)
			cw, cm, sm = -1, 0, 0
			l.complete()
			sw++
		}
	}
	if sm != 0 {
		l.bits[sw] |= sm
	}
	l.clearBits(cw, cm)
	l.cur = t
}

// clearBits clears the bits m of the completed word w (none when w < 0)
// and takes them from the tree.
func (l *lruStack) clearBits(w int, m uint64) {
	if w < 0 {
		return
	}
	l.bits[w] &^= m
	d := int32(bits.OnesCount64(m))
	for i := w + 1; i <= l.done; i += i & -i {
		l.tree[i] -= d
	}
}

// complete adds the word just filled (done) to the tree: its node covers
// words (i−lowbit(i), i], which are its own and those of its children
// i−1, i−2, i−4, … (i−2^j for 2^j < lowbit(i)).
func (l *lruStack) complete() {
	w := l.done
	i := w + 1
	n := int32(bits.OnesCount64(l.bits[w]))
	for j := 1; j < i&-i; j <<= 1 {
		n += l.tree[i-j]
	}
	l.tree[i] = n
	l.done++
}

// compact renumbers the live times 0..live−1 in order and sizes the bitmap
// for 2·(live+n) more uses at least.
func (l *lruStack) compact(n int) {
	words := len(l.bits)
	l.pre = growTo(l.pre[:0], words+1)
	c := int32(0)
	for w := range words {
		l.pre[w] = c
		c += int32(bits.OnesCount64(l.bits[w]))
	}
	rest := l.live
	for pg := range l.last.chunks {
		pg = pg[:min(len(pg), rest)]
		for i, x := range pg {
			w := x >> 6
			pg[i] = uint32(l.pre[w]) + uint32(bits.OnesCount64(l.bits[w]&(uint64(1)<<(x&63)-1)))
		}
		if rest -= len(pg); rest == 0 {
			break
		}
	}
	need := max((4*(l.live+n)+63)/64, 64)
	if need > len(l.bits) {
		l.bits = make([]uint64, need)
		l.tree = make([]int32, need+1)
	} else {
		clear(l.bits)
	}
	full := l.live >> 6
	for w := range full {
		l.bits[w] = ^uint64(0)
	}
	if r := l.live & 63; r > 0 {
		l.bits[full] = uint64(1)<<r - 1
	}
	l.cur = l.live
	l.done = 0
	for range full {
		l.complete()
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

// verify panics if the bitmap, the tree or a block's time is
// inconsistent. It is O(blocks + words): called only under -tags
// invariants, and by tests.
func (l *lruStack) verify() {
	set := 0
	for _, w := range l.bits {
		set += bits.OnesCount64(w)
	}
	if set != l.live || l.cur > len(l.bits)*64 || l.done != l.cur>>6 {
		panic("BUG: lruStack: live, cur or done inconsistent with the bitmap")
	}
	seen := make(map[uint32]bool, l.live)
	for b := range l.live {
		t := *l.last.at(int32(b))
		if int(t) >= l.cur || l.bits[t>>6]&(1<<(t&63)) == 0 || seen[t] {
			panic("BUG: lruStack: a block's last use is not a set bit of its own")
		}
		seen[t] = true
	}
	for i := 1; i <= l.done; i++ {
		var n int32
		for w := i - i&-i; w < i; w++ {
			n += int32(bits.OnesCount64(l.bits[w]))
		}
		if l.tree[i] != n {
			panic("BUG: lruStack: Fenwick node does not count its words")
		}
	}
}
