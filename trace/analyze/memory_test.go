package analyze

import (
	"testing"
	"unsafe"
)

// Footprints count the bytes an Analyzer and an AIPerf hold in slices, maps
// (entries × key+value size × 2 for the table overhead) and histogram
// pages. They are deterministic, unlike the heap, so a test can assert how
// memory scales.

func sliceBytes[T any](s []T) int {
	var z T
	return cap(s) * int(unsafe.Sizeof(z))
}

func mapBytes[K comparable, V any](m map[K]V) int {
	var k K
	var v V
	return 2 * len(m) * int(unsafe.Sizeof(k)+unsafe.Sizeof(v))
}

func (h *hist) footprint() int {
	n := sliceBytes(h.pages) + mapBytes(h.sparse)
	for _, p := range h.pages {
		if p != nil {
			n += int(unsafe.Sizeof(*p))
		}
	}
	return n
}

// footprint returns the bytes the pages hold.
func (p *paged[T]) footprint() int {
	var z T
	return sliceBytes(p.pages) + len(p.pages)*pagedSize*int(unsafe.Sizeof(z))
}

func (t *interner) footprint() int { return sliceBytes(t.direct) + mapBytes(t.sparse) }

func (a *Analyzer) footprint() int {
	n := a.gaps.footprint() + a.isl.footprint() + a.osl.footprint() + a.reuseTime.footprint() + a.reuseDist.footprint() +
		a.ids.footprint() + a.blocks.footprint() + sliceBytes(a.roots) +
		mapBytes(a.sessions) + mapBytes(a.kinds) + mapBytes(a.turns) + sliceBytes(a.scratch)
	if l := a.lru; l != nil {
		n += l.last.footprint() + sliceBytes(l.bits) + sliceBytes(l.tree) + sliceBytes(l.pre)
	}
	return n
}

func (p *AIPerf) footprint() int {
	return p.isl.footprint() + p.osl.footprint() + p.noIDsISL.footprint() + p.ids.footprint() + p.hit.pairs.footprint() +
		p.perID.footprint() + mapBytes(p.trieMore) + p.moreCount.footprint() +
		sliceBytes(p.moreRoots) + mapBytes(p.pairMore) + sliceBytes(p.cands)
}

// TestMemoryGrowsWithBlocksNotRows feeds 10× more rows over the same fixed
// id set and checks that the analysis state barely grows. BenchmarkMemory10M
// shows the same with the real heap at 1M and 10M rows.
func TestMemoryGrowsWithBlocksNotRows(t *testing.T) {
	const n = 20_000
	g := newSynthGen(200, 8) // 1,600 ids, all seen within the first n rows
	a, p := New(Config{}), NewAIPerf(512)
	for range n {
		r := g.next()
		a.Add(r)
		p.Add(r)
	}
	blocks1, a1, p1 := a.blocks.len(), a.footprint(), p.footprint()
	for range 9 * n {
		r := g.next()
		a.Add(r)
		p.Add(r)
	}
	blocks10, a10, p10 := a.blocks.len(), a.footprint(), p.footprint()
	t.Logf("%d rows: %d blocks, analyzer %d B, aiperf %d B", n, blocks1, a1, p1)
	t.Logf("%d rows: %d blocks, analyzer %d B, aiperf %d B", 10*n, blocks10, a10, p10)
	if blocks10 != blocks1 || blocks1 != 1600 {
		t.Fatalf("blocks %d then %d, want 1,600 both times", blocks1, blocks10)
	}
	// Histogram pages may still be touched by rarer values; a per-row
	// structure would grow 10×.
	if a10 > a1*5/4 || p10 > p1*5/4 {
		t.Errorf("state grew with rows: analyzer %d → %d B, aiperf %d → %d B", a1, a10, p1, p10)
	}
}
