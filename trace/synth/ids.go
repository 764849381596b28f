package synth

import (
	"errors"
	"math"
)

// errIDSpace is returned when every 64-bit id is taken (only possible for
// a trace that already uses almost all of them).
var errIDSpace = errors.New("no free 64-bit hash id is left")

// idAlloc hands out hash ids that no input row uses and that it never
// handed out before: sequentially from one above the largest input id; if
// that runs past 2⁶⁴−1 (traces of raw 64-bit hashes), it continues from 0
// upwards, skipping every id the input uses. Allocation is deterministic:
// the same calls in the same order give the same ids. It is not safe for
// concurrent use.
type idAlloc struct {
	next    uint64
	high    bool   // next is valid in (max, 2⁶⁴−1]
	low     bool   // allocating in [0, max], skipping used ids
	max     uint64 // largest input id
	used    func() map[uint64]struct{}
	usedSet map[uint64]struct{}
	n       int64 // ids handed out
}

// newIDAlloc returns an allocator above maxSeen; any reports whether the
// input had ids at all (if not, allocation starts at 0). used builds the
// set of input ids; it is called only if the ids above maxSeen run out.
func newIDAlloc(maxSeen uint64, any bool, used func() map[uint64]struct{}) *idAlloc {
	a := &idAlloc{max: maxSeen, used: used}
	switch {
	case !any:
		// Everything is free: the high range is all of it and the low
		// range is empty (next > max once the high range is used up).
		a.next, a.high = 0, true
		a.low, a.max = true, 0
		a.usedSet = map[uint64]struct{}{}
	case maxSeen < math.MaxUint64:
		a.next, a.high = maxSeen+1, true
	}
	return a
}

// id returns a fresh id.
func (a *idAlloc) id() (uint64, error) {
	if a.high {
		v := a.next
		if v == math.MaxUint64 {
			a.high = false
			if !a.low {
				a.low, a.next = true, 0
			}
		} else {
			a.next++
		}
		a.n++
		return v, nil
	}
	if !a.low {
		a.low, a.next = true, 0
	}
	if a.usedSet == nil {
		a.usedSet = a.used()
	}
	for a.next <= a.max {
		v := a.next
		if v == a.max {
			a.max, a.next = 0, 1 // exhausted after this one
		} else {
			a.next++
		}
		if _, taken := a.usedSet[v]; !taken {
			a.n++
			return v, nil
		}
	}
	return 0, errIDSpace
}
