package wasm_test

import (
	"bytes"
	"encoding/json"
	"fmt"
	"os"
	"path/filepath"
	"slices"
	"strconv"
	"testing"

	"github.com/reprise-bench/reprise/engine/adapter"
	"github.com/reprise-bench/reprise/internal/jsonx"
	"github.com/reprise-bench/reprise/wasm"
)

// splice mirrors the engine's hole splicing for tests.
func splice(r *adapter.HTTPRequest, text string, tokens []int) []byte {
	var out []byte
	last := 0
	esc := func(s string) []byte { return jsonx.AppendContents(nil, s) } // as the engine splices
	for _, h := range r.Holes {
		out = append(out, r.Body[last:h.Offset]...)
		last = h.Offset
		switch h.Kind {
		case adapter.HolePromptText:
			out = append(out, esc(text)...)
		case adapter.HolePromptTokens:
			b, _ := json.Marshal(tokens)
			out = append(out, b...)
		case adapter.HoleMessages:
			out = append(out, `[{"role":"user","content":"`...)
			out = append(out, esc(text)...)
			out = append(out, `"}]`...)
		}
	}
	return append(out, r.Body[last:]...)
}

// TestShippedBuild builds one request with every shipped adapter, checks
// that the spliced body is valid JSON, that building is deterministic, and
// compares the request with testdata/TestShippedBuild/NAME.golden.
func TestShippedBuild(t *testing.T) {
	names := wasm.ShippedNames()
	if len(names) < 4 {
		t.Fatalf("shipped adapters %v: want at least 4", names)
	}
	for _, name := range names {
		t.Run(name, func(t *testing.T) {
			a := load(t, name)
			if !a.Describe().Builds {
				t.Skip("parse-only")
			}
			in, err := a.Instantiate(&adapter.Config{Model: "test-model", Stream: true, ExtraBody: json.RawMessage(`{"temperature":0}`),
				Options: map[string]string{}})
			if err != nil {
				t.Fatal(err)
			}
			defer in.Release()
			bi := &adapter.BuildInput{Flags: adapter.BuildStream | adapter.BuildFirstTurn, TraceRow: 3, InputTokens: 5, MaxTokens: 64,
				HashIDs: []uint64{1, 2}, BlockSize: 16, Seed: 42, PromptText: "Hello \"world\"\n", PromptTokens: []int{9, 8, 7}}
			var r1, r2 adapter.HTTPRequest
			if err := in.Build(bi, &r1); err != nil {
				t.Fatal(err)
			}
			if err := in.Build(bi, &r2); err != nil {
				t.Fatal(err)
			}
			if r1.Path != r2.Path || !bytes.Equal(r1.Body, r2.Body) || !slices.Equal(r1.Holes, r2.Holes) {
				t.Errorf("building twice gave different requests")
			}
			body := splice(&r1, bi.PromptText, bi.PromptTokens)
			if !json.Valid(body) {
				t.Errorf("spliced body is not valid JSON: %s", body)
			}
			if !bytes.Contains(body, []byte(`Hello \"world\"\n`)) && len(r1.Holes) > 0 {
				t.Errorf("prompt not spliced: %s", body)
			}
			var g bytes.Buffer
			fmt.Fprintf(&g, "%s %s\n", r1.Method, r1.Path)
			for _, h := range r1.Header {
				fmt.Fprintf(&g, "%s: %s\n", h.Name, h.Value)
			}
			for _, h := range r1.Holes {
				fmt.Fprintf(&g, "hole at %d kind %d\n", h.Offset, h.Kind)
			}
			fmt.Fprintf(&g, "\n%s\n", body)
			golden := filepath.Join("testdata", "TestShippedBuild", name+".golden")
			if *update {
				os.MkdirAll(filepath.Dir(golden), 0o755)
				if err := os.WriteFile(golden, g.Bytes(), 0o644); err != nil {
					t.Fatal(err)
				}
				return
			}
			want, err := os.ReadFile(golden)
			if err != nil {
				t.Fatalf("%v (run with -update)", err)
			}
			if !bytes.Equal(want, g.Bytes()) {
				t.Errorf("request differs from %s:\n%s\nwant:\n%s", golden, g.Bytes(), strconv.Quote(string(want)))
			}
		})
	}
}
