// Hot path: the per-event rendering; its allocation budget is TestRenderAllocs.

package mockserver

import (
	"strconv"

	"github.com/reprise-bench/reprise/internal/jsonx"
)

const llamaFingerprint = "b9999-unknown"

func (r *renderer) init(llama, chat bool, id, model string, created int64) {
	r.llama, r.chat, r.id = llama, chat, id
	object := "text_completion"
	if chat {
		object = "chat.completion.chunk"
	}
	r.head, r.tail = r.head[:0], r.tail[:0]
	if !llama {
		r.head = append(r.head, `data: {"id":"`...)
		r.head = append(r.head, id...)
		r.head = append(r.head, `","model":"`...)
		r.head = jsonx.AppendContents(r.head, model)
		r.head = append(r.head, `","object":"`...)
		r.head = append(r.head, object...)
		r.head = append(r.head, `","created":`...)
		r.head = strconv.AppendInt(r.head, created, 10)
		r.head = append(r.head, ',')
		return
	}
	r.tail = append(r.tail, `,"created":`...)
	r.tail = strconv.AppendInt(r.tail, created, 10)
	if chat {
		r.tail = append(r.tail, `,"id":"`...)
		r.tail = append(r.tail, id...)
		r.tail = append(r.tail, '"')
	}
	r.tail = append(r.tail, `,"model":"`...)
	r.tail = jsonx.AppendContents(r.tail, model)
	r.tail = append(r.tail, `","system_fingerprint":"`+llamaFingerprint+`","object":"`...)
	r.tail = append(r.tail, object...)
	r.tail = append(r.tail, '"')
}

// setUsage renders the usage object (and llama.cpp's timings). Times are
// in ms of the latency model.
func (r *renderer) setUsage(prompt, cached, completion, reasoning int, promptMS, predictedMS float64) {
	r.prompt, r.cached = prompt, cached
	u := r.usage[:0]
	if r.responses {
		r.usage = appendResponsesUsage(u, prompt, cached, completion, reasoning)
		return
	}
	if r.llama {
		u = append(u, `{"completion_tokens":`...)
		u = strconv.AppendInt(u, int64(completion), 10)
		u = append(u, `,"prompt_tokens":`...)
		u = strconv.AppendInt(u, int64(prompt), 10)
	} else {
		u = append(u, `{"prompt_tokens":`...)
		u = strconv.AppendInt(u, int64(prompt), 10)
		u = append(u, `,"completion_tokens":`...)
		u = strconv.AppendInt(u, int64(completion), 10)
	}
	u = append(u, `,"total_tokens":`...)
	u = strconv.AppendInt(u, int64(prompt+completion), 10)
	u = append(u, `,"prompt_tokens_details":{"cached_tokens":`...)
	u = strconv.AppendInt(u, int64(cached), 10)
	u = append(u, '}')
	if reasoning > 0 && !r.llama {
		u = append(u, `,"completion_tokens_details":{"reasoning_tokens":`...)
		u = strconv.AppendInt(u, int64(reasoning), 10)
		u = append(u, '}')
	}
	r.usage = append(u, '}')
	if !r.llama {
		return
	}
	promptN := prompt - cached
	t := r.timings[:0]
	t = append(t, `{"cache_n":`...)
	t = strconv.AppendInt(t, int64(cached), 10)
	t = append(t, `,"prompt_n":`...)
	t = strconv.AppendInt(t, int64(promptN), 10)
	t = appendMS(t, "prompt", promptMS, promptN)
	t = append(t, `,"predicted_n":`...)
	t = strconv.AppendInt(t, int64(completion), 10)
	t = appendMS(t, "predicted", predictedMS, completion)
	r.timings = append(t, '}')
}

func appendMS(b []byte, name string, ms float64, n int) []byte {
	per := ms / float64(max(n, 1))
	perSecond := 0.0
	if ms > 0 {
		perSecond = 1000 * float64(n) / ms
	}
	b = append(b, `,"`...)
	b = append(b, name...)
	b = append(b, `_ms":`...)
	b = strconv.AppendFloat(b, ms, 'f', -1, 64)
	b = append(b, `,"`...)
	b = append(b, name...)
	b = append(b, `_per_token_ms":`...)
	b = strconv.AppendFloat(b, per, 'f', -1, 64)
	b = append(b, `,"`...)
	b = append(b, name...)
	b = append(b, `_per_second":`...)
	return strconv.AppendFloat(b, perSecond, 'f', -1, 64)
}

// role appends the role-only first chunk of choice c (chat only).
func (r *renderer) role(b []byte, c int) []byte {
	if r.llama {
		b = append(b, `data: {"choices":[{"finish_reason":null,"index":`...)
		b = strconv.AppendInt(b, int64(c), 10)
		b = append(b, `,"delta":{"role":"assistant","content":null}}]`...)
		b = append(b, r.tail...)
		return append(b, "}\n\n"...)
	}
	b = append(b, r.head...)
	b = append(b, `"usage":null,"choices":[{"index":`...)
	b = strconv.AppendInt(b, int64(c), 10)
	return append(b, `,"finish_reason":null,"delta":{"role":"assistant"}}]}`+"\n\n"...)
}

// token appends one output token chunk of choice c.
func (r *renderer) token(b []byte, c int, text string, reasoning bool) []byte {
	field := `"content":"`
	if reasoning {
		field = `"reasoning_content":"`
	}
	switch {
	case r.llama && r.chat:
		b = append(b, `data: {"choices":[{"finish_reason":null,"index":`...)
		b = strconv.AppendInt(b, int64(c), 10)
		b = append(b, `,"delta":{`...)
		b = append(b, field...)
		b = append(b, text...)
		b = append(b, `"}}]`...)
		b = append(b, r.tail...)
		return append(b, "}\n\n"...)
	case r.llama:
		b = append(b, `data: {"choices":[{"text":"`...)
		b = append(b, text...)
		b = append(b, `","index":`...)
		b = strconv.AppendInt(b, int64(c), 10)
		b = append(b, `,"logprobs":null,"finish_reason":null}]`...)
		b = append(b, r.tail...)
		b = append(b, `,"id":"`...)
		b = append(b, r.id...)
		return append(b, "\"}\n\n"...)
	}
	b = append(b, r.head...)
	b = append(b, `"usage":null,"choices":[{"index":`...)
	b = strconv.AppendInt(b, int64(c), 10)
	if r.chat {
		b = append(b, `,"finish_reason":null,"delta":{`...)
		b = append(b, field...)
		b = append(b, text...)
		return append(b, `"}}]}`+"\n\n"...)
	}
	b = append(b, `,"finish_reason":null,"text":"`...)
	b = append(b, text...)
	return append(b, `"}]}`+"\n\n"...)
}

// finish appends the chunk carrying choice c's finish_reason. withUsage
// puts usage on it (llama.cpp completions with include_usage); withTimings
// puts timings on it (llama.cpp without include_usage).
func (r *renderer) finish(b []byte, c int, reason string, withUsage, withTimings bool) []byte {
	switch {
	case r.llama && r.chat:
		b = append(b, `data: {"choices":[{"finish_reason":"`...)
		b = append(b, reason...)
		b = append(b, `","index":`...)
		b = strconv.AppendInt(b, int64(c), 10)
		b = append(b, `,"delta":{}}]`...)
		b = append(b, r.tail...)
		if withTimings {
			b = append(b, `,"timings":`...)
			b = append(b, r.timings...)
		}
		return append(b, "}\n\n"...)
	case r.llama:
		b = append(b, `data: {"choices":[{"text":"","index":`...)
		b = strconv.AppendInt(b, int64(c), 10)
		b = append(b, `,"logprobs":null,"finish_reason":"`...)
		b = append(b, reason...)
		b = append(b, `"}]`...)
		b = append(b, r.tail...)
		if withUsage {
			b = append(b, `,"usage":`...)
			b = append(b, r.usage...)
		}
		b = append(b, `,"id":"`...)
		b = append(b, r.id...)
		b = append(b, '"')
		if withTimings || withUsage {
			b = append(b, `,"timings":`...)
			b = append(b, r.timings...)
		}
		return append(b, "}\n\n"...)
	}
	b = append(b, r.head...)
	b = append(b, `"usage":null,"choices":[{"index":`...)
	b = strconv.AppendInt(b, int64(c), 10)
	b = append(b, `,"finish_reason":"`...)
	b = append(b, reason...)
	if r.chat {
		return append(b, `","delta":{}}]}`+"\n\n"...)
	}
	return append(b, `","text":""}]}`+"\n\n"...)
}

// usageChunk appends the separate usage chunk with choices:[].
func (r *renderer) usageChunk(b []byte) []byte {
	if r.llama {
		b = append(b, `data: {"choices":[]`...)
		b = append(b, r.tail...)
		b = append(b, `,"usage":`...)
		b = append(b, r.usage...)
		b = append(b, `,"timings":`...)
		b = append(b, r.timings...)
		return append(b, "}\n\n"...)
	}
	b = append(b, r.head...)
	b = append(b, `"usage":`...)
	b = append(b, r.usage...)
	return append(b, `,"choices":[]}`+"\n\n"...)
}

// generate reports whether r renders an SGLang or TGI /generate answer
// (render_generate.go).
func (r *renderer) generate() bool {
	return r.gen == apiSGLang || r.gen == apiTGI || r.gen == apiTGIStream
}

// malformed appends an SSE event whose data is truncated JSON, in the
// shape of the API's token event.
func (r *renderer) malformed(b []byte) []byte {
	switch {
	case r.responses:
		return append(b, "event: response.output_text.delta\ndata: {\"type\":\"response.output_text.delta\",\"delta\":\n\n"...)
	case r.generate():
		return append(b, "data: {\"text\":\n\n"...)
	}
	b = append(b, `data: {"id":"`...)
	b = append(b, r.id...)
	return append(b, `","choices":[{"delta":{"content":`+"\n\n"...)
}

// injectedError is the message of an injected error event or answer.
const injectedError = "Internal error while generating (injected by reprise mock-server)."

// errorEvent appends the API's error event for a 200 stream; seq numbers
// a Responses event.
func (r *renderer) errorEvent(b []byte, seq int) []byte {
	switch {
	case r.responses:
		b = respEvent(b, "error", seq)
		return append(b, `,"code":"server_error","message":"`+injectedError+`","param":null}`+"\n\n"...)
	case r.gen == apiSGLang:
		return append(b, `data: {"error":{"message":"`+injectedError+`"}}`+"\n\n"...)
	case r.generate():
		return append(b, `data:{"error":"`+injectedError+`","error_type":"generation"}`+"\n\n"...)
	}
	b = append(b, "data: "...)
	b = appendErrorBody(b, r.llama, 500, injectedError, "")
	return append(b, "\n\n"...)
}

// endsErrorWithDone reports whether a stream that sent an error event
// still ends with [DONE] (vLLM's chat and completions do; llama.cpp, the
// Responses API, SGLang and TGI just end it).
func (r *renderer) endsErrorWithDone() bool {
	return !r.llama && !r.responses && !r.generate()
}

// body appends a whole non-streamed response.
func (r *renderer) body(b []byte, model string, created int64, choices []choiceText) []byte {
	if r.responses {
		return r.responsesBody(b, model, created, choices[0])
	}
	if r.gen == apiSGLang || r.gen == apiTGI || r.gen == apiTGIStream {
		return r.generateBody(b, choices[0])
	}
	if r.llama {
		b = append(b, `{"choices":[`...)
		for c, ch := range choices {
			if c > 0 {
				b = append(b, ',')
			}
			if r.chat {
				b = append(b, `{"finish_reason":"`...)
				b = append(b, ch.finish...)
				b = append(b, `","index":`...)
				b = strconv.AppendInt(b, int64(c), 10)
				b = append(b, `,"message":{"role":"assistant","content":"`...)
				b = r.fill(b, c, ch.reasoning, ch.reasoning+ch.content)
				b = append(b, '"')
				if ch.reasoning > 0 {
					b = append(b, `,"reasoning_content":"`...)
					b = appendFiller(b, c, 0, ch.reasoning)
					b = append(b, '"')
				}
				b = append(b, "}}"...)
				continue
			}
			b = append(b, `{"text":"`...)
			b = r.fill(b, c, 0, ch.reasoning+ch.content)
			b = append(b, `","index":`...)
			b = strconv.AppendInt(b, int64(c), 10)
			b = append(b, `,"logprobs":null,"finish_reason":"`...)
			b = append(b, ch.finish...)
			b = append(b, `"}`...)
		}
		b = append(b, `],"created":`...)
		b = strconv.AppendInt(b, created, 10)
		b = append(b, `,"model":"`...)
		b = jsonx.AppendContents(b, model)
		b = append(b, `","system_fingerprint":"`+llamaFingerprint+`","object":"`...)
		if r.chat {
			b = append(b, "chat.completion"...)
		} else {
			b = append(b, "text_completion"...)
		}
		b = append(b, `","usage":`...)
		b = append(b, r.usage...)
		b = append(b, `,"id":"`...)
		b = append(b, r.id...)
		b = append(b, `","timings":`...)
		b = append(b, r.timings...)
		return append(b, '}')
	}
	b = append(b, `{"id":"`...)
	b = append(b, r.id...)
	b = append(b, `","model":"`...)
	b = jsonx.AppendContents(b, model)
	if r.chat {
		b = append(b, `","object":"chat.completion","created":`...)
	} else {
		b = append(b, `","object":"text_completion","created":`...)
	}
	b = strconv.AppendInt(b, created, 10)
	b = append(b, `,"usage":`...)
	b = append(b, r.usage...)
	b = append(b, `,"choices":[`...)
	for c, ch := range choices {
		if c > 0 {
			b = append(b, ',')
		}
		b = append(b, `{"index":`...)
		b = strconv.AppendInt(b, int64(c), 10)
		b = append(b, `,"finish_reason":"`...)
		b = append(b, ch.finish...)
		if !r.chat {
			b = append(b, `","text":"`...)
			b = r.fill(b, c, 0, ch.reasoning+ch.content)
			b = append(b, `"}`...)
			continue
		}
		b = append(b, `","message":{"role":"assistant","content":"`...)
		b = r.fill(b, c, ch.reasoning, ch.reasoning+ch.content)
		b = append(b, '"')
		if ch.reasoning > 0 {
			b = append(b, `,"reasoning_content":"`...)
			b = appendFiller(b, c, 0, ch.reasoning)
			b = append(b, '"')
		}
		b = append(b, "}}"...)
	}
	return append(b, "]}"...)
}

// appendErrorBody appends an OpenAI-style error object in the flavor's
// shape. typ "" picks the flavor's type name for status.
func appendErrorBody(b []byte, llama bool, status int, msg, typ string) []byte {
	if typ == "" {
		typ = errorType(llama, status)
	}
	if llama {
		b = append(b, `{"error":{"code":`...)
		b = strconv.AppendInt(b, int64(status), 10)
		b = append(b, `,"message":"`...)
		b = jsonx.AppendContents(b, msg)
		b = append(b, `","type":"`...)
		b = append(b, typ...)
		return append(b, `"}}`...)
	}
	b = append(b, `{"error":{"message":"`...)
	b = jsonx.AppendContents(b, msg)
	b = append(b, `","type":"`...)
	b = append(b, typ...)
	b = append(b, `","param":null,"code":`...)
	b = strconv.AppendInt(b, int64(status), 10)
	return append(b, "}}"...)
}

func errorType(llama bool, status int) string {
	if llama {
		switch status {
		case 400:
			return "invalid_request_error"
		case 404:
			return "not_found_error"
		case 408, 413:
			return "invalid_request_error"
		case 429:
			return "rate_limit_error"
		case 503:
			return "unavailable_error"
		}
		return "server_error"
	}
	switch status {
	case 400:
		return "BadRequestError"
	case 404:
		return "NotFoundError"
	// What vLLM's HTTPException handler sends: the status phrase.
	case 408:
		return "Request Timeout"
	case 413:
		return "Request Entity Too Large"
	case 429:
		return "RateLimitError"
	case 503:
		return "ServiceUnavailableError"
	}
	return "InternalServerError"
}
