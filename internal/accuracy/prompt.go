package accuracy

import (
	"fmt"
	"strings"
)

// Messages returns the chat messages of item i's prompt, in the
// benchmark's standard format (docs/format/accuracy.md): the system
// prompt (when set), then one user message holding the n-shot examples
// and the question.
func (s *Set) Messages(i int) []Message {
	it := &s.Items[i]
	var out []Message
	if s.opts.SystemPrompt != "" {
		out = append(out, Message{Role: "system", Content: s.opts.SystemPrompt})
	}
	switch {
	case len(it.Messages) > 0:
		return append(out, it.Messages...)
	case it.Prompt != "":
		p := it.Prompt
		if s.opts.CoT {
			p += "\n\n" + cotFileSuffix
		}
		return append(out, Message{Role: "user", Content: p})
	}
	return append(out, Message{Role: "user", Content: s.Prompt(i)})
}

// Prompt returns the user text of a named benchmark's item i.
func (s *Set) Prompt(i int) string {
	it := &s.Items[i]
	shots := s.shots[it.Task]
	if len(shots) > s.opts.Shots {
		shots = shots[:s.opts.Shots]
	}
	var b strings.Builder
	switch s.Benchmark {
	case MMLU:
		fmt.Fprintf(&b, "The following are multiple choice questions (with answers) about %s.", subjectName(it.Task))
		if s.opts.CoT {
			b.WriteString(" " + cotMMLU)
		}
		b.WriteString("\n\n")
		for k := range shots {
			writeMMLU(&b, &shots[k])
			b.WriteString(" " + shots[k].Answer + "\n\n")
		}
		writeMMLU(&b, it)
		if s.opts.CoT {
			b.WriteString(" Let's think step by step.")
		}
	case GSM8K:
		for k := range shots {
			fmt.Fprintf(&b, "Question: %s\nAnswer: %s\n\n", shots[k].Question, shots[k].Solution)
		}
		fmt.Fprintf(&b, "Question: %s\nAnswer:", it.Question)
		if s.opts.CoT {
			b.WriteString(" Let's think step by step.")
		}
	case AIME:
		b.WriteString(it.Question)
		b.WriteString("\n" + aimeSuffix)
	}
	return b.String()
}

// The instructions of the templates.
const (
	cotMMLU       = `Think step by step, then finish with "The answer is (X)" where X is the letter of the correct choice.`
	aimeSuffix    = `Please reason step by step, and put your final answer within \boxed{}.`
	cotFileSuffix = "Think step by step, then give the final answer on the last line."
)

func writeMMLU(b *strings.Builder, it *Item) {
	b.WriteString(strings.TrimSpace(it.Question))
	for c, ch := range it.Choices {
		fmt.Fprintf(b, "\n%s. %s", letterOf(c), strings.TrimSpace(ch))
	}
	b.WriteString("\nAnswer:")
}

// subjectName spells an MMLU subject as the original template does:
// "high_school_biology" → "high school biology".
func subjectName(s string) string { return strings.ReplaceAll(s, "_", " ") }
