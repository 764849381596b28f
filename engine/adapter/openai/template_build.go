package openai

import (
	"bytes"
	"encoding/json"
	"fmt"
	"strconv"
	"strings"

	"github.com/reprise-bench/reprise/engine/adapter"
	"github.com/reprise-bench/reprise/internal/jsonx"
)

// buildTemplate renders the body template for b.
func (in *Instance) buildTemplate(b *adapter.BuildInput, raw *rawRow, stream bool, out *adapter.HTTPRequest) error {
	t := in.tpl
	if t.neverSt {
		stream = false
	}
	out.Method = t.method
	for _, h := range t.headers {
		out.Header = append(out.Header, adapter.Header{Name: h[0], Value: in.expandString(h[1], b, raw)})
	}
	v := tplValues{in: in, b: b, raw: raw, stream: stream}
	body, _ := v.render(out.Body, t.body)
	// The merge order endpoint defaults < --extra-body < row extra.
	body = body[:len(body)-1] // reopen the object
	for _, m := range []json.RawMessage{in.cfg.ExtraBody, raw.Extra} {
		if !isSet(m) {
			continue
		}
		if err := checkObject(m); err != nil {
			return fmt.Errorf("row %d: extra: %w", b.TraceRow, err)
		}
		m = bytes.TrimSpace(m)
		inner := bytes.TrimSpace(m[1 : len(m)-1])
		if len(inner) == 0 {
			continue
		}
		if body[len(body)-1] != '{' {
			body = append(body, ',')
		}
		body = append(body, inner...)
	}
	out.Body = append(body, '}')
	return nil
}

// tplValues renders one request's placeholders.
type tplValues struct {
	in     *Instance
	b      *adapter.BuildInput
	raw    *rawRow
	stream bool
}

// render appends n's JSON with placeholders replaced; false when the
// value is absent (a member to leave out).
func (v *tplValues) render(dst []byte, n *tnode) ([]byte, bool) {
	switch n.kind {
	case '{':
		dst = append(dst, '{')
		k := 0
		for i, key := range n.keys {
			mark := len(dst)
			if k > 0 {
				dst = append(dst, ',')
			}
			dst = jsonx.AppendString(dst, key)
			dst = append(dst, ':')
			var ok bool
			if dst, ok = v.render(dst, n.vals[i]); !ok {
				dst = dst[:mark]
				continue
			}
			k++
		}
		dst = append(dst, '}')
		// An object left empty by absent placeholders is absent too.
		return dst, k > 0 || len(n.keys) == 0
	case '[':
		dst = append(dst, '[')
		k := 0
		for _, e := range n.elems {
			mark := len(dst)
			if k > 0 {
				dst = append(dst, ',')
			}
			var ok bool
			if dst, ok = v.render(dst, e); !ok {
				dst = dst[:mark]
				continue
			}
			k++
		}
		return append(dst, ']'), true
	case '"':
		if m := placeholderRE.FindStringSubmatch(n.str); m != nil && m[0] == n.str {
			return v.value(dst, m[1])
		}
		return jsonx.AppendString(dst, v.in.expandString(n.str, v.b, v.raw)), true
	case '0':
		return append(dst, n.num...), true
	case 'b':
		return strconv.AppendBool(dst, n.b), true
	}
	return append(dst, "null"...), true
}

// value appends placeholder name's JSON value; false when absent.
func (v *tplValues) value(dst []byte, name string) ([]byte, bool) {
	b, raw, cfg := v.b, v.raw, &v.in.cfg
	history := b.Flags&adapter.BuildHistory != 0 && len(b.Messages) > 0
	switch name {
	case "model":
		return jsonx.AppendString(dst, cfg.Model), true
	case "stream":
		return strconv.AppendBool(dst, v.stream), true
	case "ignore_eos":
		return append(dst, "true"...), cfg.IgnoreEOS
	case "include_usage":
		return append(dst, "true"...), cfg.IncludeUsage && v.stream
	case "max_tokens":
		return strconv.AppendInt(dst, int64(b.MaxTokens), 10), b.MaxTokens > 0
	case "session_id":
		return jsonx.AppendString(dst, b.SessionID), b.SessionID != ""
	case "tools":
		return append(dst, raw.Tools...), isSet(raw.Tools)
	case "messages":
		switch {
		case history:
			return appendMessages(dst, b.Messages, `{"role":`), true
		case isSet(raw.Messages):
			return append(dst, raw.Messages...), true
		}
		dst = append(dst, `[{"role":"user","content":"`...)
		if isSet(raw.TextInput) {
			dst = appendTextInput(dst, raw.TextInput)
		} else {
			dst = jsonx.AppendContents(dst, b.PromptText)
		}
		return append(dst, `"}]`...), true
	case "prompt":
		switch {
		case isSet(raw.TextInput) && !history:
			dst = append(dst, '"')
			dst = appendTextInput(dst, raw.TextInput)
			return append(dst, '"'), true
		case b.PromptText == "" && b.PromptTokens != nil:
			return jsonx.AppendInts(dst, b.PromptTokens), true
		}
		dst = append(dst, '"')
		dst = jsonx.AppendContents(dst, b.PromptText)
		return append(dst, '"'), true
	}
	return dst, false
}

// expandString replaces the string placeholders inside s.
func (in *Instance) expandString(s string, b *adapter.BuildInput, raw *rawRow) string {
	if !strings.Contains(s, "{{") {
		return s
	}
	return placeholderRE.ReplaceAllStringFunc(s, func(m string) string {
		switch placeholderRE.FindStringSubmatch(m)[1] {
		case "model":
			return in.cfg.Model
		case "session_id":
			return b.SessionID
		case "prompt":
			if isSet(raw.TextInput) {
				var t string
				if json.Unmarshal(raw.TextInput, &t) == nil {
					return t
				}
			}
			return b.PromptText
		}
		return m
	})
}
