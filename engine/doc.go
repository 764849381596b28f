// Package engine puts requests on the wire and measures them: it builds
// each request with the endpoint adapter ([Builder], [Prepared]), sends it
// ([Sender.Do]) over HTTP/1.1 keep-alive (by default) or h2/h2c, frames
// the response (SSE or NDJSON) with a timestamp at every read, classifies
// its events with the adapter, and fills the per-request [record.Request]
// row (plus [record.Event] rows on request): one request on the wire. A
// whole replay — the schedule, the lookahead window, the record queue,
// the progress line — is the root package's (reprise.Run), which drives
// one [Sender] per scheduler sender and [Builder]s ahead of them.
//
// # Structure
//
// An [Engine] owns the transport and the adapter; each goroutine that
// builds or sends owns its own adapter instance ([Builder], [Sender]).
// HTTP/1.1 is reprise's own client, package engine/internal/h1: the
// keep-alive pool, dialing with phase stamps, the kernel's receive
// timestamps, the epoll reactors, the response decoder (chunked,
// Content-Length, close-delimited), the close-after-stream verdict and the
// retry rule. The seam is h1.Caller.Do: the sender hands it the prebuilt
// request head and body, the client writes them and hands the response
// back as it reads it — the head, then each read's body bytes with their
// arrival time — to the sender's handler, which frames, stamps and parses
// them; Do's h1.Stamps become the record's times. HTTP/2 goes through
// net/http with x/net's transport, whose silent retries are disabled
// (GetBody is nil). RATIONALE.md says why.
//
// The prompt seam is [PromptSource] (the prompt of one row, on a builder
// goroutine) and, for sessions that grow their history,
// [SessionPromptSource] and [SessionPrompts].
//
// The adapter seam is package engine/adapter: adapters build requests and
// classify events; they never see the network or the clock. The engine
// joins the adapter's records to its own timestamps by event index, so a
// slow adapter (a Wasm guest) can never distort a measurement.
//
// # Timestamps
//
// Every time is Unix ns on one [replay.Clock]: the wall clock read once plus
// monotonic time since. SentNS is taken just before the request takes a
// connection from the pool and is written (pool wait, DNS and connect fall
// inside TTFT, as in AIPerf), HeadersNS when the response headers arrived,
// and, for the body, when each read's bytes arrived — on HTTP/1.1 the
// kernel's receive time on Linux, else when the read returned, before
// looking at the bytes. Every SSE event completed by one read gets that
// read's stamp; the number of events per read is kept
// (record.Request.MaxEventsRead, record.Event.EventsInRead) so coalesced
// reads show up as such instead of as 0 ms gaps. TTFT is the first
// content, reasoning or tool-call event; TTFO the first non-reasoning one;
// ITL is (last − first token) / (output tokens − 1).
//
// # Connections
//
// An idle connection is checked with a non-blocking peek before it is
// reused, except within a millisecond of a complete 2xx response that
// was not streamed (no server closes one unannounced that soon);
// --max-connections caps the open ones. llama.cpp closes the
// connection after every streamed response although it advertises
// keep-alive; the client learns this from evidence that repeats (several
// connections in a row closed right after a complete stream) and from
// then on sends streams with Connection: close, still probing now and
// then whether the server keeps them. One reset proves nothing.
//
// A request is re-sent only when it provably never reached the server:
// its write on a reused connection failed before the kernel accepted a
// byte. A reset or EOF after the request was written is recorded as the
// request's error, never retried: the server may have read it. Re-sends
// and why are in record.Request.Retries and RetryErrors.
//
// # Multi-turn sessions
//
// A run's [ContextMode] decides which session rows carry their session's
// history (docs/reference/aiperf.md §1). In auto mode, rows
// whose input length already includes the history (Bailian, complete
// requests) are sent as they stand, and the other rows of a session (the
// Mooncake/AIPerf dialect, where input_length is the new turn's tokens)
// are sent as AIPerf's deltas_without_responses does: every earlier user
// prompt and the assistant response actually received, then the new turn
// (chat: a messages array; completions: one concatenated prompt). Such a
// later turn cannot be built ahead: it is built on the send path once the
// previous turn completed (between DispatchedNS and SentNS), and only the
// responses a later turn needs are captured ([Prepared.Capture] asks the
// sender for them; the run keeps at most 1 MiB of each). The scheduler's
// session delay (SessionDelayNS) and this build time are the session-induced delays; the server's share is TTFT
// and E2E. Records carry the wire prompt (InputTokens) beside the trace's
// (TraceInputTokens) and, for a later turn, the full blocks of the
// previous prompt as ExpectedCachedTokens: what a prefix cache holds of it
// for sure.
//
// # Errors
//
// A failed request is a row, never an error: transport errors, non-2xx
// statuses, error events inside a 200 stream, malformed chunks, timeouts
// and cancellation each map to a [record.ErrorKind] with the server's
// message. Only setup failures end a run.
//
// # Bounds
//
// Whatever a server sends, a request ends and its memory is bounded. The
// caps of [Config] (MaxResponseEvents, MaxEventBytes, MaxResponseBytes;
// defaults [DefaultMaxResponseEvents] and the others) end a response that
// goes over one at once, as [record.ErrTooLarge], and close its
// connection: an endless stream, an endless SSE line or event, an endless
// or oversized body. A request then holds at most its event table (17
// bytes per event), one event up to three times while it is framed, and a
// non-streaming body whole with the content decoded from it
// (TestResponseCaps). Config.Timeout covers the whole request, counting
// the output's tokens included: a long output is counted with
// [ContextCounter] under the request's deadline and context, so neither
// --timeout nor an interrupt waits for it (TestCountUnderTimeout). The
// checks cost a comparison per read and per line.
//
// # Performance considerations
//
// A [Prepared] request holds the final body and header map, built on a
// [Builder] ahead of its send time, so nothing is built on the send path
// while the run's lookahead keeps up. The read path
// allocates nothing per read or per event once a sender's buffers have
// grown (TestSSEAllocs; the OpenAI adapter's TestParseAllocs): the SSE
// framer copies event bytes into a reused arena and the native adapter
// scans chunks with a small hand-written JSON scanner instead of
// encoding/json (BenchmarkParseChunk: about 5× faster, no allocations).
// An HTTP/1.1 request on a kept-alive connection allocates nothing
// (TestH1SendAllocs: the cancellation hook is registered once per
// context, not per request); over HTTP/2 it allocates
// its net/http request, a context for the timeout, the httptrace state and
// its X-Request-Id. Client-side output token counting runs after the
// response ended, off the timing path; the counter gets the captured text
// without a copy.
package engine
