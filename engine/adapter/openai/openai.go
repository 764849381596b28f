// Package openai is the native endpoint adapter for OpenAI-compatible
// servers: /v1/chat/completions, /v1/completions and the Responses API
// (/v1/responses), streaming and not. For chat and completions it
// reads the shapes of vLLM, SGLang, llama.cpp and OpenAI itself: role
// chunks, "usage": null on every chunk, usage on the finish chunk or on a
// separate "choices": [] chunk, reasoning_content / reasoning, tool calls,
// n > 1 choices, {"error": …} inside a 200 stream, keep-alive comments and
// [DONE]. For the Responses API it reads the typed event stream (an
// "event:" line before each data line, no [DONE]): output-text, reasoning,
// refusal and function-call-argument deltas carry tokens; every other
// event is an envelope; usage and the finish come from response.completed
// (or response.incomplete / response.failed).
//
// It also speaks the native generate APIs of SGLang (/generate: cumulative
// or incremental chunks, meta_info usage) and Hugging Face TGI
// (/generate_stream: one token per event, details at the end), which share
// its scanner (RATIONALE.md), and declarative template adapters
// ([LoadTemplate], docs/format/template.md), which use its scanner and
// record rules with the paths a JSON file gives.
//
// Parsing uses the Go guest SDK's allocation-free JSON scanner
// (sdk-wasm/go/adapter.Scanner, one copy for native and guest parsers;
// RATIONALE.md) instead of encoding/json (see BenchmarkParseChunk for the
// difference).
package openai

import (
	"encoding/json"
	"fmt"

	"github.com/reprise-bench/reprise/engine/adapter"
	"github.com/reprise-bench/reprise/internal/jsonx"
	"github.com/reprise-bench/reprise/trace/media"
)

// Adapter is the native OpenAI adapter. The zero value is the chat adapter.
// It is safe for concurrent use.
type Adapter struct {
	Endpoint Endpoint
}

var _ adapter.Adapter = Adapter{}

// Info implements adapter.Adapter.
func (a Adapter) Info() adapter.Info {
	switch a.Endpoint {
	case Completions:
		return adapter.Info{Name: "openai-completions", Version: "1", Path: "/v1/completions", Framing: adapter.FramingSSE}
	case Responses:
		return adapter.Info{Name: "openai-responses", Version: "1", Path: "/v1/responses", Framing: adapter.FramingSSE}
	case SGLang:
		return adapter.Info{Name: "sglang-generate", Version: "1", Path: "/generate", Framing: adapter.FramingSSE}
	case TGI:
		return adapter.Info{Name: "tgi-native", Version: "1", Path: "/generate_stream", Framing: adapter.FramingSSE}
	}
	return adapter.Info{Name: "openai-chat", Version: "1", Path: "/v1/chat/completions", Framing: adapter.FramingSSE}
}

// NewInstance implements adapter.Adapter.
func (a Adapter) NewInstance(cfg *adapter.Config) (adapter.Instance, error) {
	if len(cfg.ExtraBody) > 0 {
		if err := checkObject(cfg.ExtraBody); err != nil {
			return nil, fmt.Errorf("extra body: %w", err)
		}
	}
	in := &Instance{ep: a.Endpoint, cfg: *cfg, streams: map[uint32]*stream{}}
	in.maxField = "max_tokens"
	if a.Endpoint == Responses {
		in.maxField = "max_output_tokens"
	}
	if f := cfg.Options["max_tokens_field"]; f != "" {
		in.maxField = f
	}
	in.path = a.Info().Path
	return in, nil
}

// NewInstance implements adapter.Adapter.
func (t *Template) NewInstance(cfg *adapter.Config) (adapter.Instance, error) {
	if len(cfg.ExtraBody) > 0 {
		if err := checkObject(cfg.ExtraBody); err != nil {
			return nil, fmt.Errorf("extra body: %w", err)
		}
	}
	return &Instance{ep: endpointTemplate, cfg: *cfg, streams: map[uint32]*stream{}, tpl: t, path: t.info.Path}, nil
}

var _ adapter.Instance = (*Instance)(nil)

// Build implements adapter.Instance. It writes the whole body (no holes).
func (in *Instance) Build(b *adapter.BuildInput, out *adapter.HTTPRequest) error {
	out.Reset()
	out.Method = adapter.MethodPOST
	out.Path = in.path
	out.Header = append(out.Header, adapter.Header{Name: "Content-Type", Value: "application/json"})
	stream := b.Flags&adapter.BuildStream != 0
	if stream {
		out.Header = append(out.Header, adapter.Header{Name: "Accept", Value: "text/event-stream"})
	}
	var raw rawRow
	if len(b.Raw) > 0 {
		src := b.Raw
		rest, m, cut := media.CutMedia(src, in.rawBuf)
		if cut {
			src, in.rawBuf = rest, rest[:0]
		}
		if err := json.Unmarshal(src, &raw); err != nil {
			return fmt.Errorf("row %d: raw content: %w", b.TraceRow, err)
		}
		if cut {
			raw.Media = m
		}
	}
	if isSet(raw.Payload) {
		// A verbatim payload is sent as-is.
		out.Body = append(out.Body, raw.Payload...)
		return nil
	}
	switch in.ep {
	case endpointTemplate:
		return in.buildTemplate(b, &raw, stream, out)
	case Responses:
		return in.buildResponses(b, &raw, stream, out)
	case SGLang, TGI:
		return in.buildGenerate(b, &raw, stream, out)
	}
	body := append(out.Body, `{"model":`...)
	body = jsonx.AppendString(body, in.cfg.Model)
	history := b.Flags&adapter.BuildHistory != 0 && len(b.Messages) > 0
	switch {
	case in.ep == Chat && history && hasMedia(b, &raw):
		// A later turn with media: the media go with its own (last)
		// user message.
		body = append(body, `,"messages":`...)
		last := len(b.Messages) - 1
		body = appendMessages(body, b.Messages[:last], `{"role":`)
		body = body[:len(body)-1]
		if last > 0 {
			body = append(body, ',')
		}
		body = append(body, `{"role":"user","content":`...)
		body = appendChatContent(body, b.Messages[last].Content, b, &raw)
		body = append(body, "}]"...)
	case in.ep == Chat && history:
		// A later turn of a session: the whole conversation.
		body = append(body, `,"messages":`...)
		body = appendMessages(body, b.Messages, `{"role":`)
	case in.ep == Chat && isSet(raw.Messages):
		body = append(body, `,"messages":`...)
		body = append(body, raw.Messages...)
	case in.ep == Chat && hasMedia(b, &raw):
		body = append(body, `,"messages":[{"role":"user","content":`...)
		text := b.PromptText
		if isSet(raw.TextInput) {
			text = textInput(raw.TextInput)
		}
		body = appendChatContent(body, text, b, &raw)
		body = append(body, "}]"...)
	case in.ep == Chat:
		body = append(body, `,"messages":[{"role":"user","content":"`...)
		if isSet(raw.TextInput) {
			body = appendTextInput(body, raw.TextInput)
		} else {
			body = jsonx.AppendContents(body, b.PromptText)
		}
		body = append(body, `"}]`...)
	case isSet(raw.TextInput) && !history:
		body = append(body, `,"prompt":"`...)
		body = appendTextInput(body, raw.TextInput)
		body = append(body, '"')
	case b.PromptText == "" && b.PromptTokens != nil:
		body = append(body, `,"prompt":`...)
		body = jsonx.AppendInts(body, b.PromptTokens)
	default:
		body = append(body, `,"prompt":"`...)
		body = jsonx.AppendContents(body, b.PromptText)
		body = append(body, '"')
	}
	if in.ep == Chat && isSet(raw.Tools) {
		body = append(body, `,"tools":`...)
		body = append(body, raw.Tools...)
	}
	body = in.appendLimits(body, b)
	if stream {
		body = append(body, `,"stream":true`...)
		if in.cfg.IncludeUsage {
			body = append(body, `,"stream_options":{"include_usage":true}`...)
		}
	} else {
		body = append(body, `,"stream":false`...)
	}
	return in.endBody(body, b, &raw, out)
}

// Open implements adapter.Instance.
func (in *Instance) Open(ctx uint32, flags adapter.OpenFlags) error {
	if st, ok := in.streams[ctx]; ok && st.open {
		return fmt.Errorf("context %d already open", ctx)
	}
	var st *stream
	if n := len(in.free); n > 0 {
		st = in.free[n-1]
		in.free = in.free[:n-1]
	} else {
		st = &stream{}
	}
	st.open = true
	st.flags = flags
	st.fin = adapter.Final{}
	st.text = st.text[:0]
	st.reason = st.reason[:0]
	st.other = st.other[:0]
	st.errMsg = st.errMsg[:0]
	st.extras = st.extras[:0]
	st.choices = 0
	st.tool = false
	st.genTokens, st.genBytes = 0, 0
	in.streams[ctx] = st
	return nil
}

// Parse implements adapter.Instance.
func (in *Instance) Parse(ctx uint32, batch *adapter.Batch, dst []adapter.Record) ([]adapter.Record, error) {
	st := in.streams[ctx]
	if st == nil || !st.open {
		return dst, fmt.Errorf("context %d not open", ctx)
	}
	for i := range batch.Events {
		var err error
		switch in.ep {
		case endpointTemplate:
			dst, err = st.tplEvent(&in.tpl.resp, &batch.Events[i], batch.First+uint32(i), dst)
		case Responses:
			dst, err = st.parseResponsesEvent(&batch.Events[i], batch.First+uint32(i), dst)
		case SGLang, TGI:
			dst, err = st.parseGenerateEvent(in.ep, &batch.Events[i], batch.First+uint32(i), dst)
		default:
			dst, err = st.parseEvent(&batch.Events[i], batch.First+uint32(i), dst)
		}
		if err != nil {
			return dst, fmt.Errorf("event %d: %w", batch.First+uint32(i), err)
		}
	}
	return dst, nil
}

// Close implements adapter.Instance.
func (in *Instance) Close(ctx uint32, fin *adapter.Final) error {
	st := in.streams[ctx]
	if st == nil || !st.open {
		return fmt.Errorf("context %d not open", ctx)
	}
	*fin = st.fin
	fin.Choices = st.choices
	fin.ErrorMessage = st.errMsg
	fin.Extras = st.extras
	fin.Text = st.text
	fin.Reasoning = st.reason
	fin.Other = st.other
	st.open = false
	delete(in.streams, ctx)
	in.free = append(in.free, st)
	return nil
}

// Release implements adapter.Instance.
func (in *Instance) Release() error { return nil }
