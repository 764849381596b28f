package adapter

// NewScanner returns a scanner at the start of b.
func NewScanner(b []byte) Scanner { return Scanner{b: b} }

// Err reports whether a syntax error was seen.
func (s *Scanner) Err() bool { return s.err }

// Pos returns the cursor (an index into the input).
func (s *Scanner) Pos() int { return s.i }

// Scanner is a single-pass, allocation-free JSON reader with a cursor: the
// same design as reprise's native OpenAI parser (engine/adapter/openai),
// ported so a Go guest reads each byte once. Object and Array call back
// for every member; the callback must consume the value (Str, Uint, Skip,
// or a nested Object/Array). Strings come back raw (escapes kept) with a
// flag saying whether they contain escapes; use DecodedLen and
// AppendUnescaped on them.
//
//	s := adapter.NewScanner(ev.Data)
//	ok := s.Object(func(key []byte) {
//		switch string(key) {
//		case "text":
//			raw, esc := s.Str()
//			n := adapter.DecodedLen(raw, esc)
//		default:
//			s.Skip()
//		}
//	})
//	s.End()
//	if !ok || s.Err() { ... malformed ... }
type Scanner struct {
	b   []byte
	i   int
	err bool
}

func (s *Scanner) fail() {
	s.err = true
	s.i = len(s.b)
}

func (s *Scanner) ws() {
	for s.i < len(s.b) {
		switch s.b[s.i] {
		case ' ', '\t', '\n', '\r':
			s.i++
		default:
			return
		}
	}
}

// Peek returns the next non-space byte, or 0 at the end.
func (s *Scanner) Peek() byte {
	s.ws()
	if s.i < len(s.b) {
		return s.b[s.i]
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

// Str scans a string at the cursor and returns its raw contents (between the
// quotes, escapes kept) and whether it contains escapes.
func (s *Scanner) Str() (raw []byte, esc bool) {
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

// Uint scans a JSON number and returns it as a non-negative integer
// (fractions are truncated, negatives and overflow clamp to 0 / max).
func (s *Scanner) Uint() (uint32, bool) {
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

// Skip skips one value of any type, bounded in depth.
func (s *Scanner) Skip() { s.skipDepth(0) }

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
		s.lit("true")
	case 'f':
		s.lit("false")
	case 'n':
		s.lit("null")
	case '-', '0', '1', '2', '3', '4', '5', '6', '7', '8', '9':
		s.Uint()
	default:
		s.fail()
	}
}

func (s *Scanner) lit(w string) {
	if len(s.b)-s.i >= len(w) && string(s.b[s.i:s.i+len(w)]) == w {
		s.i += len(w)
		return
	}
	s.fail()
}

// Object iterates the members of an object at the cursor, calling f with
// each raw key; f must consume the value. At a value of another type it
// skips the value and returns false (chunks with unexpected shapes are
// ignored, not fatal); it also returns false on a syntax error (s.err).
func (s *Scanner) Object(f func(key []byte)) bool {
	if s.Peek() != '{' {
		s.Skip() // null, or a value of another type: not an object
		return false
	}
	s.i++
	if s.Peek() == '}' {
		s.i++
		return true
	}
	for !s.err {
		k, _ := s.Str()
		if !s.expect(':') {
			return false
		}
		at := s.i
		f(k)
		if !s.err && s.i == at {
			s.fail() // f did not consume the value
		}
		switch s.Peek() {
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

// Array iterates the elements of an array at the cursor; f must consume each.
func (s *Scanner) Array(f func(i int)) bool {
	if s.Peek() != '[' {
		s.Skip() // null, or a value of another type: not an array
		return false
	}
	s.i++
	if s.Peek() == ']' {
		s.i++
		return true
	}
	for n := 0; !s.err; n++ {
		at := s.i
		f(n)
		if !s.err && s.i == at {
			s.fail()
		}
		switch s.Peek() {
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

// End checks that only whitespace follows.
func (s *Scanner) End() {
	if s.Peek() != 0 {
		s.fail()
	}
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
