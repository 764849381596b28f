package chattmpl

import (
	"errors"
	"fmt"
	"iter"
	"slices"
	"sort"
	"strings"
	"time"

	"github.com/ardanlabs/jinja"
)

// ErrNoTemplate is returned when a tokenizer carries no chat template.
var ErrNoTemplate = errors.New("no chat template")

// Message is one chat message given to a template.
type Message struct {
	Role, Content string
}

// Template is a compiled chat template with the tokens it names. It is
// safe for concurrent use; the zero value is not valid (use [Parse]).
type Template struct {
	// Source says where the template came from (a file, a GGUF key),
	// for messages.
	Source string
	t      *jinja.Template
	bos    string
	eos    string
	// byFirst lists the added tokens by their first byte, longest
	// first.
	byFirst map[byte][]string
	now     func() time.Time
}

// Parse compiles the template text read from source. bos and eos are
// the tokenizer's bos_token and eos_token ("" when it has none); added
// lists the tokenizer's added tokens, which count as one token each.
// The slice is copied.
func Parse(source, text, bos, eos string, added []string) (*Template, error) {
	t, err := jinja.Compile(text)
	if err != nil {
		return nil, fmt.Errorf("chat template %s: %w", source, err)
	}
	byFirst := make(map[byte][]string)
	for _, s := range added {
		if s != "" && !slices.Contains(byFirst[s[0]], s) {
			byFirst[s[0]] = append(byFirst[s[0]], s)
		}
	}
	for _, l := range byFirst {
		sort.SliceStable(l, func(i, j int) bool { return len(l[i]) > len(l[j]) })
	}
	return &Template{Source: source, t: t, bos: bos, eos: eos, byFirst: byFirst, now: time.Now}, nil
}

// WithClock returns a copy of t whose strftime_now reads now instead of
// the wall clock (templates such as Llama 3.2's print today's date).
func (t *Template) WithClock(now func() time.Time) *Template {
	c := *t
	c.now = now
	return &c
}

// Render returns the text of msgs through the template with
// add_generation_prompt true, as a server renders a chat request before
// generating. A template that refuses the conversation
// (raise_exception) or uses a construct the renderer lacks returns an
// error naming the template's source.
func (t *Template) Render(msgs []Message) (out string, err error) {
	defer func() {
		// A template is input: a renderer that panics on one is an error
		// here, not a crash of the run.
		if r := recover(); r != nil {
			out, err = "", fmt.Errorf("chat template %s: the renderer failed: %v", t.Source, r)
		}
	}()
	list := make([]any, len(msgs))
	for i, m := range msgs {
		list[i] = map[string]any{"role": m.Role, "content": m.Content}
	}
	data := map[string]jinja.Value{
		"messages":              jinja.FromGoValue(list),
		"add_generation_prompt": jinja.FromGoValue(true),
		"bos_token":             jinja.FromGoValue(t.bos),
		"eos_token":             jinja.FromGoValue(t.eos),
		"strftime_now":          jinja.NewCallable("strftime_now", t.strftimeNow),
	}
	out, err = t.t.RenderValues(data)
	if err != nil {
		return "", fmt.Errorf("chat template %s: %w", t.Source, err)
	}
	return out, nil
}

// strftimeNow is transformers' strftime_now(format) on t's clock.
func (t *Template) strftimeNow(args []jinja.Value, _ map[string]jinja.Value) (jinja.Value, error) {
	if len(args) != 1 || !args[0].IsString() {
		return jinja.Value{}, errors.New("strftime_now: want one format string")
	}
	return jinja.FromGoValue(strftime(t.now(), args[0].AsString())), nil
}

// Count returns the tokens of rendered text as a server counts them:
// each added token of the template's tokenizer is one token, and the
// text between them is counted by count (a tokenizer's Count, which
// treats added-token text as plain text). An added token's lstrip,
// rstrip and single_word flags are not applied: the whitespace next to
// one is counted as text.
func (t *Template) Count(count func(string) int, text string) int {
	n := 0
	for piece, added := range t.Pieces(text) {
		if added {
			n++
		} else {
			n += count(piece)
		}
	}
	return n
}

// Pieces splits rendered text as a Hugging Face tokenizer does before
// encoding: the added tokens (added true, one token each) and the plain
// text between them, in order, none empty. Where two added tokens start
// at one offset the longer is taken.
func (t *Template) Pieces(text string) iter.Seq2[string, bool] {
	return func(yield func(string, bool) bool) {
		start := 0
		for i := 0; i < len(text); i++ {
			tok := t.addedAt(text[i:])
			if tok == "" {
				continue
			}
			if i > start && !yield(text[start:i], false) {
				return
			}
			if !yield(tok, true) {
				return
			}
			i += len(tok) - 1
			start = i + 1
		}
		if start < len(text) {
			yield(text[start:], false)
		}
	}
}

// addedAt returns the longest added token s starts with, or "".
func (t *Template) addedAt(s string) string {
	for _, a := range t.byFirst[s[0]] {
		if strings.HasPrefix(s, a) {
			return a
		}
	}
	return ""
}

// Overhead returns the tokens the template adds to msgs: the count of
// the rendered conversation less the count of the messages' contents.
func (t *Template) Overhead(count func(string) int, msgs []Message) (int, error) {
	text, err := t.Render(msgs)
	if err != nil {
		return 0, err
	}
	n := t.Count(count, text)
	for _, m := range msgs {
		n -= count(m.Content)
	}
	return n, nil
}
