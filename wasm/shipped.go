package wasm

import (
	"embed"
	"fmt"
	"io/fs"
	"slices"
	"strings"
)

// The shipped adapters: each adapters/NAME.wasm is built from the sources
// beside it (adapters/NAME/) by `make wasm` and committed.
//
//go:embed adapters/*.wasm
var shippedFS embed.FS

// shippedLanguages records the source language of each shipped adapter.
var shippedLanguages = map[string]string{
	"openai-chat":        "Go",
	"tgi-generate":       "C",
	"anthropic-messages": "Rust",
	"kserve-generate":    "AssemblyScript",
}

// ShippedLanguage returns the language a shipped adapter is written in.
func ShippedLanguage(name string) string { return shippedLanguages[name] }

// shippedAPIs says what each shipped adapter speaks.
var shippedAPIs = map[string]string{
	"openai-chat":        "OpenAI chat completions (conformance reference)",
	"tgi-generate":       "HF TGI /generate_stream",
	"anthropic-messages": "Anthropic Messages",
	"kserve-generate":    "KServe v2 generate",
}

// ShippedAPI says in a few words what a shipped adapter speaks.
func ShippedAPI(name string) string { return shippedAPIs[name] }

// ShippedNames lists the shipped adapters, sorted.
func ShippedNames() []string {
	ents, _ := fs.ReadDir(shippedFS, "adapters")
	var names []string
	for _, e := range ents {
		if n, ok := strings.CutSuffix(e.Name(), ".wasm"); ok {
			names = append(names, n)
		}
	}
	slices.Sort(names)
	return names
}

// Shipped returns the module bytes of a shipped adapter.
func Shipped(name string) ([]byte, error) {
	b, err := shippedFS.ReadFile("adapters/" + name + ".wasm")
	if err != nil {
		return nil, fmt.Errorf("no shipped adapter %q (shipped: %s; or give a path to a .wasm file)", name, strings.Join(ShippedNames(), ", "))
	}
	return b, nil
}
