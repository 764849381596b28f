package openai_test

import (
	"bytes"
	"encoding/json"
	"errors"
	"path/filepath"
	"strings"
	"testing"

	"github.com/google/go-cmp/cmp"

	"github.com/reprise-bench/reprise/engine/adapter"
	"github.com/reprise-bench/reprise/engine/adapter/openai"
	"github.com/reprise-bench/reprise/internal/conformance"
)

// TestTemplateConformance: the shipped template files of the OpenAI chat
// and completions shapes (templates/) produce exactly the native
// adapter's records and final summary on every recorded server response,
// in one batch and in batches of 3, and build the same request bodies.
func TestTemplateConformance(t *testing.T) {
	for _, tc := range []struct {
		file string
		ep   openai.Endpoint
	}{{"openai-chat.json", openai.Chat}, {"openai-completions.json", openai.Completions}} {
		tpl, err := openai.LoadTemplate(filepath.Join("templates", tc.file))
		if err != nil {
			t.Fatal(err)
		}
		cfg := &adapter.Config{Model: "m\"x", Stream: true, IgnoreEOS: true, IncludeUsage: true, ExtraBody: []byte(`{"temperature":0.5}`)}
		got, err := tpl.NewInstance(cfg)
		if err != nil {
			t.Fatal(err)
		}
		native, _ := openai.Adapter{Endpoint: tc.ep}.NewInstance(cfg)
		conformance.ParsesLikeNative(t, native, got, "template", tc.file+" on ")
		for i, raw := range []string{``, `{"text_input":"hi \u00e9"}`, `{"messages":[{"role":"system","content":"s"}],"tools":[{"type":"function"}]}`,
			`{"extra":{"seed":7,"temperature":1}}`} {
			for _, flags := range []adapter.BuildFlags{adapter.BuildStream, 0} {
				bi := &adapter.BuildInput{Flags: flags, MaxTokens: 32, PromptText: "synth \"prompt\"\t\x01 <&>", Raw: []byte(raw)}
				var w, g adapter.HTTPRequest
				if err := native.Build(bi, &w); err != nil {
					t.Fatal(err)
				}
				if err := got.Build(bi, &g); err != nil {
					t.Fatal(err)
				}
				var wv, gv any
				if json.Unmarshal(w.Body, &wv) != nil || json.Unmarshal(g.Body, &gv) != nil {
					t.Fatalf("case %d: bodies %s / %s", i, w.Body, g.Body)
				}
				if d := cmp.Diff(wv, gv); d != "" || w.Path != g.Path || w.Method != g.Method {
					t.Errorf("%s case %d flags %d: %s %s vs %s %s (-native +template):\n%s", tc.file, i, flags, w.Method, w.Path, g.Method, g.Path, d)
				}
			}
		}
	}
}

// TestTemplateErrors: a bad template names its file, the line of the
// offending key and the field.
func TestTemplateErrors(t *testing.T) {
	cases := []struct{ src, want string }{
		{"{\n  \"path\": \"/x\",\n  \"body\": {\"a\": \"{{nope}}\"},\n  \"response\": {\"text\": \"t\"}\n}", "t.json:3: body.a: unknown placeholder {{nope}}"},
		{"{\n  \"path\": \"v1\",\n  \"body\": {},\n  \"response\": {\"text\": \"t\"}\n}", "t.json:2: path: want the request path"},
		{"{\n  \"path\": \"/x\",\n  \"body\": {\"m\": \"n={{max_tokens}}\"},\n  \"response\": {\"text\": \"t\"}\n}", "t.json:3: body.m: {{max_tokens}} is not a string"},
		{"{\n  \"path\": \"/x\",\n  \"body\": {},\n  \"response\": {\n    \"txt\": \"t\"\n  }\n}", "t.json:5: response.txt: unknown key"},
		{"{\n  \"path\": \"/x\",\n  \"body\": {},\n  \"response\": {\"text\": \"t\"},\n}", "t.json:5: not a JSON template"},
		{"{\"path\": \"/x\", \"body\": {}, \"response\": {}}", "response.text: missing"},
	}
	for _, tc := range cases {
		_, err := openai.ParseTemplate("t.json", []byte(tc.src))
		if err == nil || !strings.Contains(err.Error(), tc.want) {
			t.Errorf("%q: error %v, want %q", tc.src, err, tc.want)
		}
		if _, ok := errors.AsType[*openai.TemplateError](err); err != nil && !ok {
			t.Errorf("%q: %T is not a *TemplateError", tc.src, err)
		}
	}
}

// TestTemplateJSONLines: a template for an NDJSON API with a whole-body
// form, session id header and placeholders inside strings.
func TestTemplateJSONLines(t *testing.T) {
	src := `{"name": "inhouse", "path": "/gen", "framing": "jsonl",
	  "headers": {"X-Session": "{{session_id}}"},
	  "body": {"q": "{{prompt}}", "opts": {"limit": "{{max_tokens}}", "tag": "m={{model}}"}, "stream": "{{stream}}"},
	  "response": {"text": "out", "finish_reason": "stop_reason", "usage": "stats", "prompt_tokens": "in", "completion_tokens": "out_n", "error": "err"}}`
	tpl, err := openai.ParseTemplate("inhouse.json", []byte(src))
	if err != nil {
		t.Fatal(err)
	}
	if tpl.Info().Framing != adapter.FramingNDJSON {
		t.Errorf("framing %v", tpl.Info().Framing)
	}
	in, _ := tpl.NewInstance(&adapter.Config{Model: "m1", ExtraBody: []byte(`{"x":1}`)})
	var out adapter.HTTPRequest
	if err := in.Build(&adapter.BuildInput{Flags: adapter.BuildStream, PromptText: "hi", SessionID: "s9"}, &out); err != nil {
		t.Fatal(err)
	}
	if want := `{"q":"hi","opts":{"tag":"m=m1"},"stream":true,"x":1}`; string(out.Body) != want || out.Path != "/gen" {
		t.Errorf("body %s path %s, want %s", out.Body, out.Path, want)
	}
	if i := len(out.Header) - 1; out.Header[i] != (adapter.Header{Name: "X-Session", Value: "s9"}) {
		t.Errorf("headers %v", out.Header)
	}
	in.Open(1, adapter.OpenStream|adapter.OpenCaptureText)
	evs := []adapter.Event{{Data: []byte(`{"out":"Hel"}`)}, {Data: []byte(`{"out":"lo"}`)},
		{Data: []byte(`{"out":"","stop_reason":"length","stats":{"in":3,"out_n":2}}`)}}
	recs, err := in.Parse(1, &adapter.Batch{Events: evs}, nil)
	if err != nil {
		t.Fatal(err)
	}
	var fin adapter.Final
	in.Close(1, &fin)
	if len(recs) != 4 || string(fin.Text) != "Hello" || fin.FinishReason != adapter.FinishLength || fin.PromptTokens != 3 || fin.CompletionTokens != 2 {
		t.Errorf("records %+v, final %+v", recs, fin)
	}
	if !bytes.Equal(fin.Text, []byte("Hello")) {
		t.Errorf("text %q", fin.Text)
	}
}

// TestTemplateRefusesRawWireText: a template's path with CR, LF or a
// space, and a header whose name is no token or whose value holds a
// control character, are refused at load naming the field: they would
// reach the request line or the head as written.
func TestTemplateRefusesRawWireText(t *testing.T) {
	for _, tt := range []struct{ tpl, field, want string }{
		{`{"path":"/x\r\nX-Inj: 1","body":{},"response":{"text":"t"}}`, "path", "holds a CR at byte 2"},
		{`{"path":"/x y","body":{},"response":{"text":"t"}}`, "path", "holds a space at byte 2"},
		{`{"path":"/x","headers":{"X-A":"a\u0000{{session_id}}"},"body":{},"response":{"text":"t"}}`, "headers.X-A", "holds a NUL"},
		{`{"path":"/x","headers":{"X-A":"\u001b[2J"},"body":{},"response":{"text":"t"}}`, "headers.X-A", "holds byte 0x1b"},
		{`{"path":"/x","headers":{"X A":"v"},"body":{},"response":{"text":"t"}}`, "headers.X A", "is not a header name"},
	} {
		_, err := openai.ParseTemplate("t.json", []byte(tt.tpl))
		te, ok := errors.AsType[*openai.TemplateError](err)
		if !ok || te.Field != tt.field || !strings.Contains(err.Error(), tt.want) {
			t.Errorf("%s: %v, want a TemplateError of field %s with %q", tt.tpl, err, tt.field, tt.want)
		}
	}
}
