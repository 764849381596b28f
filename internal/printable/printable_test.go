package printable

import (
	"strings"
	"testing"
	"unicode/utf8"
)

// TestLine: control characters and bytes that are not UTF-8 come out
// escaped, printable text (UTF-8 included) as it is.
func TestLine(t *testing.T) {
	for _, tt := range []struct{ in, line, text string }{
		{"plain é 🙂 text", "plain é 🙂 text", "plain é 🙂 text"},
		{"boom \x1b[2J\x1b]52;c;SGVsbG8=\a end", `boom \x1b[2J\x1b]52;c;SGVsbG8=\a end`, `boom \x1b[2J\x1b]52;c;SGVsbG8=\a end`},
		{"a\r\nb\tc", `a\r\nb\tc`, "a\\r\nb\\tc"},
		{"csi \u009b2J del \x7f", `csi \u009b2J del \x7f`, `csi \u009b2J del \x7f`},
		{"bad \xff\xfe utf8", `bad \xff\xfe utf8`, `bad \xff\xfe utf8`},
		{"rtl \u202e evil", `rtl \u202e evil`, `rtl \u202e evil`},
	} {
		if got := Line(tt.in); got != tt.line {
			t.Errorf("Line(%q) = %q, want %q", tt.in, got, tt.line)
		}
		if got := Text(tt.in); got != tt.text {
			t.Errorf("Text(%q) = %q, want %q", tt.in, got, tt.text)
		}
	}
	if n := testing.AllocsPerRun(10, func() { Line("nothing to escape here") }); n != 0 {
		t.Errorf("Line of printable text allocates %v times, want 0", n)
	}
}

// FuzzLine: whatever a server sends, Line's result holds no control
// character and is UTF-8, Text's none but line feeds, and text with
// nothing to escape comes back as it was.
func FuzzLine(f *testing.F) {
	for _, s := range []string{"plain", "\x1b[2J\x1b]52;c;SGVsbG8=\a", "a\r\nb", "\u009b\u202e\xff"} {
		f.Add(s)
	}
	f.Fuzz(func(t *testing.T, s string) {
		l, x := Line(s), Text(s)
		if !utf8.ValidString(l) || !utf8.ValidString(x) {
			t.Fatalf("%q: not UTF-8: %q, %q", s, l, x)
		}
		for _, r := range l {
			if unsafe(r, utf8.RuneLen(r), false) {
				t.Fatalf("Line(%q) = %q holds %U", s, l, r)
			}
		}
		for _, r := range x {
			if unsafe(r, utf8.RuneLen(r), true) {
				t.Fatalf("Text(%q) = %q holds %U", s, x, r)
			}
		}
		if clean := utf8.ValidString(s) && !strings.ContainsFunc(s, func(r rune) bool { return unsafe(r, utf8.RuneLen(r), false) }); clean && l != s {
			t.Fatalf("Line(%q) = %q, want it unchanged", s, l)
		}
	})
}
