// Package h1 is reprise's HTTP/1.1 client: a keep-alive pool of
// connections to one server ([Client]) and, per sending goroutine, a
// [Caller] that writes a prebuilt request and reads its response, stamping
// every read with when its bytes arrived.
//
// The package is named for the protocol it speaks, as x/net's http2 is:
// call sites read h1.Client, h1.Caller.Do. It is internal to engine,
// which owns everything about a request that is not HTTP/1.1 — building
// it, the record, SSE framing (shared with HTTP/2), the adapter,
// classification — so h1 imports nothing of reprise.
//
// # The seam
//
// [Caller.Do] takes a [Request] (the head without its closing blank line,
// the body, whether a stream is expected), a [Stamps] it fills, and a
// [Handler]: the client calls Handler.Header once the final response head
// is complete and Handler.Body with each read's body bytes, framing
// removed, with the time they arrived. Times are Unix ns on the caller's
// [Clock]. Do returns nil when the response was read to its end or the
// handler stopped it, else the error that ended it; what the error means
// for a record is the caller's to decide.
//
// # What the client does
//
//   - Connections: reused last in, first out; at most
//     Config.MaxConnections open; each idle one checked with a
//     non-blocking peek before reuse, except within a millisecond of a
//     complete 2xx response that was not streamed (client.go, freshFor);
//     DNS, connect and TLS timed apart (Stamps.DNS, Connect), the pool
//     wait apart from them (Blocked).
//   - Reads: on Linux, recvmsg(2) with SO_TIMESTAMPNS, so a read's time is
//     the kernel's receive time of its last segment (conn_linux.go), which
//     does not move when reprise is descheduled before the read. The
//     client holds a socket that asks for stamps from New to Close, so
//     the kernel's system-wide stamping is on before the first response
//     and stays on between connections (holdStamps). A
//     streamed response on plain TCP is read by an epoll reactor, one per
//     P, that drains a batch of ready sockets per wake-up
//     (conn_linux.go, reactor); other responses on the calling goroutine,
//     whose request is written inside the same poller call that reads
//     the response, so the first read waits for it instead of finding
//     nothing (rxReader.exchange).
//   - Responses: decoded in place, in the read buffer (response.go):
//     1xx skipped, Content-Length, chunked (extensions and trailers
//     ignored) and close-delimited bodies; malformed framing is
//     [ErrMalformed].
//   - Closes after streams: llama.cpp closes the connection after every
//     streamed response although it advertises keep-alive. The client
//     learns it from evidence that repeats and then asks for
//     Connection: close on streams, still probing now and then
//     (closes.go, [Verdict]).
//   - Retries: a request is sent again only when it provably never
//     reached the server (its write on a reused connection failed before
//     the kernel accepted a byte), at most twice; Stamps.Retries and
//     RetryErrors say so.
//
// # Why reprise has its own HTTP/1.1 client
//
// net/http's client spent about 60 allocations of its own per request on
// the 2-core reference machine (a read-loop and a write-loop goroutine per
// connection, hand-offs between them and the caller, Request, Response and
// Header objects) and passed every streamed event through four layers of
// readers. reprise needs much less: POST (or GET) a prebuilt request on a
// keep-alive connection and decode the response in place, on the sending
// goroutine or a reactor: one write, then recvmsg with the kernel's
// receive stamp until the response ends, parked on the runtime poller in
// between.
// RATIONALE.md and design 0004 have the measurements.
//
// # Performance considerations
//
// A request on a kept-alive connection allocates nothing, whoever reads
// the response (TestDoAllocs: a Caller registers its cancellation hook
// once per context, [Caller.Close] removes it). A read
// with its stamp allocates nothing (TestKernelStampReadAllocs), nor does
// decoding a response (TestDecoderAllocs). The Handler is called through
// an interface once per head and once per read.
package h1
