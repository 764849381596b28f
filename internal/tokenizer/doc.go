// Package tokenizer counts, encodes and decodes text with the served
// model's tokenizer, in pure Go and without network access.
//
// Two kinds of tokenizer are supported:
//
//   - [Builtin]: OpenAI's o200k_base BPE (the GPT-4o / GPT-OSS vocabulary),
//     embedded in the binary. cl100k_base, p50k_base and r50k_base are
//     available by name through [Load].
//   - [Load] of a Hugging Face tokenizer.json: byte-level BPE (Llama 3,
//     Qwen 2/3, DeepSeek, GPT-OSS, GPT-2) and SentencePiece-style BPE with
//     "▁" and byte fallback (Llama 2, Mistral), given as a file, a model
//     directory, or a model id already present in the local Hugging Face
//     cache.
//
// Encode never adds special tokens (no BOS/EOS, no chat template) and treats
// special-token text such as "<|endoftext|>" as ordinary text, like
// tiktoken's encode_ordinary.
//
// # Performance considerations
//
// Text is split into pre-tokens (words) first; the BPE merge result of each
// word is kept in a bounded, lock-free, direct-mapped cache, so repeated
// words cost one hash and one compare. All-ASCII text is split by
// hand-written matchers for the common patterns (o200k, cl100k/Llama 3,
// Qwen 2, GPT-2); other text goes through an equivalent [regexp] program.
// All tokenizers are safe for concurrent use.
package tokenizer
