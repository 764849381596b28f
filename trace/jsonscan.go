package trace

// Hot path: the JSON object scanner behind the Mooncake and Bailian
// readers; allocation test TestNextAllocs in alloc_test.go.

import (
	"encoding/binary"
	"encoding/json"
	"errors"
	"math/bits"
	"unicode/utf8"
)

// maxJSONDepth bounds nesting in skipped values (encoding/json allows 10000).
const maxJSONDepth = 1000

var (
	errJSONSyntax = errors.New("invalid JSON")
	errJSONDepth  = errors.New("JSON nested too deeply")
)

// jsonSyntax is a syntax error at a byte offset of the line.
type jsonSyntax struct {
	off int
	msg string
}

func (e *jsonSyntax) Error() string {
	return "invalid JSON at byte " + itoa(int64(e.off+1)) + ": " + e.msg
}
func (e *jsonSyntax) Unwrap() error { return errJSONSyntax }

func itoa(v int64) string {
	var buf [24]byte
	i := len(buf)
	neg := v < 0
	u := uint64(v)
	if neg {
		u = -u
	}
	for {
		i--
		buf[i] = byte('0' + u%10)
		u /= 10
		if u == 0 {
			break
		}
	}
	if neg {
		i--
		buf[i] = '-'
	}
	return string(buf[i:])
}

func skipWS(b []byte, i int) int {
	for i < len(b) {
		switch b[i] {
		case ' ', '\t', '\n', '\r':
			i++
		default:
			return i
		}
	}
	return i
}

// scanString scans the JSON string starting at b[i] == '"'. It returns the
// index after the closing quote and whether the content needs decoding
// (escapes or non-ASCII that must be checked as UTF-8).
func scanString(b []byte, i int) (end int, complex bool, err error) {
	i++ // opening quote
	for i < len(b) {
		// Skip 8 plain bytes at a time (keys and most values have no
		// escapes); the switch handles the byte that stops it.
		for i+8 <= len(b) {
			n := plainBytes8(binary.LittleEndian.Uint64(b[i:]))
			i += n
			if n < 8 {
				break
			}
		}
		if i >= len(b) {
			break
		}
		c := b[i]
		switch {
		case c == '"':
			return i + 1, complex, nil
		case c == '\\':
			complex = true
			if i+1 >= len(b) {
				return 0, false, &jsonSyntax{i, "unterminated string"}
			}
			switch b[i+1] {
			case '"', '\\', '/', 'b', 'f', 'n', 'r', 't':
				i += 2
			case 'u':
				if i+6 > len(b) || !isHex4(b[i+2:i+6]) {
					return 0, false, &jsonSyntax{i, `bad \u escape`}
				}
				i += 6
			default:
				return 0, false, &jsonSyntax{i, "bad escape"}
			}
		case c < 0x20:
			return 0, false, &jsonSyntax{i, "control character in string"}
		case c >= 0x80:
			complex = true
			i++
		default:
			i++
		}
	}
	return 0, false, &jsonSyntax{i, "unterminated string"}
}

// plainBytes8 returns how many of the 8 bytes of w (in memory order,
// little-endian) come before the first that is '"', '\\', a control
// character (< 0x20) or not ASCII (≥ 0x80).
//
// Each test sets the high bit of a byte without carries between bytes:
// for a byte c, (c&0x7F)+0x60 has its high bit set iff c&0x7F ≥ 0x20, and
// (c^q&0x7F)+0x7F has it iff c^q has a bit among the low 7, so ORed with
// c^q it is clear iff c == q.
func plainBytes8(w uint64) int {
	const lo7, high = 0x7F7F7F7F7F7F7F7F, 0x8080808080808080
	const quote, backslash = 0x2222222222222222, 0x5C5C5C5C5C5C5C5C
	ctrl := ^((w & lo7) + 0x6060606060606060)
	q := w ^ quote
	isQuote := ^((q&lo7 + lo7) | q)
	bs := w ^ backslash
	isBackslash := ^((bs&lo7 + lo7) | bs)
	stop := (ctrl | w | isQuote | isBackslash) & high
	return bits.TrailingZeros64(stop) >> 3
}

func isHex4(b []byte) bool {
	for _, c := range b {
		if !('0' <= c && c <= '9' || 'a' <= c && c <= 'f' || 'A' <= c && c <= 'F') {
			return false
		}
	}
	return true
}

// stringValue returns the decoded content of the string b[start:end]
// (quotes included). Simple strings alias b; others are decoded by
// encoding/json (which replaces invalid UTF-8 with U+FFFD), allocating.
func stringValue(b []byte, start, end int, complex bool) []byte {
	s := b[start+1 : end-1]
	if !complex {
		return s
	}
	if !hasBackslash(s) && utf8.Valid(s) {
		return s
	}
	var out string
	if err := json.Unmarshal(b[start:end], &out); err != nil {
		return s // unreachable: scanString validated the string
	}
	return []byte(out)
}

func hasBackslash(s []byte) bool {
	for _, c := range s {
		if c == '\\' {
			return true
		}
	}
	return false
}

// skipValue returns the index after the JSON value starting at b[i]
// (i at its first byte), validating its syntax.
func skipValue(b []byte, i, depth int) (int, error) {
	if i >= len(b) {
		return 0, &jsonSyntax{i, "missing value"}
	}
	switch c := b[i]; {
	case c == '"':
		end, _, err := scanString(b, i)
		return end, err
	case c == '{':
		if depth >= maxJSONDepth {
			return 0, errJSONDepth
		}
		i = skipWS(b, i+1)
		if i < len(b) && b[i] == '}' {
			return i + 1, nil
		}
		for {
			if i >= len(b) || b[i] != '"' {
				return 0, &jsonSyntax{i, "want a key"}
			}
			end, _, err := scanString(b, i)
			if err != nil {
				return 0, err
			}
			i = skipWS(b, end)
			if i >= len(b) || b[i] != ':' {
				return 0, &jsonSyntax{i, "want ':'"}
			}
			if i, err = skipValue(b, skipWS(b, i+1), depth+1); err != nil {
				return 0, err
			}
			i = skipWS(b, i)
			if i < len(b) && b[i] == ',' {
				i = skipWS(b, i+1)
				continue
			}
			if i < len(b) && b[i] == '}' {
				return i + 1, nil
			}
			return 0, &jsonSyntax{i, "want ',' or '}'"}
		}
	case c == '[':
		if depth >= maxJSONDepth {
			return 0, errJSONDepth
		}
		i = skipWS(b, i+1)
		if i < len(b) && b[i] == ']' {
			return i + 1, nil
		}
		for {
			var err error
			if i, err = skipValue(b, i, depth+1); err != nil {
				return 0, err
			}
			i = skipWS(b, i)
			if i < len(b) && b[i] == ',' {
				i = skipWS(b, i+1)
				continue
			}
			if i < len(b) && b[i] == ']' {
				return i + 1, nil
			}
			return 0, &jsonSyntax{i, "want ',' or ']'"}
		}
	case c == 't':
		return literal(b, i, "true")
	case c == 'f':
		return literal(b, i, "false")
	case c == 'n':
		return literal(b, i, "null")
	default:
		n := numberEnd(b[i:])
		if n == 0 {
			return 0, &jsonSyntax{i, "want a value"}
		}
		return i + n, nil
	}
}

func literal(b []byte, i int, lit string) (int, error) {
	if len(b)-i < len(lit) || string(b[i:i+len(lit)]) != lit {
		return 0, &jsonSyntax{i, "want a value"}
	}
	return i + len(lit), nil
}

// objectFields calls fn for each member of the JSON object that is the
// whole of b (white space around it allowed), with the decoded key and the
// raw value bytes. It stops at the first error fn returns.
func objectFields(b []byte, fn func(key, val []byte) error) error {
	i := skipWS(b, 0)
	if i >= len(b) || b[i] != '{' {
		return &jsonSyntax{i, "want a JSON object"}
	}
	i = skipWS(b, i+1)
	if i < len(b) && b[i] == '}' {
		if skipWS(b, i+1) != len(b) {
			return &jsonSyntax{i + 1, "data after the object"}
		}
		return nil
	}
	for {
		if i >= len(b) || b[i] != '"' {
			return &jsonSyntax{i, "want a key"}
		}
		kend, kc, err := scanString(b, i)
		if err != nil {
			return err
		}
		key := stringValue(b, i, kend, kc)
		i = skipWS(b, kend)
		if i >= len(b) || b[i] != ':' {
			return &jsonSyntax{i, "want ':'"}
		}
		vstart := skipWS(b, i+1)
		vend, err := skipValue(b, vstart, 1)
		if err != nil {
			return err
		}
		if err := fn(key, b[vstart:vend]); err != nil {
			return err
		}
		i = skipWS(b, vend)
		if i < len(b) && b[i] == ',' {
			i = skipWS(b, i+1)
			continue
		}
		if i < len(b) && b[i] == '}' {
			if skipWS(b, i+1) != len(b) {
				return &jsonSyntax{i + 1, "data after the object"}
			}
			return nil
		}
		return &jsonSyntax{i, "want ',' or '}'"}
	}
}

// arrayElems calls fn for each element of the JSON array b (raw bytes).
func arrayElems(b []byte, fn func(elem []byte) error) error {
	i := skipWS(b, 0)
	if i >= len(b) || b[i] != '[' {
		return &jsonSyntax{i, "want a JSON array"}
	}
	i = skipWS(b, i+1)
	if i < len(b) && b[i] == ']' {
		return nil
	}
	for {
		end, err := skipValue(b, i, 1)
		if err != nil {
			return err
		}
		if err := fn(b[i:end]); err != nil {
			return err
		}
		i = skipWS(b, end)
		if i < len(b) && b[i] == ',' {
			i = skipWS(b, i+1)
			continue
		}
		if i < len(b) && b[i] == ']' {
			return nil
		}
		return &jsonSyntax{i, "want ',' or ']'"}
	}
}

// appendIDs parses the JSON array of integers starting at v[i] and appends
// the ids to dst; it returns the index after the array. Negative ids are
// kept as their 64-bit two's complement (ids are opaque). On error it
// returns a message and an end of 0.
func appendIDs(dst []uint64, v []byte, i int) ([]uint64, int, string) {
	const bad = "want an array of integers"
	if i >= len(v) || v[i] != '[' {
		return dst, 0, bad
	}
	i = skipWS(v, i+1)
	if i < len(v) && v[i] == ']' {
		return dst, i + 1, ""
	}
	for {
		// Fastest path: 1 to 7 digits without a leading zero, then ", "
		// (the ids of most traces), read as two 8-byte words: the digits
		// from the first, the separator from both, one bounds check. New
		// blocks are numbered in order, so an id is often the previous
		// one plus one: when the previous id (pn ≤ 6 digits, its word pw,
		// value px) does not end in 9, that is its text with the last
		// digit one more, checked with its ", " in one comparison.
		pn, pw, px := 0, uint64(0), uint64(0)
		for i+16 <= len(v) {
			s := v[i : i+16]
			w := binary.LittleEndian.Uint64(s)
			if pn > 0 {
				last := uint(8*(pn-1)) & 63
				mask := ^uint64(0) >> (uint(64-8*(pn+2)) & 63) // its pn+2 bytes
				if byte(pw>>last) != '9' && w&mask == (pw+1<<last)&mask {
					px++
					dst = append(dst, px)
					i += pn + 2
					pw = w
					continue
				}
			}
			w2 := binary.LittleEndian.Uint64(s[8:])
			n := leadingDigits8(w)
			sh := uint(8*n) & 63
			sep := uint16(w>>sh | w2<<((64-sh)&63))
			if uint(n-1) >= 7 || n > 1 && byte(w) == '0' || sep != ','|' '<<8 {
				break
			}
			x := digits8(w << ((64 - sh) & 63))
			dst = append(dst, x)
			i += n + 2
			pn, pw, px = n, w, x
			if n > 6 {
				pn = 0
			}
		}
		// The same within 16 bytes of the end of the line.
		if i+10 <= len(v) {
			w := binary.LittleEndian.Uint64(v[i:])
			n := leadingDigits8(w)
			if uint(n-1) < 7 && (n == 1 || byte(w) != '0') && binary.LittleEndian.Uint16(v[i+n:]) == ','|' '<<8 {
				dst = append(dst, digits8(w<<(64-8*n)))
				i += n + 2
				continue
			}
		}
		// Whitespace after ", " (the fastest path does not skip it).
		i = skipWS(v, i)
		// Fast path: unsigned decimal integer of up to 19 digits; its
		// first 8 bytes at once when the line has them (digits8).
		j := i
		var x uint64
		if i+8 <= len(v) {
			w := binary.LittleEndian.Uint64(v[i:])
			if n := leadingDigits8(w); n > 0 {
				x = digits8(w << (64 - 8*n))
				j = i + n
			}
		}
		for j < len(v) && v[j] >= '0' && v[j] <= '9' && j-i < 19 {
			x = x*10 + uint64(v[j]-'0')
			j++
		}
		if j == i || j < len(v) && (v[j] == '.' || v[j] == 'e' || v[j] == 'E' || v[j] >= '0' && v[j] <= '9') ||
			v[i] == '0' && j-i > 1 {
			// Negative, long, leading zero or non-integer: slow path.
			n := numberEnd(v[i:])
			if n == 0 {
				return dst, 0, bad
			}
			var msg string
			if x, msg = parseID(v[i : i+n]); msg != "" {
				return dst, 0, msg
			}
			j = i + n
		}
		dst = append(dst, x)
		// Separator: the common case is ", " exactly.
		if j+1 < len(v) && v[j] == ',' && v[j+1] == ' ' && j+2 < len(v) && v[j+2] != ' ' {
			i = j + 2
			continue
		}
		i = skipWS(v, j)
		if i < len(v) && v[i] == ',' {
			i = skipWS(v, i+1)
			continue
		}
		if i < len(v) && v[i] == ']' {
			return dst, i + 1, ""
		}
		return dst, 0, bad
	}
}

// leadingDigits8 returns how many of the 8 bytes of w (in memory order,
// little-endian) are ASCII digits before the first one that is not.
//
// A byte c is a digit iff its high nibble is 3 and so is that of c+6
// (c ≤ '9'). Adding 6 to a byte ≥ 0xFA carries into the next byte, and
// such a byte is not a digit, so the carry only reaches bytes after the
// first non-digit, which do not matter.
func leadingDigits8(w uint64) int {
	const hi, six, threes = 0xF0F0F0F0F0F0F0F0, 0x0606060606060606, 0x3333333333333333
	t := (w&hi | (w+six)&hi>>4) ^ threes
	return bits.TrailingZeros64(t) >> 3
}

// digits8 returns the value of 8 ASCII digits packed little-endian in w,
// the first (most significant) in the lowest byte; leading zero bytes
// count as leading zeros, so w<<(64−8n) gives the value of its first n
// digits. Three multiplications combine the digits in pairs, then pairs
// of pairs, then the two halves (simdjson's parse_eight_digits_unrolled).
func digits8(w uint64) uint64 {
	w = (w & 0x0F0F0F0F0F0F0F0F) * (10<<8 + 1) >> 8
	w = (w & 0x00FF00FF00FF00FF) * (100<<16 + 1) >> 16
	return (w & 0x0000FFFF0000FFFF) * (10000<<32 + 1) >> 32
}

// parseID parses one id that is not a short unsigned decimal.
func parseID(b []byte) (uint64, string) {
	if b[0] != '-' && len(b) <= 20 && numberEnd(b) == len(b) {
		var x uint64
		ok := true
		for _, c := range b {
			if c < '0' || c > '9' {
				ok = false
				break
			}
			d := uint64(c - '0')
			if x > (1<<64-1-d)/10 {
				return 0, "id " + string(b) + " does not fit in 64 bits"
			}
			x = x*10 + d
		}
		if ok && !(b[0] == '0' && len(b) > 1) {
			return x, ""
		}
	}
	v, st := parseFixed(b, 0)
	switch st {
	case fixedOK:
		return uint64(v), ""
	case fixedRange:
		return 0, "id " + string(b) + " does not fit in 64 bits"
	default:
		return 0, "id " + string(b) + " is not an integer"
	}
}
