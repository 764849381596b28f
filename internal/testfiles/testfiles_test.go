package testfiles

import (
	"crypto/sha256"
	"encoding/hex"
	"go/ast"
	"go/parser"
	"go/token"
	"io/fs"
	"os"
	"path/filepath"
	"regexp"
	"strconv"
	"strings"
	"testing"

	"github.com/klauspost/compress/zstd"
)

// TestTraces decompresses every trace listed in SHA256SUMS and checks it
// against its sum, and checks that every stored trace is listed there and
// named in testdata/README.md with its origin.
func TestTraces(t *testing.T) {
	dir := Path(t, "traces")
	sums, err := readSums(filepath.Join(dir, "SHA256SUMS"))
	if err != nil {
		t.Fatal(err)
	}
	if len(sums) == 0 {
		t.Fatal("SHA256SUMS lists no trace")
	}
	readme, err := os.ReadFile(Path(t, "README.md"))
	if err != nil {
		t.Fatal(err)
	}
	for name, sum := range sums {
		if data := TraceBytes(t, name); len(data) == 0 {
			t.Errorf("%s: empty", name)
		}
		if !strings.Contains(string(readme), name) || !strings.Contains(string(readme), sum) {
			t.Errorf("testdata/README.md does not list %s with its sha256", name)
		}
	}
	err = filepath.WalkDir(dir, func(p string, d fs.DirEntry, err error) error {
		if err != nil || d.IsDir() || d.Name() == "SHA256SUMS" {
			return err
		}
		rel, _ := filepath.Rel(dir, p)
		if _, ok := sums[strings.TrimSuffix(filepath.ToSlash(rel), ".zst")]; !ok {
			t.Errorf("%s is not listed in SHA256SUMS", rel)
		}
		return nil
	})
	if err != nil {
		t.Fatal(err)
	}
	for _, server := range []string{"llamacpp", "vllm-sim"} {
		m, _ := filepath.Glob(filepath.Join(Servers(t), server, "*.http"))
		if len(m) == 0 {
			t.Errorf("no recordings in testdata/servers/%s", server)
		}
		if !strings.Contains(string(readme), "servers/"+server) {
			t.Errorf("testdata/README.md does not describe servers/%s", server)
		}
	}
}

// TestTrace: Trace's file holds the original bytes under the trace's name.
func TestTrace(t *testing.T) {
	p := Trace(t, "splitwise/test_trace.csv")
	if filepath.Base(p) != "test_trace.csv" {
		t.Errorf("path %s, want base name test_trace.csv", p)
	}
	got, err := os.ReadFile(p)
	if err != nil {
		t.Fatal(err)
	}
	if string(got) != string(TraceBytes(t, "splitwise/test_trace.csv")) {
		t.Error("Trace's file differs from TraceBytes")
	}
}

// TestReadTraceErrors: a trace that is not listed, missing, not valid zstd
// or not the original is an error that says which; a listed plain or
// compressed original reads back.
func TestReadTraceErrors(t *testing.T) {
	orig := []byte("a,b\n1,2\n")
	enc, err := zstd.NewWriter(nil)
	if err != nil {
		t.Fatal(err)
	}
	files := map[string][]byte{
		"good.csv.zst":    enc.EncodeAll(orig, nil),
		"changed.csv.zst": enc.EncodeAll([]byte("a,b\n1,3\n"), nil),
		"corrupt.csv.zst": []byte("not zstd"),
		"plain.csv":       orig,
	}
	enc.Close()
	dir := t.TempDir()
	sum := sha256.Sum256(orig)
	var sums strings.Builder
	for _, name := range []string{"good.csv", "changed.csv", "corrupt.csv", "plain.csv", "gone.csv"} {
		sums.WriteString(hex.EncodeToString(sum[:]) + "  " + name + "\n")
	}
	files["SHA256SUMS"] = []byte(sums.String())
	for name, data := range files {
		if err := os.WriteFile(filepath.Join(dir, name), data, 0o644); err != nil {
			t.Fatal(err)
		}
	}
	for _, tc := range []struct{ name, err string }{
		{"good.csv", ""},
		{"plain.csv", ""},
		{"changed.csv", "not the original"},
		{"corrupt.csv", "decompress"},
		{"gone.csv", "missing from the repository"},
		{"unlisted.csv", "not listed in"},
	} {
		data, err := readTrace(dir, tc.name)
		switch {
		case tc.err == "" && (err != nil || string(data) != string(orig)):
			t.Errorf("%s: %q, %v; want the original bytes", tc.name, data, err)
		case tc.err != "" && (err == nil || !strings.Contains(err.Error(), tc.err)):
			t.Errorf("%s: error %v, want one containing %q", tc.name, err, tc.err)
		}
	}
}

// sharedPath matches a string literal that names the project's shared
// directory outside the repository, which a user's clone does not have.
var sharedPath = regexp.MustCompile(`^shared$|(^|/)\.\./shared(/|$)|^shared/(traces|fixtures|reference)`)

// TestNoTestReadsOutsideRepository fails when a test file of the module
// names a path into the shared directory beside the repository: tests read
// only what the repository holds (this package, or a package's testdata).
func TestNoTestReadsOutsideRepository(t *testing.T) {
	root := Root(t)
	fset := token.NewFileSet()
	err := filepath.WalkDir(root, func(p string, d fs.DirEntry, err error) error {
		if err != nil {
			return err
		}
		if d.IsDir() {
			switch d.Name() {
			case "testdata", "node_modules", ".git":
				return filepath.SkipDir
			}
			return nil
		}
		if !strings.HasSuffix(p, "_test.go") {
			return nil
		}
		f, err := parser.ParseFile(fset, p, nil, parser.SkipObjectResolution)
		if err != nil {
			return err
		}
		ast.Inspect(f, func(n ast.Node) bool {
			lit, ok := n.(*ast.BasicLit)
			if !ok || lit.Kind != token.STRING {
				return true
			}
			if s, err := strconv.Unquote(lit.Value); err == nil && sharedPath.MatchString(s) {
				t.Errorf("%s: %q reads outside the repository; copy the file into testdata/ (see internal/testfiles)", fset.Position(lit.Pos()), s)
			}
			return true
		})
		return nil
	})
	if err != nil {
		t.Fatal(err)
	}
}
