package analyze

import (
	"math/rand/v2"
	"testing"
)

// TestInterner checks the dense numbering against a map, for ids that are
// their own numbers for a while (the interner keeps only a count) and then
// are not (it moves to its tables in the middle of a row): small ids,
// large ones (the map) and a mix.
func TestInterner(t *testing.T) {
	rng := rand.New(rand.NewPCG(13, 14))
	for trial := range 200 {
		var in interner
		want := map[uint64]int32{}
		next := uint64(0) // the next id that keeps ids their own numbers
		breakAt := rng.IntN(3000)
		var got []int32
		for row := range 300 {
			ids := make([]uint64, rng.IntN(20))
			for j := range ids {
				switch n := len(want); {
				case n < breakAt && rng.IntN(2) == 0 && n > 0:
					ids[j] = uint64(rng.IntN(n)) // seen
				case n < breakAt:
					ids[j] = next // the next in order
					next++
				case rng.IntN(3) == 0:
					ids[j] = rng.Uint64() // large: the map
				default:
					ids[j] = uint64(rng.IntN(8000))
				}
				if _, ok := want[ids[j]]; !ok {
					want[ids[j]] = int32(len(want))
				}
			}
			got = in.appendNumbers(got[:0], ids)
			for j, h := range ids {
				if got[j] != want[h] {
					t.Fatalf("trial %d row %d: id %d numbered %d, want %d", trial, row, h, got[j], want[h])
				}
			}
			if in.len() != len(want) {
				t.Fatalf("trial %d row %d: %d distinct ids, want %d", trial, row, in.len(), len(want))
			}
		}
	}
}
