package synth

import (
	"math"

	"github.com/reprise-bench/reprise/trace"
)

// scaleLengths applies the prefix and prompt multipliers (Derive step 3).
//
// The rows' hash-id sequences form a tree (a trie): a node is a distinct
// prefix h[0..d−1], at depth d. A node is shared when at least two rows
// pass through it; a row's shared prefix is its leading run of shared
// nodes, depth s (for chained ids, exactly AIPerf's "leading run of ids
// that occur at least twice"); the rest of the row is its unique tail.
//
// With g(d) = ⌈d·p⌉ for p > 1, max(1, ⌊d·p⌋) for p < 1, d for p = 1 (and
// g(0) = 0), the node at depth d owns the new block positions
// [g(d−1), g(d)) of every row that passes through it. A row with shared
// depth s gets the g(s) blocks owned along its path — as in AIPerf — and
// two rows that shared s blocks now share exactly g(s), because the
// blocks are owned by the nodes, not drawn per row. (AIPerf appends fresh
// per-row ids for the fractional part of p and truncates the original ids
// for p < 1, so the shared length between two rows does not scale.)
// A node's first block keeps the node's original id; further blocks get
// new ids.
//
// Lengths: a row of L tokens, k ids, B tokens per block, shared depth s:
//   - s < k: the prefix is s full blocks; tail T = L − s·B; new tail
//     T' = ⌊T·q⌋; L' = g(s)·B + T' (at least 1); ⌈T'/B⌉ tail ids, reusing
//     the row's original tail ids first.
//   - s = k (the whole row is shared, its last block usually partial): no
//     tail; the last block keeps its r = L − (k−1)·B tokens, so
//     L' = (g(k)−1)·B + r. (AIPerf computes L − k·B here, which is negative
//     when the last shared block is partial, and crashes.)
//
// Rows without ids have no known prefix: their whole input is tail,
// L' = max(1, ⌊L·q⌋). Rows with literal content (InputTokens 0) are left
// alone.
func scaleLengths(rows []trace.Row, cfg DeriveConfig, alloc *idAlloc) error {
	p, q := cfg.PrefixLenMultiplier, cfg.PromptLenMultiplier
	t := newTrie()
	paths := make([][]int32, len(rows))
	for i := range rows {
		if len(rows[i].HashIDs) > 0 {
			paths[i] = t.add(rows[i].HashIDs)
		}
	}
	g := func(d int) int { return scaledDepth(d, p) }
	for i := range rows {
		r := &rows[i]
		if r.InputTokens <= 0 {
			continue
		}
		if len(r.HashIDs) == 0 {
			r.InputTokens = max(1, floorEps(float64(r.InputTokens)*q))
			continue
		}
		B := r.BlockSize
		if B <= 0 {
			B = 512
		}
		path := paths[i]
		k := len(path)
		s := 0
		for s < k && t.count[path[s]] >= 2 {
			s++
		}
		ids := make([]uint64, 0, g(s)+1)
		for d := 1; d <= s; d++ {
			own, err := t.owned(path[d-1], g(d-1), g(d), alloc)
			if err != nil {
				return err
			}
			ids = append(ids, own...)
		}
		L := r.InputTokens
		if s == k {
			rest := L - (k-1)*B
			r.InputTokens = (g(k)-1)*B + rest
			r.HashIDs = ids
			continue
		}
		tail := floorEps(float64(L-s*B) * q)
		if g(s) == 0 && tail == 0 {
			tail = 1
		}
		r.InputTokens = g(s)*B + tail
		nTail := (tail + B - 1) / B
		for j := range nTail {
			if s+j < k {
				if n := path[s+j]; t.firstWithID(n) {
					ids = append(ids, t.id[n])
					continue
				}
			}
			v, err := alloc.id()
			if err != nil {
				return err
			}
			ids = append(ids, v)
		}
		r.HashIDs = ids
	}
	return nil
}

// scaledDepth is g(d) of scaleLengths.
func scaledDepth(d int, p float64) int {
	switch {
	case d == 0:
		return 0
	case p > 1:
		return ceilEps(float64(d) * p)
	case p < 1:
		return max(1, floorEps(float64(d)*p))
	}
	return d
}

// floorEps and ceilEps round x down or up, treating values within a
// relative 1e-9 of an integer as that integer, so 10 × 1.1 = 11.000000000000002
// gives 11 both ways.
func floorEps(x float64) int {
	n := math.Round(x)
	if math.Abs(x-n) <= 1e-9*math.Max(1, math.Abs(x)) {
		return int(n)
	}
	return int(math.Floor(x))
}

func ceilEps(x float64) int {
	n := math.Round(x)
	if math.Abs(x-n) <= 1e-9*math.Max(1, math.Abs(x)) {
		return int(n)
	}
	return int(math.Ceil(x))
}

// trie is the tree of hash-id prefixes of scaleLengths.
type trie struct {
	index map[trieKey]int32
	count []int32  // rows through the node
	id    []uint64 // the node's own (last) id
	// byID is the first node created with each id: only that node keeps
	// the id (for chained ids every id has one node; in other traces the
	// same id can end several prefixes).
	byID map[uint64]int32
	// owned blocks: start in arena, or -1 before allocation.
	start []int32
	n     []int32
	arena []uint64
}

type trieKey struct {
	parent int32
	id     uint64
}

func newTrie() *trie {
	return &trie{index: map[trieKey]int32{}, byID: map[uint64]int32{}}
}

// add walks ids from the root, creating nodes, counts one row through
// each, and returns the path.
func (t *trie) add(ids []uint64) []int32 {
	path := make([]int32, len(ids))
	parent := int32(-1)
	for j, id := range ids {
		k := trieKey{parent, id}
		n, ok := t.index[k]
		if !ok {
			n = int32(len(t.count))
			t.index[k] = n
			t.count = append(t.count, 0)
			t.id = append(t.id, id)
			t.start = append(t.start, -1)
			t.n = append(t.n, 0)
			if _, taken := t.byID[id]; !taken {
				t.byID[id] = n
			}
		}
		t.count[n]++
		path[j] = n
		parent = n
	}
	return path
}

func (t *trie) firstWithID(n int32) bool { return t.byID[t.id[n]] == n }

// owned returns the ids of node n's blocks, positions [from, to),
// allocating them on first use. The slice aliases the trie's arena; the
// caller copies it.
func (t *trie) owned(n int32, from, to int, alloc *idAlloc) ([]uint64, error) {
	if t.start[n] < 0 {
		t.start[n] = int32(len(t.arena))
		for j := range to - from {
			if j == 0 && t.firstWithID(n) {
				t.arena = append(t.arena, t.id[n])
				continue
			}
			v, err := alloc.id()
			if err != nil {
				return nil, err
			}
			t.arena = append(t.arena, v)
		}
		t.n[n] = int32(to - from)
	}
	s := t.start[n]
	return t.arena[s : s+t.n[n]], nil
}
