package servertok

import (
	"context"
	"strings"

	"github.com/reprise-bench/reprise/internal/tokenizer"
)

// Tokenizer is what was learned of a server's tokenizer: its vocabulary is
// the learned single-token words (with the server's ids), and it encodes
// text made of them exactly as the server does. Other text is encoded by
// the fallback tokenizer: its count is an estimate, and its ids are the
// fallback's, not the server's. Safe for concurrent use.
type Tokenizer struct {
	name       string
	ids        map[string]int // " word" → server id
	pieces     map[int]string
	size       int
	stripFirst bool
	fallback   tokenizer.Tokenizer
	identity   string
	chat       int
}

var (
	_ tokenizer.Tokenizer  = (*Tokenizer)(nil)
	_ tokenizer.Vocabulary = (*Tokenizer)(nil)
)

// Name is "server:MODEL@URL".
func (t *Tokenizer) Name() string { return t.name }

// Identity is a hash of the learned (id, word) pairs: equal for two runs
// that learned the same vocabulary.
func (t *Tokenizer) Identity() string { return t.identity }

// ChatTemplateTokens returns the tokens the server's chat template adds to
// a one-message chat request, learned with the words; ok is false when the
// server does not say (vLLM-shaped servers answer /tokenize's messages
// form, llama.cpp /apply-template; TGI says nothing).
func (t *Tokenizer) ChatTemplateTokens() (n int, ok bool) { return t.chat, t.chat >= 0 }

// Words returns how many single-token words were learned.
func (t *Tokenizer) Words() int { return len(t.ids) }

// VocabSize is one more than the largest learned id.
func (t *Tokenizer) VocabSize() int { return t.size }

// Piece returns the learned word of id.
func (t *Tokenizer) Piece(id int) (string, bool) {
	p, ok := t.pieces[id]
	return p, ok
}

// Encode returns the ids of text.
func (t *Tokenizer) Encode(text string) []int { return t.AppendEncode(nil, text) }

// AppendEncode appends the ids of text: learned words by the server's ids,
// the text between them by the fallback's.
func (t *Tokenizer) AppendEncode(dst []int, text string) []int {
	s, prefixed := text, false
	if t.stripFirst && s != "" && s[0] != ' ' {
		// The server prepends a space itself: "word" at the start reads
		// " word" (and " word" at the start would read as two tokens).
		s, prefixed = " "+s, true
	}
	from := 0 // start of the text not encoded yet
	if prefixed {
		from = 1 // the added space is not text
	}
	for i := 0; i < len(s); {
		w, n := leadingWord(s[i:])
		if n == 0 {
			i++
			continue
		}
		id, ok := t.ids[w]
		if !ok || (i == 0 && t.stripFirst && !prefixed) {
			i += n
			continue
		}
		if from < i {
			dst = t.fallback.AppendEncode(dst, s[from:i])
		}
		dst = append(dst, id)
		i += n
		from = i
	}
	if from < len(s) {
		dst = t.fallback.AppendEncode(dst, s[from:])
	}
	return dst
}

// leadingWord returns the " word" (a space and ASCII letters) at the start
// of s and its length, or 0 when s does not start with one.
func leadingWord(s string) (string, int) {
	if len(s) < 2 || s[0] != ' ' {
		return "", 0
	}
	n := 1
	for n < len(s) {
		if c := s[n] | 0x20; c < 'a' || c > 'z' {
			break
		}
		n++
	}
	if n == 1 {
		return "", 0
	}
	return s[:n], n
}

// Decode returns the text of ids: learned words as they read, other ids by
// the fallback.
func (t *Tokenizer) Decode(ids []int) string {
	var b strings.Builder
	for _, id := range ids {
		if p, ok := t.pieces[id]; ok {
			b.WriteString(p)
		} else {
			b.WriteString(t.fallback.Decode([]int{id}))
		}
	}
	return b.String()
}

// Count returns len(Encode(text)).
func (t *Tokenizer) Count(text string) int { return len(t.AppendEncode(nil, text)) }

// CountContext is Count; the fallback's counting of long text looks at
// ctx.
func (t *Tokenizer) CountContext(ctx context.Context, text string) (int, error) {
	if err := ctx.Err(); err != nil {
		return 0, err
	}
	return t.Count(text), nil
}
