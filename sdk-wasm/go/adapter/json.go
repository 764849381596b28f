package adapter

import (
	"bytes"
	"unicode/utf8"
)

// A minimal, allocation-free JSON scanner for adapters: look values up by
// key, walk arrays, measure and compare strings without decoding them.
// Inputs are assumed to be single JSON values; malformed input yields nil
// (never a panic).

// skipWS returns the index of the first non-space byte at or after i.
func skipWS(b []byte, i int) int {
	for i < len(b) {
		if c := b[i]; c > ' ' || c != ' ' && c != '\t' && c != '\n' && c != '\r' {
			return i
		}
		i++
	}
	return i
}

// stringEnd returns the index just past the closing quote of the string
// whose opening quote is at i, or -1. It jumps between quotes with
// bytes.IndexByte, which Go implements in Wasm assembly: a byte loop in
// Go's wasm backend costs several ns per byte.
func stringEnd(b []byte, i int) int {
	j := i + 1
	for {
		k := bytes.IndexByte(b[j:], '"')
		if k < 0 {
			return -1
		}
		j += k
		// The quote is escaped if an odd number of backslashes precede it.
		n := 0
		for p := j - 1; p > i && b[p] == '\\'; p-- {
			n++
		}
		if n%2 == 0 {
			return j + 1
		}
		j++
	}
}

// valueEnd returns the index just past the value starting at i, or -1.
func valueEnd(b []byte, i int) int {
	if i >= len(b) {
		return -1
	}
	switch c := b[i]; c {
	case '"':
		return stringEnd(b, i)
	case '{', '[':
		depth := 0
		for j := i; j < len(b); j++ {
			switch b[j] {
			case '"':
				e := stringEnd(b, j)
				if e < 0 {
					return -1
				}
				j = e - 1
			case '{', '[':
				depth++
			case '}', ']':
				depth--
				if depth == 0 {
					return j + 1
				}
			}
		}
		return -1
	default:
		j := i
		for j < len(b) {
			c := b[j]
			if c == ',' || c == '}' || c == ']' || c == ' ' || c == '\t' || c == '\n' || c == '\r' {
				break
			}
			j++
		}
		if j == i {
			return -1
		}
		return j
	}
}

// Get returns the raw value of key in the JSON object obj, or nil when obj
// is not an object or has no such key. Later duplicates win, as in
// encoding/json.
func Get(obj []byte, key string) []byte {
	i := skipWS(obj, 0)
	if i >= len(obj) || obj[i] != '{' {
		return nil
	}
	var found []byte
	i = skipWS(obj, i+1)
	for i < len(obj) && obj[i] != '}' {
		if obj[i] != '"' {
			return found
		}
		ke := valueEnd(obj, i)
		if ke < 0 {
			return found
		}
		k := obj[i:ke]
		i = skipWS(obj, ke)
		if i >= len(obj) || obj[i] != ':' {
			return found
		}
		i = skipWS(obj, i+1)
		ve := valueEnd(obj, i)
		if ve < 0 {
			return found
		}
		if StringEquals(k, key) {
			found = obj[i:ve]
		}
		i = skipWS(obj, ve)
		if i < len(obj) && obj[i] == ',' {
			i = skipWS(obj, i+1)
		}
	}
	return found
}

// GetPath follows keys through nested objects.
func GetPath(obj []byte, keys ...string) []byte {
	for _, k := range keys {
		obj = Get(obj, k)
		if obj == nil {
			return nil
		}
	}
	return obj
}

// Each calls fn for every element of the JSON array arr, with its index.
// It returns the number of elements (-1 when arr is not an array).
func Each(arr []byte, fn func(i int, v []byte)) int {
	i := skipWS(arr, 0)
	if i >= len(arr) || arr[i] != '[' {
		return -1
	}
	n := 0
	i = skipWS(arr, i+1)
	for i < len(arr) && arr[i] != ']' {
		e := valueEnd(arr, i)
		if e < 0 {
			return n
		}
		if fn != nil {
			fn(n, arr[i:e])
		}
		n++
		i = skipWS(arr, e)
		if i < len(arr) && arr[i] == ',' {
			i = skipWS(arr, i+1)
		}
	}
	return n
}

// IsNull reports whether v is absent or the literal null.
func IsNull(v []byte) bool {
	return v == nil || len(v) == 4 && string(v) == "null"
}

// IsString reports whether v is a JSON string.
func IsString(v []byte) bool { return len(v) >= 2 && v[0] == '"' }

// Int parses v as an integer (a JSON number without fraction).
func Int(v []byte) (int64, bool) {
	if len(v) == 0 {
		return 0, false
	}
	neg := v[0] == '-'
	i := 0
	if neg {
		i = 1
	}
	if i >= len(v) {
		return 0, false
	}
	var n int64
	for ; i < len(v); i++ {
		c := v[i]
		if c == '.' || c == 'e' || c == 'E' {
			// Integral floats such as 12.0: take the integer part.
			break
		}
		if c < '0' || c > '9' {
			return 0, false
		}
		n = n*10 + int64(c-'0')
	}
	if neg {
		n = -n
	}
	return n, true
}

func hexVal(c byte) rune {
	switch {
	case c >= '0' && c <= '9':
		return rune(c - '0')
	case c >= 'a' && c <= 'f':
		return rune(c-'a') + 10
	case c >= 'A' && c <= 'F':
		return rune(c-'A') + 10
	}
	return -1
}

func hex4(b []byte, i int) rune {
	if i+4 > len(b) {
		return -1
	}
	var r rune
	for k := 0; k < 4; k++ {
		h := hexVal(b[i+k])
		if h < 0 {
			return -1
		}
		r = r<<4 | h
	}
	return r
}

func runeLen(r rune) int {
	switch {
	case r < 0x80:
		return 1
	case r < 0x800:
		return 2
	case r < 0x10000:
		return 3
	}
	return 4
}

// hexRune decodes \uXXXX (and a following low surrogate) at b[i] == 'u'.
// It returns the rune and how many bytes after i it consumed; invalid hex
// gives U+FFFD consuming nothing, a lone surrogate U+FFFD.
func hexRune(b []byte, i int) (rune, int) {
	r1 := hex4(b, i+1)
	if r1 < 0 {
		return 0xFFFD, 0
	}
	if r1 >= 0xD800 && r1 < 0xDC00 && i+10 < len(b) && b[i+5] == '\\' && b[i+6] == 'u' {
		if r2 := hex4(b, i+7); r2 >= 0xDC00 && r2 < 0xE000 {
			return ((r1 - 0xD800) << 10) + (r2 - 0xDC00) + 0x10000, 10
		}
	}
	if r1 >= 0xD800 && r1 < 0xE000 {
		return 0xFFFD, 4
	}
	return r1, 4
}

// StringLen returns the byte length of the decoded JSON string v (with
// quotes): escapes decoded, other bytes counted as they are. -1 when v is
// not a string.
func StringLen(v []byte) int {
	if !IsString(v) {
		return -1
	}
	b := v[1 : len(v)-1]
	if bytes.IndexByte(b, '\\') < 0 {
		return len(b)
	}
	n := 0
	for i := 0; i < len(b); i++ {
		if b[i] != '\\' || i+1 >= len(b) {
			n++
			continue
		}
		i++
		if b[i] != 'u' {
			n++
			continue
		}
		r, w := hexRune(b, i)
		i += w
		n += runeLen(r)
	}
	return n
}

// AppendString appends the decoded contents of the JSON string v to dst.
func AppendString(dst []byte, v []byte) []byte {
	if !IsString(v) {
		return dst
	}
	b := v[1 : len(v)-1]
	if bytes.IndexByte(b, '\\') < 0 {
		return append(dst, b...)
	}
	for i := 0; i < len(b); i++ {
		c := b[i]
		if c != '\\' || i+1 >= len(b) {
			dst = append(dst, c)
			continue
		}
		i++
		switch b[i] {
		case 'n':
			dst = append(dst, '\n')
		case 't':
			dst = append(dst, '\t')
		case 'r':
			dst = append(dst, '\r')
		case 'b':
			dst = append(dst, '\b')
		case 'f':
			dst = append(dst, '\f')
		case 'u':
			r, w := hexRune(b, i)
			i += w
			dst = appendRune(dst, r)
		default:
			dst = append(dst, b[i])
		}
	}
	return dst
}

// StringEquals reports whether the JSON string v (with quotes) decodes to
// s. Escapes other than \" \\ \/ are decoded only for ASCII.
func StringEquals(v []byte, s string) bool {
	if !IsString(v) {
		return false
	}
	b := v[1 : len(v)-1]
	j := 0
	for i := 0; i < len(b); i++ {
		c := b[i]
		if c == '\\' && i+1 < len(b) {
			i++
			switch b[i] {
			case 'n':
				c = '\n'
			case 't':
				c = '\t'
			case 'r':
				c = '\r'
			case 'b':
				c = '\b'
			case 'f':
				c = '\f'
			case 'u':
				r := hex4(b, i+1)
				if r < 0 || r >= 0x80 {
					return false
				}
				c = byte(r)
				i += 4
			default:
				c = b[i]
			}
		}
		if j >= len(s) || s[j] != c {
			return false
		}
		j++
	}
	return j == len(s)
}

func appendRune(dst []byte, r rune) []byte {
	switch {
	case r < 0x80:
		return append(dst, byte(r))
	case r < 0x800:
		return append(dst, byte(0xC0|r>>6), byte(0x80|r&0x3F))
	case r < 0x10000:
		return append(dst, byte(0xE0|r>>12), byte(0x80|(r>>6)&0x3F), byte(0x80|r&0x3F))
	}
	return append(dst, byte(0xF0|r>>18), byte(0x80|(r>>12)&0x3F), byte(0x80|(r>>6)&0x3F), byte(0x80|r&0x3F))
}

// AppendQuoted appends s as a quoted JSON string, escaped as reprise's
// host escapes (encoding/json's escaping without HTML escaping): quote,
// backslash and control characters (\b \f \n \r \t short), U+2028 and
// U+2029 escaped, invalid UTF-8 as \ufffd.
func AppendQuoted(dst []byte, s string) []byte {
	const hex = "0123456789abcdef"
	dst = append(dst, '"')
	for i := 0; i < len(s); {
		c := s[i]
		if c < utf8.RuneSelf {
			switch {
			case c == '"' || c == '\\':
				dst = append(dst, '\\', c)
			case c == '\b':
				dst = append(dst, '\\', 'b')
			case c == '\f':
				dst = append(dst, '\\', 'f')
			case c == '\n':
				dst = append(dst, '\\', 'n')
			case c == '\r':
				dst = append(dst, '\\', 'r')
			case c == '\t':
				dst = append(dst, '\\', 't')
			case c < 0x20:
				dst = append(dst, '\\', 'u', '0', '0', hex[c>>4], hex[c&0xF])
			default:
				dst = append(dst, c)
			}
			i++
			continue
		}
		r, size := utf8.DecodeRuneInString(s[i:])
		switch {
		case r == utf8.RuneError && size == 1:
			dst = append(dst, `\ufffd`...)
		case r == '\u2028' || r == '\u2029':
			dst = append(dst, '\\', 'u', '2', '0', '2', hex[r&0xF])
		default:
			dst = append(dst, s[i:i+size]...)
		}
		i += size
	}
	return append(dst, '"')
}

// Members calls fn for every member of the JSON object obj, in order
// (duplicates included). It reports whether obj was a well-formed object.
func Members(obj []byte, fn func(key, val []byte)) bool {
	i := skipWS(obj, 0)
	if i >= len(obj) || obj[i] != '{' {
		return false
	}
	i = skipWS(obj, i+1)
	for i < len(obj) && obj[i] != '}' {
		if obj[i] != '"' {
			return false
		}
		ke := valueEnd(obj, i)
		if ke < 0 {
			return false
		}
		k := obj[i:ke]
		i = skipWS(obj, ke)
		if i >= len(obj) || obj[i] != ':' {
			return false
		}
		i = skipWS(obj, i+1)
		ve := valueEnd(obj, i)
		if ve < 0 {
			return false
		}
		fn(k, obj[i:ve])
		i = skipWS(obj, ve)
		if i < len(obj) && obj[i] == ',' {
			i = skipWS(obj, i+1)
			if i < len(obj) && obj[i] == '}' {
				return false
			}
		} else if i < len(obj) && obj[i] != '}' {
			return false
		}
	}
	if i >= len(obj) {
		return false
	}
	return skipWS(obj, i+1) == len(obj)
}

// Uint parses a JSON number as a count: the integer part, negative
// numbers as 0, clamped to 0xFFFFFFFE.
func Uint(v []byte) (uint32, bool) {
	neg := len(v) > 0 && v[0] == '-'
	if neg {
		v = v[1:]
	}
	if len(v) == 0 || v[0] < '0' || v[0] > '9' {
		return 0, false
	}
	var n uint64
	for _, c := range v {
		if c < '0' || c > '9' {
			break
		}
		if n < 1<<40 {
			n = n*10 + uint64(c-'0')
		}
	}
	if neg {
		return 0, true
	}
	return uint32(min(n, 0xFFFFFFFE)), true
}

// Iter walks the members of a JSON object, or the elements of an array, in
// one pass without callbacks (the fastest way to read an event):
//
//	for it := adapter.Object(data); it.Next(); {
//		switch string(it.Key()) { // no allocation
//		case "choices": ...
//		}
//	}
//
// After the loop, Err reports malformed input.
type Iter struct {
	b        []byte
	i        int
	key, val []byte
	array    bool
	bad      bool
	started  bool
}

// Object starts iterating the members of obj.
func Object(obj []byte) Iter { return Iter{b: obj} }

// Array starts iterating the elements of arr (Key is nil).
func Array(arr []byte) Iter { return Iter{b: arr, array: true} }

// Next advances to the next member or element.
func (it *Iter) Next() bool {
	b := it.b
	i := it.i
	if !it.started {
		it.started = true
		i = skipWS(b, 0)
		open := byte('{')
		if it.array {
			open = '['
		}
		if i >= len(b) || b[i] != open {
			it.bad = true
			return false
		}
		i = skipWS(b, i+1)
	}
	closeC := byte('}')
	if it.array {
		closeC = ']'
	}
	if i >= len(b) || b[i] == closeC {
		it.bad = i >= len(b)
		return false
	}
	if !it.array {
		if b[i] != '"' {
			it.bad = true
			return false
		}
		ke := valueEnd(b, i)
		if ke < 0 {
			it.bad = true
			return false
		}
		it.key = b[i+1 : ke-1]
		i = skipWS(b, ke)
		if i >= len(b) || b[i] != ':' {
			it.bad = true
			return false
		}
		i = skipWS(b, i+1)
	}
	ve := valueEnd(b, i)
	if ve < 0 {
		it.bad = true
		return false
	}
	it.val = b[i:ve]
	i = skipWS(b, ve)
	if i < len(b) && b[i] == ',' {
		i = skipWS(b, i+1)
		if i < len(b) && b[i] == closeC { // trailing comma
			it.bad = true
			it.i = len(b)
			return true
		}
	} else if i < len(b) && b[i] != closeC {
		it.bad = true
		it.i = len(b)
		return true
	}
	it.i = i
	return true
}

// Key returns the current member's key without quotes, raw (escapes not
// decoded; keys of real APIs have none).
func (it *Iter) Key() []byte { return it.key }

// Value returns the current raw value.
func (it *Iter) Value() []byte { return it.val }

// Err reports whether the input was malformed.
func (it *Iter) Err() bool { return it.bad }
