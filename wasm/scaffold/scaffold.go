package scaffold

import (
	"errors"
	"fmt"
	"io/fs"
	"os"
	"path"
	"path/filepath"
	"slices"
	"strings"

	sdkwasm "github.com/reprise-bench/reprise/sdk-wasm"
)

// projects lists, per language, the files of a new project that come from
// the SDK: the project's path, then the SDK's (package sdkwasm, the one
// copy of each).
var projects = map[string][][2]string{
	"go": {
		{"main.go", "go/template/main.go"},
		{"sdk/adapter/adapter.go", "go/adapter/adapter.go"},
		{"sdk/adapter/exports.go", "go/adapter/exports.go"},
		{"sdk/adapter/json.go", "go/adapter/json.go"},
		{"sdk/adapter/scan.go", "go/adapter/scan.go"},
	},
	"c": {
		{"adapter.c", "c/template/adapter.c"},
		{"reprise_adapter.h", "c/reprise_adapter.h"},
	},
	"rust": {
		{"src/main.rs", "rust/template/src/main.rs"},
		{"reprise_adapter.rs", "rust/reprise_adapter.rs"},
		{"rustc-wasm.sh", "rust/rustc-wasm.sh"},
	},
	"assemblyscript": {
		{"adapter.ts", "assemblyscript/template/adapter.ts"},
		{"reprise.ts", "assemblyscript/assembly/reprise.ts"},
	},
}

// sdkModule is the Go SDK's module, which a Go project's copy of the SDK
// (sdk/) declares and its go.mod replaces.
const sdkModule = "github.com/reprise-bench/reprise/sdk-wasm/go"

// Languages are the SDK languages, in help order.
var Languages = []string{"go", "c", "rust", "assemblyscript"}

// templateName is the adapter name in the templates, replaced by the new
// adapter's name.
const templateName = "my-adapter"

// makefiles are the generated build rules, one line each.
var makefiles = map[string]string{
	"go": "# Build and test NAME (needs Go 1.26 and reprise on PATH).\n" +
		"NAME.wasm: main.go go.mod $(wildcard sdk/adapter/*.go) ; GOOS=wasip1 GOARCH=wasm go build -buildmode=c-shared -trimpath -ldflags='-s -w' -o $@ .\n" +
		"test: NAME.wasm ; reprise adapters test NAME.wasm --fixture sample.http\n",
	"c": "# Build and test NAME (needs clang, lld, wasi-libc, libclang-rt-dev-wasm32 and reprise on PATH).\n" +
		"NAME.wasm: adapter.c reprise_adapter.h ; clang --target=wasm32-wasi -mexec-model=reactor -O2 -I . -o $@ adapter.c\n" +
		"test: NAME.wasm ; reprise adapters test NAME.wasm --fixture sample.http\n",
	"rust": "# Build and test NAME (needs a rustc with a WASI standard library, which sh rustc-wasm.sh --print checks, and reprise on PATH).\n" +
		"NAME.wasm: src/main.rs reprise_adapter.rs ; sh rustc-wasm.sh $@ src/main.rs\n" +
		"test: NAME.wasm ; reprise adapters test NAME.wasm --fixture sample.http\n",
	"assemblyscript": "# Build and test NAME (needs Node.js; run npm install once; reprise on PATH).\n" +
		"NAME.wasm: adapter.ts reprise.ts ; node_modules/.bin/asc adapter.ts -O3 --runtime stub --use abort= -o $@\n" +
		"test: NAME.wasm ; reprise adapters test NAME.wasm --fixture sample.http\n",
}

// rewrites fix paths that differ between the in-repository templates and a
// standalone project.
var rewrites = map[string][][2]string{
	"rust":           {{`#[path = "../../reprise_adapter.rs"]`, `#[path = "../reprise_adapter.rs"]`}},
	"assemblyscript": {{`"../assembly/reprise"`, `"./reprise"`}},
}

// Write creates directory dir holding a new adapter project called name in
// lang. dir must not exist or be empty. It returns the files written,
// relative to dir.
func Write(dir, lang, name string) ([]string, error) {
	if !slices.Contains(Languages, lang) {
		return nil, fmt.Errorf("language %q: want one of %s", lang, strings.Join(Languages, ", "))
	}
	if !validName(name) {
		return nil, fmt.Errorf("adapter name %q: want lower-case letters, digits and dashes, starting with a letter", name)
	}
	if ents, err := os.ReadDir(dir); err == nil && len(ents) > 0 {
		return nil, fmt.Errorf("%s exists and is not empty", dir)
	} else if err != nil && !errors.Is(err, fs.ErrNotExist) {
		return nil, err
	}
	out := map[string][]byte{}
	for _, f := range append(projects[lang], [2]string{"sample.http", "sample.http"}) {
		b, err := sdkwasm.Files.ReadFile(f[1])
		if err != nil {
			return nil, err
		}
		out[f[0]] = b
	}
	out["Makefile"] = []byte(makefiles[lang])
	switch lang {
	case "go":
		out["go.mod"] = []byte("module example.com/" + name + "\n\ngo 1.26.8\n\nrequire " + sdkModule + " v0.0.0\n\n" +
			"replace " + sdkModule + " => ./sdk\n")
		out["sdk/go.mod"] = []byte("module " + sdkModule + "\n\ngo 1.26.8\n")
	case "assemblyscript":
		out["package.json"] = []byte(`{
  "name": "` + name + `",
  "version": "0.1.0",
  "private": true,
  "devDependencies": {
    "assemblyscript": "0.28.20"
  }
}
`)
	}
	var names []string
	for p, b := range out {
		s := string(b)
		for _, rw := range rewrites[lang] {
			if p == "src/main.rs" || p == "adapter.ts" {
				s = strings.ReplaceAll(s, rw[0], rw[1])
			}
		}
		if !strings.HasPrefix(p, "sdk/") && p != "reprise_adapter.h" && p != "reprise_adapter.rs" && p != "reprise.ts" && p != "rustc-wasm.sh" {
			s = strings.ReplaceAll(s, templateName, name)
			s = strings.ReplaceAll(s, "NAME", name)
		}
		full := filepath.Join(dir, filepath.FromSlash(p))
		if err := os.MkdirAll(filepath.Dir(full), 0o755); err != nil {
			return nil, err
		}
		if err := os.WriteFile(full, []byte(s), 0o644); err != nil {
			return nil, err
		}
		names = append(names, path.Clean(p))
	}
	slices.Sort(names)
	return names, nil
}

func validName(s string) bool {
	if s == "" || len(s) > 64 || s[0] < 'a' || s[0] > 'z' {
		return false
	}
	for i := 0; i < len(s); i++ {
		c := s[i]
		if !(c >= 'a' && c <= 'z' || c >= '0' && c <= '9' || c == '-') {
			return false
		}
	}
	return true
}
