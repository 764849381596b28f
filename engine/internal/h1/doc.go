// Package h1 is reprise's HTTP/1.1 client at the wire: connections whose
// reads carry the kernel's receive time ([Conn]), the epoll reactors that
// read many streaming responses on one goroutine ([reactor]), and the
// response decoder that strips the status line, headers and chunk framing
// in place ([decoder]).
//
// It is named for the protocol it speaks, as x/net's http2 is, and kept
// short because call sites read h1.Conn, h1.decoder. It is internal to
// engine: its types are the engine's measuring instruments, not an API.
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
// receive stamp until EAGAIN, parked on the runtime poller in between.
// HTTP/2 still uses x/net's transport. RATIONALE.md and design 0004 have
// the measurements.
//
// # Performance considerations
//
// A read with its stamp allocates nothing (TestKernelStampReadAllocs), nor
// does decoding a response (TestDecoderAllocs).
package h1
