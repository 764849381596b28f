package jsonx

import (
	"bytes"
	"strconv"
	"unicode/utf8"
)

const hex = "0123456789abcdef"

// safe marks the ASCII bytes copied as they are.
var safe = func() (t [utf8.RuneSelf]bool) {
	for c := 0x20; c < utf8.RuneSelf; c++ {
		t[c] = c != '"' && c != '\\'
	}
	return t
}()

// AppendInts appends ids to dst as a JSON array of integers (a prompt of
// token ids) and returns the extended slice.
func AppendInts(dst []byte, ids []int) []byte {
	dst = append(dst, '[')
	for i, id := range ids {
		if i > 0 {
			dst = append(dst, ',')
		}
		dst = strconv.AppendInt(dst, int64(id), 10)
	}
	return append(dst, ']')
}

// AppendString appends s to dst as a quoted JSON string and returns the
// extended slice. It allocates only when dst lacks room.
func AppendString(dst []byte, s string) []byte {
	dst = append(dst, '"')
	dst = AppendContents(dst, s)
	return append(dst, '"')
}

// AppendContents appends s escaped as the inside of a JSON string, without
// the quotes (to splice text into a string literal), and returns the
// extended slice. It allocates only when dst lacks room.
func AppendContents(dst []byte, s string) []byte {
	start := 0
	for i := 0; i < len(s); {
		if c := s[i]; c < utf8.RuneSelf {
			if safe[c] {
				i++
				continue
			}
			dst = append(dst, s[start:i]...)
			switch c {
			case '"', '\\':
				dst = append(dst, '\\', c)
			case '\b':
				dst = append(dst, '\\', 'b')
			case '\f':
				dst = append(dst, '\\', 'f')
			case '\n':
				dst = append(dst, '\\', 'n')
			case '\r':
				dst = append(dst, '\\', 'r')
			case '\t':
				dst = append(dst, '\\', 't')
			default:
				dst = append(dst, '\\', 'u', '0', '0', hex[c>>4], hex[c&0xf])
			}
			i++
			start = i
			continue
		}
		r, size := utf8.DecodeRuneInString(s[i:])
		switch {
		case r == utf8.RuneError && size == 1:
			dst = append(dst, s[start:i]...)
			dst = append(dst, `\ufffd`...)
		case r == '\u2028' || r == '\u2029':
			dst = append(dst, s[start:i]...)
			dst = append(dst, '\\', 'u', '2', '0', '2', hex[r&0xf])
		default:
			i += size
			continue
		}
		i += size
		start = i
	}
	return append(dst, s[start:]...)
}

// AppendMembers appends the members of the JSON object obj as ",members",
// to extend an object dst has open; nothing when obj has none (or is
// shorter than "{}"). obj is trusted to be an object: its first and last
// bytes, after white space, are dropped unread.
func AppendMembers(dst, obj []byte) []byte {
	obj = bytes.TrimSpace(obj)
	if len(obj) < 2 {
		return dst
	}
	inner := bytes.TrimSpace(obj[1 : len(obj)-1])
	if len(inner) == 0 {
		return dst
	}
	dst = append(dst, ',')
	return append(dst, inner...)
}
