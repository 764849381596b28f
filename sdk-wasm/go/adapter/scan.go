package adapter

import (
	"math/bits"
	"unsafe"
)

// NewScanner returns a scanner at the start of b.
func NewScanner(b []byte) Scanner { return Scanner{b: b} }

// Err reports whether a syntax error was seen.
func (s *Scanner) Err() bool { return s.err }

// Pos returns the cursor (an index into the input).
func (s *Scanner) Pos() int { return s.i }

// Scanner is a single-pass, allocation-free JSON reader with a cursor: the
// same design as reprise's native OpenAI parser (engine/adapter/openai),
// ported so a Go guest reads each byte once. Strings come back raw (escapes
// kept) with a flag saying whether they contain escapes; use DecodedLen and
// AppendUnescaped on them.
//
// Objects and arrays are read with loops, the fastest way in a Go guest
// (no closure calls; Go's Wasm backend makes every call expensive):
//
//	s := adapter.NewScanner(ev.Data)
//	if s.BeginObject() {
//		for key, ok := s.NextKey(); ok; key, ok = s.NextKey() {
//			switch string(key) {
//			case "text":
//				raw, esc := s.Str()
//				n := adapter.DecodedLen(raw, esc)
//			default:
//				s.Skip()
//			}
//		}
//		s.End()
//	}
//	if s.Err() { ... malformed ... }
//
// Every member's value must be consumed (Str, Uint, Skip, or a nested
// object or array read to its end) before the next NextKey. Object and
// Array do the same with a callback per member.
type Scanner struct {
	b   []byte
	i   int
	err bool
	// first is set by BeginObject and BeginArray: the next NextKey or
	// NextElem reads the first member, with no comma before it. Reading a
	// member clears it, so nested containers need no stack.
	first bool
}

func (s *Scanner) fail() {
	s.err = true
	s.i = len(s.b)
}

// Fail marks a syntax error (Err reports true from now on) and moves the
// cursor to the end, for readers that find a value they cannot take.
func (s *Scanner) Fail() { s.fail() }

// Peek returns the next non-space byte, or 0 at the end.
func (s *Scanner) Peek() byte {
	i := skipWS(s.b, s.i)
	s.i = i
	if i < len(s.b) {
		return s.b[i]
	}
	return 0
}

func (s *Scanner) expect(c byte) bool {
	if s.Peek() == c {
		s.i++
		return true
	}
	s.fail()
	return false
}

// Word-at-a-time string scanning: a Go guest's byte loop costs several ns
// per byte, so strings are checked eight bytes per step for a quote, a
// backslash or a control character.
const (
	ones  = 0x0101010101010101
	highs = 0x8080808080808080
)

// special reports (non-zero) whether any byte of w is '"', '\\' or below
// 0x20. It may report a byte after a real match as well, never misses one.
func special(w uint64) uint64 {
	q := w ^ (ones * '"')
	bs := w ^ (ones * '\\')
	return ((q-ones)&^q | (bs-ones)&^bs | (w-ones*0x20)&^w) & highs
}

// strEnd scans string contents starting at i (just past the opening
// quote): it returns the index of the closing quote and whether the
// contents hold escapes, or -1 on an unterminated string or a control
// character.
func strEnd(b []byte, i int) (int, bool) {
	esc := false
	for {
		for i+8 <= len(b) {
			if m := special(*(*uint64)(unsafe.Pointer(unsafe.SliceData(b[i:])))); m != 0 {
				// The lowest flagged byte is a real match (a false
				// positive only follows one).
				i += bits.TrailingZeros64(m) >> 3
				goto found
			}
			i += 8
		}
		for i < len(b) {
			if c := b[i]; c == '"' || c == '\\' || c < 0x20 {
				goto found
			}
			i++
		}
		return -1, esc
	found:
		switch b[i] {
		case '"':
			return i, esc
		case '\\':
			esc = true
			i += 2
		default: // a control character
			return -1, esc
		}
	}
}

// shortEnd is strEnd's inlined fast path: the index of the closing quote
// when it is among the eight bytes at i with no escape or control
// character before it, else -1 (call strEnd). It saves a call on most
// keys and short values.
func shortEnd(b []byte, i int) int {
	if i+8 <= len(b) {
		if m := special(*(*uint64)(unsafe.Pointer(unsafe.SliceData(b[i:])))); m != 0 {
			if j := i + bits.TrailingZeros64(m)>>3; b[j] == '"' {
				return j
			}
		}
	}
	return -1
}

// Str scans a string at the cursor and returns its raw contents (between the
// quotes, escapes kept) and whether it contains escapes.
func (s *Scanner) Str() (raw []byte, esc bool) {
	b := s.b
	i := skipWS(b, s.i)
	if i >= len(b) || b[i] != '"' {
		s.fail()
		return nil, false
	}
	e := shortEnd(b, i+1)
	if e < 0 {
		if e, esc = strEnd(b, i+1); e < 0 {
			s.fail()
			return nil, false
		}
	}
	s.i = e + 1
	return b[i+1 : e], esc
}

// OptStr scans the value at the cursor: a string's raw contents and
// whether it has escapes, with ok true; any other value is skipped (ok
// false), so a field that should be a string but is null or an object
// reads as absent.
func (s *Scanner) OptStr() (raw []byte, esc, ok bool) {
	if s.Peek() != '"' {
		s.Skip()
		return nil, false, false
	}
	raw, esc = s.Str()
	return raw, esc, true
}

// Uint scans a JSON number and returns it as a non-negative integer
// (fractions are truncated, negatives and overflow clamp to 0 / max).
func (s *Scanner) Uint() (uint32, bool) {
	b := s.b
	i := skipWS(b, s.i)
	s.i = i
	neg := false
	if i < len(b) && b[i] == '-' {
		neg = true
		i++
	}
	var v uint64
	start := i
	// Eight digits per step while they last (a 10-digit timestamp costs
	// one step and two bytes instead of ten bytes).
	for i+8 <= len(b) {
		w := *(*uint64)(unsafe.Pointer(unsafe.SliceData(b[i:])))
		if (w&0xF0F0F0F0F0F0F0F0)|((w+0x0606060606060606)&0xF0F0F0F0F0F0F0F0)>>4 != 0x3333333333333333 {
			break
		}
		if v < 1<<32 { // beyond, the result clamps anyway
			v = v*100000000 + eightDigits(w)
		}
		i += 8
	}
	for ; i < len(b); i++ {
		d := b[i] - '0'
		if d > 9 {
			break
		}
		if v < 1<<40 {
			v = v*10 + uint64(d)
		}
	}
	if i == start {
		s.fail()
		return 0, false
	}
	// fraction and exponent: validate and ignore
	if i < len(b) && b[i] == '.' {
		i++
		n := i
		for i < len(b) && b[i]-'0' <= 9 {
			i++
		}
		if i == n {
			s.fail()
			return 0, false
		}
	}
	if i < len(b) && (b[i] == 'e' || b[i] == 'E') {
		i++
		if i < len(b) && (b[i] == '+' || b[i] == '-') {
			i++
		}
		n := i
		for i < len(b) && b[i]-'0' <= 9 {
			i++
		}
		if i == n {
			s.fail()
			return 0, false
		}
	}
	s.i = i
	if neg {
		return 0, true
	}
	if v > 0xFFFFFFFE {
		v = 0xFFFFFFFE
	}
	return uint32(v), true
}

// eightDigits returns the value of eight ASCII digits loaded little-endian
// (the first digit in the lowest byte).
func eightDigits(w uint64) uint64 {
	w -= 0x3030303030303030
	w = w*10 + w>>8 // pairs of digits in every other byte
	w = ((w&0x000000FF000000FF)*(100+1000000<<32) + (w>>16&0x000000FF000000FF)*(1+10000<<32)) >> 32
	return w & 0xFFFFFFFF
}

// Skip skips one value of any type, bounded in depth.
func (s *Scanner) Skip() {
	// Scalars first, most common first, without the switch of skipDepth
	// (a chain of compares in Go's Wasm code).
	switch c := s.Peek(); {
	case c == '"':
		if e, _ := strEnd(s.b, s.i+1); e >= 0 {
			s.i = e + 1
		} else {
			s.fail()
		}
	case c-'0' <= 9 || c == '-':
		s.Uint()
	case c == 'n':
		s.lit('n', 'u', 'l', 'l', 4)
	default:
		s.skipDepth(0)
	}
}

func (s *Scanner) skipDepth(depth int) {
	if depth > 64 {
		s.fail()
		return
	}
	switch s.Peek() {
	case '"':
		s.Str()
	case '{':
		s.i++
		if s.Peek() == '}' {
			s.i++
			return
		}
		for !s.err {
			s.Str()
			if !s.expect(':') {
				return
			}
			s.skipDepth(depth + 1)
			switch s.Peek() {
			case ',':
				s.i++
			case '}':
				s.i++
				return
			default:
				s.fail()
			}
		}
	case '[':
		s.i++
		if s.Peek() == ']' {
			s.i++
			return
		}
		for !s.err {
			s.skipDepth(depth + 1)
			switch s.Peek() {
			case ',':
				s.i++
			case ']':
				s.i++
				return
			default:
				s.fail()
			}
		}
	case 't':
		s.lit('t', 'r', 'u', 'e', 4)
	case 'f':
		s.lit('f', 'a', 'l', 's', 5)
	case 'n':
		s.lit('n', 'u', 'l', 'l', 4)
	case '-', '0', '1', '2', '3', '4', '5', '6', '7', '8', '9':
		s.Uint()
	default:
		s.fail()
	}
}

// lit consumes the literal true, false or null (n bytes; the first four
// given, false's fifth is 'e').
func (s *Scanner) lit(c0, c1, c2, c3 byte, n int) {
	b, i := s.b, s.i
	if len(b)-i >= n && b[i] == c0 && b[i+1] == c1 && b[i+2] == c2 && b[i+3] == c3 && (n == 4 || b[i+4] == 'e') {
		s.i = i + n
		return
	}
	s.fail()
}

// BeginObject starts reading the object at the cursor; read its members
// with NextKey until it reports false. At a value of another type it
// skips the value and returns false (chunks with unexpected shapes are
// ignored, not fatal), as it does on a syntax error (Err).
func (s *Scanner) BeginObject() bool {
	// A brace right at the cursor, the usual case, takes the short path.
	if i := s.i; i < len(s.b) && s.b[i] == '{' {
		s.i, s.first = i+1, true
		return true
	}
	return s.begin('{')
}

// begin is BeginObject (c '{') and BeginArray (c '[') after white space
// or at another value.
func (s *Scanner) begin(c byte) bool {
	if s.Peek() != c {
		s.Skip() // null, or a value of another type: not an object or array
		return false
	}
	s.i++
	s.first = true
	return true
}

// NextKey reads the next member's key and the colon after it, leaving
// the cursor at the value, which the caller must consume. At the end of
// the object it consumes the closing brace and returns false, as it does
// on a syntax error (Err).
func (s *Scanner) NextKey() (key []byte, ok bool) {
	b := s.b
	i := s.i
	if !s.first && i+1 < len(b) && b[i] == ',' && b[i+1] == '"' {
		i++ // compact JSON: the common case
	} else if i = skipWS(b, i); s.first {
		s.first = false
		if i < len(b) && b[i] == '}' {
			s.i = i + 1
			return nil, false
		}
	} else if i < len(b) && b[i] == ',' {
		i = skipWS(b, i+1)
	} else {
		if i < len(b) && b[i] == '}' {
			s.i = i + 1
		} else {
			s.fail()
		}
		return nil, false
	}
	if i >= len(b) || b[i] != '"' {
		s.fail()
		return nil, false
	}
	e := shortEnd(b, i+1)
	if e < 0 {
		if e, _ = strEnd(b, i+1); e < 0 {
			s.fail()
			return nil, false
		}
	}
	key = b[i+1 : e]
	i = skipWS(b, e+1)
	if i >= len(b) || b[i] != ':' {
		s.fail()
		return nil, false
	}
	s.i = i + 1
	return key, true
}

// BeginArray starts reading the array at the cursor; step through its
// elements with NextElem, consuming each. At a value of another type it
// skips the value and returns false, as it does on a syntax error.
func (s *Scanner) BeginArray() bool {
	if i := s.i; i < len(s.b) && s.b[i] == '[' {
		s.i, s.first = i+1, true
		return true
	}
	return s.begin('[')
}

// NextElem reports whether another element follows (the cursor is then
// at it, and the caller must consume it). At the end of the array it
// consumes the closing bracket and returns false, as it does on a syntax
// error (Err).
func (s *Scanner) NextElem() bool {
	b := s.b
	i := skipWS(b, s.i)
	if s.first {
		s.first = false
		if i < len(b) && b[i] == ']' {
			s.i = i + 1
			return false
		}
		s.i = i
		return true
	}
	if i < len(b) {
		switch b[i] {
		case ',':
			s.i = i + 1
			return true
		case ']':
			s.i = i + 1
			return false
		}
	}
	s.fail()
	return false
}

// Object iterates the members of an object at the cursor, calling f with
// each raw key; f must consume the value. At a value of another type it
// skips the value and returns false (chunks with unexpected shapes are
// ignored, not fatal); it also returns false on a syntax error (s.err).
// BeginObject and NextKey do the same without a call per member.
func (s *Scanner) Object(f func(key []byte)) bool {
	if !s.BeginObject() {
		return false
	}
	for {
		k, ok := s.NextKey()
		if !ok {
			return !s.err
		}
		at := s.i
		f(k)
		if !s.err && s.i == at {
			s.fail() // f did not consume the value
		}
	}
}

// Array iterates the elements of an array at the cursor; f must consume each.
// BeginArray and NextElem do the same without a call per element.
func (s *Scanner) Array(f func(i int)) bool {
	if !s.BeginArray() {
		return false
	}
	for n := 0; ; n++ {
		if !s.NextElem() {
			return !s.err
		}
		at := s.i
		f(n)
		if !s.err && s.i == at {
			s.fail()
		}
	}
}

// End checks that only whitespace follows.
func (s *Scanner) End() {
	if s.Peek() != 0 {
		s.fail()
	}
}

// Done reports whether a top-level value scan (read: it parsed one) read
// valid JSON with nothing after it.
func (s *Scanner) Done(read bool) bool {
	if read {
		s.End()
	}
	return read && !s.err
}

// DecodedLen returns the UTF-8 length of raw JSON string contents (from
// Str); esc says whether raw contains escapes.
func DecodedLen(raw []byte, esc bool) int {
	if !esc {
		return len(raw)
	}
	n := 0
	for i := 0; i < len(raw); i++ {
		if raw[i] != '\\' || i+1 >= len(raw) {
			n++
			continue
		}
		i++
		if raw[i] != 'u' {
			n++
			continue
		}
		r, w := hexRune(raw, i)
		i += w
		n += runeLen(r)
	}
	return n
}

// AppendUnescaped appends the decoded raw JSON string contents to dst.
func AppendUnescaped(dst, raw []byte, esc bool) []byte {
	if !esc {
		return append(dst, raw...)
	}
	for i := 0; i < len(raw); i++ {
		c := raw[i]
		if c != '\\' || i+1 >= len(raw) {
			dst = append(dst, c)
			continue
		}
		i++
		switch raw[i] {
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
			r, w := hexRune(raw, i)
			i += w
			dst = appendRune(dst, r)
		default:
			dst = append(dst, raw[i])
		}
	}
	return dst
}
