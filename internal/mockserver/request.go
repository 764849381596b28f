package mockserver

import (
	"bytes"
	"encoding/json"
	"errors"
	"fmt"
	"strconv"
)

// maxN bounds the n parameter; more choices are a client bug here.
const maxN = 128

// request is a decoded completion request.
type request struct {
	chat         bool
	model        string
	texts        []string      // chat: one per message; completions: the prompt
	messages     []wireMessage // chat: the messages of texts (their roles)
	ids          []int         // completions: a token-id prompt
	hasIDs       bool
	maxTokens    int // -1 = not given
	ignoreEOS    bool
	stream       bool
	includeUsage bool
	n            int
	tgi          bool // a TGI body ("inputs") on /generate
	media        []InputMediaLog
}

// requestError is a rejected request: invalid JSON (syntax) or a field the
// server refuses (validation). The flavor picks the status and wording.
type requestError struct {
	syntax bool
	offset int64 // of a syntax error
	msg    string
}

func (e *requestError) Error() string { return e.msg }

type wireRequest struct {
	Model               string          `json:"model"`
	Messages            []wireMessage   `json:"messages"`
	Prompt              json.RawMessage `json:"prompt"`
	MaxTokens           *int            `json:"max_tokens"`
	MaxCompletionTokens *int            `json:"max_completion_tokens"`
	IgnoreEOS           bool            `json:"ignore_eos"`
	Stream              bool            `json:"stream"`
	StreamOptions       *struct {
		IncludeUsage bool `json:"include_usage"`
	} `json:"stream_options"`
	N *int `json:"n"`
}

type wireMessage struct {
	Role    string          `json:"role"`
	Content json.RawMessage `json:"content"`
}

type wirePart struct {
	Type string `json:"type"`
	Text string `json:"text"`
	wireMedia
}

// unmarshalBody decodes a JSON request body into w; a failure is a
// *requestError (a syntax error keeps its offset for llama.cpp's message).
func unmarshalBody(body []byte, w any) error {
	err := json.Unmarshal(body, w)
	if err == nil {
		return nil
	}
	if se, ok := errors.AsType[*json.SyntaxError](err); ok {
		return &requestError{syntax: true, offset: se.Offset, msg: se.Error()}
	}
	return &requestError{msg: err.Error()}
}

// decodeRequest decodes a /v1/chat/completions (chat) or /v1/completions
// body. It never panics on any input (FuzzChatRequest).
func decodeRequest(body []byte, chat bool) (request, error) {
	var w wireRequest
	if err := unmarshalBody(body, &w); err != nil {
		return request{}, err
	}
	r := request{chat: chat, model: w.Model, maxTokens: -1, ignoreEOS: w.IgnoreEOS, stream: w.Stream, n: 1}
	r.includeUsage = w.StreamOptions != nil && w.StreamOptions.IncludeUsage
	switch {
	case w.MaxCompletionTokens != nil:
		r.maxTokens = *w.MaxCompletionTokens
	case w.MaxTokens != nil:
		r.maxTokens = *w.MaxTokens
	}
	if (w.MaxTokens != nil || w.MaxCompletionTokens != nil) && r.maxTokens < 1 {
		return request{}, &requestError{msg: fmt.Sprintf("max_tokens must be at least 1, got %d.", r.maxTokens)}
	}
	if w.N != nil {
		if *w.N < 1 || *w.N > maxN {
			return request{}, &requestError{msg: fmt.Sprintf("n must be between 1 and %d, got %d.", maxN, *w.N)}
		}
		r.n = *w.N
	}
	if chat {
		if len(w.Messages) == 0 {
			return request{}, &requestError{msg: "messages: at least one message is required"}
		}
		r.texts = make([]string, len(w.Messages))
		r.messages = w.Messages
		for i, m := range w.Messages {
			t, err := decodeContentMedia(m.Content, &r.media)
			if err != nil {
				return request{}, &requestError{msg: fmt.Sprintf("messages[%d].content: %v", i, err)}
			}
			r.texts[i] = t
		}
		return r, nil
	}
	if err := decodePrompt(w.Prompt, &r); err != nil {
		return request{}, &requestError{msg: "prompt: " + err.Error()}
	}
	return r, nil
}

// decodeResponsesRequest decodes a /v1/responses body: input as a string
// or an array of message items (other item types count as no text),
// instructions as one more message, max_output_tokens. It never panics on
// any input (FuzzResponsesRequest).
func decodeResponsesRequest(body []byte) (request, error) {
	var w struct {
		Model           string          `json:"model"`
		Input           json.RawMessage `json:"input"`
		Instructions    *string         `json:"instructions"`
		MaxOutputTokens *int            `json:"max_output_tokens"`
		IgnoreEOS       bool            `json:"ignore_eos"`
		Stream          bool            `json:"stream"`
	}
	if err := unmarshalBody(body, &w); err != nil {
		return request{}, err
	}
	r := request{chat: true, model: w.Model, maxTokens: -1, ignoreEOS: w.IgnoreEOS, stream: w.Stream, n: 1}
	if w.MaxOutputTokens != nil {
		if *w.MaxOutputTokens < 1 {
			return request{}, &requestError{msg: fmt.Sprintf("max_output_tokens must be at least 1, got %d.", *w.MaxOutputTokens)}
		}
		r.maxTokens = *w.MaxOutputTokens
	}
	if w.Instructions != nil {
		r.texts = append(r.texts, *w.Instructions)
	}
	in := bytes.TrimSpace(w.Input)
	switch {
	case len(in) > 0 && in[0] == '"':
		var s string
		if err := json.Unmarshal(in, &s); err != nil {
			return request{}, &requestError{msg: "input: " + err.Error()}
		}
		r.texts = append(r.texts, s)
	case len(in) > 0 && in[0] == '[':
		var items []wireMessage
		if err := json.Unmarshal(in, &items); err != nil {
			return request{}, &requestError{msg: "input: " + err.Error()}
		}
		for i, m := range items {
			t, err := decodeContentMedia(m.Content, &r.media)
			if err != nil {
				return request{}, &requestError{msg: fmt.Sprintf("input[%d].content: %v", i, err)}
			}
			r.texts = append(r.texts, t)
		}
	}
	if len(r.texts) == 0 || len(in) == 0 || string(in) == "[]" {
		return request{}, &requestError{msg: "input: required: a string or an array of input items"}
	}
	return r, nil
}

// decodeGenerateRequest decodes a SGLang /generate body ("text" or
// "input_ids", "sampling_params", "stream") or a TGI /generate or
// /generate_stream body ("inputs", "parameters"); /generate takes either.
// max_new_tokens defaults to SGLang's 128 and TGI's 100. It never panics
// on any input (FuzzGenerateRequest).
func decodeGenerateRequest(body []byte, api generationAPI) (request, error) {
	type params struct {
		MaxNewTokens *int `json:"max_new_tokens"`
		IgnoreEOS    bool `json:"ignore_eos"`
	}
	var w struct {
		Model          string  `json:"model"`
		Text           *string `json:"text"`
		InputIDs       []int   `json:"input_ids"`
		Inputs         *string `json:"inputs"`
		SamplingParams params  `json:"sampling_params"`
		Parameters     params  `json:"parameters"`
		Stream         bool    `json:"stream"`
	}
	if err := unmarshalBody(body, &w); err != nil {
		return request{}, err
	}
	r := request{model: w.Model, maxTokens: -1, n: 1}
	p := w.SamplingParams
	switch {
	case w.Inputs != nil && api != apiSGLang || w.Inputs != nil && w.Text == nil && w.InputIDs == nil:
		r.tgi = true
		r.texts = []string{*w.Inputs}
		p = w.Parameters
		r.stream = api == apiTGIStream
		r.maxTokens = 100
	case api == apiTGI || api == apiTGIStream:
		return request{}, &requestError{msg: "inputs: required"}
	case w.Text != nil:
		r.texts = []string{*w.Text}
		r.stream = w.Stream
		r.maxTokens = 128
	case len(w.InputIDs) > 0:
		for i, id := range w.InputIDs {
			if id < 0 {
				return request{}, &requestError{msg: fmt.Sprintf("input_ids[%d] %d is not a token id", i, id)}
			}
		}
		r.ids, r.hasIDs = w.InputIDs, true
		r.stream = w.Stream
		r.maxTokens = 128
	default:
		return request{}, &requestError{msg: "text or input_ids: required"}
	}
	if p.MaxNewTokens != nil {
		if *p.MaxNewTokens < 1 {
			return request{}, &requestError{msg: fmt.Sprintf("max_new_tokens must be at least 1, got %d.", *p.MaxNewTokens)}
		}
		r.maxTokens = *p.MaxNewTokens
	}
	r.ignoreEOS = p.IgnoreEOS
	return r, nil
}

// decodeContent accepts a string, null, or an array of {"type":"text","text":…}
// parts (other part types count as no text).
func decodeContent(raw json.RawMessage) (string, error) {
	return decodeContentMedia(raw, nil)
}

// decodeContentMedia is decodeContent that also decodes the media parts
// (image_url, input_audio, video_url, audio_url, input_image,
// input_file) into *ms when ms is not nil; a part that does not decode is
// an error.
func decodeContentMedia(raw json.RawMessage, ms *[]InputMediaLog) (string, error) {
	raw = bytes.TrimSpace(raw)
	if len(raw) == 0 || string(raw) == "null" {
		return "", nil
	}
	switch raw[0] {
	case '"':
		var s string
		err := json.Unmarshal(raw, &s)
		return s, err
	case '[':
		var parts []wirePart
		if err := json.Unmarshal(raw, &parts); err != nil {
			return "", err
		}
		var b []byte
		for i, p := range parts {
			if p.Type == "text" || p.Type == "" || p.Type == "input_text" || p.Type == "output_text" {
				b = append(b, p.Text...)
				continue
			}
			if ms == nil {
				continue
			}
			m, ok, err := decodeMedia(p.Type, &p.wireMedia)
			if err != nil {
				return "", fmt.Errorf("[%d]: %v", i, err)
			}
			if ok {
				*ms = append(*ms, m)
			}
		}
		return string(b), nil
	}
	return "", errors.New("want a string or an array of content parts")
}

// decodePrompt accepts a string, a one-element array of strings, an array
// of token ids, or a one-element array of such an array.
func decodePrompt(raw json.RawMessage, r *request) error {
	raw = bytes.TrimSpace(raw)
	if len(raw) == 0 || string(raw) == "null" {
		return errors.New("required: a string or an array of token ids")
	}
	if raw[0] == '"' {
		var s string
		if err := json.Unmarshal(raw, &s); err != nil {
			return err
		}
		r.texts = []string{s}
		return nil
	}
	if raw[0] != '[' {
		return errors.New("want a string or an array of token ids")
	}
	var items []json.RawMessage
	if err := json.Unmarshal(raw, &items); err != nil {
		return err
	}
	if len(items) == 0 {
		return errors.New("empty prompt")
	}
	first := bytes.TrimSpace(items[0])
	if len(first) > 0 && (first[0] == '"' || first[0] == '[') {
		if len(items) != 1 {
			return errors.New("batched prompts are not supported by the mock server; send one prompt per request")
		}
		return decodePrompt(first, r)
	}
	ids := make([]int, len(items))
	for i, it := range items {
		v, err := strconv.ParseInt(string(bytes.TrimSpace(it)), 10, 64)
		if err != nil || v < 0 || v > 1<<31-1 {
			return fmt.Errorf("[%d] %s is not a token id (a non-negative integer)", i, it)
		}
		ids[i] = int(v)
	}
	r.ids, r.hasIDs = ids, true
	return nil
}

// generationAPI is the shape of a text-generation endpoint.
type generationAPI uint8

const (
	apiCompletions generationAPI = iota // /v1/completions
	apiChat                             // /v1/chat/completions
	apiResponses                        // /v1/responses (OpenAI shape in every flavor)
	apiSGLang                           // SGLang /generate (generate.go)
	apiTGI                              // TGI /generate (not streamed)
	apiTGIStream                        // TGI /generate_stream
)
