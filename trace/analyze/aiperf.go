package analyze

import "github.com/reprise-bench/reprise/trace"

// AIPerf computes the statistics of AIPerf's `aiperf analyze-trace` under its
// names and definitions (benchmark-semantics.md §8), so migrating users see
// familiar numbers. Feed it rows in FILE order (AIPerf ignores timestamps).
// Definitions, per row with ids h[0..k−1] and block size B:
//
//   - unique_prefixes: distinct prefixes h[0..i] over all rows;
//   - prefix_reuse_ratio: Σ counts of prefixes seen more than once / Σ counts;
//   - num_prefix_groups: distinct first ids that start ≥ 2 rows;
//   - per-row hit: (index of the first id not seen in earlier rows) / k, rows
//     without ids skipped; cache_hit_rate is the unweighted mean;
//   - context/unique split: a (position, id) pair is repeated if it occurs
//     more than once in the whole file (later rows included); all pairs
//     repeated → context = ISL, unique = 0; else context = repeated·B,
//     unique = ISL − context; no ids → context 0, unique = ISL.
//
// The split needs counts over the whole file, yet AIPerf is a single pass:
// a pair that ends with count 1 occurs in exactly one row, which was the
// row that introduced it. So each pair remembers the row that introduced
// it, and only rows that introduced a new pair (at most one per distinct
// pair) keep their ISL and id count. Memory is O(distinct pairs + distinct
// prefixes), never O(rows).
//
// Not safe for concurrent use; use [NewAIPerf].
type AIPerf struct {
	blockSize int

	rows     int64
	isl, osl *hist
	// noIDs counts rows without ids: context 0, unique = ISL.
	noIDs    int64
	noIDsISL *hist

	// Prefix trie: node (parent, id) → node number; count per node.
	trie      map[trieKey]int32
	nodeCount []int64

	// seen is the file-order infinite cache for the per-row hit.
	seen map[uint64]struct{}
	hit  fhist

	pairs map[pairKey]pairVal
	cands []candidate
}

type trieKey struct {
	parent int32 // -1 for a first id
	id     uint64
}

type pairKey struct {
	pos int32
	id  uint64
}

type pairVal struct {
	count uint32
	cand  int32 // index in AIPerf.cands of the row that introduced it
}

// candidate is a row that introduced at least one new (position, id) pair.
type candidate struct {
	isl    int64
	k      int32
	nonrep int32 // pairs of this row whose final count is 1
}

// NewAIPerf returns an empty AIPerf analysis for blocks of blockSize
// tokens (AIPerf's --block-size, default 512).
func NewAIPerf(blockSize int) *AIPerf {
	return &AIPerf{
		blockSize: blockSize,
		isl:       newHist(1, 1<<20),
		osl:       newHist(1, 1<<20),
		noIDsISL:  newHist(1, 1<<20),
		trie:      make(map[trieKey]int32),
		seen:      make(map[uint64]struct{}),
		pairs:     make(map[pairKey]pairVal),
	}
}

// Add accounts one row, in file order. It does not retain r.
func (p *AIPerf) Add(r *trace.Row) {
	p.rows++
	p.isl.add(int64(r.InputTokens))
	p.osl.add(int64(r.OutputTokens))
	ids := r.HashIDs
	if len(ids) == 0 {
		p.noIDs++
		p.noIDsISL.add(int64(r.InputTokens))
		return
	}

	// Per-row hit against the ids of earlier rows, then remember them.
	first := len(ids)
	for j, id := range ids {
		if _, ok := p.seen[id]; !ok {
			first = j
			break
		}
	}
	p.hit.add(float64(first) / float64(len(ids)))
	for _, id := range ids {
		p.seen[id] = struct{}{}
	}

	// Prefixes.
	parent := int32(-1)
	for _, id := range ids {
		k := trieKey{parent, id}
		n, ok := p.trie[k]
		if !ok {
			n = int32(len(p.nodeCount))
			p.trie[k] = n
			p.nodeCount = append(p.nodeCount, 0)
		}
		p.nodeCount[n]++
		parent = n
	}

	// (position, id) pairs.
	cand := int32(-1)
	for pos, id := range ids {
		k := pairKey{int32(pos), id}
		v, ok := p.pairs[k]
		if !ok {
			if cand < 0 {
				cand = int32(len(p.cands))
				p.cands = append(p.cands, candidate{isl: int64(r.InputTokens), k: int32(len(ids))})
			}
			p.pairs[k] = pairVal{count: 1, cand: cand}
			continue
		}
		if v.count < 2 {
			v.count++
			p.pairs[k] = v
		}
	}
}

// Report returns the AIPerf statistics of the rows added so far.
func (p *AIPerf) Report() *AIPerfStats {
	s := &AIPerfStats{TotalRequests: p.rows}
	isl, osl := p.isl.sorted(), p.osl.sorted()
	if p.rows > 0 {
		si, so := isl.stats(1), osl.stats(1)
		s.MinISL, s.MaxISL, s.AvgISL = int64(si.Min), int64(si.Max), si.Mean
		s.MinOSL, s.MaxOSL, s.AvgOSL = int64(so.Min), int64(so.Max), so.Mean
	}
	s.ISLStats, s.OSLStats = metricStats(isl), metricStats(osl)

	s.UniquePrefixes = int64(len(p.nodeCount))
	var reused, all int64
	for _, c := range p.nodeCount {
		all += c
		if c > 1 {
			reused += c
		}
	}
	s.PrefixReuseRatio = ratio(reused, all)
	for k, n := range p.trie {
		if k.parent == -1 && p.nodeCount[n] > 1 {
			s.NumPrefixGroups++
		}
	}
	hit := p.hit.sorted()
	if hit.n > 0 {
		s.HitRateStats = metricStats(hit)
		s.CacheHitRate = s.HitRateStats.Mean
	}

	// Context/unique split. Start from "every row with ids has all pairs
	// repeated" (context = ISL), then correct the rows that own a pair
	// whose final count is 1.
	nonrep := make([]int32, len(p.cands))
	for _, v := range p.pairs {
		if v.count == 1 {
			nonrep[v.cand]++
		}
	}
	ctx := newHist(1, 1<<20)
	uniq := newHist(1, 1<<20)
	// context: rows without ids → 0; with ids → ISL unless corrected.
	// Build from the ISL histogram minus the rows without ids.
	withIDs := subtract(isl, p.noIDsISL.sorted())
	for _, b := range withIDs {
		ctx.addN(int64(b.v), b.n)
	}
	ctx.addN(0, uint64(p.noIDs))
	for _, b := range p.noIDsISL.sorted().bins {
		uniq.addN(int64(b.v), b.n)
	}
	var fullyRepeated uint64 = uint64(p.rows - p.noIDs)
	B := int64(p.blockSize)
	for i, c := range p.cands {
		if nonrep[i] == 0 {
			continue
		}
		fullyRepeated--
		ctx.remove(c.isl)
		cl := int64(c.k-nonrep[i]) * B
		ctx.add(cl)
		uniq.add(c.isl - cl)
	}
	uniq.addN(0, fullyRepeated)
	s.ContextStats = metricStats(ctx.sorted())
	s.UniquePromptStat = metricStats(uniq.sorted())
	return s
}

// subtract returns the bins of a minus those of b (b ⊆ a as multisets).
func subtract(a, b sorted) []bin {
	out := make([]bin, 0, len(a.bins))
	j := 0
	for _, x := range a.bins {
		for j < len(b.bins) && b.bins[j].v < x.v {
			j++
		}
		if j < len(b.bins) && b.bins[j].v == x.v {
			x.n -= b.bins[j].n
		}
		if x.n > 0 {
			out = append(out, x)
		}
	}
	return out
}
