package tokenizer

import (
	"fmt"
	"regexp"
	"strings"
	"unicode/utf8"
)

// splitter finds pre-token boundaries one at a time: next returns the end
// of the pre-token that starts at i (i < len(s)). It never allocates.
type splitter interface {
	next(s string, i int) int
}

// maxPretokenBytes bounds one pre-token: a splitter looks at no more than
// this much text from where the pre-token starts (cut back to a character
// boundary), so a longer run (a server's "éééé…" or a base64 blob, never
// real text) is several pre-tokens of at most this size. It bounds the
// work between two looks at the context in CountContext: a regular
// expression finds the end of a 200 MB run only after scanning all of it
// (about 4.5 s), and nothing can stop it on the way.
const maxPretokenBytes = 64 << 10

// nextPretoken returns sp.next(s, i) over at most maxPretokenBytes of s
// from i. Every split goes through it (the hot loops of bpe.go inline
// it by hand), so Count and Encode cut alike.
func nextPretoken(sp splitter, s string, i int) int {
	if len(s)-i > maxPretokenBytes {
		s = s[:pretokenWindow(s, i)]
	}
	return sp.next(s, i)
}

// pretokenWindow returns where nextPretoken cuts s for a pre-token at i.
func pretokenWindow(s string, i int) int {
	end := i + maxPretokenBytes
	for end > i+1 && !utf8.RuneStart(s[end]) {
		end--
	}
	return end
}

// wordSplitter calls emit with every pre-token of s, in order, until
// emit returns false; splitAll reports whether it got to the end.
type wordSplitter interface {
	splitAll(s string, emit func(string) bool) bool
}

// The pre-tokenizer regular expressions of the tokenizers in common use.
const (
	// patO200k is o200k_base's (GPT-4o, GPT-OSS).
	patO200k = `[^\r\n\p{L}\p{N}]?[\p{Lu}\p{Lt}\p{Lm}\p{Lo}\p{M}]*[\p{Ll}\p{Lm}\p{Lo}\p{M}]+(?i:'s|'t|'re|'ve|'m|'ll|'d)?|[^\r\n\p{L}\p{N}]?[\p{Lu}\p{Lt}\p{Lm}\p{Lo}\p{M}]+[\p{Ll}\p{Lm}\p{Lo}\p{M}]*(?i:'s|'t|'re|'ve|'m|'ll|'d)?|\p{N}{1,3}| ?[^\s\p{L}\p{N}]+[\r\n/]*|\s*[\r\n]+|\s+(?!\S)|\s+`
	// patCL100k is cl100k_base's and Llama 3's.
	patCL100k = `(?i:'s|'t|'re|'ve|'m|'ll|'d)|[^\r\n\p{L}\p{N}]?\p{L}+|\p{N}{1,3}| ?[^\s\p{L}\p{N}]+[\r\n]*|\s*[\r\n]+|\s+(?!\S)|\s+`
	// patQwen2 is Qwen 2/2.5/3's: cl100k with single digits.
	patQwen2 = `(?i:'s|'t|'re|'ve|'m|'ll|'d)|[^\r\n\p{L}\p{N}]?\p{L}+|\p{N}| ?[^\s\p{L}\p{N}]+[\r\n]*|\s*[\r\n]+|\s+(?!\S)|\s+`
	// patGPT2 is GPT-2's, r50k/p50k's and the ByteLevel pre-tokenizer's
	// default (use_regex: true).
	patGPT2 = `'s|'t|'re|'ve|'m|'ll|'d| ?\p{L}+| ?\p{N}+| ?[^\s\p{L}\p{N}]+|\s+(?!\S)|\s+`
)

// fastSplitter returns the hand-written ASCII matcher equivalent to
// pattern, or nil when there is none.
func fastSplitter(pattern string) splitter {
	switch pattern {
	case patO200k:
		return asciiO200k{}
	case patCL100k:
		return asciiCL100k{maxDigits: 3}
	case patQwen2:
		return asciiCL100k{maxDigits: 1}
	case patGPT2:
		return asciiGPT2{}
	}
	return nil
}

// ASCII character classes as the Unicode classes of the patterns see them.
func isUpper(c byte) bool  { return 'A' <= c && c <= 'Z' }
func isLower(c byte) bool  { return 'a' <= c && c <= 'z' }
func isLetter(c byte) bool { return isUpper(c) || isLower(c) }
func isDigit(c byte) bool  { return '0' <= c && c <= '9' }

// isSpace is \s in the patterns: Unicode White_Space, in ASCII \t\n\v\f\r and space.
func isSpace(c byte) bool { return c == ' ' || ('\t' <= c && c <= '\r') }
func isNL(c byte) bool    { return c == '\r' || c == '\n' }

// isPunct is [^\s\p{L}\p{N}].
func isPunct(c byte) bool { return !isSpace(c) && !isLetter(c) && !isDigit(c) }

// isPrefix is [^\r\n\p{L}\p{N}].
func isPrefix(c byte) bool { return !isNL(c) && !isLetter(c) && !isDigit(c) }

// contraction matches (?i:'s|'t|'re|'ve|'m|'ll|'d) (or case-sensitively)
// at i and returns its end, or i.
func contraction(s string, i int, fold bool) int {
	if i+1 >= len(s) || s[i] != '\'' {
		return i
	}
	c := s[i+1]
	if fold {
		c |= 0x20
	}
	switch c {
	case 's', 't', 'm', 'd':
		return i + 2
	}
	if i+2 >= len(s) {
		return i
	}
	d := s[i+2]
	if fold {
		d |= 0x20
	}
	if (c == 'r' && d == 'e') || (c == 'v' && d == 'e') || (c == 'l' && d == 'l') {
		return i + 3
	}
	return i
}

func run(s string, i int, f func(byte) bool) int {
	for i < len(s) && f(s[i]) {
		i++
	}
	return i
}

// digits matches \p{N}{1,max} at i, where s[i] is a digit, and returns its
// end. It reads no further than the match: scanning the whole run of digits
// for each pre-token of max digits made a long run quadratic.
func digits(s string, i, max int) int {
	end := min(len(s), i+max)
	for i < end && isDigit(s[i]) {
		i++
	}
	return i
}

// whitespace matches \s*[\r\n]+|\s+(?!\S)|\s+ (or without the first
// alternative) at i, where s[i] is a space character.
func whitespace(s string, i int, newlineAlt bool) int {
	q := run(s, i, isSpace)
	if newlineAlt {
		// \s*[\r\n]+ backtracks to the last newline of the run.
		for j := q - 1; j >= i; j-- {
			if isNL(s[j]) {
				return j + 1
			}
		}
	}
	// \s+(?!\S): the whole run at the end of the text, else all but its
	// last character (which then prefixes the next word), if that leaves any.
	if q == len(s) || q-i < 2 {
		return q
	}
	return q - 1
}

// asciiO200k is patO200k on ASCII text.
type asciiO200k struct{}

func (asciiO200k) next(s string, i int) int {
	k := i
	if isPrefix(s[i]) {
		k = i + 1
	}
	// [Lu…]*[Ll…]+ then [Lu…]+[Ll…]*, each with an optional contraction.
	u := run(s, k, isUpper)
	l := run(s, u, isLower)
	if l > u || u > k {
		return contraction(s, l, true)
	}
	if isDigit(s[i]) {
		return digits(s, i, 3)
	}
	if p := punctRun(s, i); p > i {
		for p < len(s) && (isNL(s[p]) || s[p] == '/') {
			p++
		}
		return p
	}
	return whitespace(s, i, true)
}

// punctRun matches " ?[^\s\p{L}\p{N}]+" at i and returns its end, or i.
func punctRun(s string, i int) int {
	k := i
	if s[k] == ' ' && k+1 < len(s) && isPunct(s[k+1]) {
		k++
	}
	if !isPunct(s[k]) {
		return i
	}
	return run(s, k, isPunct)
}

// asciiCL100k is patCL100k (maxDigits 3) or patQwen2 (maxDigits 1) on ASCII text.
type asciiCL100k struct{ maxDigits int }

func (a asciiCL100k) next(s string, i int) int {
	if e := contraction(s, i, true); e > i {
		return e
	}
	k := i
	if isPrefix(s[i]) {
		k = i + 1
	}
	if e := run(s, k, isLetter); e > k {
		return e
	}
	if isDigit(s[i]) {
		return digits(s, i, a.maxDigits)
	}
	if p := punctRun(s, i); p > i {
		return run(s, p, isNL)
	}
	return whitespace(s, i, true)
}

// asciiGPT2 is patGPT2 on ASCII text.
type asciiGPT2 struct{}

func (asciiGPT2) next(s string, i int) int {
	if e := contraction(s, i, false); e > i {
		return e
	}
	k := i
	if s[i] == ' ' && i+1 < len(s) {
		k = i + 1
	}
	if e := run(s, k, isLetter); e > k {
		return e
	}
	if e := run(s, k, isDigit); e > k {
		return e
	}
	if p := punctRun(s, i); p > i {
		return p
	}
	return whitespace(s, i, false)
}

// whiteSpaceClass is Unicode White_Space, which \s means in the patterns
// (Rust regex and Python's re), unlike Go's ASCII-only \s.
const whiteSpaceClass = `\t\n\v\f\r\x{85}\p{Z}`

// lookaheadAlt is the one lookaround the patterns use. It is emulated:
// the pair is replaced by a capturing (\s+) whose match is shortened by one
// character when it is followed by more text and longer than one character.
const lookaheadAlt = `\s+(?!\S)|\s+`

// regexSplitter splits with a Go translation of a pre-tokenizer pattern
// (Split with behavior Isolated): matches and the gaps between them are
// pre-tokens.
type regexSplitter struct {
	re *regexp.Regexp
	// fixGroup is the submatch index of the emulated \s+(?!\S)|\s+, or -1.
	fixGroup int
}

func newRegexSplitter(pattern string) (*regexSplitter, error) {
	src := pattern
	fix := false
	if strings.Contains(src, lookaheadAlt) {
		src = strings.Replace(src, lookaheadAlt, `(\s+)`, 1)
		fix = true
	}
	if strings.Contains(src, "(?=") || strings.Contains(src, "(?!") || strings.Contains(src, "(?<") {
		return nil, fmt.Errorf("%w: pre-tokenizer pattern %q uses a lookaround other than %s", ErrUnsupported, pattern, lookaheadAlt)
	}
	// Mark the emulated group so its index survives other capturing groups.
	if fix {
		src = strings.Replace(src, `(\s+)`, `(?P<reprisews>\s+)`, 1)
	}
	re, err := regexp.Compile(translateClasses(src))
	if err != nil {
		return nil, fmt.Errorf("%w: pre-tokenizer pattern %q: %w", ErrUnsupported, pattern, err)
	}
	g := -1
	if fix {
		g = re.SubexpIndex("reprisews")
	}
	return &regexSplitter{re: re, fixGroup: g}, nil
}

// translateClasses rewrites \s and \S to Unicode White_Space.
func translateClasses(p string) string {
	var b strings.Builder
	inClass := false
	for i := 0; i < len(p); i++ {
		c := p[i]
		switch {
		case c == '\\' && i+1 < len(p):
			n := p[i+1]
			i++
			switch {
			case n == 's' && inClass:
				b.WriteString(whiteSpaceClass)
			case n == 's':
				b.WriteString("[" + whiteSpaceClass + "]")
			case n == 'S' && !inClass:
				b.WriteString("[^" + whiteSpaceClass + "]")
			default:
				b.WriteByte('\\')
				b.WriteByte(n)
			}
		case c == '[' && !inClass:
			inClass = true
			b.WriteByte(c)
			// A ']' right after '[' or '[^' is literal.
			if i+1 < len(p) && p[i+1] == '^' {
				b.WriteByte('^')
				i++
			}
			if i+1 < len(p) && p[i+1] == ']' {
				b.WriteString(`\]`)
				i++
			}
		case c == ']' && inClass:
			inClass = false
			b.WriteByte(c)
		default:
			b.WriteByte(c)
		}
	}
	return b.String()
}

func (r *regexSplitter) next(s string, i int) int {
	loc := r.re.FindStringSubmatchIndex(s[i:])
	if loc == nil {
		return len(s)
	}
	if loc[0] > 0 {
		return i + loc[0] // a gap before the match is a pre-token too
	}
	end := loc[1]
	if end == 0 {
		_, size := utf8.DecodeRuneInString(s[i:])
		return i + size
	}
	if r.fixGroup >= 0 && loc[2*r.fixGroup] >= 0 && i+end < len(s) {
		ws := s[i : i+end]
		if utf8.RuneCountInString(ws) >= 2 {
			_, size := utf8.DecodeLastRuneInString(ws)
			end -= size
		}
	}
	return i + end
}

func (r *regexSplitter) splitAll(s string, emit func(string) bool) bool {
	for i := 0; i < len(s); {
		e := nextPretoken(r, s, i)
		if !emit(s[i:e]) {
			return false
		}
		i = e
	}
	return true
}

// nextSplitter adapts a splitter to a wordSplitter.
type nextSplitter struct{ splitter }

func (n nextSplitter) splitAll(s string, emit func(string) bool) bool {
	for i := 0; i < len(s); {
		e := nextPretoken(n.splitter, s, i)
		if !emit(s[i:e]) {
			return false
		}
		i = e
	}
	return true
}

// seqSplitter applies several splitters in turn, each to the pre-tokens of
// the previous one (a Sequence of pre-tokenizers).
type seqSplitter []wordSplitter

func (q seqSplitter) splitAll(s string, emit func(string) bool) bool {
	if len(q) == 0 {
		return emit(s)
	}
	return q[0].splitAll(s, func(w string) bool { return q[1:].splitAll(w, emit) })
}

// wholeSplitter keeps the text as one pre-token.
type wholeSplitter struct{}

func (wholeSplitter) next(s string, _ int) int { return len(s) }
