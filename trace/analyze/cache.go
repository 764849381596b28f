package analyze

import "fmt"

// InfiniteCapacity is the capacity of a [PrefixCache] that never evicts:
// the infinite-cache ceiling (token_hit_ratio in docs/format/analyze-json.md).
const InfiniteCapacity int64 = -1

// PrefixCache models an ideal prefix cache of hash-id blocks, one request
// at a time, with the semantics of docs/format/analyze-json.md (`cache`):
//
//   - a request's hit is the leading run of its ids present in the cache
//     (it stops at the first missing block, even if later ones are cached);
//   - cached tokens = min(run·blockSize, inputTokens);
//   - capacity is ⌊capacityTokens/blockSize⌋ whole block slots (a partial
//     block occupies a full slot), least recently used evicted first;
//   - after the lookup every id of the request is touched in prompt order
//     (promoted if present, inserted if absent).
//
// Call [PrefixCache.Access] per request in arrival order, or
// [PrefixCache.Lookup] then [PrefixCache.Insert] when the insert must
// wait (for example until the server has actually prefilled the request).
//
// Memory is bounded by the capacity (evicted ids are forgotten); the
// infinite cache keeps every id seen. Lookup never allocates, and Access or
// Insert do not once a finite cache is full (TestPrefixCacheAllocs). A
// PrefixCache is not safe for concurrent use. The zero value is not usable:
// use [NewPrefixCache].
type PrefixCache struct {
	blockSize int
	slots     int // -1: infinite
	index     map[uint64]int32

	// Slot storage of the finite cache: an LRU list over slot numbers.
	key        []uint64
	prev, next []int32
	head, tail int32
}

// NewPrefixCache returns an empty cache of capacityTokens tokens for
// blocks of blockSize tokens. capacityTokens = [InfiniteCapacity] (any
// negative value) never evicts; 0 caches nothing. It panics if blockSize
// is not positive (a programmer error: trace rows always carry one).
func NewPrefixCache(blockSize int, capacityTokens int64) *PrefixCache {
	if blockSize <= 0 {
		panic(fmt.Sprintf("BUG: analyze.NewPrefixCache: block size %d", blockSize))
	}
	c := &PrefixCache{blockSize: blockSize, slots: -1, index: make(map[uint64]int32), head: -1, tail: -1}
	if capacityTokens >= 0 {
		c.slots = int(capacityTokens / int64(blockSize))
	}
	return c
}

// BlockSize returns the tokens per block.
func (c *PrefixCache) BlockSize() int { return c.blockSize }

// Slots returns the capacity in blocks, or -1 for an infinite cache.
func (c *PrefixCache) Slots() int { return c.slots }

// Len returns the number of blocks currently cached.
func (c *PrefixCache) Len() int { return len(c.index) }

// Lookup returns the tokens of a request with these ids and inputTokens
// prompt tokens that the cache holds now: min(m·blockSize, inputTokens)
// where m is the length of the leading run of ids present. It does not
// change the cache and does not allocate. ids is not retained.
func (c *PrefixCache) Lookup(ids []uint64, inputTokens int) (cachedTokens int) {
	m := c.run(ids)
	return min(m*c.blockSize, max(inputTokens, 0))
}

// LookupBlocks returns the leading-run length m in blocks (see Lookup).
func (c *PrefixCache) LookupBlocks(ids []uint64) int { return c.run(ids) }

func (c *PrefixCache) run(ids []uint64) int {
	for j, id := range ids {
		if _, ok := c.index[id]; !ok {
			return j
		}
	}
	return len(ids)
}

// Insert touches every id in order: promotes it to most recently used if
// cached, else inserts it, evicting the least recently used block when
// full. ids is not retained.
func (c *PrefixCache) Insert(ids []uint64) {
	for _, id := range ids {
		c.touch(id)
	}
}

// Access is Lookup followed by Insert: the cached tokens the request
// finds, then the cache state after it has been served.
func (c *PrefixCache) Access(ids []uint64, inputTokens int) (cachedTokens int) {
	n := c.Lookup(ids, inputTokens)
	c.Insert(ids)
	return n
}

func (c *PrefixCache) touch(id uint64) {
	if c.slots < 0 {
		c.index[id] = 0
		return
	}
	if s, ok := c.index[id]; ok {
		if c.head != s {
			c.unlink(s)
			c.pushFront(s)
		}
		return
	}
	if c.slots == 0 {
		return
	}
	var s int32
	if len(c.key) < c.slots {
		s = int32(len(c.key))
		c.key = append(c.key, id)
		c.prev = append(c.prev, -1)
		c.next = append(c.next, -1)
	} else {
		s = c.tail
		c.unlink(s)
		delete(c.index, c.key[s])
		c.key[s] = id
	}
	c.index[id] = s
	c.pushFront(s)
}

func (c *PrefixCache) unlink(s int32) {
	p, n := c.prev[s], c.next[s]
	if p >= 0 {
		c.next[p] = n
	} else {
		c.head = n
	}
	if n >= 0 {
		c.prev[n] = p
	} else {
		c.tail = p
	}
	c.prev[s], c.next[s] = -1, -1
}

func (c *PrefixCache) pushFront(s int32) {
	c.prev[s] = -1
	c.next[s] = c.head
	if c.head >= 0 {
		c.prev[c.head] = s
	}
	c.head = s
	if c.tail < 0 {
		c.tail = s
	}
}
