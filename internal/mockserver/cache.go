package mockserver

import (
	"math/bits"
	"sync"
)

// prefixCache is an LRU of full token blocks keyed by chained hashes, the
// model of vLLM's automatic prefix caching:
//
//   - A prompt of L tokens has ⌊L/B⌋ full blocks. Block j's key is the hash
//     of all tokens 0 … (j+1)·B−1 (a chained hash), so a key stands for the
//     block and its whole prefix. A partial last block is never cached, as
//     in vLLM.
//   - Lookup: the hit m is the leading run of blocks whose keys are present;
//     it stops at the first miss. cached_tokens = m·B. Unlike vLLM, a fully
//     cached prompt is not capped at L−1 tokens: the count is exactly the
//     leading-run block hit, the quantity the trace analyzer and the prompt
//     synthesizer predict.
//   - Update: right after the lookup, every full block of the prompt is
//     touched in order (promoted if present, inserted if absent), evicting
//     the least recently used block when the cache holds capacity/B blocks.
//
// Lookup and update happen together when the request is admitted (leaves
// the max-num-seqs queue, which is FIFO, so in arrival order), as if prefill
// were instantaneous; so concurrent requests see each other's prefixes
// exactly as the ideal-cache model in arrival
// order does. Safe for concurrent use.
type prefixCache struct {
	mu    sync.Mutex
	block int
	slots int
	index map[uint64]int32
	nodes []lruNode // nodes[0] is the list head sentinel
	used  int
	keys  []uint64 // scratch, guarded by mu
}

type lruNode struct {
	key        uint64
	prev, next int32
}

func newPrefixCache(blockSize, capacityTokens int) *prefixCache {
	slots := capacityTokens / blockSize
	if slots <= 0 {
		return nil
	}
	c := &prefixCache{block: blockSize, slots: slots, index: make(map[uint64]int32)}
	c.nodes = append(c.nodes, lruNode{}) // sentinel: next = most recent, prev = least recent
	return c
}

// blockKeys appends the chained hash of every full block of ids to dst.
func blockKeys(dst []uint64, ids []int, block int) []uint64 {
	h := uint64(0x9e3779b97f4a7c15)
	for j := 0; j+block <= len(ids); j += block {
		for _, t := range ids[j : j+block] {
			h = bits.RotateLeft64((h^uint64(t))*0xff51afd7ed558ccd, 29) + 0xc4ceb9fe1a85ec53
		}
		dst = append(dst, mix64(h))
	}
	return dst
}

func mix64(x uint64) uint64 {
	x ^= x >> 33
	x *= 0xff51afd7ed558ccd
	x ^= x >> 33
	x *= 0xc4ceb9fe1a85ec53
	x ^= x >> 33
	return x
}

// lookupInsert returns the cached tokens of ids (leading run of full blocks)
// and then touches all of its full blocks.
func (c *prefixCache) lookupInsert(ids []int) int {
	if c == nil {
		return 0
	}
	c.mu.Lock()
	defer c.mu.Unlock()
	c.keys = blockKeys(c.keys[:0], ids, c.block)
	m := 0
	for _, k := range c.keys {
		if _, ok := c.index[k]; !ok {
			break
		}
		m++
	}
	for _, k := range c.keys {
		c.touch(k)
	}
	return m * c.block
}

func (c *prefixCache) unlink(i int32) {
	n := &c.nodes[i]
	c.nodes[n.prev].next = n.next
	c.nodes[n.next].prev = n.prev
}

func (c *prefixCache) pushFront(i int32) {
	head := &c.nodes[0]
	n := &c.nodes[i]
	n.prev, n.next = 0, head.next
	c.nodes[head.next].prev = i
	head.next = i
}

func (c *prefixCache) touch(k uint64) {
	if i, ok := c.index[k]; ok {
		c.unlink(i)
		c.pushFront(i)
		return
	}
	var i int32
	switch {
	case c.used < c.slots:
		c.nodes = append(c.nodes, lruNode{})
		i = int32(len(c.nodes) - 1)
	default: // evict the least recently used block and reuse its node
		i = c.nodes[0].prev
		c.unlink(i)
		delete(c.index, c.nodes[i].key)
		c.used--
	}
	c.nodes[i].key = k
	c.index[k] = i
	c.pushFront(i)
	c.used++
}

// blocks returns the number of cached blocks.
func (c *prefixCache) blocks() int {
	if c == nil {
		return 0
	}
	c.mu.Lock()
	defer c.mu.Unlock()
	return c.used
}
