package openai

// The template adapter's response side: each event is scanned into a
// small tree of raw spans (strings stay escaped, as the native parser
// keeps them, so invalid UTF-8 and escapes count the same), then the
// template's paths pick the fields.

import (
	"bytes"
	"strconv"
	"strings"

	"github.com/reprise-bench/reprise/engine/adapter"
	"github.com/reprise-bench/reprise/engine/record"
	sdk "github.com/reprise-bench/reprise/sdk-wasm/go/adapter"
)

// jnode is one JSON value: raw spans into the event's bytes.
type jnode struct {
	kind  byte   // '"' string, '{' object, '[' array, '0' number, 't', 'f', 'n' (null)
	raw   []byte // string contents (escaped) or the value's bytes
	esc   bool
	num   uint32 // a number, as the scanner's Uint reads it
	keys  [][]byte
	vals  []*jnode
	elems []*jnode
}

// parseNode scans one value of data into a tree, bounded in depth.
func parseNode(s *sdk.Scanner, data []byte, depth int) *jnode {
	if depth > 64 {
		s.Fail()
		return nil
	}
	n := &jnode{}
	start := s.Pos()
	switch c := s.Peek(); c {
	case '"':
		n.kind = '"'
		n.raw, n.esc = s.Str()
	case '{':
		n.kind = '{'
		s.Object(func(k []byte) {
			v := parseNode(s, data, depth+1)
			n.keys = append(n.keys, k)
			n.vals = append(n.vals, v)
		})
	case '[':
		n.kind = '['
		s.Array(func(int) { n.elems = append(n.elems, parseNode(s, data, depth+1)) })
	case 't', 'f', 'n':
		n.kind = c
		s.Skip()
	default:
		n.kind = '0'
		n.num, _ = s.Uint()
	}
	if s.Err() {
		return nil
	}
	if n.kind != '"' {
		n.raw = bytes.TrimSpace(data[start:s.Pos()]) // the whole value's bytes
	}
	return n
}

// path is a compiled field path: keys and array indexes.
type path []string

func compilePath(p string) path {
	if p == "" {
		return nil
	}
	return strings.Split(p, ".")
}

// get follows p from n; nil when a step is missing. Of duplicate keys the
// last wins, as in the native parser.
func (n *jnode) get(p path) *jnode {
	for _, seg := range p {
		if n == nil {
			return nil
		}
		switch n.kind {
		case '{':
			var next *jnode
			for i := len(n.keys) - 1; i >= 0; i-- {
				if string(n.keys[i]) == seg {
					next = n.vals[i]
					break
				}
			}
			n = next
		case '[':
			i, err := strconv.Atoi(seg)
			if err != nil || i < 0 || i >= len(n.elems) {
				return nil
			}
			n = n.elems[i]
		default:
			return nil
		}
	}
	return n
}

// first returns the first of the alternatives that is present (not
// null unless allowNull).
func (n *jnode) first(alts []path, kind byte) *jnode {
	for _, p := range alts {
		if v := n.get(p); v != nil && v.kind == kind {
			return v
		}
	}
	return nil
}

// tplResponse is the compiled response side of a template.
type tplResponse struct {
	done       string // the data of the end-of-stream sentinel ("" = none)
	errorEvent string // an SSE event name that is an error
	choices    path   // array of choices ("" = the event is one choice)
	index      []path
	text       []path
	reasoning  []path
	refusal    []path
	role       []path
	toolCalls  []path
	finish     []path
	usage      []path
	prompt     []path // relative to usage
	completion []path
	cached     []path
	reasonTok  []path
	err        []path // an error member: object (message, code) or string
	errObject  path   // a top-level field whose value "error" makes the event an error
	errMessage []path // relative to the error member, or top-level with errObject
	errCode    []path
	extras     []path
}

// tplEvent classifies one event with the template's paths. It mirrors
// the native chunk parser record for record.
func (st *stream) tplEvent(t *tplResponse, ev *adapter.Event, idx uint32, dst []adapter.Record) ([]adapter.Record, error) {
	switch {
	case ev.Flags&adapter.EventComment != 0:
		return append(dst, adapter.Record{Kind: record.EventMeta, Event: idx, Tokens: adapter.TokensUnknown}), nil
	case ev.Flags&adapter.EventDone != 0 || (t.done != "" && string(bytes.TrimSpace(ev.Data)) == t.done):
		return dst, nil
	case t.errorEvent != "" && string(ev.Name) == t.errorEvent:
		st.setError(502, ev.Data)
		return append(dst, adapter.Record{Kind: record.EventError, Event: idx, Aux0: 502, Tokens: adapter.TokensUnknown}), nil
	}
	data := ev.Data
	if len(bytes.TrimSpace(data)) == 0 {
		return dst, nil
	}
	nonOK := ev.Flags&adapter.EventNonOK != 0
	s := sdk.NewScanner(data)
	root := parseNode(&s, data, 0)
	if !s.Done(root != nil) || root.kind != '{' {
		return dst, unreadable(nonOK)
	}
	captured := st.flags&adapter.OpenCaptureText != 0
	var items []*jnode
	if t.choices == nil {
		items = []*jnode{root}
	} else if c := root.get(t.choices); c != nil && c.kind == '[' {
		items = c.elems
	}
	for _, it := range items {
		// A choice that is not an object has no fields but still counts,
		// as in the native parser.
		var c choiceAcc
		t.readChoice(it, &c)
		dst = st.emitChoice(&c, idx, captured, dst)
	}
	dst = st.tplUsage(t, root, idx, dst)
	if v := root.first(t.extras, '{'); v != nil && len(v.raw) <= 4096 {
		st.extras = append(st.extras[:0], v.raw...)
	}
	if msg, code, ok := t.findError(root); ok {
		var m []byte
		if msg != nil {
			m = sdk.AppendUnescaped(st.errMsg[:0], msg.raw, msg.esc)
		} else {
			m = st.errMsg[:0]
		}
		st.setError(code, nil)
		st.errMsg = m
		dst = append(dst, adapter.Record{Kind: record.EventError, Event: idx, Aux0: st.fin.ErrorCode, Tokens: adapter.TokensUnknown})
	}
	return dst, nil
}

// readChoice reads one choice's index, text, reasoning, refusal, role,
// tool calls and finish reason into c with the template's paths.
func (t *tplResponse) readChoice(it *jnode, c *choiceAcc) {
	if v := it.first(t.index, '0'); v != nil {
		c.index = v.num
	}
	if v := it.first(t.text, '"'); v != nil {
		c.content, c.contentEsc, c.hasContent = v.raw, v.esc, true
	}
	if v := it.first(t.reasoning, '"'); v != nil {
		c.reasoning, c.reasoningEsc, c.hasReasoning = v.raw, v.esc, true
	}
	if v := it.first(t.refusal, '"'); v != nil {
		c.refusal, c.refusalEsc, c.hasRefusal = v.raw, v.esc, true
	}
	for _, p := range t.role {
		if it.get(p) != nil {
			c.role = true
		}
	}
	if v := it.first(t.toolCalls, '['); v != nil {
		for _, tc := range v.elems {
			var n, index uint32
			if i := tc.get(path{"index"}); i != nil && i.kind == '0' {
				index = i.num
			}
			for _, f := range []path{{"function", "name"}, {"function", "arguments"}} {
				if s := tc.get(f); s != nil && s.kind == '"' {
					n += uint32(sdk.DecodedLen(s.raw, s.esc))
				}
			}
			if c.tools < len(c.toolBytes) {
				c.toolBytes[c.tools], c.toolIdx[c.tools] = n, index
			}
			c.tools++
		}
	}
	if v := it.first(t.finish, '"'); v != nil {
		c.finish, c.hasFinish = adapter.ParseFinishReason(v.raw), true
	}
}

// tplUsage takes the token counts of the event's usage member, if it
// has one, into the final summary and appends its usage record.
func (st *stream) tplUsage(t *tplResponse, root *jnode, idx uint32, dst []adapter.Record) []adapter.Record {
	u := root.first(t.usage, '{')
	if u == nil {
		return dst
	}
	f := &st.fin
	set := func(alts []path, dst *uint32, bit uint32) {
		if v := u.first(alts, '0'); v != nil {
			*dst = v.num
			f.Valid |= bit
		}
	}
	set(t.prompt, &f.PromptTokens, adapter.ValidPromptTokens)
	set(t.completion, &f.CompletionTokens, adapter.ValidCompletionTokens)
	set(t.cached, &f.CachedTokens, adapter.ValidCachedTokens)
	set(t.reasonTok, &f.ReasoningTokens, adapter.ValidReasoningTokens)
	return append(dst, adapter.Record{Kind: record.EventUsage, Event: idx, Tokens: adapter.TokensUnknown})
}

// findError reports whether the event is an error: it has an error
// member (an object with a message and a code, or a string), or its
// error-object field says "error" and it has a message. It returns the
// message (nil if none) and the code (0 if none).
func (t *tplResponse) findError(root *jnode) (msg *jnode, code uint32, hasErr bool) {
	for _, p := range t.err {
		e := root.get(p)
		switch {
		case e == nil:
			continue
		case e.kind == '{':
			hasErr = true
			msg = e.first(t.errMessage, '"')
			if v := e.first(t.errCode, '0'); v != nil {
				code = v.num
			}
		case e.kind == '"':
			hasErr, msg = true, e
		}
		if hasErr {
			break
		}
	}
	if !hasErr && t.errObject != nil {
		if o := root.get(t.errObject); o != nil && o.kind == '"' && string(o.raw) == "error" {
			if m := root.first(t.errMessage, '"'); m != nil {
				hasErr, msg = true, m
				if v := root.first(t.errCode, '0'); v != nil {
					code = v.num
				}
			}
		}
	}
	return msg, code, hasErr
}
