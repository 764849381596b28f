// Package testfiles gives tests the real traces and server recordings kept
// in the repository's top-level testdata directory, so that every test runs
// on a plain clone. A file that is missing, or that does not decompress to
// the bytes it was published with, fails the test: nothing is skipped.
//
// # Layout
//
//	testdata/README.md            origin and licence of every file
//	testdata/traces/SHA256SUMS    sha256 of each original, uncompressed trace
//	testdata/traces/<dir>/<name>.zst   a trace, zstd-compressed
//	testdata/traces/<dir>/<name>       a small trace, stored as is
//	testdata/servers/<server>/<name>.http, .json   recorded server responses
//
// Traces are named as in SHA256SUMS, without the .zst suffix:
// "mooncake/conversation_trace.jsonl". [Trace] and [TraceBytes] return the
// original bytes, checked against that sum; they decompress each file once
// per test binary.
//
// The functions are safe for concurrent use.
package testfiles

import (
	"bufio"
	"bytes"
	"crypto/sha256"
	"encoding/hex"
	"errors"
	"fmt"
	"io"
	"os"
	"path/filepath"
	"strings"
	"sync"
	"testing"

	"github.com/klauspost/compress/zstd"
)

// modulePath is the module whose root holds testdata/.
const modulePath = "github.com/reprise-bench/reprise"

// Root returns the module root: the nearest directory at or above the
// working directory (a package directory under go test) whose go.mod
// declares this module.
func Root(t testing.TB) string {
	t.Helper()
	root, err := findRoot()
	if err != nil {
		t.Fatal(err)
	}
	return root
}

// Path returns the absolute path of testdata/rel and fails t when it does
// not exist.
func Path(t testing.TB, rel string) string {
	t.Helper()
	p := filepath.Join(Root(t), "testdata", filepath.FromSlash(rel))
	if _, err := os.Stat(p); err != nil {
		t.Fatalf("test file missing from the repository: %v", err)
	}
	return p
}

// Servers returns the directory of the recorded server responses,
// testdata/servers, which holds one directory per server (llamacpp,
// vllm-sim).
func Servers(t testing.TB) string {
	t.Helper()
	return Path(t, "servers")
}

// ServerResponses lists the recorded server responses (the .http files of
// every server directory under Servers, metrics pages excluded); it fails
// the test when there are none.
func ServerResponses(t testing.TB) []string {
	t.Helper()
	var out []string
	for _, dir := range []string{"llamacpp", "vllm-sim"} {
		m, err := filepath.Glob(filepath.Join(Servers(t), dir, "*.http"))
		if err != nil {
			t.Fatal(err)
		}
		for _, f := range m {
			if !strings.Contains(filepath.Base(f), "metrics") {
				out = append(out, f)
			}
		}
	}
	if len(out) == 0 {
		t.Fatal("no recorded server responses found")
	}
	return out
}

// TraceBytes returns the original bytes of the named trace. The caller
// owns the returned slice.
func TraceBytes(t testing.TB, name string) []byte {
	t.Helper()
	data, err := load(name)
	if err != nil {
		t.Fatal(err)
	}
	return bytes.Clone(data)
}

// Trace writes the original bytes of the named trace to a file with the
// trace's base name in a new temporary directory of t, and returns its
// path. The file is removed when t ends.
func Trace(t testing.TB, name string) string {
	t.Helper()
	data, err := load(name)
	if err != nil {
		t.Fatal(err)
	}
	p := filepath.Join(t.TempDir(), filepath.Base(name))
	if err := os.WriteFile(p, data, 0o644); err != nil {
		t.Fatal(err)
	}
	return p
}

var (
	mu    sync.Mutex
	cache = map[string][]byte{} // name → original bytes, verified
)

// load returns the verified bytes of the named trace, from the cache or
// from disk.
func load(name string) ([]byte, error) {
	mu.Lock()
	defer mu.Unlock()
	if data, ok := cache[name]; ok {
		return data, nil
	}
	root, err := findRoot()
	if err != nil {
		return nil, err
	}
	data, err := readTrace(filepath.Join(root, "testdata", "traces"), name)
	if err != nil {
		return nil, err
	}
	cache[name] = data
	return data, nil
}

// readTrace reads the trace name from dir (name.zst, else name) and checks
// its bytes against dir/SHA256SUMS.
func readTrace(dir, name string) ([]byte, error) {
	sums, err := readSums(filepath.Join(dir, "SHA256SUMS"))
	if err != nil {
		return nil, err
	}
	want, ok := sums[name]
	if !ok {
		return nil, fmt.Errorf("trace %s is not listed in %s; add its sha256 there", name, filepath.Join(dir, "SHA256SUMS"))
	}
	p := filepath.Join(dir, filepath.FromSlash(name))
	var data []byte
	if raw, err := os.ReadFile(p + ".zst"); err == nil {
		dec, err := zstd.NewReader(nil)
		if err != nil {
			return nil, err
		}
		defer dec.Close()
		if data, err = dec.DecodeAll(raw, nil); err != nil {
			return nil, fmt.Errorf("decompress %s.zst: %w", p, err)
		}
	} else if !errors.Is(err, os.ErrNotExist) {
		return nil, err
	} else if data, err = os.ReadFile(p); err != nil {
		return nil, fmt.Errorf("trace %s missing from the repository: neither %s.zst nor %s: %w", name, p, p, err)
	}
	sum := sha256.Sum256(data)
	if got := hex.EncodeToString(sum[:]); got != want {
		return nil, fmt.Errorf("trace %s: sha256 %s, SHA256SUMS says %s: the file is not the original", name, got, want)
	}
	return data, nil
}

// readSums parses a sha256sum(1) listing: "<hex>  <name>" per line.
func readSums(path string) (map[string]string, error) {
	f, err := os.Open(path)
	if err != nil {
		return nil, err
	}
	defer f.Close()
	sums := map[string]string{}
	sc := bufio.NewScanner(f)
	for line := 1; sc.Scan(); line++ {
		sum, name, ok := strings.Cut(sc.Text(), "  ")
		if !ok || len(sum) != 64 || name == "" {
			return nil, fmt.Errorf("%s:%d: want \"<sha256>  <name>\", got %q", path, line, sc.Text())
		}
		sums[name] = sum
	}
	return sums, sc.Err()
}

// findRoot walks up from the working directory to this module's go.mod.
func findRoot() (string, error) {
	dir, err := os.Getwd()
	if err != nil {
		return "", err
	}
	for {
		if isModuleRoot(filepath.Join(dir, "go.mod")) {
			return dir, nil
		}
		parent := filepath.Dir(dir)
		if parent == dir {
			return "", fmt.Errorf("no go.mod of %s above the working directory", modulePath)
		}
		dir = parent
	}
}

// isModuleRoot reports whether the go.mod at path declares this module
// (the guest SDKs under sdk-wasm have go.mod files of their own).
func isModuleRoot(path string) bool {
	f, err := os.Open(path)
	if err != nil {
		return false
	}
	defer f.Close()
	sc := bufio.NewScanner(io.LimitReader(f, 4096))
	for sc.Scan() {
		if strings.TrimSpace(sc.Text()) == "module "+modulePath {
			return true
		}
	}
	return false
}
