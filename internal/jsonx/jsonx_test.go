package jsonx

import (
	"bytes"
	"encoding/json"
	"strings"
	"testing"
)

// oracle is encoding/json's encoding of s with HTML escaping off.
func oracle(t testing.TB, s string) []byte {
	var buf bytes.Buffer
	enc := json.NewEncoder(&buf)
	enc.SetEscapeHTML(false)
	if err := enc.Encode(s); err != nil {
		t.Fatal(err)
	}
	return bytes.TrimSuffix(buf.Bytes(), []byte("\n"))
}

// check compares AppendString and AppendContents with encoding/json: the
// same bytes, and decoding gives the string encoding/json round-trips s to.
func check(t testing.TB, s string) {
	got := AppendString([]byte("x"), s)
	if got[0] != 'x' {
		t.Fatalf("AppendString(%q) overwrote dst", s)
	}
	got = got[1:]
	want := oracle(t, s)
	if !bytes.Equal(got, want) {
		t.Fatalf("AppendString(%q) = %s, encoding/json writes %s", s, got, want)
	}
	var back, wantBack string
	if err := json.Unmarshal(got, &back); err != nil {
		t.Fatalf("AppendString(%q) = %s: not JSON: %v", s, got, err)
	}
	std, _ := json.Marshal(s)
	if err := json.Unmarshal(std, &wantBack); err != nil {
		t.Fatal(err)
	}
	if back != wantBack {
		t.Fatalf("AppendString(%q) decodes to %q, encoding/json's round trip to %q", s, back, wantBack)
	}
	if c := AppendContents(nil, s); !bytes.Equal(c, got[1:len(got)-1]) {
		t.Fatalf("AppendContents(%q) = %s, want the inside of %s", s, c, got)
	}
}

func TestAppendString(t *testing.T) {
	for _, tt := range []struct{ in, want string }{
		{"", `""`},
		{"the quick brown fox", `"the quick brown fox"`},
		{"quote \" backslash \\", `"quote \" backslash \\"`},
		{"\b\f\n\r\t", `"\b\f\n\r\t"`},
		{"\x00\x01\x1f\x7f", `"\u0000\u0001\u001f` + "\x7f" + `"`},
		{"<a href='x'>&</a>", `"<a href='x'>&</a>"`}, // no HTML escaping
		{"é日🎉", `"é日🎉"`},
		{"line\u2028para\u2029", `"line\u2028para\u2029"`},
		{"bad \xff utf8 \xe2\x82", `"bad \ufffd utf8 \ufffd\ufffd"`}, // each byte of a cut sequence
		{"\xed\xa0\x80", `"\ufffd\ufffd\ufffd"`},                     // a UTF-16 surrogate is invalid UTF-8
	} {
		if got := string(AppendString(nil, tt.in)); got != tt.want {
			t.Errorf("AppendString(%q) = %s, want %s", tt.in, got, tt.want)
		}
		check(t, tt.in)
	}
}

// TestAppendAllocs: nothing allocates when dst has room.
func TestAppendAllocs(t *testing.T) {
	s := strings.Repeat("word \"quoted\"\n é \u2028 \xff ", 20)
	dst := make([]byte, 0, 8*len(s))
	if n := testing.AllocsPerRun(100, func() { dst = AppendString(dst[:0], s) }); n != 0 {
		t.Errorf("AppendString: %v allocs, want 0", n)
	}
	if n := testing.AllocsPerRun(100, func() { dst = AppendContents(dst[:0], s) }); n != 0 {
		t.Errorf("AppendContents: %v allocs, want 0", n)
	}
}

func FuzzAppendString(f *testing.F) {
	for _, s := range []string{"", "a\"b\\c", "\x00\b\f\x1f\x7f", "\u2028\u2029", "\xff", "\xe2\x82", "<>&", "é日🎉", "\xed\xa0\x80"} {
		f.Add(s)
	}
	f.Fuzz(func(t *testing.T, s string) { check(t, s) })
}

// benchText is a synthesized prompt: ASCII words, the common case.
var benchText = strings.Repeat("the quick brown fox jumps over the lazy dog ", 100)

// TestBenchmarkText checks what BenchmarkAppendString measures.
func TestBenchmarkText(t *testing.T) {
	for _, s := range []string{benchText, benchMixed} {
		check(t, s)
	}
}

var benchMixed = strings.Repeat("line \"one\"\n\tzwei é 日本 🎉 \u2028 ", 100)

func BenchmarkAppendString(b *testing.B) {
	for _, bb := range []struct{ name, s string }{{"ascii", benchText}, {"mixed", benchMixed}} {
		b.Run(bb.name, func(b *testing.B) {
			dst := make([]byte, 0, 8*len(bb.s))
			b.SetBytes(int64(len(bb.s)))
			b.ReportAllocs()
			for b.Loop() {
				dst = AppendString(dst[:0], bb.s)
			}
		})
	}
}

// TestAppendMembers: an object's members extend an open object, which then
// decodes to the union; an empty or missing object adds nothing.
func TestAppendMembers(t *testing.T) {
	for _, tc := range []struct{ obj, want string }{
		{``, `{"a":1}`},
		{` {} `, `{"a":1}`},
		{"{ \n }", `{"a":1}`},
		{` {"b":[1,{"c":null}],"d":"}"} `, `{"a":1,"b":[1,{"c":null}],"d":"}"}`},
	} {
		got := string(AppendMembers([]byte(`{"a":1`), []byte(tc.obj))) + "}"
		if got != tc.want {
			t.Errorf("AppendMembers(%q) = %s, want %s", tc.obj, got, tc.want)
		}
		var v map[string]any
		if err := json.Unmarshal([]byte(got), &v); err != nil {
			t.Errorf("%s: %v", got, err)
		}
	}
}

func TestAppendInts(t *testing.T) {
	if got := string(AppendInts(nil, []int{1, 22, 333})); got != "[1,22,333]" {
		t.Errorf("got %s", got)
	}
	if got := string(AppendInts(nil, nil)); got != "[]" {
		t.Errorf("got %s", got)
	}
}
