package scaffold

import (
	"bufio"
	"bytes"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"testing"
)

// TestFilesInSync checks that every embedded file equals its SDK source
// (run `make wasm` to refresh the copies).
func TestFilesInSync(t *testing.T) {
	f, err := os.Open("sync.txt")
	if err != nil {
		t.Fatal(err)
	}
	defer f.Close()
	sc := bufio.NewScanner(f)
	n := 0
	for sc.Scan() {
		line := strings.TrimSpace(sc.Text())
		if line == "" || line[0] == '#' {
			continue
		}
		fields := strings.Fields(line)
		if len(fields) != 2 {
			t.Fatalf("sync.txt: %q: want TARGET SOURCE", line)
		}
		dst, err := os.ReadFile(filepath.Join("..", "..", fields[0]))
		if err != nil {
			t.Fatal(err)
		}
		src, err := os.ReadFile(filepath.Join("..", "..", fields[1]))
		if err != nil {
			t.Fatal(err)
		}
		if !bytes.Equal(dst, src) {
			t.Errorf("%s is stale: it must equal %s (run make wasm)", fields[0], fields[1])
		}
		n++
	}
	if n < 10 {
		t.Errorf("sync.txt lists %d files", n)
	}
}

func TestWrite(t *testing.T) {
	for _, lang := range Languages {
		t.Run(lang, func(t *testing.T) {
			dir := filepath.Join(t.TempDir(), "acme-gen")
			got, err := Write(dir, lang, "acme-gen")
			if err != nil {
				t.Fatal(err)
			}
			for _, want := range []string{"Makefile", "sample.http"} {
				if !slices.Contains(got, want) {
					t.Errorf("files %v: missing %s", got, want)
				}
			}
			mk, _ := os.ReadFile(filepath.Join(dir, "Makefile"))
			if !strings.Contains(string(mk), "acme-gen.wasm:") {
				t.Errorf("Makefile does not build acme-gen.wasm:\n%s", mk)
			}
			for _, p := range got {
				b, _ := os.ReadFile(filepath.Join(dir, p))
				if strings.Contains(string(b), "my-adapter") {
					t.Errorf("%s still names my-adapter", p)
				}
			}
			if _, err := Write(dir, lang, "acme-gen"); err == nil {
				t.Error("writing into a non-empty directory succeeded")
			}
		})
	}
	// The Rust project builds with the SDK's toolchain picker.
	dir := filepath.Join(t.TempDir(), "rs")
	if _, err := Write(dir, "rust", "rs"); err != nil {
		t.Fatal(err)
	}
	mk, _ := os.ReadFile(filepath.Join(dir, "Makefile"))
	if !strings.Contains(string(mk), "rs.wasm: src/main.rs reprise_adapter.rs ; sh rustc-wasm.sh $@ src/main.rs\n") {
		t.Errorf("the Rust Makefile does not build with rustc-wasm.sh:\n%s", mk)
	}
	got, _ := os.ReadFile(filepath.Join(dir, "rustc-wasm.sh"))
	want, _ := os.ReadFile(filepath.Join("..", "..", "sdk-wasm", "rust", "rustc-wasm.sh"))
	if len(want) == 0 || !bytes.Equal(got, want) {
		t.Errorf("the Rust project's rustc-wasm.sh differs from the SDK's (%d and %d bytes)", len(got), len(want))
	}
	if _, err := Write(t.TempDir(), "cobol", "x"); err == nil {
		t.Error("unknown language accepted")
	}
	if _, err := Write(t.TempDir(), "go", "Bad_Name"); err == nil {
		t.Error("bad name accepted")
	}
}
