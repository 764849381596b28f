//go:build wasip1

// Command openai-chat is the OpenAI chat/completions adapter as a Wasm
// guest: the reference adapter of the conformance test, which checks that
// it produces the same records as reprise's native parser
// (engine/adapter/openai) on every recorded fixture. Build:
//
//	GOOS=wasip1 GOARCH=wasm go build -buildmode=c-shared -trimpath -ldflags='-s -w' -o ../openai-chat.wasm .
package main

import (
	"bytes"
	"errors"
	"unicode/utf8"

	"github.com/reprise-bench/reprise/sdk-wasm/go/adapter"
)

func main() {}

func init() { adapter.Register(&chat{streams: map[uint32]*stream{}}) }

type chat struct {
	cfg      adapter.Config
	maxField string
	streams  map[uint32]*stream
	free     []*stream
	// last is the stream of context lastCtx: a response's events come in
	// batches for one context, so most lookups skip the map.
	last    *stream
	lastCtx uint32
}

type stream struct {
	flags   uint32
	sum     adapter.Summary
	errMsg  []byte
	extras  []byte
	choices uint32
}

func (c *chat) Describe() adapter.Description {
	return adapter.Description{Name: "openai-chat", Version: "1", Path: "/v1/chat/completions", MaxRecordsPerEvent: 16}
}

func (c *chat) Configure(cfg *adapter.Config) error {
	c.cfg = *cfg
	c.maxField = "max_tokens"
	if v := adapter.Get(cfg.Options, "max_tokens_field"); adapter.IsString(v) {
		c.maxField = string(adapter.AppendString(nil, v))
	}
	if cfg.ExtraBody != nil && !adapter.Members(cfg.ExtraBody, func(k, v []byte) {}) {
		return errors.New("extra body: want a JSON object")
	}
	return nil
}

// Build writes the whole chat request, with the prompt as a hole.
func (c *chat) Build(r *adapter.BuildRequest, w *adapter.RequestWriter) error {
	w.Header("Content-Type", "application/json")
	if r.Stream() {
		w.Header("Accept", "text/event-stream")
	}
	if p := adapter.Get(r.Raw, "payload"); p != nil && !adapter.IsNull(p) {
		w.RawBytes(p)
		return nil
	}
	w.Raw(`{"model":`)
	w.String(c.cfg.Model)
	if m := adapter.Get(r.Raw, "messages"); m != nil && !adapter.IsNull(m) {
		w.Raw(`,"messages":`)
		w.RawBytes(m)
	} else if t := adapter.Get(r.Raw, "text_input"); t != nil && !adapter.IsNull(t) {
		w.Raw(`,"messages":[{"role":"user","content":"`)
		appendTextInput(w, t)
		w.Raw(`"}]`)
	} else {
		w.Raw(`,"messages":[{"role":"user","content":"`)
		w.Prompt(adapter.HoleText)
		w.Raw(`"}]`)
	}
	if t := adapter.Get(r.Raw, "tools"); t != nil && !adapter.IsNull(t) {
		w.Raw(`,"tools":`)
		w.RawBytes(t)
	}
	if r.MaxTokens > 0 {
		w.Raw(`,"`)
		w.Raw(c.maxField)
		w.Raw(`":`)
		w.Int(int64(r.MaxTokens))
	}
	if c.cfg.IgnoreEOS {
		w.Raw(`,"ignore_eos":true`)
	}
	if r.Stream() {
		w.Raw(`,"stream":true`)
		if c.cfg.IncludeUsage {
			w.Raw(`,"stream_options":{"include_usage":true}`)
		}
	} else {
		w.Raw(`,"stream":false`)
	}
	appendMembers(w, c.cfg.ExtraBody)
	if e := adapter.Get(r.Raw, "extra"); e != nil && !adapter.IsNull(e) {
		appendMembers(w, e)
	}
	w.Raw("}")
	return nil
}

// appendMembers appends the members of a JSON object as ",members",
// verbatim (as the native adapter does).
func appendMembers(w *adapter.RequestWriter, obj []byte) {
	obj = trim(obj)
	if len(obj) < 2 {
		return
	}
	if inner := trim(obj[1 : len(obj)-1]); len(inner) > 0 {
		w.Raw(",")
		w.RawBytes(inner)
	}
}

func trim(b []byte) []byte {
	for len(b) > 0 && isSpace(b[0]) {
		b = b[1:]
	}
	for len(b) > 0 && isSpace(b[len(b)-1]) {
		b = b[:len(b)-1]
	}
	return b
}

func isSpace(c byte) bool { return c == ' ' || c == '\t' || c == '\n' || c == '\r' }

var tmp []byte

// appendTextInput writes a text_input value as JSON string contents: a
// string is decoded and re-escaped, anything else is its JSON text.
func appendTextInput(w *adapter.RequestWriter, v []byte) {
	if adapter.IsString(v) {
		tmp = adapter.AppendString(tmp[:0], v)
	} else {
		tmp = append(tmp[:0], v...)
	}
	w.Body = appendEscaped(w.Body, tmp)
}

const hexDigits = "0123456789abcdef"

// appendEscaped mirrors the native adapter's escaping (reprise's
// internal/jsonx, which is encoding/json's without HTML escaping): control
// characters, quotes and backslashes escaped, invalid UTF-8 as \ufffd,
// U+2028/U+2029 escaped.
func appendEscaped(dst, s []byte) []byte {
	for i := 0; i < len(s); {
		c := s[i]
		if c < utf8.RuneSelf {
			switch {
			case c == '"' || c == '\\':
				dst = append(dst, '\\', c)
			case c == '\b':
				dst = append(dst, '\\', 'b')
			case c == '\f':
				dst = append(dst, '\\', 'f')
			case c == '\n':
				dst = append(dst, '\\', 'n')
			case c == '\r':
				dst = append(dst, '\\', 'r')
			case c == '\t':
				dst = append(dst, '\\', 't')
			case c < 0x20:
				dst = append(dst, '\\', 'u', '0', '0', hexDigits[c>>4], hexDigits[c&0xF])
			default:
				dst = append(dst, c)
			}
			i++
			continue
		}
		r, size := utf8.DecodeRune(s[i:])
		switch {
		case r == utf8.RuneError && size == 1:
			dst = append(dst, `\ufffd`...)
		case r == '\u2028' || r == '\u2029':
			dst = append(dst, '\\', 'u', '2', '0', '2', hexDigits[r&0xF])
		default:
			dst = append(dst, s[i:i+size]...)
		}
		i += size
	}
	return dst
}

func (c *chat) Open(ctx uint32, flags uint32) {
	var st *stream
	if n := len(c.free); n > 0 {
		st = c.free[n-1]
		c.free = c.free[:n-1]
	} else {
		st = &stream{}
	}
	*st = stream{flags: flags, errMsg: st.errMsg[:0], extras: st.extras[:0]}
	c.streams[ctx] = st
	c.last, c.lastCtx = st, ctx
}

// stream returns the open stream of ctx, or nil.
func (c *chat) stream(ctx uint32) *stream {
	if c.last != nil && c.lastCtx == ctx {
		return c.last
	}
	st := c.streams[ctx]
	if st != nil {
		c.last, c.lastCtx = st, ctx
	}
	return st
}

func (c *chat) Close(ctx uint32, s *adapter.Summary) error {
	st := c.stream(ctx)
	if st == nil {
		return errors.New("context not open")
	}
	*s = st.sum
	s.Choices = st.choices
	s.Message = st.errMsg
	s.Extras = st.extras
	delete(c.streams, ctx)
	c.last = nil
	c.free = append(c.free, st)
	return nil
}

var errMalformed = errors.New("malformed response")

func (c *chat) Parse(ctx uint32, ev *adapter.Event, out *adapter.Records) error {
	st := c.stream(ctx)
	if st == nil {
		return errors.New("context not open")
	}
	switch {
	case ev.Flags&adapter.EventComment != 0:
		out.Add(adapter.Record{Kind: adapter.KindMeta, Tokens: adapter.TokensUnknown})
		return nil
	case ev.Flags&adapter.EventDone != 0:
		return nil
	case string(ev.Name) == "error":
		st.setError(502, ev.Data)
		out.Add(adapter.Record{Kind: adapter.KindError, Aux0: 502, Tokens: adapter.TokensUnknown})
		return nil
	}
	if isBlank(ev.Data) {
		return nil
	}
	return st.chunk(ev.Data, out, ev.Flags&adapter.EventNonOK != 0)
}

// isBlank reports whether b is only white space (Unicode's, as the native
// parser's bytes.TrimSpace).
func isBlank(b []byte) bool {
	if len(b) > 0 && b[0] > ' ' && b[0] < 0x80 {
		return false // the usual JSON event, without a call
	}
	return len(bytes.TrimSpace(b)) == 0
}

func (st *stream) setError(code uint32, msg []byte) {
	st.sum.Valid |= adapter.ValidError
	if code == 0 {
		code = 500
	}
	st.sum.ErrorCode = code
	st.errMsg = append(st.errMsg[:0], msg...)
}

// chunk mirrors engine/adapter/openai's stream.chunk, on the SDK's port of
// the same single-pass scanner.
func (st *stream) chunk(data []byte, out *adapter.Records, nonOK bool) error {
	s := adapter.NewScanner(data)
	// The error fields stay in memory (a struct of many fields), out of
	// the registers Go's Wasm code saves around every call in the loop.
	var e chunkErr
	usage := false
	capture := st.flags&adapter.OpenCapture != 0
	ok := s.BeginObject()
	for key, more := nextKey(&s, ok); more; key, more = s.NextKey() {
		switch string(key) {
		case "choices":
			if s.BeginArray() {
				for s.NextElem() {
					var c choiceAcc
					c.scan(&s)
					if s.Err() {
						break
					}
					st.emitChoice(&c, capture, out)
				}
			}
		case "usage":
			if st.usage(&s) {
				usage = true
			}
		case "error":
			switch s.Peek() {
			case '{':
				e.hasErr = true
				s.BeginObject()
				for k, more := s.NextKey(); more; k, more = s.NextKey() {
					switch string(k) {
					case "message":
						if s.Peek() == '"' {
							e.errMsg, e.errMsgEsc = s.Str()
						} else {
							s.Skip()
						}
					case "code":
						if c := s.Peek(); c >= '0' && c <= '9' {
							e.errCode, _ = s.Uint()
						} else {
							s.Skip()
						}
					default:
						s.Skip()
					}
				}
			case '"':
				e.hasErr = true
				e.errMsg, e.errMsgEsc = s.Str()
			default:
				s.Skip()
			}
		case "object":
			if s.Peek() == '"' {
				v, _ := s.Str()
				e.objErr = string(v) == "error"
			} else {
				s.Skip()
			}
		case "message":
			if s.Peek() == '"' {
				e.topMsg, e.topMsgEsc = s.Str()
				e.topMsgOK = true
			} else {
				s.Skip()
			}
		case "code":
			if c := s.Peek(); c >= '0' && c <= '9' {
				e.topCode, _ = s.Uint()
			} else {
				s.Skip()
			}
		case "timings":
			at := s.Pos()
			s.Skip()
			if !s.Err() && s.Pos()-at <= 4096 {
				st.extras = append(st.extras[:0], data[at:s.Pos()]...)
			}
		default:
			s.Skip()
		}
	}
	ok = ok && !s.Err()
	if ok {
		s.End()
	}
	if s.Err() || !ok {
		if nonOK {
			return nil
		}
		return errMalformed
	}
	if !e.hasErr && e.objErr && e.topMsgOK {
		e.hasErr, e.errMsg, e.errMsgEsc, e.errCode = true, e.topMsg, e.topMsgEsc, e.topCode
	}
	if usage {
		out.Add(adapter.Record{Kind: adapter.KindUsage, Tokens: adapter.TokensUnknown})
	}
	if e.hasErr {
		msg := adapter.AppendUnescaped(st.errMsg[:0], e.errMsg, e.errMsgEsc)
		st.setError(e.errCode, nil)
		st.errMsg = msg
		out.Add(adapter.Record{Kind: adapter.KindError, Aux0: st.sum.ErrorCode, Tokens: adapter.TokensUnknown})
	}
	return nil
}

// chunkErr is what a chunk says about an error.
type chunkErr struct {
	errCode                  uint32
	errMsg                   []byte
	errMsgEsc                bool
	hasErr, objErr, topMsgOK bool
	topMsg                   []byte
	topMsgEsc                bool
	topCode                  uint32
}

// choiceAcc collects one choice object's fields before its index is known.
type choiceAcc struct {
	index                       uint32
	content, reasoning, refusal []byte
	contentEsc, reasoningEsc    bool
	refusalEsc                  bool
	hasContent, hasReasoning    bool
	hasRefusal                  bool
	role                        bool
	finish                      uint32
	hasFinish                   bool
	tools                       int
	toolBytes                   [8]uint32
	toolIdx                     [8]uint32
}

func (c *choiceAcc) scan(s *adapter.Scanner) {
	if !s.BeginObject() {
		return
	}
	for key, more := s.NextKey(); more; key, more = s.NextKey() {
		switch string(key) {
		case "index":
			c.index, _ = s.Uint()
		case "delta", "message":
			if !s.BeginObject() {
				continue
			}
			for k, more := s.NextKey(); more; k, more = s.NextKey() {
				switch string(k) {
				case "content":
					if s.Peek() == '"' {
						c.content, c.contentEsc = s.Str()
						c.hasContent = true
					} else {
						s.Skip()
					}
				case "reasoning_content", "reasoning":
					if s.Peek() == '"' {
						c.reasoning, c.reasoningEsc = s.Str()
						c.hasReasoning = true
					} else {
						s.Skip()
					}
				case "refusal":
					if s.Peek() == '"' {
						c.refusal, c.refusalEsc = s.Str()
						c.hasRefusal = true
					} else {
						s.Skip()
					}
				case "role":
					c.role = true
					s.Skip()
				case "tool_calls":
					if s.BeginArray() {
						for s.NextElem() {
							c.toolCall(s)
						}
					}
				case "function_call":
					c.toolCall(s)
				default:
					s.Skip()
				}
			}
		case "text":
			if s.Peek() == '"' {
				c.content, c.contentEsc = s.Str()
				c.hasContent = true
			} else {
				s.Skip()
			}
		case "finish_reason":
			if s.Peek() == '"' {
				v, _ := s.Str()
				c.finish = finishCode(v)
				c.hasFinish = true
			} else {
				s.Skip()
			}
		default:
			s.Skip()
		}
	}
}

// finishCode mirrors adapter.ParseFinishReason on the raw string.
func finishCode(v []byte) uint32 {
	switch string(v) {
	case "stop", "eos", "stop_sequence", "end_turn":
		return adapter.FinishStop
	case "length", "max_tokens":
		return adapter.FinishLength
	case "tool_calls", "function_call", "tool_use":
		return adapter.FinishToolCalls
	case "content_filter":
		return adapter.FinishContentFilter
	case "error":
		return adapter.FinishError
	}
	return adapter.FinishUnknown
}

// toolCall scans one tool call (or a legacy function_call object).
func (c *choiceAcc) toolCall(s *adapter.Scanner) {
	var n, index uint32
	if s.BeginObject() {
		for k, more := s.NextKey(); more; k, more = s.NextKey() {
			switch string(k) {
			case "index":
				index, _ = s.Uint()
			case "function":
				if !s.BeginObject() {
					continue
				}
				for k2, more := s.NextKey(); more; k2, more = s.NextKey() {
					switch string(k2) {
					case "name", "arguments":
						n += strLen(s)
					default:
						s.Skip()
					}
				}
			case "name", "arguments":
				n += strLen(s)
			default:
				s.Skip()
			}
		}
	}
	if c.tools < len(c.toolBytes) {
		c.toolBytes[c.tools] = n
		c.toolIdx[c.tools] = index
	}
	c.tools++
}

// strLen consumes a value: a string's decoded length, 0 for anything else.
func strLen(s *adapter.Scanner) uint32 {
	if s.Peek() == '"' {
		raw, esc := s.Str()
		return uint32(adapter.DecodedLen(raw, esc))
	}
	s.Skip()
	return 0
}

// nextKey is s.NextKey when ok (the object began), else false.
func nextKey(s *adapter.Scanner, ok bool) ([]byte, bool) {
	if !ok {
		return nil, false
	}
	return s.NextKey()
}

var textBuf []byte

// addText adds r for raw string contents: decoded and captured when
// capture is on, else only measured.
func addText(out *adapter.Records, r adapter.Record, raw []byte, esc, capture bool) {
	if !capture {
		r.TextBytes = uint32(adapter.DecodedLen(raw, esc))
		out.Add(r)
		return
	}
	textBuf = adapter.AppendUnescaped(textBuf[:0], raw, esc)
	out.AddText(r, textBuf, true)
}

// emitChoice mirrors the native emitChoice.
func (st *stream) emitChoice(c *choiceAcc, capture bool, out *adapter.Records) {
	if c.index+1 > st.choices && c.index < 1<<16 {
		st.choices = c.index + 1
	}
	ch := uint16(c.index)
	added := 0
	if c.hasReasoning && len(c.reasoning) > 0 {
		addText(out, adapter.Record{Kind: adapter.KindReasoning, Choice: ch, Tokens: adapter.TokensUnknown}, c.reasoning, c.reasoningEsc, capture)
		added++
	}
	for i := 0; i < c.tools; i++ {
		var tb, ti uint32
		if i < len(c.toolBytes) {
			tb, ti = c.toolBytes[i], c.toolIdx[i]
		}
		out.Add(adapter.Record{Kind: adapter.KindToolCall, Choice: ch, TextBytes: tb, Aux1: ti, Tokens: adapter.TokensUnknown})
		added++
	}
	if c.hasContent && len(c.content) > 0 {
		r := adapter.Record{Kind: adapter.KindContent, Choice: ch, Tokens: adapter.TokensUnknown}
		if !capture && !c.contentEsc { // the usual token: no call before the record's
			r.TextBytes = uint32(len(c.content))
			out.Add(r)
		} else {
			addText(out, r, c.content, c.contentEsc, capture)
		}
		added++
	}
	if c.hasRefusal && len(c.refusal) > 0 {
		addText(out, adapter.Record{Kind: adapter.KindContent, Flags: adapter.FlagRefusal, Choice: ch, Tokens: adapter.TokensUnknown}, c.refusal, c.refusalEsc, capture)
		added++
	}
	if c.hasFinish {
		out.Add(adapter.Record{Kind: adapter.KindFinish, Choice: ch, Aux0: c.finish, Tokens: adapter.TokensUnknown})
		added++
		if c.index == 0 || st.sum.Valid&adapter.ValidFinishReason == 0 {
			st.sum.Finish = c.finish
			st.sum.Valid |= adapter.ValidFinishReason
		}
	}
	if added == 0 && c.role {
		out.Add(adapter.Record{Kind: adapter.KindMeta, Choice: ch, Tokens: adapter.TokensUnknown})
	}
}

// usage scans a usage value; it reports whether it was a non-null object.
func (st *stream) usage(s *adapter.Scanner) bool {
	f := &st.sum
	if !s.BeginObject() {
		return false
	}
	for k, more := s.NextKey(); more; k, more = s.NextKey() {
		switch string(k) {
		case "prompt_tokens", "input_tokens":
			if v, ok := num(s); ok {
				f.PromptTokens = v
				f.Valid |= adapter.ValidPromptTokens
			}
		case "completion_tokens", "output_tokens":
			if v, ok := num(s); ok {
				f.CompletionTokens = v
				f.Valid |= adapter.ValidCompletionTokens
			}
		case "prompt_tokens_details", "input_tokens_details":
			if !s.BeginObject() {
				continue
			}
			for k2, more := s.NextKey(); more; k2, more = s.NextKey() {
				if string(k2) == "cached_tokens" {
					if v, ok := num(s); ok {
						f.CachedTokens = v
						f.Valid |= adapter.ValidCachedTokens
					}
					continue
				}
				s.Skip()
			}
		case "completion_tokens_details", "output_tokens_details":
			if !s.BeginObject() {
				continue
			}
			for k2, more := s.NextKey(); more; k2, more = s.NextKey() {
				if string(k2) == "reasoning_tokens" {
					if v, ok := num(s); ok {
						f.ReasoningTokens = v
						f.Valid |= adapter.ValidReasoningTokens
					}
					continue
				}
				s.Skip()
			}
		default:
			s.Skip()
		}
	}
	return !s.Err()
}

// num consumes a value: a number's value (clamped as Scanner.Uint does),
// or false for anything else.
func num(s *adapter.Scanner) (uint32, bool) {
	if c := s.Peek(); c == '-' || (c >= '0' && c <= '9') {
		return s.Uint()
	}
	s.Skip()
	return 0, false
}
