package openai

import (
	"encoding/json"
	"strings"
	"testing"

	"github.com/google/go-cmp/cmp"

	"github.com/reprise-bench/reprise/engine/adapter"
	"github.com/reprise-bench/reprise/engine/record"
)

const unknown = adapter.TokensUnknown

func newInst(t testing.TB, ep Endpoint) *Instance {
	t.Helper()
	in, err := Adapter{Endpoint: ep}.NewInstance(&adapter.Config{Model: "m", Stream: true})
	if err != nil {
		t.Fatal(err)
	}
	return in.(*Instance)
}

// parseAll runs events through one context and returns records and final.
func parseAll(t testing.TB, in *Instance, flags adapter.OpenFlags, evs ...adapter.Event) ([]adapter.Record, adapter.Final, error) {
	t.Helper()
	if err := in.Open(7, flags); err != nil {
		t.Fatal(err)
	}
	recs, err := in.Parse(7, &adapter.Batch{Events: evs}, nil)
	var fin adapter.Final
	if cerr := in.Close(7, &fin); cerr != nil {
		t.Fatal(cerr)
	}
	return recs, fin, err
}

func data(s string) adapter.Event { return adapter.Event{Data: []byte(s)} }

func rec(kind record.EventKind, ev uint32, choice uint16, text uint32) adapter.Record {
	return adapter.Record{Kind: kind, Event: ev, Choice: choice, TextBytes: text, Tokens: unknown}
}

func TestParseShapes(t *testing.T) {
	tests := []struct {
		name  string
		ep    Endpoint
		evs   []adapter.Event
		want  []adapter.Record
		check func(t *testing.T, f adapter.Final)
	}{
		{
			name: "vllm role chunk with usage null, then content",
			evs: []adapter.Event{
				data(`{"id":"x","object":"chat.completion.chunk","usage":null,"choices":[{"index":0,"finish_reason":null,"delta":{"role":"assistant"}}]}`),
				data(`{"id":"x","usage":null,"choices":[{"index":0,"finish_reason":null,"delta":{"content":"Hi"}}]}`),
			},
			want: []adapter.Record{rec(record.EventMeta, 0, 0, 0), rec(record.EventContent, 1, 0, 2)},
		},
		{
			name: "llama.cpp role chunk with content null",
			evs:  []adapter.Event{data(`{"choices":[{"finish_reason":null,"index":0,"delta":{"role":"assistant","content":null}}]}`)},
			want: []adapter.Record{rec(record.EventMeta, 0, 0, 0)},
		},
		{
			name: "usage on the finish chunk (completions)",
			ep:   Completions,
			evs: []adapter.Event{data(`{"choices":[{"text":"","index":0,"logprobs":null,"finish_reason":"length"}],"object":"text_completion",` +
				`"usage":{"completion_tokens":16,"prompt_tokens":6,"total_tokens":22,"prompt_tokens_details":{"cached_tokens":3}},"timings":{"cache_n":3}}`)},
			want: []adapter.Record{{Kind: record.EventFinish, Aux0: uint32(adapter.FinishLength), Tokens: unknown}, rec(record.EventUsage, 0, 0, 0)},
			check: func(t *testing.T, f adapter.Final) {
				if f.PromptTokens != 6 || f.CompletionTokens != 16 || f.CachedTokens != 3 || f.FinishReason != adapter.FinishLength {
					t.Errorf("final %+v", f)
				}
				if string(f.Extras) != `{"cache_n":3}` {
					t.Errorf("extras %q", f.Extras)
				}
			},
		},
		{
			name: "separate usage chunk with empty choices; last usage wins",
			evs: []adapter.Event{
				data(`{"choices":[],"usage":{"prompt_tokens":1,"completion_tokens":1}}`),
				data(`{"choices":[],"usage":{"prompt_tokens":27,"completion_tokens":16,"completion_tokens_details":{"reasoning_tokens":4}}}`),
			},
			want: []adapter.Record{rec(record.EventUsage, 0, 0, 0), rec(record.EventUsage, 1, 0, 0)},
			check: func(t *testing.T, f adapter.Final) {
				if f.PromptTokens != 27 || f.CompletionTokens != 16 || f.ReasoningTokens != 4 ||
					f.Valid&adapter.ValidReasoningTokens == 0 || f.Valid&adapter.ValidCachedTokens != 0 {
					t.Errorf("final %+v", f)
				}
			},
		},
		{
			name: "reasoning_content and reasoning, then content",
			evs: []adapter.Event{
				data(`{"choices":[{"index":0,"delta":{"reasoning_content":"think"}}]}`),
				data(`{"choices":[{"index":0,"delta":{"reasoning":"more","content":null}}]}`),
				data(`{"choices":[{"index":0,"delta":{"content":"answer"}}]}`),
			},
			want: []adapter.Record{rec(record.EventReasoning, 0, 0, 5), rec(record.EventReasoning, 1, 0, 4), rec(record.EventContent, 2, 0, 6)},
		},
		{
			name: "n>1 choices, index after delta",
			evs: []adapter.Event{
				data(`{"choices":[{"delta":{"content":"a"},"index":1},{"delta":{"content":"bb"},"index":0}]}`),
				data(`{"choices":[{"delta":{},"index":1,"finish_reason":"stop"},{"delta":{},"index":0,"finish_reason":"length"}]}`),
			},
			want: []adapter.Record{rec(record.EventContent, 0, 1, 1), rec(record.EventContent, 0, 0, 2),
				{Kind: record.EventFinish, Event: 1, Choice: 1, Aux0: uint32(adapter.FinishStop), Tokens: unknown},
				{Kind: record.EventFinish, Event: 1, Choice: 0, Aux0: uint32(adapter.FinishLength), Tokens: unknown}},
			check: func(t *testing.T, f adapter.Final) {
				if f.Choices != 2 || f.FinishReason != adapter.FinishLength {
					t.Errorf("choices %d finish %v (want choice 0's)", f.Choices, f.FinishReason)
				}
			},
		},
		{
			name: "tool calls",
			evs: []adapter.Event{
				data(`{"choices":[{"index":0,"delta":{"tool_calls":[{"index":0,"id":"c1","type":"function","function":{"name":"get","arguments":""}}]}}]}`),
				data(`{"choices":[{"index":0,"delta":{"tool_calls":[{"index":0,"function":{"arguments":"{\"a\":1}"}}]}}]}`),
				data(`{"choices":[{"index":0,"delta":{},"finish_reason":"tool_calls"}]}`),
			},
			want: []adapter.Record{rec(record.EventToolCall, 0, 0, 3), rec(record.EventToolCall, 1, 0, 7),
				{Kind: record.EventFinish, Event: 2, Aux0: uint32(adapter.FinishToolCalls), Tokens: unknown}},
		},
		{
			name: "error inside a 200 stream (llama.cpp)",
			evs:  []adapter.Event{data(`{"error":{"code":500,"message":"Failed to parse input at pos 22: ual\u00ce\u0006 x\ufffd","type":"server_error"}}`)},
			want: []adapter.Record{{Kind: record.EventError, Aux0: 500, Tokens: unknown}},
			check: func(t *testing.T, f adapter.Final) {
				if f.ErrorCode != 500 || string(f.ErrorMessage) != "Failed to parse input at pos 22: ualÎ\u0006 x\ufffd" {
					t.Errorf("error %d %q", f.ErrorCode, f.ErrorMessage)
				}
			},
		},
		{
			name: "vLLM object:error shape",
			evs:  []adapter.Event{data(`{"object":"error","message":"bad","type":"BadRequestError","param":null,"code":400}`)},
			want: []adapter.Record{{Kind: record.EventError, Aux0: 400, Tokens: unknown}},
		},
		{
			name: "SSE event: error",
			evs:  []adapter.Event{{Name: []byte("error"), Data: []byte("overloaded")}},
			want: []adapter.Record{{Kind: record.EventError, Aux0: 502, Tokens: unknown}},
		},
		{
			name: "keep-alive comment and [DONE]",
			evs:  []adapter.Event{{Data: []byte(" keepalive"), Flags: adapter.EventComment}, {Data: []byte("[DONE]"), Flags: adapter.EventDone}},
			want: []adapter.Record{rec(record.EventMeta, 0, 0, 0)},
		},
		{
			name: "escapes: decoded byte counts",
			evs:  []adapter.Event{data(`{"choices":[{"index":0,"delta":{"content":"a\n\"\u00e9\ud83d\ude00"}}]}`)},
			want: []adapter.Record{rec(record.EventContent, 0, 0, 1+1+1+2+4)},
		},
		{
			name: "empty content is not content",
			evs:  []adapter.Event{data(`{"choices":[{"index":0,"delta":{"content":""}}]}`)},
			want: nil,
		},
		{
			name: "non-streaming chat body with reasoning",
			evs: []adapter.Event{{Flags: adapter.EventWholeBody, Data: []byte(`{"choices":[{"finish_reason":"length","index":0,"message":{"role":"assistant",` +
				`"content":"out","reasoning_content":"why"}}],"object":"chat.completion","usage":{"completion_tokens":32,"prompt_tokens":40,"prompt_tokens_details":{"cached_tokens":39}}}`)}},
			want: []adapter.Record{rec(record.EventReasoning, 0, 0, 3), rec(record.EventContent, 0, 0, 3),
				{Kind: record.EventFinish, Aux0: uint32(adapter.FinishLength), Tokens: unknown}, rec(record.EventUsage, 0, 0, 0)},
		},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			in := newInst(t, tt.ep)
			for i := range tt.want {
				if tt.want[i].Kind == record.EventContent || tt.want[i].Kind == record.EventReasoning {
					tt.want[i].Flags = adapter.RecordTextCaptured
				}
			}
			got, fin, err := parseAll(t, in, adapter.OpenStream|adapter.OpenCaptureText, tt.evs...)
			if err != nil {
				t.Fatal(err)
			}
			if d := cmp.Diff(tt.want, got); d != "" {
				t.Errorf("records (-want +got):\n%s", d)
			}
			if tt.check != nil {
				tt.check(t, fin)
			}
		})
	}
}

func TestCapturedText(t *testing.T) {
	in := newInst(t, Chat)
	_, fin, err := parseAll(t, in, adapter.OpenCaptureText,
		data(`{"choices":[{"index":0,"delta":{"reasoning_content":"r1 "}}]}`),
		data(`{"choices":[{"index":0,"delta":{"content":"Hello"}},{"index":1,"delta":{"content":"other"}}]}`),
		data(`{"choices":[{"index":0,"delta":{"content":", w\u00f6rld"}}]}`))
	if err != nil {
		t.Fatal(err)
	}
	if string(fin.Text) != "Hello, wörld" || string(fin.Reasoning) != "r1 " {
		t.Errorf("text %q reasoning %q", fin.Text, fin.Reasoning)
	}
}

func TestParseMalformed(t *testing.T) {
	for _, bad := range []string{`{"choices":[`, `not json`, `{"choices":[{"delta":{"content":"x}}]}`, `{"a":1} trailing`, `{"a":tru}`} {
		in := newInst(t, Chat)
		if _, _, err := parseAll(t, in, adapter.OpenStream, data(bad)); err == nil {
			t.Errorf("%q: no error", bad)
		}
	}
	// A non-2xx body is best effort: never an error.
	in := newInst(t, Chat)
	if _, _, err := parseAll(t, in, 0, adapter.Event{Data: []byte("<html>502</html>"), Flags: adapter.EventNonOK}); err != nil {
		t.Error(err)
	}
}

func TestContextsMultiplex(t *testing.T) {
	in := newInst(t, Chat)
	if err := in.Open(1, adapter.OpenCaptureText); err != nil {
		t.Fatal(err)
	}
	if err := in.Open(2, adapter.OpenCaptureText); err != nil {
		t.Fatal(err)
	}
	if err := in.Open(1, 0); err == nil {
		t.Error("opening an open context again: no error")
	}
	in.Parse(1, &adapter.Batch{Events: []adapter.Event{data(`{"choices":[{"index":0,"delta":{"content":"one"}}]}`)}}, nil)
	in.Parse(2, &adapter.Batch{Events: []adapter.Event{data(`{"choices":[{"index":0,"delta":{"content":"two"}}]}`)}}, nil)
	var f1, f2 adapter.Final
	in.Close(2, &f2)
	if string(f2.Text) != "two" {
		t.Errorf("ctx 2 text %q", f2.Text)
	}
	in.Close(1, &f1)
	if string(f1.Text) != "one" {
		t.Errorf("ctx 1 text %q", f1.Text)
	}
	if _, err := in.Parse(1, &adapter.Batch{}, nil); err == nil {
		t.Error("parse on a closed context: no error")
	}
}

func build(t *testing.T, ep Endpoint, cfg adapter.Config, b adapter.BuildInput) map[string]any {
	t.Helper()
	inst, err := Adapter{Endpoint: ep}.NewInstance(&cfg)
	if err != nil {
		t.Fatal(err)
	}
	var out adapter.HTTPRequest
	if err := inst.Build(&b, &out); err != nil {
		t.Fatal(err)
	}
	var m map[string]any
	if err := json.Unmarshal(out.Body, &m); err != nil {
		t.Fatalf("body %s: %v", out.Body, err)
	}
	return m
}

func TestBuild(t *testing.T) {
	prompt := "Say \"hi\"\n\t\u0001 ünïcödé \u2028 and \xff invalid"
	m := build(t, Chat, adapter.Config{Model: "org/m", IgnoreEOS: true, IncludeUsage: true, ExtraBody: json.RawMessage(`{"temperature":0,"max_tokens":5}`)},
		adapter.BuildInput{Flags: adapter.BuildStream, PromptText: prompt, MaxTokens: 100})
	msgs := m["messages"].([]any)
	if got := msgs[0].(map[string]any)["content"]; got != strings.ToValidUTF8(prompt, "\ufffd") {
		t.Errorf("prompt round trip %q", got)
	}
	// --extra-body is merged after the defaults, so its max_tokens wins.
	if m["model"] != "org/m" || m["stream"] != true || m["ignore_eos"] != true || m["temperature"] != 0.0 || m["max_tokens"] != 5.0 {
		t.Errorf("body %v", m)
	}
	if so := m["stream_options"].(map[string]any); so["include_usage"] != true {
		t.Errorf("stream_options %v", so)
	}
	// Completions with token ids; the row's extra wins over everything.
	m = build(t, Completions, adapter.Config{Model: "m"}, adapter.BuildInput{PromptTokens: []int{1, 2, 3}, MaxTokens: 7,
		Raw: json.RawMessage(`{"extra":{"max_tokens":9}}`)})
	if ids := m["prompt"].([]any); len(ids) != 3 || m["max_tokens"] != 9.0 || m["stream"] != false {
		t.Errorf("body %v", m)
	}
	// The row's own messages are sent as they are.
	m = build(t, Chat, adapter.Config{Model: "m"}, adapter.BuildInput{Raw: json.RawMessage(`{"messages":[{"role":"system","content":"s"},{"role":"user","content":"u"}]}`)})
	if msgs := m["messages"].([]any); len(msgs) != 2 {
		t.Errorf("messages %v", msgs)
	}
	// A payload is the whole body.
	m = build(t, Chat, adapter.Config{Model: "m"}, adapter.BuildInput{Raw: json.RawMessage(`{"payload":{"model":"x","messages":[]}}`)})
	if m["model"] != "x" {
		t.Errorf("payload not sent verbatim: %v", m)
	}
	// A later turn of a session: the whole conversation as messages (chat),
	// as one prompt (completions), even for a text_input row.
	hist := adapter.BuildInput{Flags: adapter.BuildHistory, PromptText: "q1 a1 q2",
		Raw:      json.RawMessage(`{"text_input":"q2"}`),
		Messages: []adapter.Message{{Role: "user", Content: "q1"}, {Role: "assistant", Content: "a\"1"}, {Role: "user", Content: "q2"}}}
	m = build(t, Chat, adapter.Config{Model: "m"}, hist)
	want := []any{map[string]any{"role": "user", "content": "q1"}, map[string]any{"role": "assistant", "content": "a\"1"},
		map[string]any{"role": "user", "content": "q2"}}
	if d := cmp.Diff(want, m["messages"]); d != "" {
		t.Errorf("history messages (-want +got):\n%s", d)
	}
	if m = build(t, Completions, adapter.Config{Model: "m"}, hist); m["prompt"] != "q1 a1 q2" {
		t.Errorf("history prompt %v", m["prompt"])
	}
}

// TestParseAllocs: classifying a chunk allocates nothing once the
// instance's buffers have grown.
func TestParseAllocs(t *testing.T) {
	in := newInst(t, Chat)
	batch := &adapter.Batch{Events: []adapter.Event{data(vllmChunk), data(llamaUsage)}}
	recs := make([]adapter.Record, 0, 16)
	var fin adapter.Final
	run := func() {
		in.Open(1, adapter.OpenStream|adapter.OpenCaptureText)
		recs, _ = in.Parse(1, batch, recs[:0])
		in.Close(1, &fin)
	}
	run()
	if n := testing.AllocsPerRun(100, run); n != 0 {
		t.Errorf("%v allocations per open/parse/close, want 0", n)
	}
}

const (
	vllmChunk  = `{"id":"chatcmpl-cda04074-6efd-5c7c-a13c-725a8b68df45","model":"sim-model","object":"chat.completion.chunk","created":1795284721,"usage":null,"choices":[{"index":0,"finish_reason":null,"delta":{"content":"Testing"}}]}`
	llamaUsage = `{"choices":[],"created":1795284679,"id":"chatcmpl-3B3sLYSpyZcrp1NnQUdwLfAmwBplhMxU","model":"tiny-llama","system_fingerprint":"b9999-unknown","object":"chat.completion.chunk","usage":{"completion_tokens":16,"prompt_tokens":27,"total_tokens":43,"prompt_tokens_details":{"cached_tokens":0}},"timings":{"cache_n":0,"prompt_n":27,"prompt_ms":0.896}}`
)

// stdChunk is the encoding/json decoding of a chunk, for the oracle and
// the comparison benchmark.
type stdChunk struct {
	Choices []struct {
		Index int `json:"index"`
		Delta struct {
			Content          *string `json:"content"`
			ReasoningContent *string `json:"reasoning_content"`
			Reasoning        *string `json:"reasoning"`
		} `json:"delta"`
		Text         *string `json:"text"`
		FinishReason *string `json:"finish_reason"`
	} `json:"choices"`
	Usage *struct {
		PromptTokens     int `json:"prompt_tokens"`
		CompletionTokens int `json:"completion_tokens"`
	} `json:"usage"`
}

func TestBenchmarkParseChunk(t *testing.T) {
	in := newInst(t, Chat)
	recs, _, err := parseAll(t, in, adapter.OpenStream, data(vllmChunk))
	if err != nil || len(recs) != 1 || recs[0].Kind != record.EventContent || recs[0].TextBytes != 7 {
		t.Fatalf("native: %v %+v", err, recs)
	}
	var c stdChunk
	if err := json.Unmarshal([]byte(vllmChunk), &c); err != nil || *c.Choices[0].Delta.Content != "Testing" {
		t.Fatalf("stdlib: %v", err)
	}
}

// BenchmarkParseChunk compares the native scanner with encoding/json on a
// typical vLLM content chunk.
func BenchmarkParseChunk(b *testing.B) {
	b.Run("native", func(b *testing.B) {
		in := newInst(b, Chat)
		in.Open(1, adapter.OpenStream)
		batch := &adapter.Batch{Events: []adapter.Event{data(vllmChunk)}}
		recs := make([]adapter.Record, 0, 4)
		b.SetBytes(int64(len(vllmChunk)))
		b.ReportAllocs()
		for b.Loop() {
			recs, _ = in.Parse(1, batch, recs[:0])
		}
	})
	b.Run("encoding-json", func(b *testing.B) {
		p := []byte(vllmChunk)
		b.SetBytes(int64(len(vllmChunk)))
		b.ReportAllocs()
		for b.Loop() {
			var c stdChunk
			if err := json.Unmarshal(p, &c); err != nil {
				b.Fatal(err)
			}
		}
	})
}

// TestBuildMinTokens: Config.MinTokens sends min_tokens equal to each
// request's max_tokens (max_output_tokens for responses, min_new_tokens
// in SGLang's sampling_params), and nothing without a limit or without
// the setting.
func TestBuildMinTokens(t *testing.T) {
	cfg := adapter.Config{Model: "m", IgnoreEOS: true, MinTokens: true}
	for _, ep := range []Endpoint{Chat, Completions, Responses} {
		for _, n := range []int{7, 130} {
			m := build(t, ep, cfg, adapter.BuildInput{PromptText: "hi", MaxTokens: n})
			field := "max_tokens"
			if ep == Responses {
				field = "max_output_tokens"
			}
			if m["min_tokens"] != float64(n) || m[field] != float64(n) || m["ignore_eos"] != true {
				t.Errorf("%v, %d tokens: body %v", ep, n, m)
			}
		}
		if m := build(t, ep, cfg, adapter.BuildInput{PromptText: "hi"}); m["min_tokens"] != nil {
			t.Errorf("%v without a limit: min_tokens %v", ep, m["min_tokens"])
		}
		if m := build(t, ep, adapter.Config{Model: "m"}, adapter.BuildInput{PromptText: "hi", MaxTokens: 5}); m["min_tokens"] != nil {
			t.Errorf("%v without MinTokens: min_tokens %v", ep, m["min_tokens"])
		}
	}
	m := build(t, SGLang, cfg, adapter.BuildInput{PromptText: "hi", MaxTokens: 9})
	if sp := m["sampling_params"].(map[string]any); sp["min_new_tokens"] != 9.0 || sp["max_new_tokens"] != 9.0 || sp["ignore_eos"] != true {
		t.Errorf("sglang sampling_params %v", sp)
	}
}
