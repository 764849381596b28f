// Package capture records OpenAI-compatible traffic into a trace: a
// reverse proxy ([Recorder]) that forwards every request to an upstream
// server unchanged, streams the response back as it comes (flushing after
// every write, so server-sent events pass one by one), and, once the
// response has been passed on, writes one Mooncake-style row per chat or
// completions request, in arrival order (docs/format/traces.md,
// "Recording"). A row says its block size, its endpoint and how many of
// the server's prompt tokens its template added, so that a replay gives
// the server the prompt lengths it saw.
//
// A row keeps the arrival time, the input and output lengths (the
// server's usage when it reports it, else the tokenizer's count), and
// hash ids of the prompt's tokens cut into blocks of [Config.BlockSize]:
// each block's id is a chained hash of the blocks up to it, replaced by a
// dense integer in first-seen order, so equal ids mean equal prefixes and
// no hash value or text is written. Text is kept only when asked
// ([Config.Text]). Sessions come from a header ([Config.SessionHeader]) or
// from prefix continuation; a chat request whose messages contain an
// earlier response waits for that request (wait_for).
//
// # Performance considerations
//
// The proxy reads a request's body before forwarding it (the upstream
// gets it in one piece) and copies the response with a flush per write;
// tokenizing, hashing and writing happen on a goroutine of their own
// after the response was passed on, so they add nothing to the client's
// latency (BenchmarkProxyOverhead measures what is left).
package capture
