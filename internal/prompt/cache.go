package prompt

// blockKey identifies a cached block: an id and a size, so that a partial
// last block and a full block of the same id never alias (AIPerf keyed by
// id only and built prompts of the wrong length).
type blockKey struct {
	id   uint64
	size int32
}

// block is a run of words: text and, with FormatTokenIDs, their ids.
type block struct {
	key        blockKey
	text       string
	ids        []int32
	n          int32
	prev, next *block
}

func (b *block) tokens() int { return int(b.n) }

// blockOverhead approximates the bookkeeping bytes of one cached block
// (struct, map entry, headers).
const blockOverhead = 160

func (b *block) cost() int64 { return int64(len(b.text)) + 4*int64(cap(b.ids)) + blockOverhead }

// blockCache is an LRU of blocks bounded by bytes. Not safe for
// concurrent use.
type blockCache struct {
	limit      int64
	bytes      int64
	evictions  int64
	m          map[blockKey]*block
	head, tail *block // head = most recently used
}

func newBlockCache(limit int64) blockCache {
	return blockCache{limit: limit, m: make(map[blockKey]*block)}
}

func (c *blockCache) len() int { return len(c.m) }

func (c *blockCache) get(k blockKey) *block {
	b := c.m[k]
	if b != nil && c.head != b {
		c.unlink(b)
		c.pushFront(b)
	}
	return b
}

// put inserts b (whose key is not cached) and evicts least recently used
// blocks while over the limit (b itself stays, even if alone it exceeds
// the limit). An evicted block stays valid for a Build holding it; it is
// only dropped from the cache.
func (c *blockCache) put(b *block) {
	c.m[b.key] = b
	c.pushFront(b)
	c.bytes += b.cost()
	for c.bytes > c.limit && c.tail != nil && c.tail != b {
		v := c.tail
		c.unlink(v)
		delete(c.m, v.key)
		c.bytes -= v.cost()
		c.evictions++
	}
}

func (c *blockCache) unlink(b *block) {
	if b.prev != nil {
		b.prev.next = b.next
	} else {
		c.head = b.next
	}
	if b.next != nil {
		b.next.prev = b.prev
	} else {
		c.tail = b.prev
	}
	b.prev, b.next = nil, nil
}

func (c *blockCache) pushFront(b *block) {
	b.next = c.head
	if c.head != nil {
		c.head.prev = b
	}
	c.head = b
	if c.tail == nil {
		c.tail = b
	}
}
