package prompt

import (
	"embed"
	"fmt"
	"strings"
)

// The corpora of [CorpusWords], embedded: corpus/sonnet.txt
// (Shakespeare's sonnets, public domain) and corpus/coding.txt (Go
// standard library sources, BSD 3-Clause: corpus/coding.LICENSE).
//
//go:embed corpus/sonnet.txt corpus/coding.txt
var corpora embed.FS

// The corpus names (AIPerf's --prompt-corpus).
const (
	CorpusSonnet = "sonnet"
	CorpusCoding = "coding"
)

// CorpusWords returns the words of the named corpus in their order: the
// runs of ASCII letters of its text (lines starting with # left out).
// The Builder keeps those that are one token of its tokenizer
// ([Config.Corpus]).
func CorpusWords(name string) ([]string, error) {
	switch name {
	case CorpusSonnet, CorpusCoding:
	default:
		return nil, fmt.Errorf("prompt corpus %q: want %s or %s", name, CorpusSonnet, CorpusCoding)
	}
	b, err := corpora.ReadFile("corpus/" + name + ".txt")
	if err != nil {
		return nil, fmt.Errorf("BUG: prompt corpus %s: %w", name, err)
	}
	var words []string
	for line := range strings.SplitSeq(string(b), "\n") {
		if strings.HasPrefix(line, "#") {
			continue
		}
		words = append(words, strings.FieldsFunc(line, func(r rune) bool {
			return !('a' <= r && r <= 'z' || 'A' <= r && r <= 'Z')
		})...)
	}
	return words, nil
}
