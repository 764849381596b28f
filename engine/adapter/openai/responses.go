package openai

// Hot path: classifying OpenAI Responses API events into records.
// Allocation budget: TestParseResponsesAllocs (0 allocations per event
// once the instance's buffers have grown).

import (
	"bytes"
	"fmt"
	"strconv"

	"github.com/reprise-bench/reprise/engine/adapter"
	"github.com/reprise-bench/reprise/engine/record"
	"github.com/reprise-bench/reprise/internal/jsonx"
	sdk "github.com/reprise-bench/reprise/sdk-wasm/go/adapter"
)

// buildResponses renders a /v1/responses request: the prompt (or the
// whole conversation of a later turn) as input messages, max_output_tokens,
// stream and store:false (a benchmark keeps nothing on the server).
func (in *Instance) buildResponses(b *adapter.BuildInput, raw *rawRow, stream bool, out *adapter.HTTPRequest) error {
	body := append(out.Body, `{"model":`...)
	body = jsonx.AppendString(body, in.cfg.Model)
	history := b.Flags&adapter.BuildHistory != 0 && len(b.Messages) > 0
	switch {
	case hasMedia(b, raw):
		body = append(body, `,"input":`...)
		text := b.PromptText
		var prior []adapter.Message
		if history {
			text, prior = b.Messages[len(b.Messages)-1].Content, b.Messages[:len(b.Messages)-1]
		} else if isSet(raw.TextInput) {
			text = textInput(raw.TextInput)
		}
		body = appendMessages(body, prior, `{"type":"message","role":`)
		body = body[:len(body)-1]
		if len(prior) > 0 {
			body = append(body, ',')
		}
		body = append(body, `{"type":"message","role":"user","content":`...)
		var err error
		if body, err = appendResponsesContent(body, text, b, raw); err != nil {
			return fmt.Errorf("row %d: media: %w", b.TraceRow, err)
		}
		body = append(body, "}]"...)
	case history:
		body = append(body, `,"input":`...)
		body = appendMessages(body, b.Messages, `{"type":"message","role":`)
	case isSet(raw.Messages):
		// Chat messages are valid Responses input items (EasyInputMessage).
		body = append(body, `,"input":`...)
		body = append(body, raw.Messages...)
	default:
		body = append(body, `,"input":[{"type":"message","role":"user","content":"`...)
		if isSet(raw.TextInput) {
			body = appendTextInput(body, raw.TextInput)
		} else {
			body = jsonx.AppendContents(body, b.PromptText)
		}
		body = append(body, `"}]`...)
	}
	if isSet(raw.Tools) {
		body = append(body, `,"tools":`...)
		body = append(body, raw.Tools...)
	}
	body = in.appendLimits(body, b)
	if stream {
		body = append(body, `,"stream":true`...)
	} else {
		body = append(body, `,"stream":false`...)
	}
	// No stream_options: the Responses API reports usage in its terminal
	// event on its own, and strict servers reject include_usage there.
	body = append(body, `,"store":false`...)
	return in.endBody(body, b, raw, out)
}

// The kinds of Responses stream events the parser tells apart.
const (
	rtOther      = iota // envelopes: created, in_progress, *.added, *.done
	rtText              // response.output_text.delta
	rtReasoning         // response.reasoning_text.delta, response.reasoning_summary_text.delta
	rtTool              // response.function_call_arguments.delta
	rtRefusal           // response.refusal.delta
	rtCompleted         // response.completed
	rtIncomplete        // response.incomplete
	rtFailed            // response.failed
	rtError             // error
)

func responsesType(t []byte) int {
	switch string(t) {
	case "response.output_text.delta":
		return rtText
	case "response.reasoning_text.delta", "response.reasoning_summary_text.delta", "response.reasoning.delta":
		return rtReasoning
	case "response.function_call_arguments.delta":
		return rtTool
	case "response.refusal.delta":
		return rtRefusal
	case "response.completed":
		return rtCompleted
	case "response.incomplete":
		return rtIncomplete
	case "response.failed":
		return rtFailed
	case "error":
		return rtError
	}
	return rtOther
}

// respAcc collects a response object's fields (the "response" member of
// a terminal event, or a whole non-streaming body).
type respAcc struct {
	status     []byte
	reason     []byte // incomplete_details.reason
	usage      bool
	hasErr     bool
	errMsg     []byte
	errMsgEsc  bool
	errCode    uint32
	toolCalled bool
}

// parseResponsesEvent classifies one Responses API event.
func (st *stream) parseResponsesEvent(ev *adapter.Event, idx uint32, dst []adapter.Record) ([]adapter.Record, error) {
	switch {
	case ev.Flags&adapter.EventComment != 0:
		return append(dst, adapter.Record{Kind: record.EventMeta, Event: idx, Tokens: adapter.TokensUnknown}), nil
	case ev.Flags&adapter.EventDone != 0:
		return dst, nil
	}
	data := ev.Data
	if len(bytes.TrimSpace(data)) == 0 {
		return dst, nil
	}
	if ev.Flags&adapter.EventWholeBody != 0 {
		return st.responsesBody(data, idx, dst, ev.Flags&adapter.EventNonOK != 0)
	}
	s := sdk.NewScanner(data)
	var (
		typ            []byte
		delta          []byte
		deltaEsc       bool
		hasDelta       bool
		r              respAcc
		msg            []byte
		msgEsc, hasMsg bool
		code           uint32
		errObj         bool
	)
	ok := s.Object(func(key []byte) {
		switch string(key) {
		case "type":
			if v, _, ok := s.OptStr(); ok {
				typ = v
			}
		case "delta":
			if v, e, ok := s.OptStr(); ok {
				delta, deltaEsc = v, e
				hasDelta = true
			}
		case "response":
			_, _ = st.responseObject(&s, &r, idx, nil, false)
		case "message":
			if v, e, ok := s.OptStr(); ok {
				msg, msgEsc = v, e
				hasMsg = true
			}
		case "code":
			code = errCode(&s)
		case "error":
			errObj = st.errorMember(&s, &r)
		default:
			s.Skip()
		}
	})
	if !s.Done(ok) {
		return dst, adapter.ErrMalformed
	}
	if len(typ) == 0 {
		typ = ev.Name
	}
	captured := st.flags&adapter.OpenCaptureText != 0
	flags := adapter.RecordFlags(0)
	if captured {
		flags = adapter.RecordTextCaptured
	}
	n := len(dst)
	switch t := responsesType(typ); t {
	case rtText, rtReasoning, rtRefusal:
		if !hasDelta || len(delta) == 0 {
			break
		}
		st.choices = 1
		rec := adapter.Record{Kind: record.EventContent, Flags: flags, Event: idx,
			TextBytes: uint32(sdk.DecodedLen(delta, deltaEsc)), Tokens: adapter.TokensUnknown}
		switch t {
		case rtReasoning:
			rec.Kind = record.EventReasoning
			if captured {
				st.reason = sdk.AppendUnescaped(st.reason, delta, deltaEsc)
			}
		case rtRefusal:
			rec.Flags |= adapter.RecordRefusal
		default:
			if captured {
				st.text = sdk.AppendUnescaped(st.text, delta, deltaEsc)
			}
		}
		dst = append(dst, rec)
	case rtTool:
		if hasDelta && len(delta) > 0 {
			st.choices = 1
			st.tool = true
			dst = append(dst, adapter.Record{Kind: record.EventToolCall, Event: idx,
				TextBytes: uint32(sdk.DecodedLen(delta, deltaEsc)), Tokens: adapter.TokensUnknown})
		}
	case rtCompleted, rtIncomplete, rtFailed:
		if t == rtIncomplete && len(r.status) == 0 {
			r.status = []byte("incomplete")
		}
		if t == rtFailed && !r.hasErr {
			r.hasErr, r.errMsg = true, []byte("response failed")
		}
		dst = st.finishResponse(&r, idx, dst)
	case rtError:
		if !r.hasErr && hasMsg {
			r.hasErr, r.errMsg, r.errMsgEsc, r.errCode = true, msg, msgEsc, code
		}
		if !r.hasErr {
			r.hasErr, r.errMsg = true, []byte("error event")
		}
		dst = st.responseError(&r, idx, dst)
	default:
		if errObj && r.hasErr {
			dst = st.responseError(&r, idx, dst)
		}
	}
	if len(dst) == n {
		dst = append(dst, adapter.Record{Kind: record.EventMeta, Event: idx, Tokens: adapter.TokensUnknown})
	}
	return dst, nil
}

// errCode scans an error code: a number, or a string (the Responses API's
// codes are words such as "server_error"; they map to 500).
func errCode(s *sdk.Scanner) uint32 {
	switch c := s.Peek(); {
	case c >= '0' && c <= '9':
		v, _ := s.Uint()
		return v
	case c == '"':
		raw, _ := s.Str()
		if v, err := strconv.ParseUint(string(raw), 10, 32); err == nil {
			return uint32(v)
		}
		return 500
	}
	s.Skip()
	return 0
}

// errorMember scans an "error" member: an object with message and code,
// or a string. It reports whether it was an error (not null).
func (st *stream) errorMember(s *sdk.Scanner, r *respAcc) bool {
	switch s.Peek() {
	case '{':
		r.hasErr = true
		s.Object(func(k []byte) {
			switch string(k) {
			case "message":
				if v, e, ok := s.OptStr(); ok {
					r.errMsg, r.errMsgEsc = v, e
				}
			case "code":
				r.errCode = errCode(s)
			default:
				s.Skip()
			}
		})
		return true
	case '"':
		r.hasErr = true
		r.errMsg, r.errMsgEsc = s.Str()
		return true
	}
	s.Skip()
	return false
}

// responseObject scans a response object into r. With body set (a whole
// non-streaming body) it also classifies the output items into records
// for event idx; otherwise it skips them. It returns the extended dst and
// whether the value was an object.
func (st *stream) responseObject(s *sdk.Scanner, r *respAcc, idx uint32, dst []adapter.Record, body bool) ([]adapter.Record, bool) {
	isObj := s.Object(func(k []byte) {
		switch string(k) {
		case "status":
			if v, _, ok := s.OptStr(); ok {
				r.status = v
			}
		case "usage":
			if st.usage(s) {
				r.usage = true
			}
		case "incomplete_details":
			s.Object(func(k2 []byte) {
				if string(k2) == "reason" && s.Peek() == '"' {
					r.reason, _ = s.Str()
					return
				}
				s.Skip()
			})
		case "error":
			st.errorMember(s, r)
		case "output":
			if !body {
				s.Skip()
				return
			}
			s.Array(func(int) { dst = st.outputItem(s, r, idx, dst) })
		default:
			s.Skip()
		}
	})
	return dst, isObj
}

// outputItem classifies one item of a whole response's output array.
func (st *stream) outputItem(s *sdk.Scanner, r *respAcc, idx uint32, dst []adapter.Record) []adapter.Record {
	captured := st.flags&adapter.OpenCaptureText != 0
	flags := adapter.RecordFlags(0)
	if captured {
		flags = adapter.RecordTextCaptured
	}
	s.Object(func(k []byte) {
		switch string(k) {
		case "content", "summary":
			s.Array(func(int) {
				var typ, text []byte
				var esc bool
				s.Object(func(k2 []byte) {
					switch string(k2) {
					case "type":
						if v, _, ok := s.OptStr(); ok {
							typ = v
						}
					case "text", "refusal":
						if v, e, ok := s.OptStr(); ok {
							text, esc = v, e
						}
					default:
						s.Skip()
					}
				})
				if len(text) == 0 {
					return
				}
				st.choices = 1
				rec := adapter.Record{Kind: record.EventContent, Flags: flags, Event: idx,
					TextBytes: uint32(sdk.DecodedLen(text, esc)), Tokens: adapter.TokensUnknown}
				switch string(typ) {
				case "output_text":
					if captured {
						st.text = sdk.AppendUnescaped(st.text, text, esc)
					}
				case "refusal":
					rec.Flags |= adapter.RecordRefusal
				case "reasoning_text", "summary_text":
					rec.Kind = record.EventReasoning
					if captured {
						st.reason = sdk.AppendUnescaped(st.reason, text, esc)
					}
				default:
					return
				}
				dst = append(dst, rec)
			})
		case "arguments":
			if raw, esc, ok := s.OptStr(); ok {
				st.choices = 1
				r.toolCalled = true
				dst = append(dst, adapter.Record{Kind: record.EventToolCall, Event: idx,
					TextBytes: uint32(sdk.DecodedLen(raw, esc)), Tokens: adapter.TokensUnknown})
			}
		default:
			s.Skip()
		}
	})
	return dst
}

// responsesBody classifies a whole non-streaming body (or a non-2xx
// body, best effort).
func (st *stream) responsesBody(data []byte, idx uint32, dst []adapter.Record, nonOK bool) ([]adapter.Record, error) {
	s := sdk.NewScanner(data)
	var r respAcc
	out, isObj := st.responseObject(&s, &r, idx, dst, true)
	if !s.Done(isObj) {
		return dst, unreadable(nonOK)
	}
	if nonOK {
		if r.hasErr {
			return st.responseError(&r, idx, out), nil
		}
		return out, nil
	}
	return st.finishResponse(&r, idx, out), nil
}

// finishResponse appends the usage, finish and error records of a
// terminal response object.
func (st *stream) finishResponse(r *respAcc, idx uint32, dst []adapter.Record) []adapter.Record {
	if r.usage {
		dst = append(dst, adapter.Record{Kind: record.EventUsage, Event: idx, Tokens: adapter.TokensUnknown})
	}
	if string(r.status) == "failed" || r.hasErr {
		if !r.hasErr {
			r.hasErr, r.errMsg = true, []byte("response failed")
		}
		return st.responseError(r, idx, dst)
	}
	finish := adapter.FinishStop
	switch {
	case string(r.status) == "incomplete" && string(r.reason) == "content_filter":
		finish = adapter.FinishContentFilter
	case string(r.status) == "incomplete":
		finish = adapter.FinishLength
	case r.toolCalled || st.tool:
		finish = adapter.FinishToolCalls
	}
	st.fin.FinishReason = finish
	st.fin.Valid |= adapter.ValidFinishReason
	return append(dst, adapter.Record{Kind: record.EventFinish, Event: idx, Aux0: uint32(finish), Tokens: adapter.TokensUnknown})
}

// responseError records r's error.
func (st *stream) responseError(r *respAcc, idx uint32, dst []adapter.Record) []adapter.Record {
	msg := sdk.AppendUnescaped(st.errMsg[:0], r.errMsg, r.errMsgEsc)
	st.setError(r.errCode, nil)
	st.errMsg = msg
	return append(dst, adapter.Record{Kind: record.EventError, Event: idx, Aux0: st.fin.ErrorCode, Tokens: adapter.TokensUnknown})
}
