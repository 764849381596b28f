package prompt

import (
	"errors"
	"fmt"
)

// Mismatch says what to do with a row whose hash ids do not fit its input
// length (with k ids and blocks of B tokens, (k−1)·B < L ≤ k·B must hold).
type Mismatch string

// The hash-mismatch policies.
const (
	// MismatchError fails the row with a *HashMismatchError (the default).
	MismatchError Mismatch = "error"
	// MismatchFit uses the ids that fit: extra ids are dropped, and tokens
	// beyond the last id's block are fresh (shared with nothing).
	MismatchFit Mismatch = "fit"
)

// Format selects what a built [Prompt] carries besides its text.
type Format string

// The prompt formats.
const (
	// FormatText builds text only (the default).
	FormatText Format = "text"
	// FormatTokenIDs also fills Prompt.TokenIDs, for servers that accept a
	// completions prompt as an array of token ids (vLLM, SGLang, llama.cpp).
	FormatTokenIDs Format = "token-ids"
)

// Defaults of [NewConfig].
const (
	// DefaultBlockCacheBytes bounds the block cache: 256 MiB holds about
	// 45,000 512-token blocks of text and ids.
	DefaultBlockCacheBytes int64 = 256 << 20
	// DefaultMismatch is the default hash-mismatch policy.
	DefaultMismatch = MismatchError
	// DefaultFormat is the default prompt format.
	DefaultFormat = FormatText
)

// Config configures a [Builder]. Build it with [NewConfig]; the zero value
// is not valid (Mismatch and Format are empty).
type Config struct {
	// Seed (--prompt-seed) selects the words of every block: two runs with
	// the same seed build the same prompts (and can share a server's
	// cache); different seeds share nothing.
	Seed uint64
	// Mismatch (--hash-mismatch) handles rows whose ids do not fit their
	// length.
	Mismatch Mismatch
	// ISLCorrection (--isl-correction) is subtracted from every
	// synthesized length: the tokens the chat template adds, so that the
	// server sees the trace's input length. The tokens come off the end of
	// the prompt, so shared prefixes are unchanged. A length that would
	// drop below 1 token is clamped to 1 (and counted in Stats.Clamped).
	ISLCorrection int
	// FixedISLCorrection makes ISLCorrection hold for every row. Without
	// it, a row that says how many of its tokens the server's template
	// added (trace.Row.TemplateTokens, a recorded trace) has those
	// subtracted instead.
	FixedISLCorrection bool
	// Format selects text only or text and token ids.
	Format Format
	// BlockCacheBytes bounds the memory of cached blocks (text, ids and
	// bookkeeping); least recently used blocks are evicted beyond it.
	BlockCacheBytes int64
	// Corpus, when not nil, is the text prompts are made of (AIPerf's
	// --prompt-corpus, [CorpusWords]): its words, in order. The
	// vocabulary is then the corpus's words that are one token of the
	// tokenizer (at least MinWords distinct ones), and after its first
	// word (chosen as without a corpus, from that vocabulary) a block
	// reads the corpus's words in order from a point its id draws;
	// corpus words that are not one token are left out. Lengths and
	// shared prefixes are exact as without it.
	Corpus []string
	// ExpectedCacheTokens, when positive, is the capacity in tokens of an
	// LRU prefix-cache model whose hits are reported in
	// Prompt.ExpectedCachedTokensLRU next to the infinite-cache ones.
	ExpectedCacheTokens int64
}

// NewConfig returns the default configuration: seed 0, MismatchError, no
// ISL correction, FormatText, DefaultBlockCacheBytes, no LRU model.
func NewConfig() Config {
	return Config{
		Mismatch:        DefaultMismatch,
		Format:          DefaultFormat,
		BlockCacheBytes: DefaultBlockCacheBytes,
	}
}

// Validate reports every problem of c at once. It does not change c.
func (c Config) Validate() error {
	var errs []error
	switch c.Mismatch {
	case MismatchError, MismatchFit:
	default:
		errs = append(errs, fmt.Errorf("Mismatch %q: want %q or %q", c.Mismatch, MismatchError, MismatchFit))
	}
	switch c.Format {
	case FormatText, FormatTokenIDs:
	default:
		errs = append(errs, fmt.Errorf("Format %q: want %q or %q", c.Format, FormatText, FormatTokenIDs))
	}
	if c.ISLCorrection < 0 {
		errs = append(errs, fmt.Errorf("ISLCorrection %d: want ≥ 0 tokens", c.ISLCorrection))
	}
	if c.BlockCacheBytes < 1<<20 {
		errs = append(errs, fmt.Errorf("block cache %d bytes: want ≥ 1 MiB", c.BlockCacheBytes))
	}
	if c.ExpectedCacheTokens < 0 {
		errs = append(errs, fmt.Errorf("expected-cache capacity %d tokens: want ≥ 0 (0 = no LRU model)", c.ExpectedCacheTokens))
	}
	return errors.Join(errs...)
}

// The errors exposed.
var (
	// ErrNoWords means the tokenizer has too few single-token words for
	// stable prompts (at least MinWords are needed).
	ErrNoWords = errors.New("tokenizer has too few single-token words")
	// ErrNoLength means a row to synthesize has no positive input length.
	ErrNoLength = errors.New("row has no input length")
)

// HashMismatchError reports a row whose hash ids do not fit its input length
// under MismatchError.
type HashMismatchError struct {
	Index, Line int64 // the row's position in its source
	InputTokens int
	HashIDs     int // number of ids
	BlockSize   int
}

func (e *HashMismatchError) Error() string {
	lo, hi := (e.HashIDs-1)*e.BlockSize+1, e.HashIDs*e.BlockSize
	return fmt.Sprintf("row %d (line %d): input_length %d does not fit %d hash ids of %d-token blocks (it must be %d..%d)",
		e.Index, e.Line, e.InputTokens, e.HashIDs, e.BlockSize, lo, hi)
}
