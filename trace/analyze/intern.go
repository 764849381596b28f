// Hot path: interner.appendNumbers runs once per row, and its loop once per
// hash id; see TestAddAllocs and BenchmarkAnalyzeMooncake.

package analyze

import "slices"

// interner maps opaque 64-bit hash ids to dense block numbers 0, 1, 2, ...
// in order of first appearance.
//
// Mooncake traces number their ids that way already: every new id is the
// number of distinct ids before it. While that holds, an id is its own
// number and the interner keeps nothing but the count. The first id that
// breaks it moves the interner to tables: ids below a bound are looked up
// in a direct table (an array index, no hashing), the rest in a map. The
// direct table only grows while it stays within a constant factor of the
// number of distinct ids, so memory remains proportional to distinct ids
// whatever the id values. The zero value is an empty interner.
type interner struct {
	tables bool    // ids are not their own numbers: use direct and sparse
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

// appendNumbers appends the dense number of every id to dst: the direct
// table inline, the rest through id.
func (t *interner) appendNumbers(dst []int32, ids []uint64) []int32 {
	if !t.tables {
		n0 := len(dst)
		dst = slices.Grow(dst, len(ids))[:n0+len(ids)]
		out, n := dst[n0:], t.n
		for i, h := range ids {
			switch {
			case h < uint64(n):
				out[i] = int32(h)
			case h == uint64(n) && n < 1<<31-1:
				out[i] = n
				n++
			default:
				t.n = n
				t.useTables()
				return t.appendNumbers(dst[:n0+i], ids[i:])
			}
		}
		t.n = n
		return dst
	}
	for _, h := range ids {
		if h < uint64(len(t.direct)) {
			if v := t.direct[h]; v != 0 {
				dst = append(dst, v-1)
				continue
			}
		}
		b, _ := t.id(h)
		dst = append(dst, b)
	}
	return dst
}

// useTables fills the direct table with the ids so far, each its own
// number, and switches to the tables.
func (t *interner) useTables() {
	t.tables = true
	t.direct = make([]int32, max(int(t.n), 1024))
	for h := range t.n {
		t.direct[h] = h + 1
	}
}

// id returns the dense number of h and whether h is new, once the tables
// are in use.
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
