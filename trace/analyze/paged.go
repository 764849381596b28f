// Hot path: paged.at runs several times per hash id of every row; see
// BenchmarkAnalyzeMooncake.

package analyze

// paged is a growable array of per-block state, indexed by dense block
// number and kept in fixed-size pages: growing never copies the elements
// already there, and allocates at most one page beyond the length. On a
// trace with hundreds of thousands of blocks, the copies and the up to
// twice too large slices of append-style growth cost more than the
// statistics.
type paged[T any] struct {
	pages []*[pagedSize]T
	n     int
}

const (
	pagedBits = 12
	pagedSize = 1 << pagedBits
	pagedMask = pagedSize - 1
)

// at returns element i, which must be below p.len().
func (p *paged[T]) at(i int32) *T { return &p.pages[i>>pagedBits][i&pagedMask] }

// len returns the number of elements.
func (p *paged[T]) len() int { return p.n }

// grow makes the length n if it is shorter; new elements are zero.
func (p *paged[T]) grow(n int) {
	if n <= p.n {
		return
	}
	p.n = n
	for len(p.pages) < (n+pagedMask)>>pagedBits {
		p.pages = append(p.pages, new([pagedSize]T))
	}
}

// growFilled is grow with the new elements set to v.
func (p *paged[T]) growFilled(n int, v T) {
	i := p.n
	p.grow(n)
	for i < n {
		pg := p.pages[i>>pagedBits]
		j := i & pagedMask
		s := pg[j:min(pagedSize, j+n-i)]
		for k := range s {
			s[k] = v
		}
		i += len(s)
	}
}

// chunks yields the elements in order, one page at a time.
func (p *paged[T]) chunks(yield func([]T) bool) {
	rest := p.n
	for _, pg := range p.pages {
		if rest <= 0 {
			return
		}
		s := pg[:min(pagedSize, rest)]
		rest -= len(s)
		if !yield(s) {
			return
		}
	}
}
