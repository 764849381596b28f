package mockserver

import "github.com/reprise-bench/reprise/internal/tokenizer"

// Tokenizer turns prompt text into token ids. The mock server needs the ids
// (not only the count) because its prefix cache matches token blocks.
// internal/tokenizer's tokenizers satisfy it. Implementations must be safe
// for concurrent use.
type Tokenizer interface {
	// AppendEncode appends the ids of text, without special tokens, to dst.
	AppendEncode(dst []int, text string) []int
}

// TokenizerFunc adapts a function to [Tokenizer].
type TokenizerFunc func(dst []int, text string) []int

// AppendEncode calls f.
func (f TokenizerFunc) AppendEncode(dst []int, text string) []int { return f(dst, text) }

var (
	_ Tokenizer = TokenizerFunc(nil)
	_ Tokenizer = tokenizer.Tokenizer(nil)
)

// DefaultTokenizer returns the tokenizer used when Config.Tokenizer is nil:
// internal/tokenizer's Builtin (o200k_base), the one the engine synthesizes
// prompts with, so usage.prompt_tokens equals the client's count of the
// text. The first call parses the embedded vocabulary (about 0.3 s).
func DefaultTokenizer() (Tokenizer, error) { return tokenizer.Builtin() }
