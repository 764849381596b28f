package tokenizer

import (
	"context"
	"sync"
)

// Tokenizer turns text into token ids and back. Implementations in this
// package are safe for concurrent use.
type Tokenizer interface {
	// Name identifies the tokenizer: "o200k_base", a file path or a model id.
	Name() string
	// Encode returns the token ids of text. No special tokens are added.
	// The caller owns the returned slice.
	Encode(text string) []int
	// AppendEncode appends the token ids of text to dst and returns the
	// extended slice; it allocates only when dst must grow.
	AppendEncode(dst []int, text string) []int
	// Decode returns the text of ids. Unknown ids are skipped. The result
	// may be invalid UTF-8 when ids split a character.
	Decode(ids []int) string
	// Count returns len(Encode(text)) without building the slice.
	Count(text string) int
	// CountContext is Count that stops when ctx ends, returning ctx's
	// error and the tokens counted so far. It looks at ctx every 64 KiB
	// of text (and between the pieces of a long word), so even a
	// response of hundreds of megabytes stops within milliseconds.
	CountContext(ctx context.Context, text string) (int, error)
}

// BuiltinName is the name of the tokenizer [Builtin] returns.
const BuiltinName = "o200k_base"

var (
	tiktokenOnce [len(tiktokenEncodings)]sync.Once
	tiktokenTok  [len(tiktokenEncodings)]*bpe
	tiktokenErr  [len(tiktokenEncodings)]error
)

// Builtin returns the o200k_base BPE tokenizer embedded in the binary. The
// vocabulary is parsed on first use (about 0.3 s); later calls return the
// same shared, goroutine-safe value.
func Builtin() (Tokenizer, error) {
	return tiktoken(BuiltinName)
}

// tiktoken returns the shared tokenizer of one embedded tiktoken encoding.
func tiktoken(name string) (Tokenizer, error) {
	for i, e := range tiktokenEncodings {
		if e.name != name {
			continue
		}
		tiktokenOnce[i].Do(func() { tiktokenTok[i], tiktokenErr[i] = loadTiktoken(e) })
		if tiktokenErr[i] != nil {
			return nil, tiktokenErr[i]
		}
		return tiktokenTok[i], nil
	}
	return nil, ErrNotFound
}

// Vocabulary is implemented by every tokenizer of this package: it lists
// the token pieces, which [github.com/reprise-bench/reprise/internal/prompt]
// uses to pick single-token words.
type Vocabulary interface {
	// VocabSize returns one more than the largest token id.
	VocabSize() int
	// Piece returns the text of one token as it reads inside a text (a
	// SentencePiece "▁the" is " the", a byte-fallback token is its byte);
	// ok is false for an id without a piece.
	Piece(id int) (piece string, ok bool)
}

var _ Vocabulary = (*bpe)(nil)
