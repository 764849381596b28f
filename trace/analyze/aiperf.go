package analyze

import "github.com/reprise-bench/reprise/trace"

// AIPerf computes the statistics of AIPerf's `aiperf analyze-trace` under its
// names and definitions (docs/format/analyze-json.md, `aiperf`), so migrating users see
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

	// ids numbers hash ids densely in file order, so "seen in an earlier
	// row" is "number below the count before this row".
	ids     interner
	scratch []int32
	// shared, when set, is the Analyzer the rows also go to (addInterned):
	// its id numbering and its input and output length histograms, which
	// are AIPerf's too, are used instead of keeping them twice.
	shared *Analyzer
	hit    ratioHist

	// Prefix trie: a node is (parent node, id). Chained ids have one parent
	// each, so the first node of every id (its parent, number and count)
	// is kept in an array indexed by the id's number; nodes of other
	// parents go to trieMore, their counts to moreCount and those with the
	// root as parent to moreRoots.
	//
	// (position, id) pairs likewise: the first position of every id in
	// the array, other positions in pairMore.
	perID     paged[aiperfID]
	nodes     int32            // nodes so far, numbered in order of creation
	trieMore  map[uint64]int32 // (parent+1)<<32 | id number → node
	moreCount paged[int64]     // by node number; only trieMore's are used
	moreRoots []int32
	pairMore  map[uint64]pairVal // pos<<32 | id number → value
	cands     []candidate
}

// aiperfID is the per-id state of AIPerf, in one struct for locality. Its
// zero value is an id not seen yet, so new ids need no initialisation.
type aiperfID struct {
	trieParent int32 // first parent node + 2 (1 = root), 0 = none yet
	trieNode   int32
	pairPos    int32 // first position + 1, 0 = none yet
	pair       pairVal
	trieCount  int64 // rows with the prefix that ends at trieNode
}

type pairVal struct {
	count uint32 // saturates at 2: only "once" or "more" matters
	cand  int32  // index in AIPerf.cands of the row that introduced it
}

// candidate is a row that introduced at least one new (position, id) pair:
// its input length and number of ids, for the context/unique split.
type candidate struct {
	isl int64
	k   int32
}

// NewAIPerf returns an empty AIPerf analysis for blocks of blockSize
// tokens (AIPerf's --block-size, default 512).
func NewAIPerf(blockSize int) *AIPerf {
	return &AIPerf{
		blockSize: blockSize,
		isl:       newHist(1, 1<<20),
		osl:       newHist(1, 1<<20),
		noIDsISL:  newHist(1, 1<<20),
		hit:       newRatioHist(),
		trieMore:  make(map[uint64]int32),
		pairMore:  make(map[uint64]pairVal),
	}
}

// Add accounts one row, in file order. It does not retain r.
func (p *AIPerf) Add(r *trace.Row) {
	if len(r.HashIDs) == 0 {
		p.addRow(r)
		return
	}
	p.rows++
	p.addLengths(r)
	if p.shared != nil {
		panic("BUG: AIPerf.Add after addInterned: the id numbering is the Analyzer's")
	}
	nBefore := int32(p.ids.len())
	idx := p.ids.appendNumbers(p.scratch[:0], r.HashIDs)
	p.scratch = idx
	p.addIDs(r, idx, nBefore, int32(p.ids.len()))
}

// addInterned is Add for a row the Analyzer a has just added, reusing its
// dense id numbers instead of interning the ids a second time (half the
// hash lookups for traces with opaque ids) and its length histograms. Every
// row must then go through addInterned with the same Analyzer, in the same
// order as a.Add.
func (p *AIPerf) addInterned(r *trace.Row, a *Analyzer) {
	if p.shared != a {
		if p.shared != nil || p.rows > 0 {
			panic("BUG: AIPerf.addInterned with another Analyzer, or after Add")
		}
		p.shared = a
	}
	if len(r.HashIDs) == 0 {
		p.addRow(r)
		return
	}
	p.rows++
	p.addLengths(r)
	p.addIDs(r, a.scratch, a.nBefore, int32(a.ids.len()))
}

// addIDs accounts the ids of a row, given as dense numbers (numbered in
// order of first appearance; nBefore = count before this row, nAfter =
// count after it, so every number is below nAfter).
func (p *AIPerf) addIDs(r *trace.Row, idx []int32, nBefore, nAfter int32) {
	p.perID.grow(int(nAfter))

	// Per-row hit against the ids of earlier rows.
	first := len(idx)
	for j, d := range idx {
		if d >= nBefore {
			first = j
			break
		}
	}
	p.hit.add(first, len(idx))

	// Prefixes and (position, id) pairs, in one pass: they keep separate
	// fields of the id's state.
	parent := int32(0) // node+1 of the prefix so far; 0 = root
	cand := int32(-1)
	for pos, d := range idx {
		e := p.perID.at(d)
		var n int32
		switch tp := e.trieParent; {
		case tp == parent+1:
			n = e.trieNode
			e.trieCount++
		case tp == 0:
			n = p.nodes
			p.nodes++
			e.trieParent, e.trieNode, e.trieCount = parent+1, n, 1
		default:
			k := uint64(uint32(parent))<<32 | uint64(uint32(d))
			var ok bool
			if n, ok = p.trieMore[k]; !ok {
				n = p.nodes
				p.nodes++
				p.trieMore[k] = n
				p.moreCount.grow(int(n) + 1)
				if parent == 0 {
					p.moreRoots = append(p.moreRoots, n)
				}
			}
			*p.moreCount.at(n)++
		}
		parent = n + 1

		switch pp := e.pairPos; {
		case pp == int32(pos)+1:
			p.bump(&e.pair, &cand, r, len(idx))
		case pp == 0:
			e.pairPos = int32(pos) + 1
			p.bump(&e.pair, &cand, r, len(idx))
		default:
			k := uint64(pos)<<32 | uint64(uint32(d))
			v := p.pairMore[k]
			p.bump(&v, &cand, r, len(idx))
			p.pairMore[k] = v
		}
	}
}

// bump counts one occurrence of a pair; the first occurrence records the
// row as a candidate (once per row).
func (p *AIPerf) bump(v *pairVal, cand *int32, r *trace.Row, k int) {
	switch {
	case v.count == 0:
		if *cand < 0 {
			*cand = int32(len(p.cands))
			p.cands = append(p.cands, candidate{isl: int64(r.InputTokens), k: int32(k)})
		}
		*v = pairVal{count: 1, cand: *cand}
	case v.count < 2:
		v.count++
	}
}

// addLengths accounts the row's lengths; a row without an output length
// is left out of the output statistics (not counted as 0).
func (p *AIPerf) addLengths(r *trace.Row) {
	if p.shared != nil {
		return // the Analyzer's (Analyzer.addLengths: the same rule)
	}
	p.isl.add(int64(r.InputTokens))
	if !unknownOutput(r) {
		p.osl.add(int64(r.OutputTokens))
	}
}

// addRow accounts a row without ids.
func (p *AIPerf) addRow(r *trace.Row) {
	p.rows++
	p.addLengths(r)
	p.noIDs++
	p.noIDsISL.add(int64(r.InputTokens))
}

// Report returns the AIPerf statistics of the rows added so far.
func (p *AIPerf) Report() *AIPerfStats {
	s := &AIPerfStats{TotalRequests: p.rows}
	il, ol := p.isl, p.osl
	if p.shared != nil {
		il, ol = p.shared.isl, p.shared.osl
	}
	isl, osl := il.sorted(), ol.sorted()
	if p.rows > 0 {
		si := isl.stats(1)
		s.MinISL, s.MaxISL, s.AvgISL = int64(si.Min), int64(si.Max), si.Mean
	}
	if so := osl.stats(1); so.Count > 0 {
		s.MinOSL, s.MaxOSL, s.AvgOSL = int64(so.Min), int64(so.Max), so.Mean
	}
	s.ISLStats, s.OSLStats = metricStats(isl), metricStats(osl)

	s.UniquePrefixes = int64(p.nodes)
	var reused, all int64
	count := func(c int64) {
		all += c
		if c > 1 {
			reused += c
		}
	}
	for pg := range p.perID.chunks {
		for i := range pg {
			if e := &pg[i]; e.trieParent != 0 {
				count(e.trieCount)
				if e.trieParent == 1 && e.trieCount > 1 {
					s.NumPrefixGroups++
				}
			}
		}
	}
	for pg := range p.moreCount.chunks {
		for _, c := range pg {
			count(c) // 0 for the nodes kept in perID
		}
	}
	s.PrefixReuseRatio = ratio(reused, all)
	for _, n := range p.moreRoots {
		if *p.moreCount.at(n) > 1 {
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
	for pg := range p.perID.chunks {
		for _, e := range pg {
			if e.pairPos > 0 && e.pair.count == 1 {
				nonrep[e.pair.cand]++
			}
		}
	}
	for _, v := range p.pairMore {
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
	fullyRepeated := uint64(p.rows - p.noIDs)
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
