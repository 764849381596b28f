package shape

import (
	"fmt"
	"go/ast"
	"go/parser"
	"go/token"
	"slices"
	"strings"
	"testing"
)

// TestLongFunctionsTables checks the flag-table rule: a long function
// whose body is a single return of a composite literal is declarative and
// not counted; one that also declares something, or returns a call on
// the literal (append), is.
func TestLongFunctionsTables(t *testing.T) {
	lines := func(n int) string { return strings.Repeat("\t\t1,\n", n) }
	src := fmt.Sprintf(`package x

func table() []int {
	return []int{
%s	}
}

func tableAndConst() []int {
	const c = 1
	return []int{
%s	}
}

func appended() []int {
	return append([]int{
%s	}, 2)
}

func two() ([]int, error) {
	return []int{
%s	}, nil
}

func short() []int {
	x := 1
	return []int{x}
}
`, lines(10), lines(10), lines(10), lines(10))
	fset := token.NewFileSet()
	f, err := parser.ParseFile(fset, "x.go", src, 0)
	if err != nil {
		t.Fatal(err)
	}
	p := &Package{Path: "x", Files: []*ast.File{f}, Names: []string{"x.go"}, fset: fset}
	var got []string
	for _, fn := range LongFunctions(p, 5) {
		got = append(got, fn.Name)
	}
	slices.Sort(got)
	want := []string{"x.go:appended", "x.go:tableAndConst", "x.go:two"}
	if strings.Join(got, " ") != strings.Join(want, " ") {
		t.Errorf("long functions %v, want %v (table exempt, short not long)", got, want)
	}
}
