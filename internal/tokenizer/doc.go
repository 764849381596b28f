// Package tokenizer counts, encodes and decodes text with the served
// model's tokenizer, in pure Go. Only [LoadContext] with a Hub
// configuration reaches the network (internal/hfhub: a model id's
// tokenizer.json downloaded into the Hugging Face cache); everything else
// reads local files.
//
// Two kinds of tokenizer are supported:
//
//   - [Builtin]: OpenAI's o200k_base BPE (the GPT-4o / GPT-OSS vocabulary),
//     embedded in the binary. cl100k_base, p50k_base and r50k_base are
//     available by name through [Load].
//   - [Load] of a Hugging Face tokenizer.json: byte-level BPE (Llama 3,
//     Qwen 2/3, DeepSeek, GPT-OSS, GPT-2) and SentencePiece-style BPE with
//     "▁" and byte fallback (Llama 2, Mistral), given as a file, a model
//     directory, or a model id in the local Hugging Face cache ([Load]) or
//     downloaded from the Hub ([LoadContext]).
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
//
// Work and memory are linear in the text whatever it holds: a pre-token
// longer than 1 KiB (a server's one-word answer "aaaa…" of megabytes) is
// merged in pieces of at most 1 KiB with reused scratch memory, so
// counting it allocates nothing that grows with its length
// (TestCountOneWordBounded, TestCountOneWordLinear, BenchmarkCountOneWord:
// about 200 ns of CPU per byte of never-seen letters, the cost of cold
// text, and about 1.5 ns per byte of one repeated piece). Counts can then
// differ from an unbounded merge by about one token per 1 KiB cut, only in
// such pre-tokens. [Tokenizer.CountContext] stops within milliseconds of
// its context's end.
package tokenizer
