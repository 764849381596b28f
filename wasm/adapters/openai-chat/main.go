// Command openai-chat is the OpenAI chat/completions adapter as a Wasm
// guest: the reference adapter of the conformance test, which checks that
// it produces the same records as reprise's native parser
// (engine/adapter/openai) on every recorded fixture. Build:
//
//	GOOS=wasip1 GOARCH=wasm go build -buildmode=c-shared -trimpath -ldflags='-s -w' -o ../openai-chat.wasm .
package main

import (
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

// appendEscaped mirrors the native adapter's escaping: control characters,
// quotes and backslashes escaped, invalid UTF-8 as \ufffd, U+2028/U+2029
// escaped.
func appendEscaped(dst, s []byte) []byte {
	for i := 0; i < len(s); {
		c := s[i]
		if c < utf8.RuneSelf {
			switch {
			case c == '"' || c == '\\':
				dst = append(dst, '\\', c)
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
}

func (c *chat) Close(ctx uint32, s *adapter.Summary) error {
	st := c.streams[ctx]
	if st == nil {
		return errors.New("context not open")
	}
	*s = st.sum
	s.Choices = st.choices
	s.Message = st.errMsg
	s.Extras = st.extras
	delete(c.streams, ctx)
	c.free = append(c.free, st)
	return nil
}

var errMalformed = errors.New("malformed response")

func (c *chat) Parse(ctx uint32, ev *adapter.Event, out *adapter.Records) error {
	st := c.streams[ctx]
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

func isBlank(b []byte) bool {
	for _, c := range b {
		if c != ' ' && c != '\t' && c != '\n' && c != '\r' {
			return false
		}
	}
	return true
}

func (st *stream) setError(code uint32, msg []byte) {
	st.sum.Valid |= adapter.ValidError
	if code == 0 {
		code = 500
	}
	st.sum.ErrorCode = code
	st.errMsg = append(st.errMsg[:0], msg...)
}

// chunk mirrors engine/adapter/openai's stream.chunk.
func (st *stream) chunk(data []byte, out *adapter.Records, nonOK bool) error {
	var (
		usage, hasErr, objErr, topMsgOK bool
		errCode, topCode                uint32
		errMsg, topMsg                  []byte
		bad                             bool
	)
	it := adapter.Object(data)
	for it.Next() {
		v := it.Value()
		switch string(it.Key()) {
		case "choices":
			ch := adapter.Array(v)
			for ch.Next() {
				st.choice(ch.Value(), out)
			}
			bad = bad || ch.Err()
		case "usage":
			if st.usage(v) {
				usage = true
			}
		case "error":
			switch {
			case len(v) > 0 && v[0] == '{':
				hasErr = true
				for e := adapter.Object(v); e.Next(); {
					v2 := e.Value()
					switch string(e.Key()) {
					case "message":
						if adapter.IsString(v2) {
							errMsg = v2
						}
					case "code":
						if len(v2) > 0 && v2[0] >= '0' && v2[0] <= '9' {
							errCode, _ = adapter.Uint(v2)
						}
					}
				}
			case adapter.IsString(v):
				hasErr = true
				errMsg = v
			}
		case "object":
			objErr = adapter.StringEquals(v, "error")
		case "message":
			if adapter.IsString(v) {
				topMsg, topMsgOK = v, true
			}
		case "code":
			if len(v) > 0 && v[0] >= '0' && v[0] <= '9' {
				topCode, _ = adapter.Uint(v)
			}
		case "timings":
			if len(v) <= 4096 {
				st.extras = append(st.extras[:0], v...)
			}
		}
	}
	if it.Err() || bad {
		if nonOK {
			return nil
		}
		return errMalformed
	}
	if !hasErr && objErr && topMsgOK {
		hasErr, errMsg, errCode = true, topMsg, topCode
	}
	if usage {
		out.Add(adapter.Record{Kind: adapter.KindUsage, Tokens: adapter.TokensUnknown})
	}
	if hasErr {
		msg := adapter.AppendString(st.errMsg[:0], errMsg)
		st.setError(errCode, nil)
		st.errMsg = msg
		out.Add(adapter.Record{Kind: adapter.KindError, Aux0: st.sum.ErrorCode, Tokens: adapter.TokensUnknown})
	}
	return nil
}

type tool struct{ bytes, index uint32 }

// addText adds r for the JSON string v: decoded and captured when capture
// is on, else only measured.
func addText(out *adapter.Records, r adapter.Record, v []byte, capture bool) {
	if !capture {
		r.TextBytes = uint32(adapter.StringLen(v))
		out.Add(r)
		return
	}
	textBuf = adapter.AppendString(textBuf[:0], v)
	out.AddText(r, textBuf, true)
}

var textBuf []byte

// toolCall scans one tool call (or a legacy function_call object).
func toolCall(call []byte) tool {
	var t tool
	for it := adapter.Object(call); it.Next(); {
		v := it.Value()
		switch string(it.Key()) {
		case "index":
			t.index, _ = adapter.Uint(v)
		case "function":
			for f := adapter.Object(v); f.Next(); {
				if k := string(f.Key()); (k == "name" || k == "arguments") && adapter.IsString(f.Value()) {
					t.bytes += uint32(adapter.StringLen(f.Value()))
				}
			}
		case "name", "arguments":
			if adapter.IsString(v) {
				t.bytes += uint32(adapter.StringLen(v))
			}
		}
	}
	return t
}

// choice mirrors the native choice scan and emitChoice.
func (st *stream) choice(ch []byte, out *adapter.Records) {
	var (
		index                            uint32
		content, reasoning, refusal      []byte
		hasContent, hasReasoning, hasRef bool
		role, hasFinish                  bool
		finish                           uint32
		tools                            [8]tool
		ntools                           int
	)
	addTool := func(t tool) {
		if ntools < len(tools) {
			tools[ntools] = t
		}
		ntools++
	}
	for it := adapter.Object(ch); it.Next(); {
		v := it.Value()
		switch string(it.Key()) {
		case "index":
			index, _ = adapter.Uint(v)
		case "delta", "message":
			for d := adapter.Object(v); d.Next(); {
				v2 := d.Value()
				switch string(d.Key()) {
				case "content":
					if adapter.IsString(v2) {
						content, hasContent = v2, true
					}
				case "reasoning_content", "reasoning":
					if adapter.IsString(v2) {
						reasoning, hasReasoning = v2, true
					}
				case "refusal":
					if adapter.IsString(v2) {
						refusal, hasRef = v2, true
					}
				case "role":
					role = true
				case "tool_calls":
					for c := adapter.Array(v2); c.Next(); {
						addTool(toolCall(c.Value()))
					}
				case "function_call":
					addTool(toolCall(v2))
				}
			}
		case "text":
			if adapter.IsString(v) {
				content, hasContent = v, true
			}
		case "finish_reason":
			if adapter.IsString(v) {
				finish, hasFinish = adapter.FinishCode(v), true
			}
		}
	}
	if index+1 > st.choices && index < 1<<16 {
		st.choices = index + 1
	}
	choice := uint16(index)
	capture := st.flags&adapter.OpenCapture != 0
	added := 0
	if hasReasoning && len(reasoning) > 2 {
		addText(out, adapter.Record{Kind: adapter.KindReasoning, Choice: choice, Tokens: adapter.TokensUnknown}, reasoning, capture)
		added++
	}
	for i := 0; i < ntools; i++ {
		var t tool
		if i < len(tools) {
			t = tools[i]
		}
		out.Add(adapter.Record{Kind: adapter.KindToolCall, Choice: choice, TextBytes: t.bytes, Aux1: t.index, Tokens: adapter.TokensUnknown})
		added++
	}
	if hasContent && len(content) > 2 {
		addText(out, adapter.Record{Kind: adapter.KindContent, Choice: choice, Tokens: adapter.TokensUnknown}, content, capture)
		added++
	}
	if hasRef && len(refusal) > 2 {
		addText(out, adapter.Record{Kind: adapter.KindContent, Flags: adapter.FlagRefusal, Choice: choice, Tokens: adapter.TokensUnknown}, refusal, capture)
		added++
	}
	if hasFinish {
		out.Add(adapter.Record{Kind: adapter.KindFinish, Choice: choice, Aux0: finish, Tokens: adapter.TokensUnknown})
		added++
		if index == 0 || st.sum.Valid&adapter.ValidFinishReason == 0 {
			st.sum.Finish = finish
			st.sum.Valid |= adapter.ValidFinishReason
		}
	}
	if added == 0 && role {
		out.Add(adapter.Record{Kind: adapter.KindMeta, Choice: choice, Tokens: adapter.TokensUnknown})
	}
}

// usage reads a usage object into the summary; it reports whether v was a
// non-null object.
func (st *stream) usage(v []byte) bool {
	s := &st.sum
	num := func(v []byte) (uint32, bool) {
		if len(v) > 0 && (v[0] == '-' || v[0] >= '0' && v[0] <= '9') {
			return adapter.Uint(v)
		}
		return 0, false
	}
	it := adapter.Object(v)
	n := 0
	for it.Next() {
		n++
		v := it.Value()
		switch string(it.Key()) {
		case "prompt_tokens", "input_tokens":
			if n, ok := num(v); ok {
				s.PromptTokens = n
				s.Valid |= adapter.ValidPromptTokens
			}
		case "completion_tokens", "output_tokens":
			if n, ok := num(v); ok {
				s.CompletionTokens = n
				s.Valid |= adapter.ValidCompletionTokens
			}
		case "prompt_tokens_details", "input_tokens_details":
			if n, ok := num(adapter.Get(v, "cached_tokens")); ok {
				s.CachedTokens = n
				s.Valid |= adapter.ValidCachedTokens
			}
		case "completion_tokens_details", "output_tokens_details":
			if n, ok := num(adapter.Get(v, "reasoning_tokens")); ok {
				s.ReasoningTokens = n
				s.Valid |= adapter.ValidReasoningTokens
			}
		}
	}
	return !it.Err()
}
