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
