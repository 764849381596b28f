package wasm_test

import (
	"bytes"
	"errors"
	"slices"
	"testing"

	"github.com/google/go-cmp/cmp"
	"github.com/google/go-cmp/cmp/cmpopts"

	"github.com/reprise-bench/reprise/engine/adapter"
	"github.com/reprise-bench/reprise/engine/adapter/openai"
	"github.com/reprise-bench/reprise/internal/conformance"
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
	conformance.ParsesLikeNative(t, native, guest, "wasm", "")
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

// FuzzConformanceOpenAIChat feeds arbitrary chunks (one event per line,
// the last byte of the input picking the open and event flags) to the
// openai-chat Wasm adapter and the native parser: records, final summary
// and whether parsing failed must be the same, on malformed JSON too.
// Seeds cover every field the adapter reads; scripts/fuzz.sh runs it.
func FuzzConformanceOpenAIChat(f *testing.F) {
	for _, s := range []string{
		`{"id":"c","object":"chat.completion.chunk","created":1,"model":"m","choices":[{"index":0,"delta":{"role":"assistant","content":"hi"},"finish_reason":null}],"usage":null}`,
		`{"choices":[{"index":0,"delta":{"content":"a\"b\u00e9\n"},"finish_reason":"stop"}],"usage":{"prompt_tokens":5,"completion_tokens":7,"prompt_tokens_details":{"cached_tokens":2},"completion_tokens_details":{"reasoning_tokens":1}}}`,
		`{"choices":[{"index":1,"delta":{"reasoning_content":"think","tool_calls":[{"index":0,"function":{"name":"f","arguments":"{\"x\":1}"}}]}},{"index":0,"text":"t","finish_reason":"length"}]}`,
		"{\"error\":{\"message\":\"bad \\\"x\\\"\",\"code\":429}}\n{\"object\":\"error\",\"message\":\"m\",\"code\":400}",
		`{"choices":[{"delta":{"refusal":"no","function_call":{"name":"g","arguments":"1"}}}],"timings":{"prompt_n":3,"predicted_ms":1.5e2}}`,
		` { "choices" : [ ] , "usage" : { "prompt_tokens" : -1 , "completion_tokens" : 1.5 } } `,
		`{"choices":[{"delta":{"content":"x"}}],}`, `{"a":tru}`, `{"a":"\u0001` + "\x01" + `"}`, `[1,2]`, `{"choices":[{"index":99999999999}]}`,
	} {
		f.Add([]byte(s + "\x00"))
		f.Add([]byte(s + "\x0b"))
	}
	a := load(f, "openai-chat")
	cfg := &adapter.Config{Model: "m", Stream: true}
	guest, err := a.NewInstance(cfg)
	if err != nil {
		f.Fatal(err)
	}
	defer guest.Release()
	native, err := openai.Adapter{}.NewInstance(cfg)
	if err != nil {
		f.Fatal(err)
	}
	classify := func(in adapter.Instance, evs []adapter.Event, open adapter.OpenFlags) ([]adapter.Record, adapter.Final, error) {
		if err := in.Open(1, open); err != nil {
			return nil, adapter.Final{}, err
		}
		recs, perr := in.Parse(1, &adapter.Batch{Events: evs, Flags: adapter.BatchEndOfStream}, nil)
		var fin adapter.Final
		cerr := in.Close(1, &fin)
		fin.Text, fin.Reasoning = bytes.Clone(fin.Text), bytes.Clone(fin.Reasoning)
		fin.ErrorMessage, fin.Extras = bytes.Clone(fin.ErrorMessage), bytes.Clone(fin.Extras)
		return recs, fin, errors.Join(perr, cerr)
	}
	f.Fuzz(func(t *testing.T, in []byte) {
		if len(in) == 0 {
			return
		}
		mode := in[len(in)-1]
		open := adapter.OpenStream
		if mode&1 != 0 {
			open |= adapter.OpenCaptureText
		}
		var evs []adapter.Event
		for line := range bytes.Lines(in[:len(in)-1]) {
			ev := adapter.Event{Data: bytes.TrimSuffix(line, []byte("\n"))}
			if mode&2 != 0 {
				ev.Flags |= adapter.EventNonOK
			}
			if mode&8 != 0 && len(evs) == 0 {
				ev.Name = []byte("error")
			}
			evs = append(evs, ev)
			if len(evs) == 8 {
				break
			}
		}
		wr, wf, werr := classify(native, evs, open)
		gr, gf, gerr := classify(guest, evs, open)
		if (werr == nil) != (gerr == nil) {
			t.Fatalf("native error %v, wasm error %v", werr, gerr)
		}
		// A failed batch yields no records from a guest (the request
		// fails), while the native parser returns those before the error,
		// and the host builds the captured text from the records.
		if werr != nil {
			wr, gr = nil, nil
			wf.Text, wf.Reasoning, wf.Other = nil, nil, nil
			gf.Text, gf.Reasoning, gf.Other = nil, nil, nil
		}
		// The ABI carries at most 1 KiB of a guest's error message.
		if len(wf.ErrorMessage) > 1024 {
			wf.ErrorMessage = wf.ErrorMessage[:1024]
		}
		if d := cmp.Diff(wr, gr, cmpopts.EquateEmpty()); d != "" {
			t.Fatalf("records differ (-native +wasm):\n%s", d)
		}
		if d := cmp.Diff(wf, gf, cmpopts.EquateEmpty()); d != "" {
			t.Fatalf("final differs (-native +wasm):\n%s", d)
		}
	})
}
