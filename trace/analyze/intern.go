// Hot path: interner.id runs once per hash id of every row; see
// TestAddAllocs and BenchmarkAnalyzeMooncake.

package analyze

// interner maps opaque 64-bit hash ids to dense block numbers 0, 1, 2, ...
// in order of first appearance.
//
// Many traces (both Mooncake files) use small dense integers as ids, so ids
// below a bound are looked up in a direct table (an array index, no
// hashing); the rest go to a map. The direct table only grows while it stays
// within a constant factor of the number of distinct ids, so memory remains
// proportional to distinct ids whatever the id values.
type interner struct {
	direct []int32 // id → number+1; 0 = unseen
	sparse map[uint64]int32
	n      int32
}

// directSlack bounds the direct table to directSlack × (distinct ids +
// directMin) entries.
const (
	directSlack = 4
	directMin   = 1 << 16
)

// id returns the dense number of h and whether h is new.
func (t *interner) id(h uint64) (int32, bool) {
	if h < uint64(len(t.direct)) {
		if v := t.direct[h]; v != 0 {
			return v - 1, false
		}
		return t.addDirect(h), true
	}
	if h < uint64(directSlack)*(uint64(t.n)+directMin) {
		t.growDirect(h)
		return t.addDirect(h), true
	}
	if v, ok := t.sparse[h]; ok {
		return v, false
	}
	if t.sparse == nil {
		t.sparse = make(map[uint64]int32)
	}
	v := t.n
	t.sparse[h] = v
	t.n++
	return v, true
}

func (t *interner) addDirect(h uint64) int32 {
	v := t.n
	t.direct[h] = v + 1
	t.n++
	return v
}

// growDirect extends the direct table to cover h, moving any sparse ids it
// now covers into it.
func (t *interner) growDirect(h uint64) {
	n := min(max(2*uint64(len(t.direct)), h+1, 1024), uint64(directSlack)*(uint64(t.n)+directMin))
	old := uint64(len(t.direct))
	t.direct = append(t.direct, make([]int32, n-old)...)
	for k, v := range t.sparse {
		if k < n {
			t.direct[k] = v + 1
			delete(t.sparse, k)
		}
	}
}

// len returns the number of distinct ids.
func (t *interner) len() int { return int(t.n) }
