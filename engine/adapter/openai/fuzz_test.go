package openai

import (
	"encoding/json"
	"errors"
	"strings"
	"testing"
	"unicode/utf8"

	"github.com/reprise-bench/reprise/engine/adapter"
	"github.com/reprise-bench/reprise/internal/httpfield"
)

// FuzzOpenAIChunk checks the native chunk scanner against encoding/json:
// it never panics, accepts every valid JSON object, and captures exactly
// the content text encoding/json decodes for choice 0.
func FuzzOpenAIChunk(f *testing.F) {
	for _, s := range []string{vllmChunk, llamaUsage,
		`{"choices":[{"index":0,"delta":{"content":"a\n\"\u00e9\ud83d\ude00"}}]}`,
		`{"choices":[{"delta":{"content":"a"},"index":1},{"delta":{"content":"bb"},"index":0}]}`,
		`{"error":{"code":500,"message":"x"}}`, `{"object":"error","message":"bad","code":400}`,
		`{"choices":[{"index":0,"delta":{"tool_calls":[{"index":0,"function":{"name":"f","arguments":"{}"}}]}}]}`,
		`{"choices":[{"text":"","index":0,"finish_reason":"length"}],"usage":{"completion_tokens":16}}`,
		`{"choices":[],"usage":null}`, `[]`, `{"a":[1,2,{"b":null}],"c":-1.5e3}`, `{"choices":[{"index":0,"delta":{"content":"\ud800x"}}]}`,
	} {
		f.Add([]byte(s))
	}
	f.Fuzz(func(t *testing.T, b []byte) {
		recs, fin, err := parseOne(t, Chat, adapter.Event{Data: b})
		obj := jsonObject(t, b, recs, err, true)
		if obj == nil || !utf8.Valid(b) {
			return // encoding/json rewrites invalid UTF-8
		}
		want := ""
		if choices, ok := lastValue(obj, "choices").([]any); ok {
			for _, c := range choices {
				cm, ok := c.(map[string]any)
				if !ok {
					continue
				}
				if idx, _ := cm["index"].(float64); idx != 0 {
					if _, has := cm["index"]; has {
						continue
					}
				}
				for _, k := range []string{"delta", "message"} {
					if d, ok := cm[k].(map[string]any); ok {
						if s, ok := d["content"].(string); ok {
							want += s
						}
					}
				}
				if s, ok := cm["text"].(string); ok {
					want += s
				}
			}
		}
		if string(fin.Text) != want {
			t.Fatalf("%q: captured %q, encoding/json %q", b, fin.Text, want)
		}
	})
}

// parseOne opens a capturing stream on an ep instance, parses ev as its
// only event and closes the stream; every record must name event 0.
func parseOne(t *testing.T, ep Endpoint, ev adapter.Event) ([]adapter.Record, adapter.Final, error) {
	t.Helper()
	in := newInst(t, ep)
	in.Open(1, adapter.OpenStream|adapter.OpenCaptureText)
	recs, err := in.Parse(1, &adapter.Batch{Events: []adapter.Event{ev}}, nil)
	var fin adapter.Final
	in.Close(1, &fin)
	for _, r := range recs {
		if r.Event != 0 {
			t.Fatalf("record for event %d", r.Event)
		}
	}
	return recs, fin, err
}

// jsonObject is encoding/json's reading of the event b that a parser gave
// recs and err for: the object, or nil when there is nothing more to
// compare (b is invalid JSON, which the scanner may accept leniently, or
// nested deeper than the scanner allows, or no object). A valid object the
// parser rejected fails t, and so, when nonObjects, does a non-object that
// gave records.
func jsonObject(t *testing.T, b []byte, recs []adapter.Record, err error, nonObjects bool) map[string]any {
	t.Helper()
	var v any
	if json.Unmarshal(b, &v) != nil {
		return nil
	}
	obj, isObj := v.(map[string]any)
	if !isObj {
		if nonObjects && err == nil && len(recs) > 0 {
			t.Fatalf("non-object %q gave records %+v", b, recs)
		}
		return nil
	}
	if err != nil {
		if depth(v) > 60 {
			return nil // the scanner bounds nesting
		}
		t.Fatalf("valid JSON object %q rejected: %v", b, err)
	}
	return obj
}

func lastValue(m map[string]any, k string) any { return m[k] }

func depth(v any) int {
	switch x := v.(type) {
	case map[string]any:
		d := 0
		for _, e := range x {
			d = max(d, depth(e))
		}
		return d + 1
	case []any:
		d := 0
		for _, e := range x {
			d = max(d, depth(e))
		}
		return d + 1
	}
	return 0
}

// FuzzResponsesEvent checks the Responses event parser against
// encoding/json: it never panics, accepts every valid JSON object, and
// captures exactly the delta of an output_text delta event.
func FuzzResponsesEvent(f *testing.F) {
	for _, s := range []string{
		`{"type":"response.output_text.delta","sequence_number":9,"item_id":"msg_1","output_index":1,"content_index":0,"delta":" a\n\u00e9","logprobs":[]}`,
		`{"type":"response.reasoning_text.delta","delta":"x"}`,
		`{"type":"response.completed","response":{"status":"completed","usage":{"input_tokens":3,"input_tokens_details":{"cached_tokens":1},"output_tokens":2,"output_tokens_details":{"reasoning_tokens":1}}}}`,
		`{"type":"response.incomplete","response":{"status":"incomplete","incomplete_details":{"reason":"content_filter"}}}`,
		`{"type":"error","code":"server_error","message":"x"}`, `{"type":"response.failed","response":{"error":{"code":"e","message":"m"}}}`,
		`{"delta":"no type"}`, `[]`, `{"type":1}`,
	} {
		f.Add([]byte(s), false)
		f.Add([]byte(s), true)
	}
	f.Fuzz(func(t *testing.T, b []byte, whole bool) {
		ev := adapter.Event{Data: b}
		if whole {
			ev.Flags = adapter.EventWholeBody
		}
		recs, fin, err := parseOne(t, Responses, ev)
		obj := jsonObject(t, b, recs, err, true)
		if obj == nil || whole || !utf8.Valid(b) {
			return
		}
		want := ""
		if obj["type"] == "response.output_text.delta" {
			want, _ = obj["delta"].(string)
		}
		if string(fin.Text) != want {
			t.Fatalf("%q: captured %q, encoding/json %q", b, fin.Text, want)
		}
	})
}

// FuzzGenerateEvent: the SGLang and TGI parsers never panic, accept every
// valid JSON object, and a TGI token event captures exactly its token's
// text.
func FuzzGenerateEvent(f *testing.F) {
	for _, s := range []string{
		`{"text":" Paris","output_ids":[1],"meta_info":{"prompt_tokens":5,"completion_tokens":1,"finish_reason":null}}`,
		`{"text":"a","meta_info":{"finish_reason":{"type":"stop","matched":2}}}`, `{"error":{"message":"x"}}`,
		`{"index":1,"token":{"id":4,"text":" Deep\n","logprob":-0.3,"special":false},"generated_text":null,"details":null}`,
		`{"generated_text":"x","details":{"finish_reason":"eos_token","generated_tokens":3,"input_length":2}}`,
		`{"error":"e","error_type":"generation"}`, `[]`, `{"token":null}`,
	} {
		f.Add([]byte(s), false)
		f.Add([]byte(s), true)
	}
	f.Fuzz(func(t *testing.T, b []byte, tgi bool) {
		ep := SGLang
		if tgi {
			ep = TGI
		}
		recs, fin, err := parseOne(t, ep, adapter.Event{Data: b})
		obj := jsonObject(t, b, recs, err, false)
		if obj == nil || !tgi || !utf8.Valid(b) || obj["error"] != nil {
			return
		}
		want := ""
		if tok, ok := obj["token"].(map[string]any); ok {
			want, _ = tok["text"].(string)
		}
		if string(fin.Text) != want {
			t.Fatalf("%q: captured %q, encoding/json %q", b, fin.Text, want)
		}
	})
}

// FuzzParseTemplate: a template file never panics the loader; a template
// it accepts builds a body that is valid JSON.
func FuzzParseTemplate(f *testing.F) {
	for _, s := range []string{
		`{"path":"/x","body":{"m":"{{model}}","p":"{{prompt}}","n":"{{max_tokens}}","o":{"u":"{{include_usage}}"}},"response":{"text":"t"}}`,
		`{"path":"/x","framing":"jsonl","headers":{"A":"{{session_id}}"},"body":{"a":[1,"{{messages}}",true,null]},"response":{"text":["a.0","b"],"usage":"u"}}`,
		`{"path":"/x","body":{},"response":{"text":"t"},}`, `[]`, `{"body":"{{nope}}"}`,
		`{"path":"/x\r\nX-Inj: 1","headers":{"A":"a\u0000{{model}}"},"body":{},"response":{"text":"t"}}`,
		`{"path":"/x y","headers":{"A B":"v"},"body":{},"response":{"text":"t"}}`,
	} {
		f.Add([]byte(s))
	}
	f.Fuzz(func(t *testing.T, b []byte) {
		tpl, err := ParseTemplate("f.json", b)
		if err != nil {
			if _, ok := errors.AsType[*TemplateError](err); !ok && !strings.Contains(err.Error(), "f.json") {
				t.Fatalf("error %v names no file", err)
			}
			return
		}
		in, err := tpl.NewInstance(&adapter.Config{Model: "m", IgnoreEOS: true, IncludeUsage: true})
		if err != nil {
			t.Fatal(err)
		}
		var out adapter.HTTPRequest
		err = in.Build(&adapter.BuildInput{Flags: adapter.BuildStream, PromptText: "p\"", MaxTokens: 3, SessionID: "s",
			Raw: json.RawMessage(`{"extra":{"k":1}}`)}, &out)
		if err != nil {
			t.Fatal(err)
		}
		if !json.Valid(out.Body) {
			t.Fatalf("template %q built invalid JSON %s", b, out.Body)
		}
		// With placeholders of plain values, everything the template puts
		// in the request head is its own text, which loading checked: a
		// path for the request line, header names and values.
		if err := httpfield.CheckPath(tpl.Info().Path); err != nil {
			t.Fatalf("template %q loaded with path %q: %v", b, tpl.Info().Path, err)
		}
		for _, h := range out.Header {
			if err := httpfield.Check(h.Name, h.Value); err != nil {
				t.Fatalf("template %q built header %q: %q: %v", b, h.Name, h.Value, err)
			}
		}
	})
}

// FuzzTemplateEvent: the chat template's event parser never panics and
// accepts every valid JSON object.
func FuzzTemplateEvent(f *testing.F) {
	for _, s := range []string{vllmChunk, llamaUsage, `{"error":{"code":500,"message":"x"}}`, `{"object":"error","message":"bad","code":400}`,
		`{"choices":[1,{"index":2,"delta":{"role":"assistant"}}]}`, `[]`} {
		f.Add([]byte(s))
	}
	tpl, err := LoadTemplate("templates/openai-chat.json")
	if err != nil {
		f.Fatal(err)
	}
	f.Fuzz(func(t *testing.T, b []byte) {
		in, _ := tpl.NewInstance(&adapter.Config{Model: "m"})
		in.Open(1, adapter.OpenStream|adapter.OpenCaptureText)
		_, err := in.Parse(1, &adapter.Batch{Events: []adapter.Event{{Data: b}}}, nil)
		var fin adapter.Final
		in.Close(1, &fin)
		var v any
		if json.Unmarshal(b, &v) != nil {
			return
		}
		if _, isObj := v.(map[string]any); isObj && err != nil && depth(v) <= 60 {
			t.Fatalf("valid JSON object %q rejected: %v", b, err)
		}
	})
}
