package shape

import (
	"slices"
	"strings"
	"testing"
)

// TestComponents checks Tarjan's components on a graph with two circles,
// a chain and a self-contained file.
func TestComponents(t *testing.T) {
	// 0 → 1 → 2 → 0 (a circle), 2 → 3, 3 → 4 → 3 (a circle), 5 alone.
	edges := []map[int]bool{{1: true}, {2: true}, {0: true, 3: true}, {4: true}, {3: true}, {}}
	var got [][]int
	for _, c := range components(edges) {
		slices.Sort(c)
		got = append(got, c)
	}
	slices.SortFunc(got, func(a, b []int) int { return a[0] - b[0] })
	want := [][]int{{0, 1, 2}, {3, 4}, {5}}
	if !slices.EqualFunc(got, want, slices.Equal) {
		t.Errorf("components %v, want %v", got, want)
	}
}

// TestCompareCircles checks the list rules: a new circle and a grown one
// fail, one that shrank asks for the list to be updated.
func TestCompareCircles(t *testing.T) {
	want := []string{"a.go b.go c.go"}
	if m := compareCircles(want, []string{"a.go b.go c.go"}); len(m) != 0 {
		t.Errorf("the same circle: %v", m)
	}
	if m := compareCircles(want, []string{"a.go b.go"}); len(m) != 1 || !contains(m[0], "smaller") {
		t.Errorf("a smaller circle: %v", m)
	}
	if m := compareCircles(want, []string{"a.go b.go c.go d.go"}); len(m) != 2 || !contains(m[0], "new circle") {
		t.Errorf("a grown circle: %v", m)
	}
	if m := compareCircles(want, nil); len(m) != 1 || !contains(m[0], "gone") {
		t.Errorf("no circle: %v", m)
	}
	if m := compareLong([]string{"x.go:F 130"}, []string{"x.go:F 140", "y.go:G 121"}); len(m) != 2 {
		t.Errorf("a grown and a new long function: %v", m)
	}
}

func contains(s, sub string) bool { return strings.Contains(s, sub) }
