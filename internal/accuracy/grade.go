package accuracy

import (
	"math/big"
	"regexp"
	"strconv"
	"strings"
	"unicode"
)

// Grader names how a response is graded against the expected answer.
type Grader string

// The graders.
const (
	// GraderMultipleChoice extracts a letter (A–J) and compares it with
	// the expected letter.
	GraderMultipleChoice Grader = "multiple_choice"
	// GraderNumber extracts the final number and compares it with the
	// expected one as a rational (so 1,000 = 1000.0 = 2000/2).
	GraderNumber Grader = "number"
	// GraderMath extracts the final answer (\boxed{…}, "the answer is",
	// else the last number) and compares it after [NormalizeMath].
	GraderMath Grader = "math"
	// GraderExact compares the whole response, after [NormalizeText],
	// with the expected text.
	GraderExact Grader = "exact_match"
)

// Graders lists the graders, for messages.
var Graders = []Grader{GraderMultipleChoice, GraderNumber, GraderMath, GraderExact}

// ParseGrader returns the grader named s (AIPerf's spellings too:
// "multiple_choice", "math", "exact_match", "exact", "number").
func ParseGrader(s string) (Grader, bool) {
	switch strings.ToLower(strings.TrimSpace(s)) {
	case "multiple_choice", "multiple-choice", "mc", "letter":
		return GraderMultipleChoice, true
	case "number", "numeric", "final_number", "gsm8k":
		return GraderNumber, true
	case "math", "aime":
		return GraderMath, true
	case "exact_match", "exact", "exact-match":
		return GraderExact, true
	}
	return "", false
}

// Result is the grade of one response.
type Result struct {
	// Answer is what was extracted from the response ("" when nothing
	// could be: the response is then wrong).
	Answer string
	// Correct reports whether Answer matches the expected answer.
	Correct bool
}

// Grade grades response against expected with g. It is a pure function.
func Grade(g Grader, response, expected string) Result {
	response = FinalPart(response)
	switch g {
	case GraderMultipleChoice:
		a, ok := ExtractLetter(response)
		if !ok {
			return Result{}
		}
		return Result{Answer: a, Correct: strings.EqualFold(a, strings.TrimSpace(expected))}
	case GraderNumber:
		a, ok := ExtractNumber(response)
		if !ok {
			return Result{}
		}
		return Result{Answer: a, Correct: sameNumber(a, expected)}
	case GraderMath:
		a, ok := ExtractMath(response)
		if !ok {
			return Result{}
		}
		return Result{Answer: a, Correct: sameMath(a, expected)}
	default:
		a := NormalizeText(response)
		if a == "" {
			return Result{}
		}
		return Result{Answer: a, Correct: a == NormalizeText(expected)}
	}
}

// FinalPart drops a response's reasoning, which a chain-of-thought model
// writes before its answer: everything up to the last </think>. The answer
// is graded on what follows.
func FinalPart(s string) string {
	if i := strings.LastIndex(s, "</think>"); i >= 0 {
		return s[i+len("</think>"):]
	}
	return s
}

var (
	// "The answer is (C)", "answer: C", "Answer is **C**", "correct answer is C."
	reAnswerLetter = regexp.MustCompile(`(?i)answer\s*(?:is|:)?\s*(?:option\s*)?[:\s]*[\*\(\[]*\s*([A-J])\s*[\*\)\]]*(?:[\s.,:;!]|$)`)
	// A response that is a letter alone: "C", "(C)", "C.", "C) Paris", "C: Paris".
	reLoneLetter = regexp.MustCompile(`^[\*\(\[]*([A-J])(?:[\*\)\]]*(?:[.:)]\s.*|[.:)])?|\s*$|\s+[-–—]\s.*)$`)
	// The last "(C)" in the text.
	reParenLetter = regexp.MustCompile(`\(([A-J])\)`)
)

// ExtractLetter returns the choice letter of a multiple-choice response:
// the last "answer is X" (with the usual phrasings and brackets), else a
// response that is a letter alone ("C", "(C)", "C. Paris"), else the last
// "(X)". Letters are A–J, upper case.
func ExtractLetter(s string) (string, bool) {
	s = strings.TrimSpace(s)
	if m := reAnswerLetter.FindAllStringSubmatch(s, -1); len(m) > 0 {
		return strings.ToUpper(m[len(m)-1][1]), true
	}
	first, _, _ := strings.Cut(s, "\n")
	if m := reLoneLetter.FindStringSubmatch(strings.TrimSpace(first)); m != nil {
		return m[1], true
	}
	if m := reParenLetter.FindAllStringSubmatch(s, -1); len(m) > 0 {
		return m[len(m)-1][1], true
	}
	return "", false
}

// reNumber matches a number: sign, digits with optional thousands commas,
// decimals, or a fraction a/b.
var reNumber = regexp.MustCompile(`[-+−]?(?:\d{1,3}(?:,\d{3})+|\d+)(?:\.\d+)?(?:\s*/\s*\d+)?|[-+−]?\.\d+`)

// ExtractNumber returns the final number of a response in canonical form
// ([CanonicalNumber]): the number after GSM8K's "####" when there is one,
// else after the last "answer is", else the last number in the text.
func ExtractNumber(s string) (string, bool) {
	if i := strings.LastIndex(s, "####"); i >= 0 {
		if n, ok := firstNumber(s[i+4:]); ok {
			return n, true
		}
	}
	if i := lastIndexFold(s, "answer is"); i >= 0 {
		if n, ok := firstNumber(s[i:]); ok {
			return n, true
		}
	}
	ms := reNumber.FindAllString(s, -1)
	for k := len(ms) - 1; k >= 0; k-- {
		if c, ok := CanonicalNumber(ms[k]); ok {
			return c, true
		}
	}
	return "", false
}

func firstNumber(s string) (string, bool) {
	for _, m := range reNumber.FindAllString(s, -1) {
		if c, ok := CanonicalNumber(m); ok {
			return c, true
		}
	}
	return "", false
}

// lastIndexFold is the byte index of the last ASCII-case-insensitive
// occurrence of sub (lower case) in s; -1 if none. Only ASCII is folded,
// so the index is s's own (strings.ToLower may change byte lengths).
func lastIndexFold(s, sub string) int {
	b := []byte(s)
	for i, c := range b {
		if 'A' <= c && c <= 'Z' {
			b[i] = c + 'a' - 'A'
		}
	}
	return strings.LastIndex(string(b), sub)
}

// CanonicalNumber parses a number ("-1,234.50", "3/4", "+7", "−2") and
// returns it in lowest terms: an integer "1234", a fraction "3/4", or a
// decimal's exact fraction. False when s is not a number.
func CanonicalNumber(s string) (string, bool) {
	r, ok := parseRat(s)
	if !ok {
		return "", false
	}
	return ratString(r), true
}

func parseRat(s string) (*big.Rat, bool) {
	s = strings.TrimSpace(s)
	s = strings.ReplaceAll(s, "−", "-")
	s = strings.ReplaceAll(s, ",", "")
	s = strings.ReplaceAll(s, " ", "")
	s = strings.TrimPrefix(s, "+")
	if s == "" || len(s) > 200 {
		return nil, false
	}
	for _, c := range s {
		if !(c >= '0' && c <= '9' || c == '.' || c == '/' || c == '-') {
			return nil, false
		}
	}
	if strings.Count(s, "/") > 1 || strings.Count(s, "-") > 1 || strings.Index(s, "-") > 0 {
		return nil, false
	}
	r, ok := new(big.Rat).SetString(s)
	return r, ok
}

func ratString(r *big.Rat) string {
	if r.IsInt() {
		return r.Num().String()
	}
	return r.String()
}

func sameNumber(a, expected string) bool {
	x, ok1 := parseRat(a)
	e, ok2 := parseRat(expected)
	if !ok2 {
		if c, ok := ExtractNumber(expected); ok {
			e, ok2 = parseRat(c)
		}
	}
	return ok1 && ok2 && x.Cmp(e) == 0
}

// ExtractMath returns the final answer of a competition-math response:
// the content of the last \boxed{…}, else what follows the last "answer
// is", else the last number; normalized by [NormalizeMath].
func ExtractMath(s string) (string, bool) {
	if b, ok := lastBoxed(s); ok {
		if n := NormalizeMath(b); n != "" {
			return n, true
		}
	}
	if i := lastIndexFold(s, "answer is"); i >= 0 {
		rest := strings.TrimSpace(s[i+len("answer is"):])
		rest = strings.TrimLeft(rest, ":")
		line, _, _ := strings.Cut(rest, "\n")
		if n := NormalizeMath(strings.TrimRight(strings.TrimSpace(line), ".")); n != "" {
			return n, true
		}
	}
	if n, ok := ExtractNumber(s); ok {
		return n, true
	}
	return "", false
}

// lastBoxed returns the braced content of the last \boxed{…} (or \fbox),
// braces balanced.
func lastBoxed(s string) (string, bool) {
	i := max(strings.LastIndex(s, `\boxed`), strings.LastIndex(s, `\fbox`))
	if i < 0 {
		return "", false
	}
	j := strings.IndexByte(s[i:], '{')
	if j < 0 {
		return "", false
	}
	start := i + j + 1
	depth := 1
	for k := start; k < len(s); k++ {
		switch s[k] {
		case '{':
			depth++
		case '}':
			depth--
			if depth == 0 {
				return s[start:k], true
			}
		}
	}
	return "", false
}

var (
	reFrac = regexp.MustCompile(`\\[dt]?frac\s*\{([^{}]*)\}\s*\{([^{}]*)\}`)
	reText = regexp.MustCompile(`\\(?:text|mathrm|textbf|mathbf)\s*\{([^{}]*)\}`)
)

// NormalizeMath normalizes a short math answer so that equal answers
// compare equal: $ and spaces dropped, \left/\right, \! and "^\circ"
// removed, \frac{a}{b} written a/b, a trailing period dropped, and a
// number written canonically ("042" → "42", "1/2" = "2/4" → "1/2",
// "0.5" → "1/2").
func NormalizeMath(s string) string {
	s = strings.TrimSpace(s)
	s = reText.ReplaceAllString(s, "$1")
	for _, cut := range []string{"$", `\!`, `\,`, `\;`, `\left`, `\right`, `^\circ`, `^{\circ}`, "°", `\%`, "%", " "} {
		s = strings.ReplaceAll(s, cut, "")
	}
	for range 4 {
		t := reFrac.ReplaceAllString(s, "($1)/($2)")
		if t == s {
			break
		}
		s = t
	}
	s = strings.TrimRight(s, ".")
	s = strings.TrimPrefix(s, "x=")
	if c, ok := CanonicalNumber(unparen(s)); ok {
		return c
	}
	return s
}

// unparen turns "(a)/(b)" back into "a/b" when a and b are plain.
func unparen(s string) string {
	if a, b, ok := strings.Cut(s, ")/("); ok && strings.HasPrefix(a, "(") && strings.HasSuffix(b, ")") {
		return a[1:] + "/" + b[:len(b)-1]
	}
	return s
}

func sameMath(a, expected string) bool {
	e := NormalizeMath(expected)
	if a == e {
		return true
	}
	x, ok1 := parseRat(a)
	y, ok2 := parseRat(e)
	return ok1 && ok2 && x.Cmp(y) == 0
}

// NormalizeText normalizes a short free-text answer for exact match: case
// folded, punctuation at the ends and surrounding quotes removed, runs of
// white space made one space, leading articles ("a", "an", "the")
// dropped.
func NormalizeText(s string) string {
	s = strings.ToLower(strings.TrimSpace(s))
	s = strings.Join(strings.Fields(s), " ")
	// Until nothing changes, so that a normalized text normalizes to
	// itself ("The (B" → "(b" → "b"; FuzzGrade).
	for {
		t := strings.TrimFunc(s, func(r rune) bool { return unicode.IsPunct(r) || unicode.IsSpace(r) })
		for _, art := range []string{"the ", "a ", "an "} {
			if strings.HasPrefix(t, art) {
				t = t[len(art):]
				break
			}
		}
		if t == s {
			return s
		}
		s = t
	}
}

// letterOf returns the letter of choice i (0 = A).
func letterOf(i int) string { return string(rune('A' + i)) }

// letterIndex parses an MMLU answer: a letter or a 0-based index.
func letterIndex(s string, n int) (int, bool) {
	s = strings.TrimSpace(s)
	if len(s) == 1 && s[0] >= 'A' && int(s[0]-'A') < n {
		return int(s[0] - 'A'), true
	}
	if len(s) == 1 && s[0] >= 'a' && int(s[0]-'a') < n {
		return int(s[0] - 'a'), true
	}
	if i, err := strconv.Atoi(s); err == nil && i >= 0 && i < n {
		return i, true
	}
	return 0, false
}
