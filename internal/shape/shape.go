// Package shape measures two things about the module's own Go code that
// its tests keep from growing (issue 39's "short functions at the top"):
// functions longer than a screenful, and files of one package that use
// each other in a circle (Go forbids circles between packages, not
// between the files of one). It reads the packages `go list` describes,
// type-checked from the build cache's export data, so a use is resolved
// as the compiler resolves it, methods and fields included.
package shape

import (
	"fmt"
	"go/ast"
	"go/token"
	"go/types"
	"path/filepath"
	"slices"
	"strings"

	"golang.org/x/tools/go/packages"
)

// Package is one package of the module: its import path and non-test Go
// files (those the build constraints select), parsed and type-checked.
type Package struct {
	Path  string
	Files []*ast.File
	Names []string // Files' paths, relative to the module root
	fset  *token.FileSet
	info  *types.Info
	types *types.Package
}

// Load loads the module's packages matching patterns (go list syntax,
// resolved in root, the module's directory): the module's own, not its
// dependencies, which are read from export data.
func Load(root string, patterns ...string) ([]*Package, error) {
	root, err := filepath.Abs(root)
	if err != nil {
		return nil, err
	}
	cfg := &packages.Config{Dir: root, Mode: packages.NeedName | packages.NeedFiles | packages.NeedSyntax |
		packages.NeedTypes | packages.NeedTypesInfo | packages.NeedModule}
	listed, err := packages.Load(cfg, patterns...)
	if err != nil {
		return nil, err
	}
	var pkgs []*Package
	for _, l := range listed {
		if len(l.Errors) > 0 {
			return nil, fmt.Errorf("%s: %v", l.PkgPath, l.Errors[0])
		}
		if l.Module == nil || !l.Module.Main || len(l.Syntax) == 0 {
			continue
		}
		p := &Package{Path: l.PkgPath, Files: l.Syntax, fset: l.Fset, info: l.TypesInfo, types: l.Types}
		for _, f := range l.Syntax {
			rel, err := filepath.Rel(root, l.Fset.Position(f.Pos()).Filename)
			if err != nil {
				return nil, err
			}
			p.Names = append(p.Names, filepath.ToSlash(rel))
		}
		pkgs = append(pkgs, p)
	}
	return pkgs, nil
}

// Func is a function or method and its length in lines, from its
// declaration's first line to its closing brace.
type Func struct {
	Name  string // "file.go:Name" or "file.go:Type.Name", the file relative to the module root
	Lines int
}

// LongFunctions returns p's functions longer than max lines, longest
// first, except flag tables: a function whose body only returns a
// literal (a list of flags, a table) is declarative, however long.
func LongFunctions(p *Package, max int) []Func {
	var long []Func
	for i, f := range p.Files {
		for _, d := range f.Decls {
			fd, ok := d.(*ast.FuncDecl)
			if !ok || fd.Body == nil || onlyReturnsLiteral(fd.Body) {
				continue
			}
			n := p.fset.Position(fd.End()).Line - p.fset.Position(fd.Pos()).Line + 1
			if n > max {
				long = append(long, Func{Name: p.Names[i] + ":" + funcName(fd), Lines: n})
			}
		}
	}
	slices.SortFunc(long, func(a, b Func) int { return b.Lines - a.Lines })
	return long
}

func onlyReturnsLiteral(b *ast.BlockStmt) bool {
	if len(b.List) != 1 {
		return false
	}
	r, ok := b.List[0].(*ast.ReturnStmt)
	if !ok || len(r.Results) != 1 {
		return false
	}
	_, ok = r.Results[0].(*ast.CompositeLit)
	return ok
}

func funcName(fd *ast.FuncDecl) string {
	if fd.Recv == nil || len(fd.Recv.List) == 0 {
		return fd.Name.Name
	}
	t := fd.Recv.List[0].Type
	for {
		switch x := t.(type) {
		case *ast.StarExpr:
			t = x.X
			continue
		case *ast.IndexExpr:
			t = x.X
			continue
		case *ast.IndexListExpr:
			t = x.X
			continue
		case *ast.Ident:
			return x.Name + "." + fd.Name.Name
		}
		return fd.Name.Name
	}
}

// FileCircles returns the sets of p's files that use each other in a
// circle (the strongly connected components, of two files or more, of
// the graph with an edge from a file to each other file of p declaring
// something it uses), each set's names sorted, the sets by their first.
func FileCircles(p *Package) [][]string {
	index := map[string]int{}
	for i, f := range p.Files {
		index[p.fset.Position(f.Pos()).Filename] = i
	}
	edges := make([]map[int]bool, len(p.Files))
	for i, f := range p.Files {
		edges[i] = map[int]bool{}
		ast.Inspect(f, func(n ast.Node) bool {
			id, ok := n.(*ast.Ident)
			if !ok {
				return true
			}
			obj := p.info.Uses[id]
			if obj == nil || obj.Pkg() == nil || obj.Pkg().Path() != p.Path || !obj.Pos().IsValid() {
				return true
			}
			if j, ok := index[p.fset.Position(obj.Pos()).Filename]; ok && j != i {
				edges[i][j] = true
			}
			return true
		})
	}
	var circles [][]string
	for _, c := range components(edges) {
		if len(c) < 2 {
			continue
		}
		names := make([]string, len(c))
		for k, i := range c {
			names[k] = p.Names[i]
		}
		slices.Sort(names)
		circles = append(circles, names)
	}
	slices.SortFunc(circles, func(a, b []string) int { return strings.Compare(a[0], b[0]) })
	return circles
}

// components returns the strongly connected components of the graph
// (Tarjan's algorithm).
func components(edges []map[int]bool) [][]int {
	n := len(edges)
	idx, low := make([]int, n), make([]int, n)
	on := make([]bool, n)
	for i := range idx {
		idx[i] = -1
	}
	var stack []int
	var out [][]int
	next := 0
	var visit func(v int)
	visit = func(v int) {
		idx[v], low[v] = next, next
		next++
		stack = append(stack, v)
		on[v] = true
		for w := range edges[v] {
			if idx[w] < 0 {
				visit(w)
				low[v] = min(low[v], low[w])
			} else if on[w] {
				low[v] = min(low[v], idx[w])
			}
		}
		if low[v] == idx[v] {
			var c []int
			for {
				w := stack[len(stack)-1]
				stack = stack[:len(stack)-1]
				on[w] = false
				c = append(c, w)
				if w == v {
					break
				}
			}
			out = append(out, c)
		}
	}
	for v := range n {
		if idx[v] < 0 {
			visit(v)
		}
	}
	return out
}

// Internal reports whether a package path is internal: it has an element
// "internal", so only code under that element's parent can import it.
func Internal(path string) bool {
	return slices.Contains(strings.Split(path, "/"), "internal")
}

// InternalInAPI returns the places where p's exported API names a type of
// an internal package, which a user of p can neither name nor construct:
// "Ident: pkg.Type" for each exported function, method, variable,
// constant, type, exported field and interface method whose signature or
// type mentions one. Types are walked through pointers, slices, arrays,
// maps, channels, functions and type arguments; a named type of another
// package stops the walk (its own API is checked with its package).
func InternalInAPI(p *Package) []string {
	pkg := p.types
	if Internal(p.Path) || pkg == nil || pkg.Name() == "main" {
		return nil
	}
	var found []string
	report := func(where string, t types.Type) {
		seen := map[types.Type]bool{}
		var walk func(t types.Type)
		walk = func(t types.Type) {
			if t == nil || seen[t] {
				return
			}
			seen[t] = true
			switch x := t.(type) {
			case *types.Named:
				if o := x.Obj(); o.Pkg() != nil && o.Pkg() != pkg && Internal(o.Pkg().Path()) {
					found = append(found, where+": "+o.Pkg().Path()+"."+o.Name())
				}
				for i := range x.TypeArgs().Len() {
					walk(x.TypeArgs().At(i))
				}
			case *types.Alias:
				walk(types.Unalias(x))
			case *types.Pointer:
				walk(x.Elem())
			case *types.Slice:
				walk(x.Elem())
			case *types.Array:
				walk(x.Elem())
			case *types.Chan:
				walk(x.Elem())
			case *types.Map:
				walk(x.Key())
				walk(x.Elem())
			case *types.Signature:
				for i := range x.Params().Len() {
					walk(x.Params().At(i).Type())
				}
				for i := range x.Results().Len() {
					walk(x.Results().At(i).Type())
				}
			case *types.Struct:
				for i := range x.NumFields() {
					if f := x.Field(i); f.Exported() || f.Embedded() {
						walk(f.Type())
					}
				}
			case *types.Interface:
				for i := range x.NumMethods() {
					if m := x.Method(i); m.Exported() {
						walk(m.Type())
					}
				}
			}
		}
		walk(t)
	}
	for _, name := range pkg.Scope().Names() {
		obj := pkg.Scope().Lookup(name)
		if !obj.Exported() {
			continue
		}
		where := pkg.Path() + "." + name
		switch o := obj.(type) {
		case *types.TypeName:
			report(where, o.Type().Underlying())
			if n, ok := o.Type().(*types.Named); ok {
				for i := range n.NumMethods() {
					if m := n.Method(i); m.Exported() {
						report(where+"."+m.Name(), m.Type())
					}
				}
			}
		default:
			report(where, obj.Type())
		}
	}
	return found
}
