package openai

// The declarative template adapter: a JSON file with a request body
// template (placeholders) and the response's field paths
// (docs/format/template.md). It reuses this package's scanner and record
// rules, so a template of the OpenAI shape reproduces the native records.

import (
	"bytes"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"os"
	"regexp"
	"slices"
	"strconv"
	"strings"

	"github.com/reprise-bench/reprise/engine/adapter"
	"github.com/reprise-bench/reprise/internal/httpfield"
	"github.com/reprise-bench/reprise/internal/jsonx"
)

// TemplateError is a problem of a template file: its path, the line of
// the offending key (0 when the file is not valid JSON at all), the
// field and what is wrong.
type TemplateError struct {
	Path  string
	Line  int
	Field string
	Err   error
}

// Error returns "FILE:LINE: field: problem".
func (e *TemplateError) Error() string {
	loc := e.Path
	if e.Line > 0 {
		loc += ":" + strconv.Itoa(e.Line)
	}
	if e.Field != "" {
		return fmt.Sprintf("%s: %s: %v", loc, e.Field, e.Err)
	}
	return fmt.Sprintf("%s: %v", loc, e.Err)
}

// Unwrap returns the underlying problem.
func (e *TemplateError) Unwrap() error { return e.Err }

// tnode is a template file's JSON value with the line it starts on.
type tnode struct {
	kind  byte // '{', '[', '"', '0' (number), 'b' (bool), 'n' (null)
	str   string
	num   json.Number
	b     bool
	keys  []string
	vals  []*tnode
	elems []*tnode
	line  int
}

func (n *tnode) member(k string) *tnode {
	if n == nil || n.kind != '{' {
		return nil
	}
	for i, kk := range n.keys {
		if kk == k {
			return n.vals[i]
		}
	}
	return nil
}

// decodeTree reads one JSON document keeping key order and lines.
func decodeTree(b []byte) (*tnode, error) {
	d := json.NewDecoder(bytes.NewReader(b))
	d.UseNumber()
	line := func(off int64) int { return 1 + bytes.Count(b[:min(int(off), len(b))], []byte("\n")) }
	var read func(depth int) (*tnode, error)
	read = func(depth int) (*tnode, error) {
		if depth > 64 {
			return nil, errors.New("nested too deep")
		}
		// The offset before the token is the end of the previous one:
		// skip the separators to find the value's line.
		off := d.InputOffset()
		for int(off) < len(b) && strings.IndexByte(" \t\r\n,:", b[off]) >= 0 {
			off++
		}
		tok, err := d.Token()
		if err != nil {
			return nil, err
		}
		n := &tnode{line: line(off)}
		switch v := tok.(type) {
		case json.Delim:
			switch v {
			case '{':
				n.kind = '{'
				for d.More() {
					kt, err := d.Token()
					if err != nil {
						return nil, err
					}
					k, _ := kt.(string)
					val, err := read(depth + 1)
					if err != nil {
						return nil, err
					}
					n.keys, n.vals = append(n.keys, k), append(n.vals, val)
				}
			case '[':
				n.kind = '['
				for d.More() {
					val, err := read(depth + 1)
					if err != nil {
						return nil, err
					}
					n.elems = append(n.elems, val)
				}
			}
			if _, err := d.Token(); err != nil {
				return nil, err
			}
		case string:
			n.kind, n.str = '"', v
		case json.Number:
			n.kind, n.num = '0', v
		case bool:
			n.kind, n.b = 'b', v
		default:
			n.kind = 'n'
		}
		return n, nil
	}
	root, err := read(0)
	if err != nil {
		return nil, err
	}
	if _, err := d.Token(); !errors.Is(err, io.EOF) {
		return nil, errors.New("data after the template's object")
	}
	return root, nil
}

// The placeholders of a body template.
var placeholders = map[string]bool{
	"prompt": true, "messages": true, "max_tokens": true, "model": true, "stream": true, "ignore_eos": true,
	"include_usage": true, "session_id": true, "tools": true,
}

// stringPlaceholders may also appear inside a longer string.
var stringPlaceholders = map[string]bool{"model": true, "session_id": true, "prompt": true}

var placeholderRE = regexp.MustCompile(`\{\{\s*([a-z_]+)\s*\}\}`)

// Template is a declarative endpoint adapter loaded from a template file
// ([LoadTemplate]). It is safe for concurrent use.
type Template struct {
	file    string
	info    adapter.Info
	headers [][2]string
	body    *tnode
	neverSt bool // "framing": "json": the API never streams
	method  adapter.Method
	resp    tplResponse
}

var _ adapter.Adapter = (*Template)(nil)

// LoadTemplate reads and checks the template file at path. Every problem
// is a *TemplateError naming the file, the line and the field.
func LoadTemplate(path string) (*Template, error) {
	f, err := os.Open(path)
	if err != nil {
		return nil, &TemplateError{Path: path, Err: err}
	}
	defer f.Close()
	b, err := io.ReadAll(io.LimitReader(f, MaxTemplateBytes+1))
	if err != nil {
		return nil, &TemplateError{Path: path, Err: err}
	}
	if len(b) > MaxTemplateBytes {
		return nil, &TemplateError{Path: path, Err: fmt.Errorf("over %d bytes, more than a template holds", MaxTemplateBytes)}
	}
	return ParseTemplate(path, b)
}

// MaxTemplateBytes bounds a template file (LoadTemplate).
const MaxTemplateBytes = 16 << 20

// ParseTemplate is LoadTemplate on the file's bytes; name names it in
// errors.
func ParseTemplate(name string, b []byte) (*Template, error) {
	root, err := decodeTree(b)
	if err != nil {
		line := 0
		var se *json.SyntaxError
		if errors.As(err, &se) {
			line = 1 + bytes.Count(b[:min(int(se.Offset), len(b))], []byte("\n"))
		}
		return nil, &TemplateError{Path: name, Line: line, Err: fmt.Errorf("not a JSON template: %w", err)}
	}
	var errs []error
	bad := func(n *tnode, field, format string, args ...any) {
		line := 0
		if n != nil {
			line = n.line
		}
		errs = append(errs, &TemplateError{Path: name, Line: line, Field: field, Err: fmt.Errorf(format, args...)})
	}
	if root.kind != '{' {
		bad(root, "", "want a JSON object with name, path, body and response")
		return nil, errors.Join(errs...)
	}
	t := &Template{file: name, info: adapter.Info{Version: "1", Framing: adapter.FramingSSE}}
	known := map[string]bool{"name": true, "path": true, "method": true, "framing": true, "headers": true, "body": true, "response": true}
	for i, k := range root.keys {
		if !known[k] {
			bad(root.vals[i], k, "unknown key (want name, path, method, framing, headers, body, response)")
		}
	}
	str := func(n *tnode, field string) string {
		if n == nil {
			return ""
		}
		if n.kind != '"' {
			bad(n, field, "want a string")
			return ""
		}
		return n.str
	}
	t.info.Name = str(root.member("name"), "name")
	if t.info.Name == "" {
		t.info.Name = "template"
	}
	t.info.Path = str(root.member("path"), "path")
	t.method = adapter.MethodPOST
	if !strings.HasPrefix(t.info.Path, "/") {
		bad(root.member("path"), "path", "want the request path, starting with /, e.g. /v1/chat/completions")
	} else if err := httpfield.CheckPath(t.info.Path); err != nil {
		bad(root.member("path"), "path", "%q: %v", t.info.Path, err)
	}
	switch m := str(root.member("method"), "method"); m {
	case "", "POST":
	case "PUT":
		t.method = adapter.MethodPUT
	case "GET":
		t.method = adapter.MethodGET
	default:
		bad(root.member("method"), "method", "%q: want POST, PUT or GET", m)
	}
	switch f := str(root.member("framing"), "framing"); f {
	case "", "sse":
	case "jsonl", "ndjson":
		t.info.Framing = adapter.FramingNDJSON
	case "json":
		t.neverSt = true
	default:
		bad(root.member("framing"), "framing", "%q: want sse, jsonl or json", f)
	}
	if h := root.member("headers"); h != nil {
		if h.kind != '{' {
			bad(h, "headers", "want an object of header names and string values")
		}
		for i, k := range h.keys {
			v := h.vals[i]
			if v.kind != '"' {
				bad(v, "headers."+k, "want a string value")
				continue
			}
			if err := httpfield.Check(k, v.str); err != nil {
				bad(v, "headers."+k, "%v", err)
				continue
			}
			checkPlaceholders(v, "headers."+k, true, bad)
			t.headers = append(t.headers, [2]string{k, v.str})
		}
	}
	t.body = root.member("body")
	if t.body == nil || t.body.kind != '{' {
		bad(root, "body", "want the request body template, a JSON object")
	} else {
		checkPlaceholders(t.body, "body", false, bad)
	}
	t.resp = compileResponse(root.member("response"), bad)
	if len(errs) > 0 {
		return nil, errors.Join(errs...)
	}
	return t, nil
}

// checkPlaceholders reports unknown placeholders, and placeholders inside
// a longer string that are not strings.
func checkPlaceholders(n *tnode, field string, inString bool, bad func(*tnode, string, string, ...any)) {
	switch n.kind {
	case '{':
		for i, k := range n.keys {
			checkPlaceholders(n.vals[i], field+"."+k, inString, bad)
		}
	case '[':
		for i, e := range n.elems {
			checkPlaceholders(e, field+"["+strconv.Itoa(i)+"]", inString, bad)
		}
	case '"':
		whole := placeholderRE.FindStringSubmatch(n.str)
		for _, m := range placeholderRE.FindAllStringSubmatch(n.str, -1) {
			name := m[1]
			switch {
			case !placeholders[name]:
				bad(n, field, "unknown placeholder {{%s}} (known: %s)", name, strings.Join(sortedKeys(placeholders), ", "))
			case (inString || whole == nil || whole[0] != n.str) && !stringPlaceholders[name]:
				bad(n, field, "{{%s}} is not a string: it must be the whole value", name)
			}
		}
	}
}

func sortedKeys(m map[string]bool) []string {
	out := make([]string, 0, len(m))
	for k := range m {
		out = append(out, k)
	}
	slices.Sort(out)
	return out
}

// compileResponse reads the response section: field paths (a string or a
// list of alternatives, the first present wins).
func compileResponse(n *tnode, bad func(*tnode, string, string, ...any)) tplResponse {
	var r tplResponse
	if n == nil {
		bad(n, "response", "missing: the response's field paths (at least text)")
		return r
	}
	if n.kind != '{' {
		bad(n, "response", "want an object of field paths")
		return r
	}
	alts := func(key string) []path {
		v := n.member(key)
		switch {
		case v == nil:
			return nil
		case v.kind == '"':
			return []path{compilePath(v.str)}
		case v.kind == '[':
			var out []path
			for _, e := range v.elems {
				if e.kind != '"' || e.str == "" {
					bad(e, "response."+key, "want a field path such as choices.0.delta.content")
					continue
				}
				out = append(out, compilePath(e.str))
			}
			return out
		}
		bad(v, "response."+key, "want a field path or a list of them")
		return nil
	}
	one := func(key string) string {
		v := n.member(key)
		if v == nil {
			return ""
		}
		if v.kind != '"' {
			bad(v, "response."+key, "want a string")
			return ""
		}
		return v.str
	}
	fields := map[string]bool{}
	for _, k := range []string{"done", "error_event", "choices", "index", "text", "reasoning", "refusal", "role", "tool_calls",
		"finish_reason", "usage", "prompt_tokens", "completion_tokens", "cached_tokens", "reasoning_tokens",
		"error", "error_object", "error_message", "error_code", "extras"} {
		fields[k] = true
	}
	for i, k := range n.keys {
		if !fields[k] {
			bad(n.vals[i], "response."+k, "unknown key (known: %s)", strings.Join(sortedKeys(fields), ", "))
		}
	}
	r.done, r.errorEvent = one("done"), one("error_event")
	r.choices = compilePath(one("choices"))
	r.index, r.text, r.reasoning, r.refusal = alts("index"), alts("text"), alts("reasoning"), alts("refusal")
	r.role, r.toolCalls, r.finish = alts("role"), alts("tool_calls"), alts("finish_reason")
	r.usage, r.prompt, r.completion = alts("usage"), alts("prompt_tokens"), alts("completion_tokens")
	r.cached, r.reasonTok = alts("cached_tokens"), alts("reasoning_tokens")
	r.err, r.errObject = alts("error"), compilePath(one("error_object"))
	r.errMessage, r.errCode, r.extras = alts("error_message"), alts("error_code"), alts("extras")
	if len(r.text) == 0 {
		bad(n, "response.text", "missing: the path of the generated text (e.g. choices.0.delta.content)")
	}
	return r
}

// Info implements adapter.Adapter.
func (t *Template) Info() adapter.Info { return t.info }

// File is the template's path.
func (t *Template) File() string { return t.file }

// NewInstance implements adapter.Adapter.
func (t *Template) NewInstance(cfg *adapter.Config) (adapter.Instance, error) {
	if len(cfg.ExtraBody) > 0 {
		if err := checkObject(cfg.ExtraBody); err != nil {
			return nil, fmt.Errorf("extra body: %w", err)
		}
	}
	return &Instance{ep: endpointTemplate, cfg: *cfg, streams: map[uint32]*stream{}, tpl: t, path: t.info.Path}, nil
}

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
