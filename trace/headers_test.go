package trace

import (
	"encoding/json"
	"errors"
	"io"
	"strings"
	"testing"

	"golang.org/x/net/http/httpguts"
)

// TestHeaderFieldsRefused: a row whose session id or "headers" object
// cannot be sent as HTTP headers is a row error naming its line and
// field, in every reader (the session id may be sent as a header; the
// headers are); a value with a tab, a comma or UTF-8 is kept.
func TestHeaderFieldsRefused(t *testing.T) {
	for _, tt := range []struct {
		name, format, data, want string
	}{
		{"mooncake session CRLF", "mooncake", `{"timestamp":0,"input_length":1,"output_length":1,"session_id":"a\r\nX-Injected: yes"}`, "t.jsonl:1: session_id: "},
		{"mooncake session NUL", "mooncake", `{"timestamp":0,"input_length":1,"output_length":1,"session_id":"a\u0000"}`, "t.jsonl:1: session_id: "},
		{"aiperf session LF", "aiperf-single", `{"session_id":"a\nb","text":"hi","output_length":1}`, "t.jsonl:1: session_id: "},
		{"csv session CR", "table", "prompt,session_id,output_length\nhi,\"a\rX: 1\",1\n", "t.csv:2: session_id: "},
		{"headers CRLF", "mooncake", `{"timestamp":0,"input_length":1,"output_length":1,"headers":{"X-A":"1\r\nX-Injected: yes"}}`, "t.jsonl:1: headers: header X-A: the value holds a CR"},
		{"headers name", "mooncake", `{"timestamp":0,"input_length":1,"output_length":1,"headers":{"X A":"1"}}`, "t.jsonl:1: headers: \"X A\" is not a header name"},
		{"headers not strings", "mooncake", `{"timestamp":0,"input_length":1,"output_length":1,"headers":{"X-A":1}}`, "t.jsonl:1: headers: want an object"},
	} {
		t.Run(tt.name, func(t *testing.T) {
			name := "t.jsonl"
			if tt.format == "table" {
				name = "t.csv"
			}
			r, err := NewReader(name, strings.NewReader(tt.data), Options{Format: Format(tt.format)})
			if err != nil {
				t.Fatal(err)
			}
			defer r.Close()
			var row Row
			for err = r.Next(&row); err == nil; err = r.Next(&row) {
			}
			pe, ok := errors.AsType[*ParseError](err)
			if !ok || !strings.Contains(pe.Error(), tt.want) {
				t.Errorf("Next: %v, want a *ParseError with %q", err, tt.want)
			}
		})
	}
	r, err := NewReader("t.jsonl", strings.NewReader(`{"timestamp":0,"input_length":1,"output_length":1,"session_id":"a\tb, é","headers":{"X-A":"1, 2"}}`), Options{Format: FormatMooncake})
	if err != nil {
		t.Fatal(err)
	}
	var row Row
	if err := r.Next(&row); err != nil || row.SessionID != "a\tb, é" {
		t.Errorf("a valid row: %v, session %q", err, row.SessionID)
	}
}

// FuzzHeaderFields: whatever a row's session id and headers hold, a row
// the reader returns has a session id and headers that are valid HTTP
// field values (and names): nothing a replay sends from them can add a
// header or a request.
func FuzzHeaderFields(f *testing.F) {
	f.Add("s1", "X-A", "1, 2")
	f.Add("a\r\nX-Injected: yes", "X-B", "v")
	f.Add("s", "X-C", "b\r\nContent-Length: 0\r\n\r\nGET /smuggled HTTP/1.1\r\n")
	f.Add("s\x00", "X D", "v\x00")
	f.Add("\x1b]52;c;SGVsbG8=\a", "X-E", "\t")
	f.Fuzz(func(t *testing.T, session, name, value string) {
		line, err := json.Marshal(map[string]any{"timestamp": 0, "input_length": 1, "output_length": 1,
			"session_id": session, "headers": map[string]string{name: value}})
		if err != nil {
			return
		}
		r, err := NewReader("t.jsonl", strings.NewReader(string(line)+"\n"), Options{Format: FormatMooncake})
		if err != nil {
			return
		}
		defer r.Close()
		var row Row
		if err := r.Next(&row); err != nil {
			if !errors.Is(err, io.EOF) {
				if _, ok := errors.AsType[*ParseError](err); !ok {
					t.Fatalf("%s: %v (%T), want a *ParseError", line, err, err)
				}
			}
			return
		}
		if !httpguts.ValidHeaderFieldValue(row.SessionID) {
			t.Fatalf("%s: session id %q kept", line, row.SessionID)
		}
		var raw struct {
			Headers map[string]string `json:"headers"`
		}
		if err := json.Unmarshal(row.Raw, &raw); err != nil {
			t.Fatalf("%s: raw %s: %v", line, row.Raw, err)
		}
		for k, v := range raw.Headers {
			if !httpguts.ValidHeaderFieldName(k) || !httpguts.ValidHeaderFieldValue(v) {
				t.Fatalf("%s: header %q: %q kept", line, k, v)
			}
		}
	})
}
