package accuracy

import (
	"strconv"
	"strings"
)

// Key finds which item of a set a prompt asks and what a right or a wrong
// answer to it is: the mock server's answer key. Safe for concurrent use.
type Key struct {
	items  []Item
	probes []string
}

// NewKey returns the key of s's items.
func NewKey(s *Set) *Key {
	k := &Key{items: s.Items, probes: make([]string, len(s.Items))}
	for i := range s.Items {
		k.probes[i] = probe(&s.Items[i])
	}
	return k
}

// probe is the text of an item that its prompt holds verbatim, last.
func probe(it *Item) string {
	switch {
	case len(it.Messages) > 0:
		return it.Messages[len(it.Messages)-1].Content
	case it.Prompt != "":
		return it.Prompt
	case len(it.Choices) > 0:
		p := strings.TrimSpace(it.Question)
		for c, ch := range it.Choices {
			p += "\n" + letterOf(c) + ". " + strings.TrimSpace(ch)
		}
		return p
	}
	return it.Question
}

// Lookup returns the index of the item prompt asks: of the items whose
// text the prompt holds, the one held last (n-shot examples come before
// the question), the longer on a tie; false for a prompt of no item.
func (k *Key) Lookup(prompt string) (int, bool) {
	best, at := -1, -1
	for i, p := range k.probes {
		if p == "" {
			continue
		}
		j := strings.LastIndex(prompt, p)
		if j < 0 {
			continue
		}
		if end := j + len(p); end > at || end == at && len(p) > len(k.probes[best]) {
			best, at = i, end
		}
	}
	return best, best >= 0
}

// Item returns item i.
func (k *Key) Item(i int) *Item { return &k.items[i] }

// Answer returns a response to item i that its grader grades right
// (correct) or wrong: "The answer is (C)." for multiple choice, "The
// answer is 42." for a number, "The answer is \boxed{42}." for math, the
// expected text itself for exact match.
func (k *Key) Answer(i int, correct bool) string {
	it := &k.items[i]
	a := it.Answer
	switch it.Grader {
	case GraderMultipleChoice:
		if !correct {
			n := max(len(it.Choices), 4)
			j, _ := letterIndex(a, n)
			a = letterOf((j + 1) % n)
		}
		return "The answer is (" + a + ")."
	case GraderNumber, GraderMath:
		if !correct {
			a = wrongNumber(a)
		}
		if it.Grader == GraderMath {
			return `The answer is \boxed{` + a + `}.`
		}
		return "The answer is " + a + "."
	default:
		if !correct {
			return "I do not know."
		}
		return a
	}
}

// wrongNumber returns a number other than a (a+1 for an integer).
func wrongNumber(a string) string {
	if n, err := strconv.ParseInt(a, 10, 64); err == nil {
		return strconv.FormatInt(n+1, 10)
	}
	if a == "0" {
		return "1"
	}
	return "0"
}
