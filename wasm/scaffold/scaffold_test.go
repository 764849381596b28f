package scaffold

import (
	"bytes"
	"io/fs"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"testing"

	sdkwasm "github.com/reprise-bench/reprise/sdk-wasm"
)

// TestProjectsComplete checks that a new project gets every SDK source
// of its language: each file of package sdkwasm is in some language's
// project (sample.http in all), so an SDK file added later is not left
// out of what reprise adapters new writes.
func TestProjectsComplete(t *testing.T) {
	used := map[string]bool{"sample.http": true}
	for _, lang := range Languages {
		for _, f := range projects[lang] {
			used[f[1]] = true
		}
	}
	err := fs.WalkDir(sdkwasm.Files, ".", func(p string, d fs.DirEntry, err error) error {
		if err == nil && !d.IsDir() && !used[p] {
			t.Errorf("%s is embedded by package sdkwasm but in no project", p)
		}
		return err
	})
	if err != nil {
		t.Fatal(err)
	}
	if len(used) < 13 {
		t.Errorf("the projects use %d SDK files", len(used))
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
