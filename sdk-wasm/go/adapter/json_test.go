package adapter

import (
	"bytes"
	"encoding/json"
	"testing"
	"unicode/utf8"
)

func TestIterAndGet(t *testing.T) {
	data := []byte(` {"a": 1, "b": {"c": "x\"y"}, "d": [1, {"e": 2}], "a": "last"} `)
	var keys []string
	it := Object(data)
	for it.Next() {
		keys = append(keys, string(it.Key()))
	}
	if it.Err() || len(keys) != 4 || keys[1] != "b" {
		t.Fatalf("keys %v err %v", keys, it.Err())
	}
	if got := string(Get(data, "a")); got != `"last"` {
		t.Errorf(`Get a = %s, want "last" (later duplicates win)`, got)
	}
	if got := string(GetPath(data, "b", "c")); got != `"x\"y"` {
		t.Errorf("GetPath = %s", got)
	}
	if n := Each(Get(data, "d"), nil); n != 2 {
		t.Errorf("Each = %d", n)
	}
	for _, bad := range []string{`{"a":1,}`, `{"a" 1}`, `{"a":1`, `[1,2`, `nope`} {
		it := Object([]byte(bad))
		for it.Next() {
		}
		if !it.Err() {
			t.Errorf("%q: no error", bad)
		}
	}
}

// FuzzStringLen checks StringLen and AppendString against encoding/json
// on strings encoding/json decodes the same way (valid UTF-8, no lone
// surrogates; the SDK, like reprise's native parser, keeps raw bytes).
func FuzzStringLen(f *testing.F) {
	for _, s := range []string{`"abc"`, `"a\nb\u00e9\ud83d\ude00"`, `"\\\""`, `"\u0000"`} {
		f.Add(s)
	}
	f.Fuzz(func(t *testing.T, s string) {
		var want string
		// Values come from the scanner: exactly one string, no surrounding space.
		if json.Unmarshal([]byte(s), &want) != nil || !utf8.ValidString(s) || containsRune(want, utf8.RuneError) ||
			len(s) < 2 || s[0] != '"' || s[len(s)-1] != '"' {
			StringLen([]byte(s)) // must not panic
			return
		}
		if got := StringLen([]byte(s)); got != len(want) {
			t.Fatalf("StringLen(%s) = %d, want %d", s, got, len(want))
		}
		if got := string(AppendString(nil, []byte(s))); got != want {
			t.Fatalf("AppendString(%s) = %q, want %q", s, got, want)
		}
	})
}

func containsRune(s string, r rune) bool {
	for _, c := range s {
		if c == r {
			return true
		}
	}
	return false
}

// FuzzAppendQuoted checks AppendQuoted against encoding/json without HTML
// escaping, the escaping of reprise's host.
func FuzzAppendQuoted(f *testing.F) {
	for _, s := range []string{"", "a\"b\\c", "\x00\b\f\n\r\t\x1f\x7f", "\u2028\u2029", "bad \xff \xe2\x82", "<&>", "é日🎉"} {
		f.Add(s)
	}
	f.Fuzz(func(t *testing.T, s string) {
		var buf bytes.Buffer
		enc := json.NewEncoder(&buf)
		enc.SetEscapeHTML(false)
		if err := enc.Encode(s); err != nil {
			t.Fatal(err)
		}
		want := bytes.TrimSuffix(buf.Bytes(), []byte("\n"))
		if got := AppendQuoted(nil, s); !bytes.Equal(got, want) {
			t.Fatalf("AppendQuoted(%q) = %s, encoding/json writes %s", s, got, want)
		}
	})
}
