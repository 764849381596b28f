package h1

import (
	"context"
	"crypto/tls"
	"errors"
	"log/slog"
	"net"
	"net/url"
	"runtime"
	"slices"
	"strings"
	"sync"
	"sync/atomic"
	"syscall"
	"time"
)

// Clock gives the times the client records: Unix ns on the caller's clock.
// Implementations must be safe for concurrent use and must not allocate.
type Clock interface {
	// Now returns the current time.
	Now() int64
	// NowWall returns Now and the system's real-time clock (Unix ns)
	// read at the same instant: their difference converts a kernel
	// receive stamp, which is on the real-time clock, to this clock.
	NowWall() (now, wall int64)
}

// Config configures a [Client].
type Config struct {
	// BaseURL is the server: an http:// or https:// URL whose path
	// prefixes every request's ([Client.AppendRequestLine]).
	BaseURL string
	// TLS configures https:// connections; nil = the system's roots and
	// the URL's host name. Connections always ask for http/1.1 (ALPN).
	TLS *tls.Config
	// Dial dials the server; nil = a net.Dialer with 30 s connect timeout
	// and keep-alive.
	Dial func(ctx context.Context, network, addr string) (net.Conn, error)
	// MaxConnections caps the open connections (0 = no cap): a request
	// beyond it waits for one.
	MaxConnections int
	// Reuse says which requests share a connection (zero: ReusePooled).
	Reuse Reuse
	// Timeout bounds one request from its write to the end of its
	// response (0 = none). The pool wait and the dial are not in it.
	Timeout time.Duration
	// NoKernelStamps stamps reads when they return instead of when the
	// kernel received the bytes (SO_TIMESTAMPNS, Linux).
	NoKernelStamps bool
	// NoReactor reads every response on the goroutine that called Do
	// instead of reading streamed ones on the reactors (conn_linux.go).
	NoReactor bool
	// Clock stamps everything. Required.
	Clock Clock
	// Log receives rare diagnostics; nil discards.
	Log *slog.Logger
}

// Reuse says which requests share a connection.
type Reuse uint8

// The reuse strategies (AIPerf's --connection-reuse-strategy).
const (
	// ReusePooled keeps connections alive in one pool: any request takes
	// any idle connection (the default).
	ReusePooled Reuse = iota
	// ReuseNever sends every request on a connection of its own, closed
	// after its response (Connection: close).
	ReuseNever
	// ReuseSticky gives every session (Request.Session) a connection of
	// its own: its requests go on it one after the other, no other
	// session's ever does, and it is closed after the session's last
	// request (Request.EndSession). A request without a session is sent
	// as with ReuseNever.
	ReuseSticky
)

// Client is a keep-alive pool of HTTP/1.1 connections to one server and
// what it has learned about them. It is safe for concurrent use; each
// goroutine that sends uses its own [Caller].
//
// Idle connections are reused last in, first out (the warm ones), and at
// most Config.MaxConnections are open. An idle connection is checked with
// a non-blocking peek before it is reused, unless it came back less than
// freshFor ago from a complete 2xx response that was not streamed.
type Client struct {
	addr    string // host:port to dial
	host    string // Host header
	path    string // the base URL's path, escaped, without a trailing slash
	tls     *tls.Config
	dial    func(ctx context.Context, network, addr string) (net.Conn, error)
	resolve bool // resolve names apart from dialing (no Config.Dial)
	stamps  bool // kernel receive timestamps
	// unhold ends holdStamps' hold (nil: none), once, at Close.
	unhold  func()
	reactor bool // may read on reactors
	max     int
	reuse   Reuse
	idleFor time.Duration
	timeout time.Duration
	clock   Clock
	log     *slog.Logger

	mu   sync.Mutex
	idle []*conn
	open int
	// sessions are the parked connections of ReuseSticky, by session.
	sessions map[uint64]*conn
	waiters  []chan struct{}
	closed   bool

	// reactors read plain-TCP streamed responses (conn_linux.go), one
	// per P, started with the first connection; none when they could not
	// start.
	reactorsOnce sync.Once
	reactors     []*reactor
	reactorNext  atomic.Uint32

	// closes learns whether the server closes connections after streamed
	// responses (llama.cpp does, although it advertises keep-alive).
	closes  streamCloses
	retries atomic.Int64
}

// conn is one connection of the pool.
type conn struct {
	tc     *rxConn      // the TCP connection (it stamps reads)
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
	// plain: the last response on it was a complete 2xx without a
	// stream, announcing no close (see fresh).
	plain bool
}

// freshFor is how long after a plain response (conn.plain) a connection
// is reused without the idle check's peek. A server closes a kept-alive
// connection after an idle timeout (seconds: uvicorn 5 s, llama.cpp 5 s,
// nginx 75 s), after an error (announced with Connection: close, or not
// reused here), or after a streamed response (llama.cpp, 0.3 ms later,
// which conn.lastStream keeps peeking for); none closes within a
// millisecond of a successful plain response without saying so. At
// thousands of requests per second almost every reuse comes that soon,
// and the peek was one system call per request.
const freshFor = time.Millisecond

// fresh reports whether cn, idle for idle, is reused without a peek.
func (cn *conn) fresh(idle time.Duration) bool { return cn.plain && idle < freshFor }

// New returns a client for cfg.BaseURL. It does not connect.
func New(cfg Config) (*Client, error) {
	if cfg.Clock == nil {
		return nil, errors.New("h1: Config.Clock is nil")
	}
	u, err := url.Parse(cfg.BaseURL)
	if err != nil {
		return nil, err
	}
	if u.Scheme != "http" && u.Scheme != "https" {
		return nil, errors.New("h1: want an http:// or https:// URL")
	}
	c := &Client{host: u.Host, path: strings.TrimRight(u.EscapedPath(), "/"), dial: cfg.Dial, resolve: cfg.Dial == nil,
		stamps: !cfg.NoKernelStamps, reactor: !cfg.NoReactor, max: cfg.MaxConnections, reuse: cfg.Reuse,
		idleFor: 90 * time.Second, timeout: cfg.Timeout, clock: cfg.Clock, log: cfg.Log}
	if c.log == nil {
		c.log = slog.New(slog.DiscardHandler)
	}
	if c.dial == nil {
		d := &net.Dialer{Timeout: 30 * time.Second, KeepAlive: 30 * time.Second}
		c.dial = d.DialContext
	}
	c.closes = newStreamCloses(c.log, strings.TrimRight(cfg.BaseURL, "/"))
	if c.stamps {
		c.unhold = holdStamps()
	}
	port := u.Port()
	if port == "" {
		port = "80"
		if u.Scheme == "https" {
			port = "443"
		}
	}
	c.addr = net.JoinHostPort(u.Hostname(), port)
	if u.Scheme == "https" {
		if cfg.TLS != nil {
			c.tls = cfg.TLS.Clone()
		} else {
			c.tls = &tls.Config{}
		}
		if c.tls.ServerName == "" {
			c.tls.ServerName = u.Hostname()
		}
		c.tls.NextProtos = []string{"http/1.1"}
	}
	return c, nil
}

// AppendRequestLine appends the request line of method and path (under
// the base URL's path) and the Host header to dst: how every request's
// Head begins.
func (c *Client) AppendRequestLine(dst []byte, method, path string) []byte {
	dst = append(dst, method...)
	dst = append(dst, ' ')
	dst = append(dst, c.path...)
	dst = append(dst, path...)
	dst = append(dst, " HTTP/1.1\r\nHost: "...)
	dst = append(dst, c.host...)
	return append(dst, "\r\n"...)
}

// Retries returns how many times a request was sent again because its
// previous attempt provably never reached the server.
func (c *Client) Retries() int64 { return c.retries.Load() }

// Verdict returns whether the server is believed to close connections
// after streamed responses.
func (c *Client) Verdict() Verdict { return c.closes.get() }

// Close closes the idle connections, and every connection put back
// later, and stops the reactors. Call it when no request is in flight.
func (c *Client) Close() { c.closeIdle(true) }

// dialPhases are the set-up times of a new connection, ns.
type dialPhases struct{ dns, connect, tls int64 }

// get returns an idle connection that is still open, or dials one.
func (c *Client) get(ctx context.Context, ph *dialPhases, session uint64) (*conn, bool, error) {
	if c.reuse == ReuseSticky {
		return c.getSession(ctx, ph, session)
	}
	d := &c.closes
	for {
		c.mu.Lock()
		atMax := c.max != 0 && c.open >= c.max
		cn, wait := c.takeIdle(atMax)
		if cn != nil {
			c.mu.Unlock()
			idle := time.Since(cn.idleAt)
			if idle < c.idleFor && (cn.fresh(idle) || cn.alive()) {
				return cn, true, nil
			}
			if cn.peekN == 0 && cn.peekE == 0 && cn.lastStream && d.soon(idle) {
				d.closed() // a FIN soon after a complete stream
			}
			c.discard(cn)
			continue
		}
		if wait > 0 && atMax {
			// Every idle connection rests after a stream, the server is
			// not known to close after streams, and no other may be
			// opened: wait for the first. Below the cap a request dials
			// instead (its connect time is recorded apart, in connect_ns,
			// where a wait would hide in TTFT), until a rested connection
			// is reused and the verdict known.
			c.mu.Unlock()
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
			c.open++
			c.mu.Unlock()
			cn, err := c.dialConn(ctx, ph)
			if err != nil {
				c.discard(nil)
			}
			return cn, false, err
		}
		if err := c.waitSlot(ctx); err != nil {
			return nil, false, err
		}
	}
}

// waitSlot waits, c.mu held and released, until a connection is put back
// or closed, or ctx ends.
func (c *Client) waitSlot(ctx context.Context) error {
	w := make(chan struct{})
	c.waiters = append(c.waiters, w)
	c.mu.Unlock()
	select {
	case <-w:
		return nil
	case <-ctx.Done():
		c.mu.Lock()
		found := false
		for i, x := range c.waiters {
			if x == w {
				c.waiters = append(c.waiters[:i], c.waiters[i+1:]...)
				found = true
				break
			}
		}
		if !found {
			c.wakeOne() // woken as we gave up: pass it on
		}
		c.mu.Unlock()
		return context.Cause(ctx)
	}
}

// getSession is get under ReuseSticky: session's parked connection while
// it is still open, else a new one; a connection parked for another
// session is closed when MaxConnections leaves no room.
func (c *Client) getSession(ctx context.Context, ph *dialPhases, session uint64) (*conn, bool, error) {
	for {
		c.mu.Lock()
		if cn := c.takeSession(session); cn != nil {
			c.mu.Unlock()
			if idle := time.Since(cn.idleAt); idle < c.idleFor && (cn.fresh(idle) || cn.alive()) {
				return cn, true, nil
			}
			c.discard(cn)
			continue
		}
		for c.max != 0 && c.open >= c.max && c.evictSession() {
		}
		if c.max == 0 || c.open < c.max {
			c.open++
			c.mu.Unlock()
			cn, err := c.dialConn(ctx, ph)
			if err != nil {
				c.discard(nil)
			}
			return cn, false, err
		}
		if err := c.waitSlot(ctx); err != nil {
			return nil, false, err
		}
	}
}

// takeSession removes and returns session's parked connection, nil when
// it has none. c.mu must be held.
func (c *Client) takeSession(session uint64) *conn {
	cn := c.sessions[session]
	if cn != nil {
		delete(c.sessions, session)
	}
	return cn
}

// evictSession closes the connection parked longest of another session
// than session, to make room under MaxConnections; false when none is
// parked. c.mu must be held; it is held again on return.
func (c *Client) evictSession() bool {
	var oldest uint64
	var cn *conn
	for s, x := range c.sessions {
		if cn == nil || x.idleAt.Before(cn.idleAt) {
			oldest, cn = s, x
		}
	}
	if cn == nil {
		return false
	}
	delete(c.sessions, oldest)
	c.mu.Unlock()
	c.discard(cn)
	c.mu.Lock()
	return true
}

// takeIdle removes and returns the most recently used idle connection
// that need not rest after a streamed response (streamCloses.rest). When
// all rest while the verdict is open, it returns how long until the first
// may be reused; while it is "closes" it returns none (streams dial), or
// with atMax (none may be dialled) a resting one. c.mu must be held.
func (c *Client) takeIdle(atMax bool) (*conn, time.Duration) {
	var now time.Time
	need, waits := time.Duration(-1), false
	var wait time.Duration
	for i := len(c.idle) - 1; i >= 0; i-- {
		cn := c.idle[i]
		if cn.lastStream {
			if need < 0 {
				need, waits = c.closes.rest()
			}
			if need > 0 { // no clock read once the server is known to keep
				if now.IsZero() {
					now = time.Now()
				}
				if idle := now.Sub(cn.idleAt); idle < need && (!atMax || waits) {
					if left := need - idle; wait == 0 || left < wait {
						wait = left
					}
					continue
				}
			}
		}
		copy(c.idle[i:], c.idle[i+1:])
		c.idle[len(c.idle)-1] = nil
		c.idle = c.idle[:len(c.idle)-1]
		return cn, 0
	}
	if !waits {
		wait = 0 // "closes": dial rather than wait for a probe's connection
	}
	return nil, wait
}

// put returns a connection after a complete response it can carry another
// request after.
func (c *Client) put(cn *conn) {
	cn.idleAt = time.Now()
	c.mu.Lock()
	if c.closed {
		c.mu.Unlock()
		c.discard(cn)
		return
	}
	c.idle = append(c.idle, cn)
	c.wakeOne()
	check := cn.lastStream && c.closes.open() // cn is another's once unlocked
	c.mu.Unlock()
	if check {
		time.AfterFunc(c.closes.settle, func() { c.checkRested(cn) })
	}
}

// park keeps cn, after a complete response of session, for the
// session's next request.
func (c *Client) park(cn *conn, session uint64) {
	cn.idleAt = time.Now()
	c.mu.Lock()
	if c.closed {
		c.mu.Unlock()
		c.discard(cn)
		return
	}
	if c.sessions == nil {
		c.sessions = map[uint64]*conn{}
	}
	old := c.sessions[session]
	c.sessions[session] = cn
	c.wakeOne() // a request waiting at MaxConnections may close it for its own session
	c.mu.Unlock()
	if old != nil {
		c.discard(old) // two requests of one session at once (a DAG): keep the newer
	}
}

// checkRested looks for closing evidence without risking a request: cn,
// idle since a streamed response, has rested streamSettle. Closed by the
// server, it is evidence of closing and leaves the pool. Still open, it
// stays, and proves nothing yet: a loaded server may close later than
// streamSettle, so only a response on a reused connection is evidence of
// keeping. A connection taken or closed meanwhile is not looked at.
func (c *Client) checkRested(cn *conn) {
	d := &c.closes
	c.mu.Lock()
	i := slices.Index(c.idle, cn)
	if i < 0 || c.closed || !d.open() || cn.alive() {
		c.mu.Unlock()
		return
	}
	c.idle = slices.Delete(c.idle, i, i+1)
	fin := cn.peekN == 0 && cn.peekE == 0
	c.mu.Unlock()
	if fin {
		d.closed() // a FIN soon after a complete stream
	}
	c.discard(cn)
}

// discard closes cn (nil: a dial that failed) and frees its place.
func (c *Client) discard(cn *conn) {
	if cn != nil {
		_ = cn.c.Close()
	}
	c.mu.Lock()
	c.open--
	c.wakeOne()
	c.mu.Unlock()
}

func (c *Client) wakeOne() {
	if len(c.waiters) > 0 {
		close(c.waiters[0])
		c.waiters = c.waiters[1:]
	}
}

// closeIdle closes the idle connections; with final, later puts close too.
func (c *Client) closeIdle(final bool) {
	c.mu.Lock()
	idle := c.idle
	c.idle = nil
	for s, cn := range c.sessions {
		idle = append(idle, cn)
		delete(c.sessions, s)
	}
	c.closed = c.closed || final
	unhold := c.unhold
	if final {
		c.unhold = nil
	}
	c.mu.Unlock()
	if final && unhold != nil {
		unhold()
	}
	for _, cn := range idle {
		c.discard(cn)
	}
	if final {
		c.reactorsOnce.Do(func() {}) // none may start after this
		for _, rc := range c.reactors {
			rc.close()
		}
	}
}

// reactorFor returns the reactor for a new connection, round robin; nil
// when reads stay on the callers' goroutines (not Linux,
// Config.NoReactor, or epoll refused).
func (c *Client) reactorFor() *reactor {
	c.reactorsOnce.Do(func() {
		if !c.reactor {
			return
		}
		for range runtime.GOMAXPROCS(0) {
			rc, err := newReactor()
			if err != nil {
				c.log.Debug("reading responses on the senders' goroutines", "err", err)
				break
			}
			c.reactors = append(c.reactors, rc)
		}
	})
	if len(c.reactors) == 0 {
		return nil
	}
	return c.reactors[int(c.reactorNext.Add(1))%len(c.reactors)]
}

func (c *Client) dialConn(ctx context.Context, ph *dialPhases) (*conn, error) {
	clock := c.clock
	addr := c.addr
	if c.resolve {
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
	nc, err := c.dial(ctx, "tcp", addr)
	ph.connect = clock.Now() - t0
	if err != nil {
		return nil, err
	}
	tc := newRxConn(nc, c.stamps)
	cn := &conn{tc: tc, c: tc}
	if c.tls != nil {
		t0 := clock.Now()
		tlc := tls.Client(tc, c.tls)
		hctx, cancel := context.WithTimeout(ctx, 10*time.Second)
		err := tlc.HandshakeContext(hctx)
		cancel()
		ph.tls = clock.Now() - t0
		if err != nil {
			_ = nc.Close()
			return nil, err
		}
		cn.c = tlc
	} else if tcp, ok := nc.(*net.TCPConn); ok {
		cn.tcp = tcp
		if tc.rx != nil {
			if rc := c.reactorFor(); rc != nil {
				tc.rx.useReactor(rc)
			}
		}
	}
	if tcp, ok := nc.(*net.TCPConn); ok {
		// The idle check peeks the socket, below TLS too: after a
		// complete response nothing may be pending but a close.
		if raw, err := tcp.SyscallConn(); err == nil {
			cn.raw = raw
			cn.peekFn = cn.peek
		}
	}
	return cn, nil
}

// alive reports whether an idle connection is still open: the server has
// neither closed it (llama.cpp closes after every streamed response) nor
// sent anything unasked. One non-blocking peek.
func (cn *conn) alive() bool {
	if cn.raw == nil {
		return true // a dial override without a socket: a closed one fails its request
	}
	cn.peekN, cn.peekE = 0, 0
	if cn.raw.Control(cn.peekFn) != nil {
		return false
	}
	return cn.peekE == syscall.EAGAIN
}

func (cn *conn) peek(fd uintptr) { cn.peekN, cn.peekE = peekSocket(fd, &cn.peekB[0]) }
