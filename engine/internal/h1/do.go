package h1

// Hot path: one request on a pooled connection — write, then read and
// decode the response, stamping every read. Allocation budget:
// TestDoAllocs here, TestH1SendAllocs in engine (the whole send path).

import (
	"bytes"
	"context"
	"errors"
	"fmt"
	"io"
	"net"
	"os"
	"sync"
	"syscall"
	"time"

	"golang.org/x/net/http/httpguts"
)

// ReadBuffer is the size of a Caller's read buffer, allocated on its first
// response. A read returns at most what it holds.
const ReadBuffer = 16 << 10

const (
	// maxAttempts bounds sends of one request: a second attempt only
	// happens when the first provably never reached the server (its
	// write on a reused connection failed before a byte was accepted).
	maxAttempts = 3
	// maxRetryMessage bounds each given-up attempt's error in
	// Stamps.RetryErrors.
	maxRetryMessage = 256
)

// Request is one request to send. Its slices are read, never kept, and
// must not change during Do.
type Request struct {
	// Head is the request line and header lines, each ending in CRLF,
	// without the blank line that ends the head (Do adds
	// Connection: close when it must, then the blank line). Begin it with
	// [Client.AppendRequestLine]; it must carry Content-Length.
	Head []byte
	// Body is the request body.
	Body []byte
	// Wrote, when not nil, is called once the request was written whole
	// (before its response is read): the caller starts what counts from
	// then (a planned cancellation). It must not block.
	Wrote func()
	// Stream says a streamed response is expected: the close-after-stream
	// verdict applies to it.
	Stream bool
	// Session is the request's session under ReuseSticky (0 = none: a
	// connection of its own); EndSession marks its last request, after
	// which its connection is closed. Other strategies ignore both.
	Session    uint64
	EndSession bool
}

// Stamps is what Do measured of one request. Times are Unix ns on the
// Client's Clock, durations ns. Do fills it whole.
type Stamps struct {
	// Sent is when Do began, before the pool wait, the dial and the
	// write: they fall inside the time to the first byte.
	Sent int64
	// Wrote is when the kernel accepted the request's last byte; 0 when
	// it never did.
	Wrote int64
	// Headers is when the final response head arrived; 0 when none did.
	Headers int64
	// End is when the last read's bytes arrived, or when the request was
	// given up or failed.
	End int64
	// Blocked is the pool wait, DNS the name resolution, Connect the TCP
	// connect plus the TLS handshake, of the last attempt.
	Blocked, DNS, Connect int64
	// Reused says the last attempt went on a kept-alive connection.
	Reused bool
	// Reads and Bytes count the reads of the response and their bytes
	// (status line, headers and framing included).
	Reads int32
	Bytes int64
	// ReadLag is the longest time a read's bytes waited in the socket
	// before the read took them (0 without kernel receive stamps).
	ReadLag int64
	// Retries is how many times the request was sent again, and
	// RetryErrors why ("; "-separated), because an attempt provably never
	// reached the server.
	Retries     int32
	RetryErrors string
	// Deadline is when Config.Timeout ends the request (zero: none). Work
	// the caller does after Do on the request's behalf may watch it.
	Deadline time.Time
}

// Response is the head of a response, as [Handler.Header] sees it.
type Response struct {
	// Status is the status code.
	Status int
	// ContentType is the Content-Type header; valid only during the call.
	ContentType []byte
	// ContentLength is the body's length when Content-Length frames it,
	// else -1.
	ContentLength int64
}

// MediaTypeIs reports whether the Content-Type, without parameters, is t
// (ASCII case-insensitive). It does not allocate.
func (r *Response) MediaTypeIs(t string) bool {
	return equalFold(mediaType(r.ContentType), t)
}

// Handler consumes a response as Do reads it. Its methods run one at a
// time on the goroutine that reads (Do's caller, or a reactor's for a
// streamed response); everything they wrote is visible when Do returns.
// A method that returns false stops reading: the response is abandoned,
// its connection closed, and Do returns nil (the handler knows why).
type Handler interface {
	// Header is called once the final (non-1xx) response head is
	// complete, with when its last byte arrived.
	Header(resp *Response, t int64) bool
	// Body is called with the body bytes of one read, framing removed,
	// which arrived at t. b is valid only during the call.
	Body(b []byte, t int64) bool
}

// Caller sends one request at a time on its Client's connections, with
// its own buffers. It is not safe for concurrent use: each sending
// goroutine owns one.
type Caller struct {
	cl       *Client
	dec      decoder
	buf      []byte // the read buffer, decoded in place
	wbuf     []byte // head (and a small body), written at once
	wvec     net.Buffers
	rd       exchange
	resp     Response
	onRecvFn recvFunc // c.onRecv, made once
	// onWroteFn is k.onWrote, made once; wroteHook the Request.Wrote
	// of the exchange in progress.
	onWroteFn func()
	wroteHook func()

	// The cancellation hook (watch): registered once per context, not
	// per request. hookDone is the watched context's Done channel,
	// hookStop unregisters it; under hookMu, hookGen numbers the
	// registrations, cur is the connection of the request in flight
	// (nil between requests) and fired says the watched context ended.
	hookDone <-chan struct{}
	hookStop func() bool
	hookMu   sync.Mutex
	hookGen  uint64
	cur      *conn
	fired    bool
}

// watch makes the end of ctx abort the I/O of the request about to go
// on c (a past deadline on c), until unwatch. The hook, a
// context.AfterFunc, stays registered from request to request while ctx
// (its Done channel) stays the same, which a run's requests share: one
// registration per request took the shared context's lock and a map
// entry, and allocated twice.
func (k *Caller) watch(ctx context.Context, c *conn) {
	done := ctx.Done()
	if done != k.hookDone {
		k.Close()
		if done == nil {
			return // never ends: nothing to watch
		}
		k.hookMu.Lock()
		k.hookGen++
		gen := k.hookGen
		k.fired = false
		k.hookMu.Unlock()
		k.hookDone = done
		k.hookStop = context.AfterFunc(ctx, func() {
			k.hookMu.Lock()
			defer k.hookMu.Unlock()
			if k.hookGen != gen {
				return // an earlier context's, replaced
			}
			k.fired = true
			if k.cur != nil {
				_ = k.cur.c.SetDeadline(pastDeadline)
			}
		})
	}
	if done == nil {
		return
	}
	k.hookMu.Lock()
	k.cur = c
	if k.fired {
		_ = c.c.SetDeadline(pastDeadline)
	}
	k.hookMu.Unlock()
}

// unwatch ends watch's hold on the request's connection and reports
// whether the context ended meanwhile (the connection's I/O may have
// been aborted: it is not reused).
func (k *Caller) unwatch() (aborted bool) {
	if k.hookDone == nil {
		return false
	}
	k.hookMu.Lock()
	k.cur = nil
	aborted = k.fired
	k.hookMu.Unlock()
	return aborted
}

// Close unregisters the caller's cancellation hook from the last
// context it watched. Call it when the caller sends no more; a caller
// not closed stays reachable from that context until it ends.
func (k *Caller) Close() {
	if k.hookStop != nil {
		k.hookStop()
	}
	k.hookStop, k.hookDone = nil, nil
}

// exchange is the state of one response read.
type exchange struct {
	h     Handler
	st    *Stamps
	floor int64
	// afterStream: the connection carried a streamed response before
	// this request; headers now are evidence the server keeps such
	// connections (streamCloses).
	afterStream bool
	head        bool // Handler.Header was called
	stop        bool
	err         error
}

// NewCaller returns a caller for c. Its read buffer is allocated on its
// first response.
func (c *Client) NewCaller() *Caller {
	k := &Caller{cl: c}
	k.onRecvFn = k.onRecv
	k.onWroteFn = k.onWrote
	return k
}

// pastDeadline aborts blocked I/O at once.
var pastDeadline = time.Unix(1, 0)

// Do sends req and reads its response into h, filling st. Do keeps st
// and h until it returns.
//
// The error is nil when the response was read to its end or the handler
// stopped it. Otherwise it is what ended the exchange: before the
// response head a dial, write or read error (the caller records the
// failure), after it the error that ended the body (given to the caller,
// who has the head, to record with it). A deadline is [ErrTimeout]; when
// ctx ends, the error is the connection's and the cause is ctx's.
//
// A request is sent again only when it provably never reached the
// server: its write on a reused keep-alive connection failed before the
// kernel accepted a single byte (the server had reset the connection
// after the idle check). Anything later — a reset or an EOF after the
// request was written, even before any response byte — may follow the
// server reading the request (an injected reset-before-headers does
// exactly that), so it is the request's failure, never re-sent. An early
// answer (a 413 while the body is still being written, then a close) is
// read although the write failed.
func (k *Caller) Do(ctx context.Context, req *Request, st *Stamps, h Handler) error {
	cl := k.cl
	*st = Stamps{}
	if err := checkHead(req.Head); err != nil {
		st.Sent = cl.clock.Now()
		st.End = st.Sent
		return err
	}
	for attempt := 1; ; attempt++ {
		// Sent is before the pool wait, DNS and connect: they fall
		// inside TTFT, as in AIPerf (records.md).
		var ph dialPhases
		sent := cl.clock.Now()
		if attempt == 1 {
			st.Sent = sent
		}
		c, reused, err := cl.get(ctx, &ph, req.Session)
		got := cl.clock.Now()
		st.Reused = reused
		st.Blocked = max(got-sent-ph.dns-ph.connect-ph.tls, 0)
		st.DNS, st.Connect = ph.dns, ph.connect+ph.tls
		if err != nil {
			st.End = got
			return err
		}
		closeConn := cl.closesAfter(req) || (req.Stream && cl.closes.askClose())
		var deadline time.Time
		if cl.timeout > 0 {
			deadline = time.Now().Add(cl.timeout)
			_ = c.c.SetDeadline(deadline)
		}
		st.Deadline = deadline
		k.watch(ctx, c)
		var n int64
		var total int
		var rerr error
		read := false // the response was read with the write (exchange)
		if c.tcp != nil && c.tc.rx != nil && (c.tc.rx.rc == nil || !req.Stream) && len(req.Body) <= maxOneWrite {
			n, total, read, rerr, err = k.exchange(ctx, c, req, closeConn, h, st, sent, reused && c.lastStream)
		} else {
			n, total, err = k.write(c, req, closeConn)
		}
		err = timedOut(ctx, err)
		if err == nil && !read {
			st.Wrote = cl.clock.Now()
			if req.Wrote != nil {
				req.Wrote()
			}
		} else if err != nil && n == 0 && reused && peerClosed(err) && attempt < maxAttempts && ctx.Err() == nil {
			// Nothing of it left this machine: send it again.
			k.unwatch()
			cl.discard(c)
			cl.retries.Add(1)
			st.Retries++
			noteRetry(st, err)
			continue
		}
		got1, head := false, false
		if err == nil || peerClosed(err) {
			// After a failed write the server may have answered early
			// (413 before reading the whole body): read what it sent.
			if !read {
				rerr = k.read(ctx, deadline, c, h, st, sent, req.Stream, reused && c.lastStream)
			}
			got1, head = st.Reads > 0, k.rd.head
			k.rd = exchange{} // keep neither h nor st
			if err == nil || got1 {
				err = rerr
			}
		}
		if head {
			err = nil // the handler has the response; rerr is its end
		}
		if err != nil && !got1 && st.Wrote == 0 && !errors.Is(err, ErrTimeout) && ctx.Err() == nil {
			err = fmt.Errorf("write request: %w (%d of %d bytes sent)", err, n, total)
		}
		aborted := k.unwatch()
		if err != nil && !got1 && reused && c.lastStream && cl.closes.soon(time.Since(c.idleAt)) && (peerClosed(err) || errors.Is(err, errEOFHead)) {
			// Closed soon after the stream before it answered this
			// request: the request fails (it may have been read), and
			// it is evidence of closing after streams.
			cl.closes.closed()
		}
		if err == nil && st.Wrote != 0 && !aborted && !closeConn && k.dec.reusable() {
			if cl.timeout > 0 {
				_ = c.c.SetDeadline(time.Time{})
			}
			c.lastStream = req.Stream
			c.plain = !req.Stream && k.dec.status/100 == 2
			if cl.reuse == ReuseSticky {
				cl.park(c, req.Session)
			} else {
				cl.put(c)
			}
			return rerr
		}
		if err == nil && !closeConn && k.dec.done() && k.dec.closing && req.Stream && k.dec.status < 300 {
			cl.closes.closed() // announced a close after a complete stream, unasked
		}
		cl.discard(c)
		if head {
			return rerr
		}
		if err != nil {
			st.End = max(st.End, cl.clock.Now())
		}
		return err
	}
}

// closesAfter reports whether req's connection is closed after its
// response under the client's strategy.
func (c *Client) closesAfter(req *Request) bool {
	switch c.reuse {
	case ReuseNever:
		return true
	case ReuseSticky:
		return req.Session == 0 || req.EndSession
	}
	return false
}

// maxOneWrite is the largest body written in one piece with its head
// (copied behind it); a larger one goes out with writev, uncopied.
const maxOneWrite = 64 << 10

// head puts the request head and the closing blank line into k.wbuf.
func (k *Caller) head(req *Request, closeConn bool) []byte {
	b := append(k.wbuf[:0], req.Head...)
	if closeConn {
		b = append(b, "Connection: close\r\n"...)
	}
	return append(b, "\r\n"...)
}

// keepWbuf keeps b as the write buffer unless it grew huge.
func (k *Caller) keepWbuf(b []byte) {
	k.wbuf = b
	if cap(k.wbuf) > 256<<10 {
		k.wbuf = nil // one huge prompt must not pin its buffer
	}
}

// write sends the request head, the closing blank line and the body: one
// write(2) for a small body, writev for a large one (no copy). n is how
// many bytes the kernel accepted (for TLS: of the plaintext), of total.
func (k *Caller) write(c *conn, req *Request, closeConn bool) (n int64, total int, err error) {
	b := k.head(req, closeConn)
	total = len(b) + len(req.Body)
	if len(req.Body) > maxOneWrite && c.tcp != nil {
		k.wbuf = b
		k.wvec = append(k.wvec[:0], b, req.Body)
		n, err = k.wvec.WriteTo(c.tcp)
		return n, total, err
	}
	b = append(b, req.Body...)
	w, err := c.c.Write(b)
	k.keepWbuf(b)
	return int64(w), total, err
}

// exchange writes a request of at most maxOneWrite body bytes on a
// plain TCP connection with kernel stamps and reads its response in the
// same poller call (rxReader.exchange), which saves the read that found
// nothing right after every write. read says the response was read
// (rerr is then read's error, and Stamps.Wrote and Request.Wrote were
// done when the write completed); otherwise n, total and err are
// write's, and the caller reads: after a write the kernel did not take
// whole at once, exchange writes the rest as write does.
func (k *Caller) exchange(ctx context.Context, c *conn, req *Request, closeConn bool, h Handler, st *Stamps, sent int64, afterStream bool) (n int64, total int, read bool, rerr, err error) {
	b := append(k.head(req, closeConn), req.Body...)
	defer k.keepWbuf(b)
	total = len(b)
	k.beginRead(h, st, sent, afterStream)
	k.wroteHook = req.Wrote
	w, werr, perr := c.tc.rx.exchange(b, k.buf, k.onWroteFn, k.onRecvFn)
	k.wroteHook = nil
	n = int64(w)
	switch {
	case w == len(b):
		return n, total, true, k.endRead(ctx, perr), nil
	case werr != 0 && werr != syscall.EAGAIN:
		return n, total, false, nil, &net.OpError{Op: "write", Net: "tcp", Source: c.tc.LocalAddr(), Addr: c.tc.RemoteAddr(), Err: os.NewSyscallError("write", werr)}
	case perr != nil && w == 0 && werr == 0:
		// The poller refused before the write (closed, past deadline):
		// the error a write would have had.
		return n, total, false, nil, &net.OpError{Op: "write", Net: "tcp", Source: c.tc.LocalAddr(), Addr: c.tc.RemoteAddr(), Err: perr}
	}
	m, err := c.c.Write(b[w:])
	return n + int64(m), total, false, nil, err
}

// onWrote is exchange's "written whole" callback.
func (k *Caller) onWrote() {
	k.rd.st.Wrote = k.cl.clock.Now()
	if k.wroteHook != nil {
		k.wroteHook()
	}
}

// noteRetry adds a given-up attempt's error to st.RetryErrors.
func noteRetry(st *Stamps, err error) {
	msg := truncate(err.Error(), maxRetryMessage) + " (nothing sent)"
	if st.RetryErrors != "" {
		msg = st.RetryErrors + "; " + msg
	}
	st.RetryErrors = msg
}

// peerClosed reports whether a write failed because the server had closed
// or reset the connection.
func peerClosed(err error) bool {
	return errors.Is(err, syscall.EPIPE) || errors.Is(err, syscall.ECONNRESET)
}

// timedOut names a deadline error as Config.Timeout's: the other
// deadline, a past one set when ctx is cancelled, is classified by ctx's
// cause.
func timedOut(ctx context.Context, err error) error {
	if err != nil && ctx.Err() == nil && errors.Is(err, os.ErrDeadlineExceeded) {
		return ErrTimeout
	}
	return err
}

// read reads the response to the request just written on c into h. The
// error is the one that ended the read (nil at the response's end or
// when h stopped it), deadlines named by timedOut.
func (k *Caller) read(ctx context.Context, deadline time.Time, c *conn, h Handler, st *Stamps, sent int64, stream, afterStream bool) error {
	k.beginRead(h, st, sent, afterStream)
	var err error
	if c.tcp != nil && c.tc.rx != nil {
		if c.tc.rx.rc != nil && stream {
			// A stream's many reads go to the reactor; a whole response
			// in a read or two is not worth its two epoll_ctl calls.
			err = c.tc.rx.await(ctx, deadline, k.buf, k.onRecvFn)
		} else {
			err = c.tc.rx.loop(k.buf, k.onRecvFn)
		}
	} else {
		for !k.rd.stop {
			n, rerr := c.c.Read(k.buf)
			now, wall := k.cl.clock.NowWall()
			k.onRead(n, c.tc.arrival(now, wall, k.rd.floor), now, rerr)
		}
	}
	return k.endRead(ctx, err)
}

// beginRead readies k for reading a response into h.
func (k *Caller) beginRead(h Handler, st *Stamps, sent int64, afterStream bool) {
	k.dec.reset()
	k.rd = exchange{h: h, st: st, floor: sent, afterStream: afterStream}
	if k.buf == nil {
		k.buf = make([]byte, ReadBuffer)
	}
}

// endRead returns the error that ended a read whose wait ended with err.
func (k *Caller) endRead(ctx context.Context, err error) error {
	if err != nil {
		// The wait was given up (deadline, cancellation), not ended by
		// a read: the request ends now, not at its last byte.
		k.rd.st.End = max(k.rd.st.End, k.cl.clock.Now())
	} else {
		err = k.rd.err
	}
	return timedOut(ctx, err)
}

// onRecv is the kernel-stamped read callback: n bytes of k.buf arrived
// at stamp (Unix ns, 0 unknown), or the read failed with errno. It
// returns true when the response is over.
func (k *Caller) onRecv(n int, stamp int64, errno syscall.Errno) bool {
	now, wall := k.cl.clock.NowWall()
	t := now
	if stamp != 0 {
		t = arrivalOf(stamp, now, wall, k.rd.floor)
	}
	var err error
	switch {
	case errno != 0:
		err = &net.OpError{Op: "read", Net: "tcp", Err: os.NewSyscallError("recvmsg", errno)}
	case n == 0:
		err = io.EOF
	}
	k.onRead(n, t, now, err)
	return k.rd.stop
}

// onRead handles one read: n bytes of k.buf stamped t (now: when the read
// returned), then err if the read also failed or hit the end.
func (k *Caller) onRead(n int, t, now int64, err error) {
	rd := &k.rd
	st := rd.st
	if n > 0 {
		rd.floor = t
		st.ReadLag = max(st.ReadLag, now-t)
		st.Reads++
		st.Bytes += int64(n)
		k.decode(k.buf[:n], t)
	}
	st.End = t
	if rd.stop {
		return
	}
	if err == nil && k.hookDone != nil {
		select {
		case <-k.hookDone:
			// The context ended while the response kept arriving. Its
			// past deadline stops only a read that would wait, and one
			// whose bytes are always there never waits (a 200 MB body
			// read as fast as it comes was read to its end): so each
			// read looks, and the response stops within one read
			// (ReadBuffer bytes) of the end of its context.
			rd.err, rd.stop = os.ErrDeadlineExceeded, true
			return
		default:
		}
	}
	if err != nil {
		if errors.Is(err, io.EOF) {
			err = k.dec.eof()
		}
		rd.err, rd.stop = err, true
		return
	}
	if k.dec.done() {
		rd.stop = true
	}
}

// decode decodes one read's bytes and hands the head and body on.
func (k *Caller) decode(b []byte, t int64) {
	rd := &k.rd
	for len(b) > 0 && !rd.stop {
		wasHead := !k.dec.headersDone()
		n, used, err := k.dec.decode(b)
		if err != nil {
			// The body decoded before the bad framing still counts.
			if n > 0 && rd.head {
				rd.h.Body(b[:n], t)
			}
			rd.err, rd.stop = err, true
			return
		}
		body := b[:n]
		b = b[used:]
		if wasHead && k.dec.headersDone() {
			if rd.afterStream {
				k.cl.closes.kept()
			}
			rd.st.Headers = t
			rd.head = true
			k.resp = Response{Status: k.dec.status, ContentType: k.dec.contentType, ContentLength: k.dec.contentLength()}
			if !rd.h.Header(&k.resp, t) {
				rd.stop = true
				return
			}
		}
		if len(body) > 0 && !rd.h.Body(body, t) {
			rd.stop = true
		}
		if k.dec.done() {
			if len(b) > 0 {
				k.dec.closing = true // bytes after the response: never reuse
			}
			return
		}
	}
}

// checkHead returns nil when h is a request line ("METHOD TARGET
// HTTP/1.1") and header lines ("Name: value"), each ending in CRLF, of
// valid syntax (RFC 9112 §3, RFC 9110 §5.5): a method and header names
// that are tokens, a target of visible ASCII, values without control
// characters but tab. Otherwise the error wraps ErrBadHead and says
// where, never with the value (it may be a secret). It does not allocate
// when h is valid: it runs before every request is written, whoever
// built the head.
func checkHead(h []byte) error {
	line, rest, ok := cutLine(h)
	if !ok {
		return fmt.Errorf("%w: the request line does not end in CRLF", ErrBadHead)
	}
	sp := bytes.IndexByte(line, ' ')
	last := bytes.LastIndexByte(line, ' ')
	if sp <= 0 || last == sp || !isToken(line[:sp]) || string(line[last+1:]) != "HTTP/1.1" {
		return fmt.Errorf("%w: the request line is not METHOD TARGET HTTP/1.1", ErrBadHead)
	}
	for i, c := range line[sp+1 : last] {
		if c <= ' ' || c >= 0x7f {
			return fmt.Errorf("%w: the path holds byte 0x%02x at byte %d", ErrBadHead, c, i)
		}
	}
	for len(rest) > 0 {
		if line, rest, ok = cutLine(rest); !ok {
			return fmt.Errorf("%w: a header line does not end in CRLF", ErrBadHead)
		}
		colon := bytes.IndexByte(line, ':')
		if colon <= 0 || !isToken(line[:colon]) {
			return fmt.Errorf("%w: a header line is not Name: value", ErrBadHead)
		}
		for i, c := range line[colon+1:] {
			if (c < ' ' && c != '\t') || c == 0x7f {
				return fmt.Errorf("%w: the value of header %s holds byte 0x%02x at byte %d", ErrBadHead, line[:colon], c, i)
			}
		}
	}
	return nil
}

// cutLine cuts b at its first CRLF. A lone CR or LF before it is not a
// line end: it makes the line invalid (ok false), as a server could read
// either as one.
func cutLine(b []byte) (line, rest []byte, ok bool) {
	i := bytes.IndexAny(b, "\r\n")
	if i < 0 || i+1 >= len(b) || b[i] != '\r' || b[i+1] != '\n' {
		return nil, nil, false
	}
	return b[:i], b[i+2:], true
}

// isToken reports whether b is an HTTP token (RFC 9110 §5.6.2).
func isToken(b []byte) bool {
	if len(b) == 0 {
		return false
	}
	for _, c := range b {
		if !httpguts.IsTokenRune(rune(c)) {
			return false
		}
	}
	return true
}
