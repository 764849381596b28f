package h1

import (
	"context"
	"io"
	"net"
	"sync/atomic"
	"syscall"
	"time"
)

// Conn is a connection whose reads know when their bytes arrived. Where
// the platform allows (Linux, a TCP socket), each read is a recvmsg(2)
// that also returns the kernel's receive time of its last segment
// (conn_linux.go); elsewhere a read is stamped when it returns.
type Conn struct {
	net.Conn
	// rx reads with kernel receive timestamps; nil when they are off (not
	// Linux, a connection without a socket, or refused).
	rx *rxReader
	// rxNS is the kernel's receive time of the last segment consumed by
	// the latest read, in Unix ns of the system's real-time clock; 0 when
	// unknown. Written by whichever goroutine reads (TLS's, the sender's),
	// read by the sender.
	rxNS atomic.Int64
}

// RecvFunc is told of each read of [Conn.ReadLoop] and [Conn.Await]: n
// bytes arrived at stamp (Unix ns on the real-time clock, 0 unknown), or
// the read failed with errno, or n == 0 at the end of the stream. It
// returns true when the response is over.
type RecvFunc func(n int, stamp int64, errno syscall.Errno) bool

// NewConn wraps c, with TCP_NODELAY and, when kernelStamps, the kernel's
// receive timestamps turned on where they can be.
func NewConn(c net.Conn, kernelStamps bool) *Conn {
	tc := &Conn{Conn: c}
	if tcp, ok := c.(*net.TCPConn); ok {
		_ = tcp.SetNoDelay(true)
		if kernelStamps {
			tc.rx = newRxReader(tcp)
		}
	}
	return tc
}

// Read reads as net.Conn.Read does, keeping the receive stamp for
// [Conn.Arrival].
func (c *Conn) Read(p []byte) (int, error) {
	var n int
	var err error
	if c.rx != nil && len(p) > 0 {
		var stamp int64
		n, stamp, err = c.rx.read(p)
		if n > 0 {
			c.rxNS.Store(stamp)
		}
		if err != nil && err != io.EOF {
			// As net.Conn.Read wraps it: errors.Is still finds
			// ECONNRESET, net.ErrClosed and deadlines.
			err = &net.OpError{Op: "read", Net: "tcp", Source: c.LocalAddr(), Addr: c.RemoteAddr(), Err: err}
		}
	} else {
		n, err = c.Conn.Read(p)
	}
	return n, err
}

// Stamped reports whether c's reads carry the kernel's receive stamps, so
// [Conn.ReadLoop] and [Conn.Await] may be used.
func (c *Conn) Stamped() bool { return c.rx != nil }

// OnReactor reports whether [Conn.Await] reads on a reactor.
func (c *Conn) OnReactor() bool { return c.rx != nil && c.rx.rc != nil }

// UseReactor makes [Conn.Await] read on rc. c must be Stamped.
func (c *Conn) UseReactor(rc *Reactor) { c.rx.useReactor(rc) }

// ReadLoop reads into p on the calling goroutine until fn says the
// response is over. c must be Stamped.
func (c *Conn) ReadLoop(p []byte, fn RecvFunc) error { return c.rx.loop(p, fn) }

// Await reads into p on c's reactor until fn says the response is over,
// as ReadLoop does on the calling goroutine, and returns nil then;
// os.ErrDeadlineExceeded when ctx ends or deadline (zero: none) passes
// first. fn runs on the reactor's goroutine; everything it wrote is
// visible when Await returns. c must be Stamped.
func (c *Conn) Await(ctx context.Context, deadline time.Time, p []byte, fn RecvFunc) error {
	return c.rx.await(ctx, deadline, p, fn)
}

// PeekFD reports, without blocking or consuming, whether the socket fd
// has been closed by the peer (n == 0, errno == 0), has unread bytes
// (n > 0), or neither (errno EAGAIN). b receives the peeked byte.
func PeekFD(fd uintptr, b *byte) (n int, errno syscall.Errno) { return peekSocket(fd, b) }

// Arrival returns when the bytes of the latest read arrived, on the
// caller's clock: the kernel's receive stamp when there is one, kept
// within [floor, now] (floor: the previous read's time, as bytes arrive
// in order), else now. now and wall are one reading of the caller's clock
// and of the real-time clock, which converts the kernel's real-time
// stamp. A nil c returns now.
func (c *Conn) Arrival(now, wall, floor int64) int64 {
	if c == nil || c.rx == nil {
		return now
	}
	rx := c.rxNS.Load()
	if rx == 0 {
		return now
	}
	return ArrivalOf(rx, now, wall, floor)
}

// ArrivalOf converts a kernel receive stamp (real-time clock) to the
// caller's clock, kept within [floor, now]. now and wall are two clock
// reads a few ns apart, so the same stamp converts to a slightly
// different time from read to read: clamp rather than fall back.
func ArrivalOf(stamp, now, wall, floor int64) int64 {
	return min(max(stamp+(now-wall), floor), now)
}
