package analyze

import "testing"

// TestPaged grows a paged array across page boundaries in uneven steps and
// checks that elements keep their values, new ones start at zero, and
// chunks yields exactly the elements in order.
func TestPaged(t *testing.T) {
	var p paged[int64]
	for _, n := range []int{0, 1, 1000, 1025, pagedSize - 1, pagedSize, pagedSize + 1, 3*pagedSize + 5, 3*pagedSize + 5, 10} {
		old := p.len()
		p.grow(n)
		if want := max(old, n); p.len() != want {
			t.Fatalf("grow(%d) from %d: len %d, want %d", n, old, p.len(), want)
		}
		for i := range p.len() {
			v := p.at(int32(i))
			switch {
			case i < old && *v != int64(i)+1:
				t.Fatalf("after grow(%d): element %d = %d, want %d", n, i, *v, i+1)
			case i >= old && *v != 0:
				t.Fatalf("after grow(%d): new element %d = %d, want 0", n, i, *v)
			}
			*v = int64(i) + 1
		}
		i := 0
		for pg := range p.chunks {
			for _, v := range pg {
				if v != int64(i)+1 {
					t.Fatalf("chunks: element %d = %d, want %d", i, v, i+1)
				}
				i++
			}
		}
		if i != p.len() {
			t.Fatalf("chunks yielded %d elements, want %d", i, p.len())
		}
	}
	if got := len(p.pages); got != 4 {
		t.Errorf("%d elements in %d pages, want 4", p.len(), got)
	}
}

// TestPagedGrowFilled checks that growFilled sets exactly the new elements,
// across page boundaries, and leaves the old ones alone.
func TestPagedGrowFilled(t *testing.T) {
	var p paged[int32]
	want := []int32{}
	for step, n := range []int{3, 1500, pagedSize + 7, pagedSize + 7, 2, 2*pagedSize + 1} {
		v := int32(-1 - step)
		p.growFilled(n, v)
		for len(want) < n {
			want = append(want, v)
		}
		if p.len() != len(want) {
			t.Fatalf("growFilled(%d): len %d, want %d", n, p.len(), len(want))
		}
		for i, w := range want {
			if got := *p.at(int32(i)); got != w {
				t.Fatalf("after growFilled(%d, %d): element %d = %d, want %d", n, v, i, got, w)
			}
		}
	}
}
