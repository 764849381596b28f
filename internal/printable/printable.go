package printable

import (
	"strconv"
	"strings"
	"unicode/utf8"
)

// Line returns s with every control character (C0, DEL, C1, line and
// paragraph separators, bidirectional overrides) and every byte that is
// not UTF-8 written as its Go escape (\x1b, \n, \u0085): one line of
// printable text. It returns s itself, without allocating, when there is
// nothing to escape.
func Line(s string) string { return escape(s, false) }

// Text is [Line] that keeps line feeds: for messages of several lines
// (a joined error) that must still not control the terminal.
func Text(s string) string { return escape(s, true) }

func escape(s string, keepLF bool) string {
	i := 0
	for i < len(s) {
		r, n := utf8.DecodeRuneInString(s[i:])
		if unsafe(r, n, keepLF) {
			break
		}
		i += n
	}
	if i == len(s) {
		return s
	}
	var b strings.Builder
	b.Grow(len(s) + 8)
	b.WriteString(s[:i])
	for i < len(s) {
		r, n := utf8.DecodeRuneInString(s[i:])
		switch {
		case r == utf8.RuneError && n == 1:
			b.WriteString(`\x`)
			b.WriteString(strconv.FormatUint(uint64(s[i])>>4, 16))
			b.WriteString(strconv.FormatUint(uint64(s[i])&0xf, 16))
		case unsafe(r, n, keepLF):
			q := strconv.QuoteRune(r) // '\x1b', '\n', '\u0085'
			b.WriteString(q[1 : len(q)-1])
		default:
			b.WriteString(s[i : i+n])
		}
		i += n
	}
	return b.String()
}

// unsafe reports whether rune r (n bytes) must be escaped.
func unsafe(r rune, n int, keepLF bool) bool {
	switch {
	case r == utf8.RuneError && n == 1:
		return true
	case r == '\n':
		return !keepLF
	case r < 0x20, r == 0x7f, r >= 0x80 && r < 0xa0:
		return true
	case r == 0x2028, r == 0x2029, r >= 0x202a && r <= 0x202e, r >= 0x2066 && r <= 0x2069:
		return true // line separators; bidirectional embeddings, overrides, isolates
	}
	return false
}
