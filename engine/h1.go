package engine

// reprise's own HTTP/1.1 client. net/http's client spent about 60
// allocations of its own per request on the 2-core reference machine (a
// read-loop and a write-loop goroutine per connection, hand-offs between
// them and the caller, Request/Response/Header objects) and passed every
// streamed event through four layers of readers. This client does only
// what a replay needs — POST (or GET) a prebuilt request on a keep-alive
// connection, decode the response in place (h1resp.go) — from the
// sender's own goroutine: one write, then recvmsg with the kernel's
// receive stamp until EAGAIN (conn_linux.go), parked on the runtime
// poller in between. HTTP/2 (--http2) still uses x/net's transport.
// RATIONALE.md and design 0004 have the measurements.

import (
	"context"
	"crypto/tls"
	"errors"
	"fmt"
	"io"
	"net"
	"net/url"
	"os"
	"runtime"
	"slices"
	"strconv"
	"strings"
	"sync"
	"sync/atomic"
	"syscall"
	"time"

	"github.com/reprise-bench/reprise/engine/adapter"
	"github.com/reprise-bench/reprise/engine/internal/h1"
	"github.com/reprise-bench/reprise/internal/record"
)

// h1Pool is the keep-alive pool: idle connections are reused last in,
// first out (the warm ones), and at most max are open (0 = no limit).
type h1Pool struct {
	e       *Engine
	addr    string // host:port to dial
	host    string // Host header
	path    string // the base URL's path, escaped, without a trailing slash
	tls     *tls.Config
	dial    func(ctx context.Context, network, addr string) (net.Conn, error)
	stamps  bool // kernel receive timestamps
	max     int
	idleFor time.Duration

	mu      sync.Mutex
	idle    []*h1Conn
	open    int
	waiters []chan struct{}
	closed  bool

	// reactors read plain-TCP responses (reactor_linux.go), one per P,
	// started with the first connection; none when they could not start.
	reactorsOnce sync.Once
	reactors     []*h1.Reactor
	reactorNext  atomic.Uint32
}

// h1Conn is one connection of the pool.
type h1Conn struct {
	tc     *h1.Conn     // the TCP connection (it stamps reads)
	c      net.Conn     // tc, or TLS over it
	tcp    *net.TCPConn // nil for TLS or a dial override without TCP
	raw    syscall.RawConn
	idleAt time.Time
	peekFn func(fd uintptr) // c.peek, made once
	peekN  int
	peekE  syscall.Errno
	peekB  [1]byte
	// lastStream: the last response on it was streamed (a close right
	// after one is the llama.cpp pattern; streamCloses).
	lastStream bool
}

func newH1Pool(e *Engine, base string, dial func(ctx context.Context, network, addr string) (net.Conn, error)) (*h1Pool, error) {
	u, err := url.Parse(base)
	if err != nil {
		return nil, err
	}
	p := &h1Pool{e: e, host: u.Host, path: strings.TrimRight(u.EscapedPath(), "/"), dial: dial, stamps: !e.cfg.NoKernelStamps,
		max: e.cfg.MaxConnections, idleFor: 90 * time.Second}
	port := u.Port()
	if port == "" {
		port = "80"
		if u.Scheme == "https" {
			port = "443"
		}
	}
	p.addr = net.JoinHostPort(u.Hostname(), port)
	if u.Scheme == "https" {
		if e.cfg.TLS != nil {
			p.tls = e.cfg.TLS.Clone()
		} else {
			p.tls = &tls.Config{}
		}
		if p.tls.ServerName == "" {
			p.tls.ServerName = u.Hostname()
		}
		p.tls.NextProtos = []string{"http/1.1"}
	}
	return p, nil
}

// dialPhases are the set-up times of a new connection, ns.
type dialPhases struct{ dns, connect, tls int64 }

// get returns an idle connection that is still open, or dials one.
func (p *h1Pool) get(ctx context.Context, ph *dialPhases) (*h1Conn, bool, error) {
	d := &p.e.closes
	for {
		p.mu.Lock()
		atMax := p.max != 0 && p.open >= p.max
		c, wait := p.takeIdle(atMax)
		if c != nil {
			p.mu.Unlock()
			idle := time.Since(c.idleAt)
			if idle < p.idleFor && c.alive() {
				return c, true, nil
			}
			if c.peekN == 0 && c.peekE == 0 && c.lastStream && d.soon(idle) {
				d.closed() // a FIN soon after a complete stream
			}
			p.discard(c)
			continue
		}
		if wait > 0 && atMax {
			// Every idle connection rests after a stream, the server is
			// not known to close after streams, and no other may be
			// opened: wait for the first. Below the cap a request dials
			// instead (its connect time is recorded apart, in connect_ns,
			// where a wait would hide in TTFT), until a rested connection
			// is reused and the verdict known.
			p.mu.Unlock()
			t := time.NewTimer(wait)
			select {
			case <-t.C:
			case <-ctx.Done():
				t.Stop()
				return nil, false, context.Cause(ctx)
			}
			continue
		}
		if !atMax {
			p.open++
			p.mu.Unlock()
			c, err := p.dialConn(ctx, ph)
			if err != nil {
				p.discard(nil)
			}
			return c, false, err
		}
		w := make(chan struct{})
		p.waiters = append(p.waiters, w)
		p.mu.Unlock()
		select {
		case <-w:
		case <-ctx.Done():
			p.mu.Lock()
			found := false
			for i, x := range p.waiters {
				if x == w {
					p.waiters = append(p.waiters[:i], p.waiters[i+1:]...)
					found = true
					break
				}
			}
			if !found {
				p.wakeOne() // woken as we gave up: pass it on
			}
			p.mu.Unlock()
			return nil, false, context.Cause(ctx)
		}
	}
}

// takeIdle removes and returns the most recently used idle connection
// that need not rest after a streamed response (streamCloses.rest). When
// all rest while the verdict is open, it returns how long until the first
// may be reused; while it is "closes" it returns none (streams dial), or
// with atMax (none may be dialled) a resting one. p.mu must be held.
func (p *h1Pool) takeIdle(atMax bool) (*h1Conn, time.Duration) {
	var now time.Time
	need, waits := time.Duration(-1), false
	var wait time.Duration
	for i := len(p.idle) - 1; i >= 0; i-- {
		c := p.idle[i]
		if c.lastStream {
			if need < 0 {
				need, waits = p.e.closes.rest()
			}
			if need > 0 { // no clock read once the server is known to keep
				if now.IsZero() {
					now = time.Now()
				}
				if idle := now.Sub(c.idleAt); idle < need && (!atMax || waits) {
					if left := need - idle; wait == 0 || left < wait {
						wait = left
					}
					continue
				}
			}
		}
		copy(p.idle[i:], p.idle[i+1:])
		p.idle[len(p.idle)-1] = nil
		p.idle = p.idle[:len(p.idle)-1]
		return c, 0
	}
	if !waits {
		wait = 0 // "closes": dial rather than wait for a probe's connection
	}
	return nil, wait
}

// put returns a connection after a complete response it can carry another
// request after.
func (p *h1Pool) put(c *h1Conn) {
	c.idleAt = time.Now()
	p.mu.Lock()
	if p.closed {
		p.mu.Unlock()
		p.discard(c)
		return
	}
	p.idle = append(p.idle, c)
	p.wakeOne()
	check := c.lastStream && p.e.closes.open() // c is another's once unlocked
	p.mu.Unlock()
	if check {
		time.AfterFunc(p.e.closes.settle, func() { p.checkRested(c) })
	}
}

// checkRested looks for closing evidence without risking a request: c,
// idle since a streamed response, has rested streamSettle. Closed by the
// server, it is evidence of closing and leaves the pool. Still open, it
// stays, and proves nothing yet: a loaded server may close later than
// streamSettle, so only a response on a reused connection is evidence of
// keeping. A connection taken or closed meanwhile is not looked at.
func (p *h1Pool) checkRested(c *h1Conn) {
	d := &p.e.closes
	p.mu.Lock()
	i := slices.Index(p.idle, c)
	if i < 0 || p.closed || !d.open() || c.alive() {
		p.mu.Unlock()
		return
	}
	p.idle = slices.Delete(p.idle, i, i+1)
	fin := c.peekN == 0 && c.peekE == 0
	p.mu.Unlock()
	if fin {
		d.closed() // a FIN soon after a complete stream
	}
	p.discard(c)
}

// discard closes c (nil: a dial that failed) and frees its place.
func (p *h1Pool) discard(c *h1Conn) {
	if c != nil {
		_ = c.c.Close()
	}
	p.mu.Lock()
	p.open--
	p.wakeOne()
	p.mu.Unlock()
}

func (p *h1Pool) wakeOne() {
	if len(p.waiters) > 0 {
		close(p.waiters[0])
		p.waiters = p.waiters[1:]
	}
}

// closeIdle closes the idle connections; with final, later puts close too.
func (p *h1Pool) closeIdle(final bool) {
	p.mu.Lock()
	idle := p.idle
	p.idle = nil
	p.closed = p.closed || final
	p.mu.Unlock()
	for _, c := range idle {
		p.discard(c)
	}
	if final {
		p.reactorsOnce.Do(func() {}) // none may start after this
		for _, rc := range p.reactors {
			rc.Close()
		}
	}
}

// reactor returns the reactor for a new connection, round robin; nil when
// reads stay on the senders' goroutines (not Linux, Config.NoReactor, or
// epoll refused).
func (p *h1Pool) reactor() *h1.Reactor {
	p.reactorsOnce.Do(func() {
		if p.e.cfg.NoReactor {
			return
		}
		for range runtime.GOMAXPROCS(0) {
			rc, err := h1.NewReactor()
			if err != nil {
				p.e.log.Debug("reading responses on the senders' goroutines", "err", err)
				break
			}
			p.reactors = append(p.reactors, rc)
		}
	})
	if len(p.reactors) == 0 {
		return nil
	}
	return p.reactors[int(p.reactorNext.Add(1))%len(p.reactors)]
}

func (p *h1Pool) dialConn(ctx context.Context, ph *dialPhases) (*h1Conn, error) {
	clock := p.e.clock
	addr := p.addr
	if p.e.cfg.Dial == nil {
		// Resolve apart from connecting, so the record can tell them.
		host, port, _ := net.SplitHostPort(addr)
		if ip := net.ParseIP(host); ip == nil {
			t0 := clock.Now()
			ips, err := net.DefaultResolver.LookupIPAddr(ctx, host)
			ph.dns = clock.Now() - t0
			if err != nil {
				return nil, err
			}
			if len(ips) == 0 {
				return nil, &net.DNSError{Err: "no addresses", Name: host}
			}
			addr = net.JoinHostPort(ips[0].IP.String(), port)
		}
	}
	t0 := clock.Now()
	nc, err := p.dial(ctx, "tcp", addr)
	ph.connect = clock.Now() - t0
	if err != nil {
		return nil, err
	}
	tc := h1.NewConn(nc, p.stamps)
	c := &h1Conn{tc: tc, c: tc}
	if p.tls != nil {
		t0 := clock.Now()
		tlc := tls.Client(tc, p.tls)
		hctx, cancel := context.WithTimeout(ctx, 10*time.Second)
		err := tlc.HandshakeContext(hctx)
		cancel()
		ph.tls = clock.Now() - t0
		if err != nil {
			_ = nc.Close()
			return nil, err
		}
		c.c = tlc
	} else if tcp, ok := nc.(*net.TCPConn); ok {
		c.tcp = tcp
		if tc.Stamped() {
			if rc := p.reactor(); rc != nil {
				tc.UseReactor(rc)
			}
		}
	}
	if tcp, ok := nc.(*net.TCPConn); ok {
		// The idle check peeks the socket, below TLS too: after a
		// complete response nothing may be pending but a close.
		if raw, err := tcp.SyscallConn(); err == nil {
			c.raw = raw
			c.peekFn = c.peek
		}
	}
	return c, nil
}

// alive reports whether an idle connection is still open: the server has
// neither closed it (llama.cpp closes after every streamed response) nor
// sent anything unasked. One non-blocking peek.
func (c *h1Conn) alive() bool {
	if c.raw == nil {
		return true // a dial override without a socket: a closed one fails its request
	}
	c.peekN, c.peekE = 0, 0
	if c.raw.Control(c.peekFn) != nil {
		return false
	}
	return c.peekE == syscall.EAGAIN
}

func (c *h1Conn) peek(fd uintptr) { c.peekN, c.peekE = h1.PeekFD(fd, &c.peekB[0]) }

// write sends the request head and body: one write(2) for a small body,
// writev for a large one (no copy). n is how many bytes the kernel
// accepted (for TLS: of the plaintext).
func (c *h1Conn) write(s *Sender, head, body []byte) (n int64, err error) {
	if len(body) > 64<<10 && c.tcp != nil {
		s.wvec = append(s.wvec[:0], head, body)
		return s.wvec.WriteTo(c.tcp)
	}
	s.wbuf = append(append(s.wbuf[:0], head...), body...)
	k, err := c.c.Write(s.wbuf)
	if cap(s.wbuf) > 256<<10 {
		s.wbuf = nil // one huge prompt must not pin its buffer
	}
	return int64(k), err
}

// pastDeadline aborts blocked I/O at once.
var pastDeadline = time.Unix(1, 0)

// requestHead renders p's request line and headers for HTTP/1.1, with the
// request id and, when asked, Connection: close.
func (s *Sender) requestHead(p *Prepared, id uint64, closeConn bool) []byte {
	b := append(s.head[:0], p.Head...)
	b = append(b, "X-Request-Id: "...)
	b = strconv.AppendUint(b, id, 10)
	b = append(b, "\r\n"...)
	if closeConn {
		b = append(b, "Connection: close\r\n"...)
	}
	b = append(b, "\r\n"...)
	s.head = b
	return b
}

// doH1 is Do over reprise's HTTP/1.1 client.
//
// A request is sent again only when it provably never reached the server:
// its write on a reused keep-alive connection failed before the kernel
// accepted a single byte (the server had reset the connection after the
// idle check). Anything later — a reset or an EOF after the request was
// written, even before any response byte — may follow the server reading
// the request (an injected reset-before-headers does exactly that), so it
// is the request's failure, recorded, never re-sent. An early answer (a
// 413 while the body is still being written, then a close) is read and
// recorded although the write failed.
func (s *Sender) doH1(ctx context.Context, p *Prepared, r *record.Request) {
	e := s.e
	pool := e.pool
	for attempt := 1; ; attempt++ {
		// sent_ns is before the pool wait, DNS and connect: they fall
		// inside TTFT, as in AIPerf (records.md).
		var ph dialPhases
		sent := e.clock.Now()
		if attempt == 1 {
			r.SentNS = sent
		}
		c, reused, err := pool.get(ctx, &ph)
		got := e.clock.Now()
		r.ConnReused = reused
		r.BlockedNS = max(got-sent-ph.dns-ph.connect-ph.tls, 0)
		r.DNSNS, r.ConnectNS = ph.dns, ph.connect+ph.tls
		if err != nil {
			r.EndNS = got
			kind, msg := classify(ctx, err)
			s.fail(r, kind, msg)
			return
		}
		closeConn := p.Stream && e.closes.askClose()
		head := s.requestHead(p, r.RequestID, closeConn)
		var deadline time.Time
		if e.cfg.Timeout > 0 {
			deadline = time.Now().Add(e.cfg.Timeout)
			_ = c.c.SetDeadline(deadline)
		}
		s.deadline = deadline // counting the output's tokens watches it too
		stop := context.AfterFunc(ctx, func() { _ = c.c.SetDeadline(pastDeadline) })
		n, err := c.write(s, head, p.Body)
		err = timedOut(ctx, err)
		if err == nil {
			r.WroteNS = e.clock.Now()
		} else if n == 0 && reused && peerClosed(err) && attempt < maxAttempts && ctx.Err() == nil {
			// Nothing of it left this machine: send it again.
			stop()
			pool.discard(c)
			e.retries.Add(1)
			r.Retries++
			s.noteRetry(r, err)
			continue
		}
		got1 := false
		if err == nil || peerClosed(err) {
			// After a failed write the server may have answered early
			// (413 before reading the whole body): read what it sent.
			var rerr error
			got1, rerr = s.readH1(ctx, deadline, c, p, r, sent, reused && c.lastStream)
			if err == nil || got1 {
				err = rerr
			}
		}
		if err != nil && !got1 && r.WroteNS == 0 && !errors.Is(err, errRequestTimeout) && ctx.Err() == nil {
			err = fmt.Errorf("write request: %w (%d of %d bytes sent)", err, n, len(head)+len(p.Body))
		}
		aborted := !stop()
		if err != nil && !got1 && reused && c.lastStream && e.closes.soon(time.Since(c.idleAt)) && (peerClosed(err) || errors.Is(err, h1.ErrEOFHead)) {
			// Closed soon after the stream before it answered this
			// request: the request fails (it may have been read), and
			// it is evidence of closing after streams.
			e.closes.closed()
		}
		if err == nil && r.WroteNS != 0 && !aborted && !closeConn && s.dec.Reusable() {
			if e.cfg.Timeout > 0 {
				_ = c.c.SetDeadline(time.Time{})
			}
			c.lastStream = p.Stream
			pool.put(c)
			return
		}
		if err == nil && !closeConn && s.dec.Done() && s.dec.Close && p.Stream && s.dec.Status < 300 {
			e.closes.closed() // announced a close after a complete stream, unasked
		}
		pool.discard(c)
		if err == nil {
			return
		}
		r.EndNS = max(r.EndNS, e.clock.Now())
		kind, msg := classify(ctx, err)
		s.fail(r, kind, msg)
		return
	}
}

// noteRetry adds a given-up attempt's error to r.RetryErrors.
func (s *Sender) noteRetry(r *record.Request, err error) {
	msg := truncate(err.Error(), maxErrorMessage/2) + " (nothing sent)"
	if r.RetryErrors != "" {
		msg = r.RetryErrors + "; " + msg
	}
	r.RetryErrors = msg
}

// peerClosed reports whether a write failed because the server had closed
// or reset the connection.
func peerClosed(err error) bool {
	return errors.Is(err, syscall.EPIPE) || errors.Is(err, syscall.ECONNRESET)
}

// errRequestTimeout is the connection deadline of --timeout expiring.
var errRequestTimeout = fmt.Errorf("request timed out (--timeout): %w", os.ErrDeadlineExceeded)

// timedOut names a deadline error as --timeout's: the other deadline, a
// past one set when ctx is cancelled, is classified by ctx's cause.
func timedOut(ctx context.Context, err error) error {
	if err != nil && ctx.Err() == nil && errors.Is(err, os.ErrDeadlineExceeded) {
		return errRequestTimeout
	}
	return err
}

// readH1 reads the response to the request just written on c. got1 says
// whether any response byte arrived. err is a transport or protocol
// error; an HTTP error status or a failed parse is recorded in r with
// err == nil.
func (s *Sender) readH1(ctx context.Context, deadline time.Time, c *h1Conn, p *Prepared, r *record.Request, sent int64, afterStream bool) (got1 bool, err error) {
	s.dec.Reset()
	s.h1 = h1Read{ctx: ctx, p: p, r: r, floor: sent, afterStream: afterStream}
	if s.buf == nil {
		s.buf = make([]byte, DefaultReadBuffer)
	}
	if c.tcp != nil && c.tc.Stamped() {
		if s.onRecvFn == nil {
			s.onRecvFn = s.onRecv // one method value per sender, not per request
		}
		if c.tc.OnReactor() && p.Stream {
			// A stream's many reads go to the reactor; a whole response
			// in a read or two is not worth its two epoll_ctl calls.
			err = c.tc.Await(ctx, deadline, s.buf, s.onRecvFn)
		} else {
			err = c.tc.ReadLoop(s.buf, s.onRecvFn)
		}
	} else {
		for !s.h1.stop {
			n, rerr := c.c.Read(s.buf)
			now, wall := s.e.clock.NowWall()
			s.onRead(n, c.tc.Arrival(now, wall, s.h1.floor), now, rerr)
		}
	}
	h := &s.h1
	got1 = r.Reads > 0
	if err != nil {
		// The wait was given up (deadline, cancellation), not ended by
		// a read: the request ends now, not at its last byte.
		r.EndNS = max(r.EndNS, s.e.clock.Now())
	} else {
		err = h.err
	}
	err = timedOut(ctx, err)
	switch {
	case h.began:
		s.endBody(ctx, r, err)
		return got1, nil
	case h.errBody:
		s.httpError(ctx, s.dec.Status, s.errBody, err, r)
		return got1, nil
	}
	return got1, err
}

// h1Read is the state of one response read.
type h1Read struct {
	ctx   context.Context
	p     *Prepared
	r     *record.Request
	floor int64
	// afterStream: the connection carried a streamed response before
	// this request; headers now are evidence the server keeps such
	// connections (streamCloses).
	afterStream bool
	began       bool // a 2xx body is being consumed
	errBody     bool // a non-2xx body is being collected
	stop        bool
	err         error
}

// onRecv is the kernel-stamped read callback: n bytes of s.buf arrived
// at stamp (Unix ns, 0 unknown), or the read failed with errno. It
// returns true when the response is over.
func (s *Sender) onRecv(n int, stamp int64, errno syscall.Errno) bool {
	now, wall := s.e.clock.NowWall()
	t := now
	if stamp != 0 {
		t = h1.ArrivalOf(stamp, now, wall, s.h1.floor)
	}
	var err error
	switch {
	case errno != 0:
		err = &net.OpError{Op: "read", Net: "tcp", Err: os.NewSyscallError("recvmsg", errno)}
	case n == 0:
		err = io.EOF
	}
	s.onRead(n, t, now, err)
	return s.h1.stop
}

// onRead handles one read: n bytes of s.buf stamped t (now: when the read
// returned), then err if the read also failed or hit the end.
func (s *Sender) onRead(n int, t, now int64, err error) {
	h := &s.h1
	r := h.r
	if n > 0 {
		h.floor = t
		r.ReadLagNS = max(r.ReadLagNS, now-t)
		r.Reads++
		r.BytesReceived += int64(n)
		s.h1Bytes(s.buf[:n], t)
	}
	r.EndNS = t
	if h.stop {
		return
	}
	if err != nil {
		if errors.Is(err, io.EOF) {
			err = s.dec.EOF()
		}
		h.err, h.stop = err, true
		return
	}
	if s.dec.Done() || (h.began && s.parseErr != nil) {
		h.stop = true
	}
}

// h1Bytes decodes one read's bytes and hands the body on.
func (s *Sender) h1Bytes(b []byte, t int64) {
	h := &s.h1
	for len(b) > 0 && !h.stop {
		wasHead := !s.dec.HeadersDone()
		n, used, err := s.dec.Decode(b)
		if err != nil {
			// The body decoded before the bad framing still counts.
			if n > 0 && h.began {
				s.feedBody(b[:n], t)
			}
			h.err, h.stop = err, true
			return
		}
		body := b[:n]
		b = b[used:]
		if wasHead && s.dec.HeadersDone() {
			if h.afterStream {
				s.e.closes.kept()
			}
			h.r.HeadersNS = t
			h.r.StatusCode = int32(s.dec.Status)
			if s.dec.Status >= 200 && s.dec.Status < 300 {
				if err := s.beginBody(h.p, h.r, s.h1Stream()); err != nil {
					h.stop = true // recorded as an adapter failure
					return
				}
				h.began = true
				if s.dec.ContentLength() > s.e.maxBodyBytes {
					s.overCap(capBody) // no need to read it to know
					h.stop = true
					return
				}
			} else {
				h.errBody = true
				s.errBody = s.errBody[:0]
				s.bodyBytes = 0
			}
		}
		if len(body) > 0 {
			switch {
			case h.began:
				s.feedBody(body, t)
			case h.errBody:
				if room := maxErrorBody - len(s.errBody); room > 0 {
					s.errBody = append(s.errBody, body[:min(len(body), room)]...)
				}
				// The rest is read only to reuse the connection, up to
				// the body cap.
				if s.bodyBytes += int64(len(body)); s.bodyBytes > s.e.maxBodyBytes {
					h.err, h.stop = &limitError{"body bytes", "--max-response-bytes", s.e.maxBodyBytes}, true
					return
				}
			}
		}
		if s.dec.Done() {
			if len(b) > 0 {
				s.dec.Close = true // bytes after the response: never reuse
			}
			return
		}
	}
}

// h1Stream decides whether a 2xx response is an event stream.
func (s *Sender) h1Stream() bool {
	mt := s.dec.MediaType()
	if !s.h1.p.Stream {
		return false
	}
	return h1.EqualFold(mt, "text/event-stream") ||
		(h1.EqualFold(mt, "application/x-ndjson") && s.e.info.Framing == adapter.FramingNDJSON)
}
