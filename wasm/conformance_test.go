package wasm_test

import (
	"bytes"
	"path/filepath"
	"slices"
	"testing"

	"github.com/google/go-cmp/cmp"
	"github.com/google/go-cmp/cmp/cmpopts"

	"github.com/reprise-bench/reprise/engine/adapter"
	"github.com/reprise-bench/reprise/engine/adapter/openai"
	"github.com/reprise-bench/reprise/internal/testfiles"
	"github.com/reprise-bench/reprise/wasm"
)

// TestConformanceOpenAIChat checks that the openai-chat Wasm adapter
// produces exactly the records and final summary of the native parser on
// every recorded fixture, in one batch and in batches of 3 events.
func TestConformanceOpenAIChat(t *testing.T) {
	a := load(t, "openai-chat")
	cfg := &adapter.Config{Model: "m", Stream: true}
	guest, err := a.NewInstance(cfg)
	if err != nil {
		t.Fatal(err)
	}
	defer guest.Release()
	native, err := openai.Adapter{}.NewInstance(cfg)
	if err != nil {
		t.Fatal(err)
	}
	for _, f := range testfiles.ServerResponses(t) {
		rec, err := wasm.ReadRecording(f)
		if err != nil {
			t.Fatal(err)
		}
		for _, batch := range []int{0, 3} {
			name := filepath.Base(filepath.Dir(f)) + "/" + filepath.Base(f)
			want, werr := wasm.Classify(native, 1, rec, adapter.FramingSSE, batch)
			got, gerr := wasm.Classify(guest, 1, rec, adapter.FramingSSE, batch)
			if (werr == nil) != (gerr == nil) {
				t.Errorf("%s batch %d: native error %v, wasm error %v", name, batch, werr, gerr)
			}
			if len(want.Records) == 0 && werr == nil {
				t.Errorf("%s: native parser produced no records; the comparison proves nothing", name)
			}
			if d := cmp.Diff(want.Records, got.Records); d != "" {
				t.Errorf("%s batch %d: records differ (-native +wasm):\n%s", name, batch, d)
			}
			if d := cmp.Diff(want.Final, got.Final, cmpopts.EquateEmpty()); d != "" {
				t.Errorf("%s batch %d: final differs (-native +wasm):\n%s", name, batch, d)
			}
		}
	}
}

// TestConformanceOpenAIChatBuild checks that the openai-chat Wasm adapter
// builds the same request as the native adapter (after splicing its
// prompt hole) for rows with and without their own content.
func TestConformanceOpenAIChatBuild(t *testing.T) {
	a := load(t, "openai-chat")
	cfg := &adapter.Config{Model: "m\"x\b\u2028", Stream: true, IgnoreEOS: true, IncludeUsage: true, ExtraBody: []byte(`{"temperature": 0.5, "top_p":1}`)}
	guest, err := a.Instantiate(cfg)
	if err != nil {
		t.Fatal(err)
	}
	defer guest.Release()
	native, _ := openai.Adapter{}.NewInstance(cfg)
	for i, raw := range []string{
		``,
		`{"text_input":"hi \u00e9 there"}`,
		`{"text_input":"\b\f \u2028\u2029 <&> \ud800"}`, // what JSON escapers disagree on
		`{"messages":[{"role":"system","content":"s"},{"role":"user","content":"u"}],"tools":[{"type":"function"}]}`,
		`{"extra":{"seed":7}}`,
		`{"payload":{"model":"x","prompt":"verbatim"}}`,
	} {
		for _, flags := range []adapter.BuildFlags{adapter.BuildStream, 0} {
			bi := &adapter.BuildInput{Flags: flags, MaxTokens: 32, PromptText: "synth \"prompt\"\t\x01\b\f\u2028 <&> \xff", Raw: []byte(raw)}
			var w, g adapter.HTTPRequest
			if err := native.Build(bi, &w); err != nil {
				t.Fatal(err)
			}
			if err := guest.Build(bi, &g); err != nil {
				t.Fatal(err)
			}
			gb := splice(&g, bi.PromptText, bi.PromptTokens)
			if w.Method != g.Method || w.Path != g.Path || !bytes.Equal(w.Body, gb) || !slices.Equal(w.Header, g.Header) {
				t.Errorf("case %d flags %d:\nnative %s %s %v\n%s\nwasm   %s %s %v\n%s", i, flags, w.Method, w.Path, w.Header, w.Body, g.Method, g.Path, g.Header, gb)
			}
		}
	}
}
