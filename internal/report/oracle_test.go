package report

import (
	"math"
	"math/rand/v2"
	"slices"
	"sort"
	"testing"
)

// The slow, exact versions of what the report computes in one pass
// without holding the requests (cdfCounter, strider): the oracles of
// TestCDFCounterMatchesSorted and TestStriderMatchesStride.

// cdfAt returns, for each x of grid, the percentage of sorted that is
// ≤ x: the empirical CDF, exact at every grid point.
func cdfAt(sorted, grid []float64) Values {
	out := make(Values, len(grid))
	if len(sorted) == 0 {
		for i := range out {
			out[i] = math.NaN()
		}
		return out
	}
	for i, x := range grid {
		k := sort.Search(len(sorted), func(j int) bool { return sorted[j] > x })
		out[i] = 100 * float64(k) / float64(len(sorted))
	}
	return out
}

// stride returns the indexes of at most limit of the n items for which
// keep is true, evenly strided in order (every k-th, k = ⌈count/limit⌉),
// so a sample covers the whole run.
func stride(n, limit int, keep func(i int) bool) []int {
	count := 0
	for i := range n {
		if keep(i) {
			count++
		}
	}
	step := 1
	if count > limit {
		step = (count + limit - 1) / limit
	}
	out := make([]int, 0, min(count, limit))
	seen := 0
	for i := range n {
		if !keep(i) {
			continue
		}
		if seen%step == 0 {
			out = append(out, i)
		}
		seen++
	}
	return out
}

// sortedFinite returns the finite values of col, sorted, as float64.
func sortedFinite(col []float32) []float64 {
	out := make([]float64, 0, len(col))
	for _, v := range col {
		if !math.IsNaN(float64(v)) && !math.IsInf(float64(v), 0) {
			out = append(out, float64(v))
		}
	}
	slices.Sort(out)
	return out
}

// TestCDFCounterMatchesSorted: counting values into the grid one by one
// gives exactly the CDF of the sorted values, NaN and infinities dropped
// as the latency section drops them.
func TestCDFCounterMatchesSorted(t *testing.T) {
	rng := rand.New(rand.NewPCG(3, 4))
	for c := range 50 {
		n := rng.IntN(2000)
		col := make([]float32, n)
		for i := range col {
			switch rng.IntN(20) {
			case 0:
				col[i] = float32(math.NaN())
			case 1:
				col[i] = float32(math.Inf(1))
			default:
				col[i] = float32(rng.ExpFloat64() * 100)
			}
			if c%5 == 0 && i > 0 && rng.IntN(3) == 0 {
				col[i] = col[i-1] // ties, and values on grid points below
			}
		}
		sorted := sortedFinite(col)
		var grid []float64
		if len(sorted) > 0 {
			grid = logGrid(max(sorted[0], 1e-3)/1.05, sorted[len(sorted)-1]*1.01, CDFPoints)
			if c%3 == 0 {
				grid = append(grid[:len(grid)/2:len(grid)/2], sorted[len(sorted)/2]) // a value exactly on a point
				slices.Sort(grid)
			}
		} else {
			grid = logGrid(1, 10, 5)
		}
		cc := cdfCounter{grid: grid, at: make([]float64, len(grid))}
		for _, v := range col {
			if x := float64(v); !math.IsNaN(x) && !math.IsInf(x, 0) {
				cc.add(x)
			}
		}
		want, got := cdfAt(sorted, grid), cc.values()
		for i := range want {
			if !(want[i] == got[i] || math.IsNaN(want[i]) && math.IsNaN(got[i])) {
				t.Fatalf("case %d: CDF at %g = %g, want %g", c, grid[i], got[i], want[i])
			}
		}
	}
}

// TestStriderMatchesStride: taking items as they come picks exactly the
// indexes stride returns.
func TestStriderMatchesStride(t *testing.T) {
	rng := rand.New(rand.NewPCG(5, 6))
	for range 200 {
		n, limit := rng.IntN(5000), 1+rng.IntN(300)
		keep := make([]bool, n)
		count := 0
		for i := range keep {
			keep[i] = rng.IntN(3) > 0
			if keep[i] {
				count++
			}
		}
		want := stride(n, limit, func(i int) bool { return keep[i] })
		s := newStrider(count, limit)
		var got []int
		for i := range n {
			if keep[i] && s.take() {
				got = append(got, i)
			}
		}
		if !slices.Equal(got, want) {
			t.Fatalf("n %d limit %d: strider took %d items, stride %d", n, limit, len(got), len(want))
		}
	}
}
