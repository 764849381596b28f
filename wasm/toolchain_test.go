package wasm_test

import (
	"bytes"
	"context"
	"os"
	"os/exec"
	"path/filepath"
	"testing"

	"github.com/reprise-bench/reprise/engine/adapter"
	"github.com/reprise-bench/reprise/wasm"
	"github.com/reprise-bench/reprise/wasm/scaffold"
)

// needToolchains skips (loudly) unless every guest toolchain is installed.
// They are Debian packages and npm modules that CI machines may lack; the
// committed .wasm files keep every other test independent of them.
func needToolchains(t *testing.T) {
	t.Helper()
	if testing.Short() {
		t.Skip("SKIP: -short: not rebuilding guests")
	}
	var missing []string
	for _, tool := range []string{"go", "clang", "wat2wasm", "make"} {
		if _, err := exec.LookPath(tool); err != nil {
			missing = append(missing, tool)
		}
	}
	if _, err := os.Stat("/usr/bin/rustc"); err != nil {
		missing = append(missing, "/usr/bin/rustc")
	}
	if _, err := os.Stat("../sdk-wasm/assemblyscript/node_modules/.bin/asc"); err != nil {
		missing = append(missing, "asc (npm ci in sdk-wasm/assemblyscript)")
	}
	if len(missing) > 0 {
		t.Skipf("SKIP: guest toolchains missing: %v (see sdk-wasm/README.md)", missing)
	}
}

// TestWasmDrift rebuilds every committed module from source
// (scripts/wasm.sh --check) and fails on any difference.
func TestWasmDrift(t *testing.T) {
	needToolchains(t)
	cmd := exec.Command("scripts/wasm.sh", "--check")
	cmd.Dir = ".."
	out, err := cmd.CombinedOutput()
	if err != nil {
		t.Fatalf("scripts/wasm.sh --check: %v\n%s", err, out)
	}
}

// TestTemplates scaffolds an adapter in every SDK language (reprise
// adapters new), builds it with its generated Makefile, and checks that
// all four produce the same records on the sample stream: the SDKs agree.
func TestTemplates(t *testing.T) {
	needToolchains(t)
	asc, _ := filepath.Abs("../sdk-wasm/assemblyscript/node_modules")
	var first []byte
	for _, lang := range scaffold.Languages {
		t.Run(lang, func(t *testing.T) {
			dir := filepath.Join(t.TempDir(), "tpl")
			if _, err := scaffold.Write(dir, lang, "tpl-"+lang[:1]); err != nil {
				t.Fatal(err)
			}
			if lang == "assemblyscript" {
				if err := os.Symlink(asc, filepath.Join(dir, "node_modules")); err != nil {
					t.Fatal(err)
				}
			}
			mod := "tpl-" + lang[:1] + ".wasm"
			cmd := exec.Command("make", mod)
			cmd.Dir = dir
			cmd.Env = append(os.Environ(), "GOFLAGS=-buildvcs=false", "npm_config_offline=true")
			if out, err := cmd.CombinedOutput(); err != nil {
				t.Fatalf("make: %v\n%s", err, out)
			}
			a, err := wasm.Load(context.Background(), filepath.Join(dir, mod), wasm.Config{})
			if err != nil {
				t.Fatal(err)
			}
			defer a.Close(context.Background())
			in, err := a.Instantiate(&adapter.Config{Model: "m", Stream: true})
			if err != nil {
				t.Fatal(err)
			}
			defer in.Release()
			rec, err := wasm.ReadRecording(filepath.Join(dir, "sample.http"))
			if err != nil {
				t.Fatal(err)
			}
			c, err := wasm.Classify(in, 1, rec, adapter.FramingSSE, 2)
			if err != nil {
				t.Fatal(err)
			}
			var buf bytes.Buffer
			wasm.WriteClassified(&buf, c)
			var r adapter.HTTPRequest
			if err := in.Build(&adapter.BuildInput{Flags: adapter.BuildStream, MaxTokens: 9}, &r); err != nil {
				t.Fatal(err)
			}
			buf.WriteString(r.Method.String() + " " + r.Path + "\n" + string(r.Body) + "\n")
			if first == nil {
				first = buf.Bytes()
				t.Logf("%s output:\n%s", lang, first)
			} else if !bytes.Equal(first, buf.Bytes()) {
				t.Errorf("%s template differs from the go template:\n%s\nwant:\n%s", lang, buf.Bytes(), first)
			}
		})
	}
}
