package openai

// Hot path: classifying OpenAI chat/completions chunks into records.
// Allocation budget: TestParseAllocs (0 allocations per chunk once the
// instance's buffers have grown).

import (
	"bytes"

	"github.com/reprise-bench/reprise/engine/adapter"
	"github.com/reprise-bench/reprise/engine/record"
	sdk "github.com/reprise-bench/reprise/sdk-wasm/go/adapter"
)

// stream is the per-context parse state.
type stream struct {
	open    bool
	flags   adapter.OpenFlags
	fin     adapter.Final
	text    []byte
	reason  []byte
	other   []byte // choices ≥ 1: content and reasoning in record order
	errMsg  []byte
	extras  []byte
	choices uint32
	tool    bool // Responses: a function call was streamed
	// SGLang: completion tokens and decoded text bytes seen so far, and
	// scratch space to decode a cumulative chunk.
	genTokens uint32
	genBytes  int
	scratch   []byte
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
	finish                      adapter.FinishReason
	hasFinish                   bool
	tools                       int
	toolBytes                   [8]uint32 // text bytes of the first tool calls
	toolIdx                     [8]uint32
}

// unreadable is a parser's answer to data it cannot read: no error for a
// non-2xx body (the engine keeps the raw body as the message), else
// adapter.ErrMalformed.
func unreadable(nonOK bool) error {
	if nonOK {
		return nil
	}
	return adapter.ErrMalformed
}

// parseEvent classifies one event's data.
func (st *stream) parseEvent(ev *adapter.Event, idx uint32, dst []adapter.Record) ([]adapter.Record, error) {
	switch {
	case ev.Flags&adapter.EventComment != 0:
		return append(dst, adapter.Record{Kind: record.EventMeta, Event: idx, Tokens: adapter.TokensUnknown}), nil
	case ev.Flags&adapter.EventDone != 0:
		return dst, nil
	case string(ev.Name) == "error":
		st.setError(502, ev.Data)
		return append(dst, adapter.Record{Kind: record.EventError, Event: idx, Aux0: 502, Tokens: adapter.TokensUnknown}), nil
	}
	data := ev.Data
	if len(bytes.TrimSpace(data)) == 0 {
		return dst, nil
	}
	return st.chunk(data, idx, dst, ev.Flags&adapter.EventNonOK != 0)
}

func (st *stream) setError(code uint32, msg []byte) {
	st.fin.Valid |= adapter.ValidError
	if code == 0 {
		code = 500
	}
	st.fin.ErrorCode = code
	st.errMsg = append(st.errMsg[:0], msg...)
}

// chunk parses one JSON chunk (or a whole non-streaming body).
func (st *stream) chunk(data []byte, idx uint32, dst []adapter.Record, nonOK bool) ([]adapter.Record, error) {
	s := sdk.NewScanner(data)
	var (
		usage                    bool
		errCode                  uint32
		errMsg                   []byte
		errMsgEsc                bool
		hasErr, objErr, topMsgOK bool
		topMsg                   []byte
		topMsgEsc                bool
		topCode                  uint32
	)
	captured := st.flags&adapter.OpenCaptureText != 0
	ok := s.Object(func(key []byte) {
		switch string(key) {
		case "choices":
			s.Array(func(int) {
				var c choiceAcc
				st.choice(&s, &c)
				if s.Err() {
					return
				}
				dst = st.emitChoice(&c, idx, captured, dst)
			})
		case "usage":
			if st.usage(&s) {
				usage = true
			}
		case "error":
			switch s.Peek() {
			case '{':
				hasErr = true
				s.Object(func(k []byte) {
					switch string(k) {
					case "message":
						if v, e, ok := s.OptStr(); ok {
							errMsg, errMsgEsc = v, e
						}
					case "code":
						if c := s.Peek(); c >= '0' && c <= '9' {
							errCode, _ = s.Uint()
						} else {
							s.Skip()
						}
					default:
						s.Skip()
					}
				})
			case '"':
				hasErr = true
				errMsg, errMsgEsc = s.Str()
			default:
				s.Skip() // "error": null
			}
		case "object":
			if v, _, ok := s.OptStr(); ok {
				objErr = string(v) == "error"
			}
		case "message":
			if v, e, ok := s.OptStr(); ok {
				topMsg, topMsgEsc = v, e
				topMsgOK = true
			}
		case "code":
			if c := s.Peek(); c >= '0' && c <= '9' {
				topCode, _ = s.Uint()
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
	})
	if !s.Done(ok) || data[firstNonSpace(data)] != '{' {
		return dst, unreadable(nonOK)
	}
	if !hasErr && objErr && topMsgOK {
		hasErr, errMsg, errMsgEsc, errCode = true, topMsg, topMsgEsc, topCode
	}
	if usage {
		dst = append(dst, adapter.Record{Kind: record.EventUsage, Event: idx, Tokens: adapter.TokensUnknown})
	}
	if hasErr {
		msg := sdk.AppendUnescaped(st.errMsg[:0], errMsg, errMsgEsc)
		st.setError(errCode, nil)
		st.errMsg = msg
		dst = append(dst, adapter.Record{Kind: record.EventError, Event: idx, Aux0: st.fin.ErrorCode, Tokens: adapter.TokensUnknown})
	}
	return dst, nil
}

// choice scans one element of "choices".
func (st *stream) choice(s *sdk.Scanner, c *choiceAcc) {
	s.Object(func(key []byte) {
		switch string(key) {
		case "index":
			c.index, _ = num(s)
		case "delta", "message":
			s.Object(func(k []byte) {
				switch string(k) {
				case "content":
					if v, e, ok := s.OptStr(); ok {
						c.content, c.contentEsc = v, e
						c.hasContent = true
					}
				case "reasoning_content", "reasoning":
					if v, e, ok := s.OptStr(); ok {
						c.reasoning, c.reasoningEsc = v, e
						c.hasReasoning = true
					}
				case "refusal":
					if v, e, ok := s.OptStr(); ok {
						c.refusal, c.refusalEsc = v, e
						c.hasRefusal = true
					}
				case "role":
					c.role = true
					s.Skip()
				case "tool_calls":
					s.Array(func(int) { st.toolCall(s, c) })
				case "function_call":
					st.toolCall(s, c)
				default:
					s.Skip()
				}
			})
		case "text":
			if v, e, ok := s.OptStr(); ok {
				c.content, c.contentEsc = v, e
				c.hasContent = true
			}
		case "finish_reason":
			if v, _, ok := s.OptStr(); ok {
				c.finish = adapter.ParseFinishReason(v)
				c.hasFinish = true
			}
		default:
			s.Skip()
		}
	})
}

// toolCall scans one tool call (or a legacy function_call object).
func (st *stream) toolCall(s *sdk.Scanner, c *choiceAcc) {
	var n, index uint32
	s.Object(func(k []byte) {
		switch string(k) {
		case "index":
			index, _ = num(s)
		case "function":
			s.Object(func(k2 []byte) {
				switch string(k2) {
				case "name", "arguments":
					if raw, esc, ok := s.OptStr(); ok {
						n += uint32(sdk.DecodedLen(raw, esc))
					}
				default:
					s.Skip()
				}
			})
		case "name", "arguments": // legacy function_call
			if raw, esc, ok := s.OptStr(); ok {
				n += uint32(sdk.DecodedLen(raw, esc))
			}
		default:
			s.Skip()
		}
	})
	if c.tools < len(c.toolBytes) {
		c.toolBytes[c.tools] = n
		c.toolIdx[c.tools] = index
	}
	c.tools++
}

// emitChoice appends the records of one choice of one event.
func (st *stream) emitChoice(c *choiceAcc, idx uint32, captured bool, dst []adapter.Record) []adapter.Record {
	if c.index+1 > st.choices && c.index < 1<<16 {
		st.choices = c.index + 1
	}
	ch := uint16(c.index)
	n := len(dst)
	flags := adapter.RecordFlags(0)
	if captured {
		flags = adapter.RecordTextCaptured
	}
	if c.hasReasoning && len(c.reasoning) > 0 {
		dst = append(dst, adapter.Record{Kind: record.EventReasoning, Flags: flags, Choice: ch, Event: idx,
			TextBytes: uint32(sdk.DecodedLen(c.reasoning, c.reasoningEsc)), Tokens: adapter.TokensUnknown})
		if captured && c.index == 0 {
			st.reason = sdk.AppendUnescaped(st.reason, c.reasoning, c.reasoningEsc)
		} else if captured {
			st.other = sdk.AppendUnescaped(st.other, c.reasoning, c.reasoningEsc)
		}
	}
	for i := 0; i < c.tools; i++ {
		var tb, ti uint32
		if i < len(c.toolBytes) {
			tb, ti = c.toolBytes[i], c.toolIdx[i]
		}
		dst = append(dst, adapter.Record{Kind: record.EventToolCall, Choice: ch, Event: idx, TextBytes: tb, Aux1: ti, Tokens: adapter.TokensUnknown})
	}
	if c.hasContent && len(c.content) > 0 {
		dst = append(dst, adapter.Record{Kind: record.EventContent, Flags: flags, Choice: ch, Event: idx,
			TextBytes: uint32(sdk.DecodedLen(c.content, c.contentEsc)), Tokens: adapter.TokensUnknown})
		if captured && c.index == 0 {
			st.text = sdk.AppendUnescaped(st.text, c.content, c.contentEsc)
		} else if captured {
			st.other = sdk.AppendUnescaped(st.other, c.content, c.contentEsc)
		}
	}
	if c.hasRefusal && len(c.refusal) > 0 {
		dst = append(dst, adapter.Record{Kind: record.EventContent, Flags: flags | adapter.RecordRefusal, Choice: ch, Event: idx,
			TextBytes: uint32(sdk.DecodedLen(c.refusal, c.refusalEsc)), Tokens: adapter.TokensUnknown})
	}
	if c.hasFinish {
		dst = append(dst, adapter.Record{Kind: record.EventFinish, Choice: ch, Event: idx, Aux0: uint32(c.finish), Tokens: adapter.TokensUnknown})
		if c.index == 0 || st.fin.Valid&adapter.ValidFinishReason == 0 {
			st.fin.FinishReason = c.finish
			st.fin.Valid |= adapter.ValidFinishReason
		}
	}
	if len(dst) == n && c.role {
		dst = append(dst, adapter.Record{Kind: record.EventMeta, Choice: ch, Event: idx, Tokens: adapter.TokensUnknown})
	}
	return dst
}

// usage scans a usage value; it reports whether it was a non-null object.
func (st *stream) usage(s *sdk.Scanner) bool {
	f := &st.fin
	return s.Object(func(k []byte) {
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
			s.Object(func(k2 []byte) {
				if string(k2) == "cached_tokens" {
					if v, ok := num(s); ok {
						f.CachedTokens = v
						f.Valid |= adapter.ValidCachedTokens
					}
					return
				}
				s.Skip()
			})
		case "completion_tokens_details", "output_tokens_details":
			s.Object(func(k2 []byte) {
				if string(k2) == "reasoning_tokens" {
					if v, ok := num(s); ok {
						f.ReasoningTokens = v
						f.Valid |= adapter.ValidReasoningTokens
					}
					return
				}
				s.Skip()
			})
		default:
			s.Skip()
		}
	})
}

// num scans a number, or skips a non-number value.
func num(s *sdk.Scanner) (uint32, bool) {
	if c := s.Peek(); c == '-' || (c >= '0' && c <= '9') {
		return s.Uint()
	}
	s.Skip()
	return 0, false
}

func firstNonSpace(b []byte) int {
	for i, c := range b {
		if c != ' ' && c != '\t' && c != '\n' && c != '\r' {
			return i
		}
	}
	return 0
}
