//go:build !race

package shape

import (
	"fmt"
	"go/ast"
	"go/parser"
	"go/token"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"testing"
)

// maxActionLines is the length a command's action may have: it copies
// flags into options and calls the library (issue 39).
const maxActionLines = 40

// cmdGoalLines is what cmd/'s non-test code should fit in.
const cmdGoalLines = 3000

// TestCmdSize keeps the CLI from growing back: cmd/'s non-test line count
// and the command actions (Action: func literals) over maxActionLines are
// exactly those in testdata/cmd-size.txt. A new long action fails, and so
// does one that grew or more lines in cmd/. A shrink fails until the file
// is updated (go test ./internal/shape -update), so the list only shrinks.
// The log shows how far cmd/ is from cmdGoalLines.
func TestCmdSize(t *testing.T) {
	lines, actions, err := cmdSize("../../cmd")
	if err != nil {
		t.Fatal(err)
	}
	t.Logf("cmd/: %d non-test lines (goal under %d); %d actions over %d lines", lines, cmdGoalLines, len(actions), maxActionLines)
	got := append([]string{fmt.Sprintf("cmd/ %d", lines)}, actions...)
	check(t, "testdata/cmd-size.txt", got, fmt.Sprintf("cmd/'s non-test lines, then command actions over %d lines (name, lines)", maxActionLines), compareShrinking)
}

// cmdSize counts the non-test lines of the Go files under dir and lists
// the Action func literals over maxActionLines as "file:function lines".
func cmdSize(dir string) (lines int, long []string, err error) {
	fset := token.NewFileSet()
	seen := map[string]int{}
	err = filepath.WalkDir(dir, func(path string, d os.DirEntry, err error) error {
		if err != nil || d.IsDir() || !strings.HasSuffix(path, ".go") || strings.HasSuffix(path, "_test.go") {
			return err
		}
		src, err := os.ReadFile(path)
		if err != nil {
			return err
		}
		lines += strings.Count(string(src), "\n")
		f, err := parser.ParseFile(fset, path, src, 0)
		if err != nil {
			return err
		}
		rel, _ := filepath.Rel(filepath.Dir(dir), path)
		for _, decl := range f.Decls {
			fd, ok := decl.(*ast.FuncDecl)
			if !ok || fd.Body == nil {
				continue
			}
			ast.Inspect(fd.Body, func(n ast.Node) bool {
				var lit *ast.FuncLit
				switch n := n.(type) {
				case *ast.KeyValueExpr:
					if id, ok := n.Key.(*ast.Ident); ok && id.Name == "Action" {
						lit, _ = n.Value.(*ast.FuncLit)
					}
				case *ast.AssignStmt:
					if sel, ok := n.Lhs[0].(*ast.SelectorExpr); ok && sel.Sel.Name == "Action" && len(n.Rhs) == 1 {
						lit, _ = n.Rhs[0].(*ast.FuncLit)
					}
				}
				if lit != nil {
					l := fset.Position(lit.End()).Line - fset.Position(lit.Pos()).Line + 1
					if l > maxActionLines {
						name := fmt.Sprintf("%s:%s.action", filepath.ToSlash(rel), funcName(fd))
						if seen[name]++; seen[name] > 1 {
							name += fmt.Sprint(seen[name])
						}
						long = append(long, fmt.Sprintf("%s %d", name, l))
					}
				}
				return true
			})
		}
		return nil
	})
	slices.Sort(long)
	return lines, long, err
}

// compareShrinking reports what differs between want and got, lists of
// "name number": a new name or a larger number is a regression, a smaller
// one or a name gone asks for -update.
func compareShrinking(want, got []string) []string {
	wm, gm := lengths(want), lengths(got)
	var msgs []string
	for _, name := range sortedKeys(gm) {
		switch w, ok := wm[name]; {
		case !ok:
			msgs = append(msgs, fmt.Sprintf("%s is %d lines: make it a flag copy and a library call", name, gm[name]))
		case gm[name] > w:
			msgs = append(msgs, fmt.Sprintf("%s grew from %d to %d lines: move the logic into the library", name, w, gm[name]))
		case gm[name] < w:
			msgs = append(msgs, fmt.Sprintf("%s shrank from %d to %d lines: update the list (go test ./internal/shape -update)", name, w, gm[name]))
		}
	}
	for _, name := range sortedKeys(wm) {
		if _, ok := gm[name]; !ok {
			msgs = append(msgs, fmt.Sprintf("%s is short now (or gone): update the list (go test ./internal/shape -update)", name))
		}
	}
	return msgs
}
