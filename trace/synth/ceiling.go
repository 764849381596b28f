package synth

import (
	"math"

	"github.com/reprise-bench/reprise/trace"
)

// RootMultiplierCeiling returns the expected infinite-cache token hit
// ratio of rows (taken in the given order, as the analyzer takes them)
// after their sessions are spread uniformly at random over k disjoint
// copies of the id space, as --prefix-root-multiplier k does. For k = 1 it
// is the ceiling itself.
//
// Derivation. With chained ids a row's leading-run hit is the sum, over
// its blocks, of the block's tokens w (B, or the partial size of a last
// block) times [an earlier row of the same copy holds the block]. Take the
// i-th row holding block b (in order). If an earlier row of the same
// session holds b, the block hits for sure (a session never leaves its
// copy). Otherwise let d be the number of distinct sessions among the
// earlier rows holding b: each is in the row's copy with probability 1/k,
// independently, so the block hits with probability 1 − (1 − 1/k)^d. By
// linearity of expectation
//
//	E[ceiling] = Σ_rows Σ_blocks w · P(hit) / Σ_rows L.
//
// For rows that are their own sessions (every Mooncake row without a
// session id) the i-th occurrence has d = i − 1, and a block that occurs
// n times contributes, in full blocks,
//
//	Σ_{i=1..n} (1 − (1 − 1/k)^{i−1}) = n − k·(1 − (1 − 1/k)^n)
//
// hits instead of n − 1: about k first-occurrence misses instead of one
// once n ≫ k. The expectation is exact for chained ids; the realized value
// of one seeded run varies around it (on the Mooncake traces by a few
// thousandths, since a few long conversations carry much of the reuse).
// Rows without ids are ignored.
func RootMultiplierCeiling(rows []trace.Row, k int) float64 {
	if k < 1 {
		return math.NaN()
	}
	q := 1 - 1/float64(k)
	type pair struct {
		id   uint64
		sess string
	}
	distinct := map[uint64]int{}     // block → distinct sessions so far
	inSession := map[pair]struct{}{} // (block, session) seen
	var hit, total float64
	for i := range rows {
		r := &rows[i]
		n := len(r.HashIDs)
		if n == 0 {
			continue
		}
		B := r.BlockSize
		if B <= 0 {
			B = 512
		}
		total += float64(r.InputTokens)
		for j, id := range r.HashIDs {
			w := float64(B)
			if j == n-1 {
				w = float64(min(B, max(r.InputTokens-(n-1)*B, 0)))
			}
			d := distinct[id]
			if r.SessionID != "" {
				key := pair{id, r.SessionID}
				if _, ok := inSession[key]; ok {
					hit += w
					continue
				}
				inSession[key] = struct{}{}
			}
			if d > 0 {
				hit += w * (1 - math.Pow(q, float64(d)))
			}
			distinct[id] = d + 1
		}
	}
	if total == 0 {
		return 0
	}
	return hit / total
}
