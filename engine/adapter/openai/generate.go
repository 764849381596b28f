package openai

// Hot path: classifying SGLang /generate and TGI /generate_stream events
// into records. Allocation budget: TestParseGenerateAllocs (0 allocations
// per event once the instance's buffers have grown).

import (
	"bytes"
	"strconv"

	"github.com/reprise-bench/reprise/engine/adapter"
	"github.com/reprise-bench/reprise/engine/record"
	"github.com/reprise-bench/reprise/internal/jsonx"
	sdk "github.com/reprise-bench/reprise/sdk-wasm/go/adapter"
)

// buildGenerate renders a SGLang /generate or TGI /generate_stream
// (/generate when not streaming) request. A later turn of a session sends
// the whole conversation as one prompt, as completions does.
func (in *Instance) buildGenerate(b *adapter.BuildInput, raw *rawRow, stream bool, out *adapter.HTTPRequest) error {
	body := append(out.Body, '{')
	text := func(key string) {
		body = append(body, '"')
		body = append(body, key...)
		body = append(body, `":"`...)
		if isSet(raw.TextInput) && b.Flags&adapter.BuildHistory == 0 {
			body = appendTextInput(body, raw.TextInput)
		} else {
			body = jsonx.AppendContents(body, b.PromptText)
		}
		body = append(body, '"')
	}
	if in.ep == SGLang {
		if b.PromptText == "" && b.PromptTokens != nil && !isSet(raw.TextInput) {
			body = append(body, `"input_ids":`...)
			body = jsonx.AppendInts(body, b.PromptTokens)
		} else {
			text("text")
		}
		body = append(body, `,"sampling_params":{`...)
		sep := ""
		if b.MaxTokens > 0 {
			body = append(body, `"max_new_tokens":`...)
			body = strconv.AppendInt(body, int64(b.MaxTokens), 10)
			sep = ","
		}
		if in.cfg.IgnoreEOS && b.MaxTokens > 0 {
			body = append(body, sep...)
			body = append(body, `"ignore_eos":true`...)
			sep = ","
		}
		if in.cfg.MinTokens && b.MaxTokens > 0 {
			body = append(body, sep...)
			body = append(body, `"min_new_tokens":`...)
			body = strconv.AppendInt(body, int64(b.MaxTokens), 10)
		}
		body = append(body, '}')
		if stream {
			body = append(body, `,"stream":true`...)
		} else {
			body = append(body, `,"stream":false`...)
		}
	} else {
		text("inputs")
		// details: the final event carries generated_tokens and
		// input_length.
		body = append(body, `,"parameters":{"details":true`...)
		if b.MaxTokens > 0 {
			body = append(body, `,"max_new_tokens":`...)
			body = strconv.AppendInt(body, int64(b.MaxTokens), 10)
		}
		body = append(body, '}')
		if stream {
			out.Path = "/generate_stream"
		} else {
			out.Path = "/generate"
		}
	}
	return in.endBody(body, b, raw, out)
}

// parseGenerateEvent classifies one SGLang or TGI event (or whole body).
func (st *stream) parseGenerateEvent(ep Endpoint, ev *adapter.Event, idx uint32, dst []adapter.Record) ([]adapter.Record, error) {
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
	nonOK := ev.Flags&adapter.EventNonOK != 0
	if ep == SGLang {
		return st.sglang(data, idx, dst, nonOK)
	}
	return st.tgi(data, idx, dst, nonOK, ev.Flags&adapter.EventWholeBody != 0)
}

// genErr is an error member: {"message": …} or a string.
func (st *stream) genErr(s *sdk.Scanner) (msg []byte, esc, ok bool) {
	switch s.Peek() {
	case '{':
		s.Object(func(k []byte) {
			if string(k) == "message" && s.Peek() == '"' {
				msg, esc = s.Str()
				ok = true
				return
			}
			s.Skip()
		})
	case '"':
		msg, esc = s.Str()
		ok = true
	default:
		s.Skip()
	}
	return msg, esc, ok
}

// genError records the error event of a /generate answer whose message,
// as found by genErr, is the JSON string contents msg.
func (st *stream) genError(dst []adapter.Record, idx uint32, msg []byte, esc bool) []adapter.Record {
	m := sdk.AppendUnescaped(st.errMsg[:0], msg, esc)
	st.setError(0, nil)
	st.errMsg = m
	return append(dst, adapter.Record{Kind: record.EventError, Event: idx, Aux0: st.fin.ErrorCode, Tokens: adapter.TokensUnknown})
}

// sglang parses one SGLang chunk: text and output_ids cumulative by
// default (incremental with --incremental-streaming-output: detected by
// output_ids holding fewer ids than completion_tokens), meta_info with
// the usage and a finish_reason object.
func (st *stream) sglang(data []byte, idx uint32, dst []adapter.Record, nonOK bool) ([]adapter.Record, error) {
	s := sdk.NewScanner(data)
	var (
		text                 []byte
		textEsc, hasText     bool
		ids                  int
		hasIDs               bool
		completion           uint32
		hasCompletion        bool
		finish               []byte
		errMsg               []byte
		errEsc, hasErr, topM bool
		topMsg               []byte
		topEsc               bool
	)
	f := &st.fin
	ok := s.Object(func(key []byte) {
		switch string(key) {
		case "text":
			if v, e, ok := s.OptStr(); ok {
				text, textEsc = v, e
				hasText = true
			}
		case "output_ids":
			hasIDs = s.Array(func(int) { ids++; s.Skip() })
		case "meta_info":
			s.Object(func(k []byte) {
				switch string(k) {
				case "prompt_tokens":
					if v, ok := num(&s); ok {
						f.PromptTokens, f.Valid = v, f.Valid|adapter.ValidPromptTokens
					}
				case "completion_tokens":
					if v, ok := num(&s); ok {
						completion, hasCompletion = v, true
					}
				case "cached_tokens":
					if v, ok := num(&s); ok {
						f.CachedTokens, f.Valid = v, f.Valid|adapter.ValidCachedTokens
					}
				case "reasoning_tokens":
					if v, ok := num(&s); ok {
						f.ReasoningTokens, f.Valid = v, f.Valid|adapter.ValidReasoningTokens
					}
				case "finish_reason":
					s.Object(func(k2 []byte) {
						if string(k2) == "type" && s.Peek() == '"' {
							finish, _ = s.Str()
							return
						}
						s.Skip()
					})
				default:
					s.Skip()
				}
			})
		case "error":
			errMsg, errEsc, hasErr = st.genErr(&s)
		case "message":
			if v, e, ok := s.OptStr(); ok {
				topMsg, topEsc = v, e
				topM = true
			}
		default:
			s.Skip()
		}
	})
	if !s.Done(ok) {
		return dst, unreadable(nonOK)
	}
	if !hasErr && nonOK && topM {
		errMsg, errEsc, hasErr = topMsg, topEsc, true
	}
	if hasErr {
		return st.genError(dst, idx, errMsg, errEsc), nil
	}
	// New tokens: the growth of completion_tokens (exact), else of the
	// ids, else one per chunk with new text.
	tokens := adapter.TokensUnknown
	flags := adapter.RecordFlags(0)
	cumulative := !hasIDs || !hasCompletion || uint32(ids) == completion
	if hasCompletion {
		if completion >= st.genTokens {
			tokens = completion - st.genTokens
			flags |= adapter.RecordTokensExact
		}
		st.genTokens = completion
		f.CompletionTokens, f.Valid = completion, f.Valid|adapter.ValidCompletionTokens
	}
	newBytes := 0
	if hasText {
		n := sdk.DecodedLen(text, textEsc)
		if cumulative {
			newBytes = max(n-st.genBytes, 0)
			st.genBytes = max(n, st.genBytes)
		} else {
			newBytes = n
			st.genBytes += n
		}
		if newBytes > 0 && st.flags&adapter.OpenCaptureText != 0 {
			flags |= adapter.RecordTextCaptured
			if cumulative {
				st.scratch = sdk.AppendUnescaped(st.scratch[:0], text, textEsc)
				st.text = append(st.text, st.scratch[len(st.scratch)-newBytes:]...)
			} else {
				st.text = sdk.AppendUnescaped(st.text, text, textEsc)
			}
		}
	}
	n := len(dst)
	if newBytes > 0 || (tokens != adapter.TokensUnknown && tokens > 0) {
		st.choices = 1
		dst = append(dst, adapter.Record{Kind: record.EventContent, Flags: flags, Event: idx, TextBytes: uint32(newBytes), Tokens: tokens})
	}
	return endEvent(dst, n, f, idx, finish, "abort", adapter.FinishError), nil
}

// tgi parses one TGI /generate_stream event (one token each; the last
// carries generated_text and details) or a /generate body.
func (st *stream) tgi(data []byte, idx uint32, dst []adapter.Record, nonOK, whole bool) ([]adapter.Record, error) {
	s := sdk.NewScanner(data)
	var (
		tokText          []byte
		tokEsc, hasToken bool
		gen              []byte
		genEsc, hasGen   bool
		finish           []byte
		errMsg           []byte
		errEsc, hasErr   bool
	)
	f := &st.fin
	ok := s.Object(func(key []byte) {
		switch string(key) {
		case "token":
			hasToken = s.Object(func(k []byte) {
				if string(k) == "text" && s.Peek() == '"' {
					tokText, tokEsc = s.Str()
					return
				}
				s.Skip()
			})
		case "generated_text":
			if v, e, ok := s.OptStr(); ok {
				gen, genEsc = v, e
				hasGen = true
			}
		case "details":
			s.Object(func(k []byte) {
				switch string(k) {
				case "finish_reason":
					if v, _, ok := s.OptStr(); ok {
						finish = v
					}
				case "generated_tokens":
					if v, ok := num(&s); ok {
						f.CompletionTokens, f.Valid = v, f.Valid|adapter.ValidCompletionTokens
					}
				case "input_length":
					if v, ok := num(&s); ok {
						f.PromptTokens, f.Valid = v, f.Valid|adapter.ValidPromptTokens
					}
				default:
					s.Skip()
				}
			})
		case "error":
			errMsg, errEsc, hasErr = st.genErr(&s)
		default:
			s.Skip()
		}
	})
	if !s.Done(ok) {
		return dst, unreadable(nonOK)
	}
	if hasErr {
		return st.genError(dst, idx, errMsg, errEsc), nil
	}
	captured := st.flags&adapter.OpenCaptureText != 0
	n := len(dst)
	switch {
	case hasToken && !whole:
		// One event, one token (special tokens too).
		st.choices = 1
		rec := adapter.Record{Kind: record.EventContent, Flags: adapter.RecordTokensExact, Event: idx,
			TextBytes: uint32(sdk.DecodedLen(tokText, tokEsc)), Tokens: 1}
		if captured {
			rec.Flags |= adapter.RecordTextCaptured
			st.text = sdk.AppendUnescaped(st.text, tokText, tokEsc)
		}
		dst = append(dst, rec)
	case hasGen && whole:
		st.choices = 1
		rec := adapter.Record{Kind: record.EventContent, Event: idx, TextBytes: uint32(sdk.DecodedLen(gen, genEsc)), Tokens: adapter.TokensUnknown}
		if captured {
			rec.Flags |= adapter.RecordTextCaptured
			st.text = sdk.AppendUnescaped(st.text, gen, genEsc)
		}
		dst = append(dst, rec)
	}
	if f.Valid&(adapter.ValidCompletionTokens|adapter.ValidPromptTokens) != 0 && (len(finish) > 0 || hasGen) {
		dst = append(dst, adapter.Record{Kind: record.EventUsage, Event: idx, Tokens: adapter.TokensUnknown})
	}
	return endEvent(dst, n, f, idx, finish, "eos_token", adapter.FinishStop), nil
}

// endEvent appends the finish record of a /generate event whose finish
// reason is finish (none when empty; own, the server's own word for
// reason, maps to it), and a meta record when the event added none after
// dst[:n].
func endEvent(dst []adapter.Record, n int, f *adapter.Final, idx uint32, finish []byte, own string, reason adapter.FinishReason) []adapter.Record {
	if len(finish) > 0 {
		fr := adapter.ParseFinishReason(finish)
		if string(finish) == own {
			fr = reason
		}
		f.FinishReason, f.Valid = fr, f.Valid|adapter.ValidFinishReason
		dst = append(dst, adapter.Record{Kind: record.EventFinish, Event: idx, Aux0: uint32(fr), Tokens: adapter.TokensUnknown})
	}
	if len(dst) == n {
		dst = append(dst, adapter.Record{Kind: record.EventMeta, Event: idx, Tokens: adapter.TokensUnknown})
	}
	return dst
}
