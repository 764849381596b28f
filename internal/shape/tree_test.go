//go:build !race

package shape

import (
	"flag"
	"fmt"
	"os"
	"slices"
	"strings"
	"testing"
)

var update = flag.Bool("update", false, "rewrite testdata/long-functions.txt and testdata/file-circles.txt")

// guest reports whether a package is a Wasm guest's source (the SDKs and
// the shipped adapters), which the limits leave alone.
func guest(path string) bool {
	return strings.Contains(path, "/sdk-wasm") || strings.Contains(path, "/wasm/adapters/")
}

// TestShape keeps the module's shape from getting worse: the functions
// over maxLines lines and the circles between files of one package are
// exactly those in testdata (the ones left to split). A new one fails; so
// does one that grew; one that shrank or went away fails until its line is
// updated (go test ./internal/shape -update), so the lists only shrink.
// Outside -race only: it builds the module's export data.
func TestShape(t *testing.T) {
	if testing.Short() {
		t.Skip("runs go list -export over the module")
	}
	pkgs, err := Load("../..", "./...")
	if err != nil {
		t.Fatal(err)
	}
	if len(pkgs) < 40 {
		t.Fatalf("loaded %d packages", len(pkgs))
	}
	var long, circles, leaks []string
	for _, p := range pkgs {
		if guest(p.Path) {
			continue
		}
		for _, f := range LongFunctions(p, maxLines) {
			long = append(long, fmt.Sprintf("%s %d", f.Name, f.Lines))
		}
		for _, c := range FileCircles(p) {
			circles = append(circles, strings.Join(c, " "))
		}
		leaks = append(leaks, InternalInAPI(p)...)
	}
	slices.Sort(leaks)
	if len(leaks) > 0 {
		t.Errorf("exported API naming internal types, which users can neither name nor build: export them where users reach them, or keep them out of the signature:\n%s", strings.Join(leaks, "\n"))
	}
	slices.Sort(long)
	slices.Sort(circles)
	check(t, "testdata/long-functions.txt", long, "functions over 120 lines (name, lines)", compareLong)
	check(t, "testdata/file-circles.txt", circles, "files of one package that use each other in a circle", compareCircles)
}

// check compares got with the list in file, or rewrites it with -update.
func check(t *testing.T, file string, got []string, what string, compare func(want, got []string) []string) {
	t.Helper()
	if *update {
		body := "# " + what + ": what is left to split (TestShape; -update rewrites it)\n" + strings.Join(got, "\n") + "\n"
		if err := os.WriteFile(file, []byte(body), 0o644); err != nil {
			t.Fatal(err)
		}
		return
	}
	b, err := os.ReadFile(file)
	if err != nil {
		t.Fatal(err)
	}
	var want []string
	for _, l := range strings.Split(string(b), "\n") {
		if l = strings.TrimSpace(l); l != "" && l[0] != '#' {
			want = append(want, l)
		}
	}
	for _, msg := range compare(want, got) {
		t.Errorf("%s: %s", file, msg)
	}
}
