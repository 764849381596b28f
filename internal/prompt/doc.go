// Package prompt builds, for each trace row, the prompt a replay sends:
// exactly the row's input length in tokens of the served model's
// tokenizer, sharing exactly the leading blocks its hash ids say it shares
// with earlier rows, as text and, on request, as token ids.
//
// # How a prompt is made
//
// A [Builder] picks, once, a vocabulary of words from the tokenizer: pieces
// " word" (a space and ASCII letters) that are each exactly one token, and
// checks that any sequence of them tokenizes to exactly one token per word
// (pre-tokenizers split before the space, so no merge crosses a word; for
// SentencePiece tokenizers the check is what guarantees it). A hash id h
// becomes a block of words drawn from a stream seeded by (Config.Seed, h),
// so every row that carries h gets the same tokens at the same place. A
// row with ids h[0..k−1], block size B and input length L is the
// concatenation of the blocks of h[0..k−2] (B tokens each) and the first
// L−(k−1)·B tokens of the block of h[k−1]. Blocks are prefix-consistent (a
// partial block is a prefix of the full one), cached by (id, size) in an
// LRU bounded in bytes, and the first word of a block differs from the
// first word of every other block that followed the same parent block
// (while the vocabulary has enough words), so two prompts sharing exactly
// k leading ids share exactly k·B tokens and differ at token k·B.
//
// Rows whose trace carries its own content (text_input, messages,
// payload) are not synthesized: [Prompt.Synthesized] is false and the
// caller sends the content as it is. Rows without hash ids get a fresh
// prompt that shares nothing with any other: from a counter, or from a
// key the caller gives ([Builder.BuildKeyed]), which makes it the same in
// every process.
//
// # Sessions
//
// Bailian rows (trace.Row.Cumulative) already contain their history and
// are built like any other row. Mooncake rows with a session id carry only
// the new tokens of their turn; a [Session] grows the history the way
// AIPerf's default mode (deltas_without_responses) does: every earlier
// user prompt and the assistant response the server actually returned,
// then the new turn.
//
// # Concurrency and performance
//
// Call [Builder.Prepare] once, with the whole trace, first: it checks every row
// (all errors at once) and fixes, in arrival order, everything that
// depends on order: the first word of each block and each row's expected
// cached tokens. After it, [Builder.Build] depends only on the row and is
// safe from several goroutines, so builders working ahead of the send
// time produce the same prompts as one. Without Prepare, rows must be
// built in arrival order.
//
// Assembling a prompt from cached blocks is a copy (about 10^8 tokens per
// CPU-second) and allocates only the text; a new block costs a few
// nanoseconds per token. See builder_bench_test.go.
package prompt
