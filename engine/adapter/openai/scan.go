package openai

// Hot path: a minimal JSON scanner for OpenAI chunks. No reflection, no
// allocation; strings are returned as raw (still escaped) sub-slices of the
// input. Allocation budget: TestParseAllocs.

import "errors"

var errSyntax = errors.New("invalid JSON")

type scanner struct {
	b   []byte
	i   int
	err error
}

func (s *scanner) fail() {
	if s.err == nil {
		s.err = errSyntax
	}
	s.i = len(s.b)
}

func (s *scanner) ws() {
	for s.i < len(s.b) {
		switch s.b[s.i] {
		case ' ', '\t', '\n', '\r':
			s.i++
		default:
			return
		}
	}
}

// peek returns the next non-space byte, or 0 at the end.
func (s *scanner) peek() byte {
	s.ws()
	if s.i < len(s.b) {
		return s.b[s.i]
	}
	return 0
}

func (s *scanner) expect(c byte) bool {
	if s.peek() == c {
		s.i++
		return true
	}
	s.fail()
	return false
}

// str scans a string at the cursor and returns its raw contents (between the
// quotes, escapes kept) and whether it contains escapes.
func (s *scanner) str() (raw []byte, esc bool) {
	if !s.expect('"') {
		return nil, false
	}
	start := s.i
	for s.i < len(s.b) {
		c := s.b[s.i]
		switch {
		case c == '"':
			raw = s.b[start:s.i]
			s.i++
			return raw, esc
		case c == '\\':
			esc = true
			s.i += 2
		case c < 0x20:
			s.fail()
			return nil, false
		default:
			s.i++
		}
	}
	s.fail()
	return nil, false
}

// optStr scans the value at the cursor: a string's raw contents and
// whether it has escapes, with ok true; any other value is skipped (ok
// false), so a field that should be a string but is null or an object
// reads as absent.
func (s *scanner) optStr() (raw []byte, esc, ok bool) {
	if s.peek() != '"' {
		s.skip()
		return nil, false, false
	}
	raw, esc = s.str()
	return raw, esc, true
}

// uint scans a JSON number and returns it as a non-negative integer
// (fractions are truncated, negatives and overflow clamp to 0 / max).
func (s *scanner) uint() (uint32, bool) {
	s.ws()
	start := s.i
	neg := false
	if s.i < len(s.b) && s.b[s.i] == '-' {
		neg = true
		s.i++
	}
	var v uint64
	digits := 0
	for s.i < len(s.b) && s.b[s.i] >= '0' && s.b[s.i] <= '9' {
		if v < 1<<40 {
			v = v*10 + uint64(s.b[s.i]-'0')
		}
		s.i++
		digits++
	}
	if digits == 0 {
		s.i = start
		s.fail()
		return 0, false
	}
	// fraction and exponent: validate and ignore
	if s.i < len(s.b) && s.b[s.i] == '.' {
		s.i++
		n := 0
		for s.i < len(s.b) && s.b[s.i] >= '0' && s.b[s.i] <= '9' {
			s.i++
			n++
		}
		if n == 0 {
			s.fail()
			return 0, false
		}
	}
	if s.i < len(s.b) && (s.b[s.i] == 'e' || s.b[s.i] == 'E') {
		s.i++
		if s.i < len(s.b) && (s.b[s.i] == '+' || s.b[s.i] == '-') {
			s.i++
		}
		n := 0
		for s.i < len(s.b) && s.b[s.i] >= '0' && s.b[s.i] <= '9' {
			s.i++
			n++
		}
		if n == 0 {
			s.fail()
			return 0, false
		}
	}
	if neg {
		return 0, true
	}
	if v > 0xFFFFFFFE {
		v = 0xFFFFFFFE
	}
	return uint32(v), true
}

// skip skips one value of any type, bounded in depth.
func (s *scanner) skip() { s.skipDepth(0) }

func (s *scanner) skipDepth(depth int) {
	if depth > 64 {
		s.fail()
		return
	}
	switch s.peek() {
	case '"':
		s.str()
	case '{':
		s.i++
		if s.peek() == '}' {
			s.i++
			return
		}
		for s.err == nil {
			s.str()
			if !s.expect(':') {
				return
			}
			s.skipDepth(depth + 1)
			switch s.peek() {
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
		if s.peek() == ']' {
			s.i++
			return
		}
		for s.err == nil {
			s.skipDepth(depth + 1)
			switch s.peek() {
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
		s.lit("true")
	case 'f':
		s.lit("false")
	case 'n':
		s.lit("null")
	case '-', '0', '1', '2', '3', '4', '5', '6', '7', '8', '9':
		s.uint()
	default:
		s.fail()
	}
}

func (s *scanner) lit(w string) {
	if len(s.b)-s.i >= len(w) && string(s.b[s.i:s.i+len(w)]) == w {
		s.i += len(w)
		return
	}
	s.fail()
}

// object iterates the members of an object at the cursor, calling f with
// each raw key; f must consume the value. At a value of another type it
// skips the value and returns false (chunks with unexpected shapes are
// ignored, not fatal); it also returns false on a syntax error (s.err).
func (s *scanner) object(f func(key []byte)) bool {
	if s.peek() != '{' {
		s.skip() // null, or a value of another type: not an object
		return false
	}
	s.i++
	if s.peek() == '}' {
		s.i++
		return true
	}
	for s.err == nil {
		k, _ := s.str()
		if !s.expect(':') {
			return false
		}
		at := s.i
		f(k)
		if s.err == nil && s.i == at {
			s.fail() // f did not consume the value
		}
		switch s.peek() {
		case ',':
			s.i++
		case '}':
			s.i++
			return true
		default:
			s.fail()
		}
	}
	return false
}

// array iterates the elements of an array at the cursor; f must consume each.
func (s *scanner) array(f func(i int)) bool {
	if s.peek() != '[' {
		s.skip() // null, or a value of another type: not an array
		return false
	}
	s.i++
	if s.peek() == ']' {
		s.i++
		return true
	}
	for n := 0; s.err == nil; n++ {
		at := s.i
		f(n)
		if s.err == nil && s.i == at {
			s.fail()
		}
		switch s.peek() {
		case ',':
			s.i++
		case ']':
			s.i++
			return true
		default:
			s.fail()
		}
	}
	return false
}

// end checks that only whitespace follows.
func (s *scanner) end() {
	if s.peek() != 0 {
		s.fail()
	}
}

// done reports whether a top-level value scan (read: it parsed one) read
// valid JSON with nothing after it.
func (s *scanner) done(read bool) bool {
	if read {
		s.end()
	}
	return read && s.err == nil
}

// decodedLen returns the UTF-8 length of a raw JSON string's contents.
func decodedLen(raw []byte, esc bool) int {
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

// hexRune decodes \uXXXX (and a following surrogate pair) at raw[i]=='u'.
// It returns the rune and how many bytes after i it consumed.
func hexRune(raw []byte, i int) (rune, int) {
	r1 := hex4(raw, i+1)
	if r1 < 0 {
		return 0xFFFD, 0
	}
	if r1 >= 0xD800 && r1 < 0xDC00 && i+10 < len(raw)+0 && raw[i+5] == '\\' && raw[i+6] == 'u' {
		r2 := hex4(raw, i+7)
		if r2 >= 0xDC00 && r2 < 0xE000 {
			return ((r1 - 0xD800) << 10) + (r2 - 0xDC00) + 0x10000, 10
		}
	}
	if r1 >= 0xD800 && r1 < 0xE000 {
		return 0xFFFD, 4
	}
	return r1, 4
}

func hex4(b []byte, i int) rune {
	if i+4 > len(b) {
		return -1
	}
	var r rune
	for _, c := range b[i : i+4] {
		switch {
		case c >= '0' && c <= '9':
			r = r<<4 | rune(c-'0')
		case c >= 'a' && c <= 'f':
			r = r<<4 | rune(c-'a'+10)
		case c >= 'A' && c <= 'F':
			r = r<<4 | rune(c-'A'+10)
		default:
			return -1
		}
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
	default:
		return 4
	}
}

// appendUnescaped appends the decoded contents of a raw JSON string.
func appendUnescaped(dst, raw []byte, esc bool) []byte {
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
		default: // \" \\ \/
			dst = append(dst, raw[i])
		}
	}
	return dst
}

func appendRune(dst []byte, r rune) []byte {
	switch {
	case r < 0x80:
		return append(dst, byte(r))
	case r < 0x800:
		return append(dst, 0xC0|byte(r>>6), 0x80|byte(r)&0x3F)
	case r < 0x10000:
		return append(dst, 0xE0|byte(r>>12), 0x80|byte(r>>6)&0x3F, 0x80|byte(r)&0x3F)
	default:
		return append(dst, 0xF0|byte(r>>18), 0x80|byte(r>>12)&0x3F, 0x80|byte(r>>6)&0x3F, 0x80|byte(r)&0x3F)
	}
}
