// Package mockserver is an OpenAI-compatible inference-server simulator that
// knows the truth: `reprise mock-server` and, for tests, an in-process
// server on a free port ([Start]).
//
// It serves /v1/chat/completions, /v1/completions and the OpenAI Responses
// API /v1/responses (streamed and not), SGLang's /generate and TGI's
// /generate_stream, the embeddings and rankings APIs
// (/v1/embeddings, TEI /rerank, Cohere /v2/rerank, NIM /v1/ranking, vLLM
// /v1/rerank and /v1/score),
// /v1/models, /health and /metrics in the shapes of vLLM (default) or
// llama.cpp ([FlavorLlamaCPP]), as recorded from llm-d-inference-sim (a vLLM
// simulator serving vLLM's OpenAI-compatible API) and llama.cpp's llama-server.
// Output tokens are cheap filler words; their timing follows a latency
// model (TTFT, ITL, prefill and per-running-request costs, jitter) behind a
// max-num-seqs admission queue, and a prefix cache of token blocks makes
// usage.prompt_tokens_details.cached_tokens and the prefill time depend on
// what earlier requests sent. Faults (HTTP 429/500/503, resets, stalls,
// malformed SSE, error events, slow headers) are injected at random rates
// or per request with the X-Reprise-Fault header.
//
// # The oracle
//
// For every request the server records when the request was fully received
// and when each response event's write and flush to the socket returned, in
// Unix nanoseconds, together with the token counts it reported and the
// faults it injected ([RequestLog], [Server.Log], and the JSONL event log
// specified in docs/format/mock-server.md). Client measurements are
// checked against this truth.
//
// # Performance considerations
//
// Every response renders its per-response JSON pieces once; each event then
// appends constants, the choice index and a filler word into a pooled
// buffer and is written with one Write and one flush (one write syscall).
// No encoding/json runs per event. Each token waits for an absolute
// deadline (admission + offset) on one reusable timer per request, so late
// writes do not accumulate; Go timers wake up to about 1 ms late on Linux,
// which the oracle records truthfully.
package mockserver
