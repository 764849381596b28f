package h1

import (
	"io"
	"net"
	"sync/atomic"
	"syscall"
)

// rxConn is every connection the client dials. Where the platform allows
// (Linux, a TCP socket), it learns from the kernel when the bytes of each
// read arrived: each read is a recvmsg(2) that also returns the receive
// time of its last segment (conn_linux.go); elsewhere a read is stamped
// when it returns.
type rxConn struct {
	net.Conn
	// rx reads with kernel receive timestamps; nil when they are off (not
	// Linux, Config.NoKernelStamps, a connection without a socket, or
	// refused).
	rx *rxReader
	// rxNS is the kernel's receive time of the last segment consumed by
	// the latest Read, in Unix ns of the system's real-time clock; 0 when
	// unknown. Written by whichever goroutine reads (TLS's, the caller's),
	// read by the caller.
	rxNS atomic.Int64
}

// recvFunc is told of each read of rxReader.loop and await: n bytes
// arrived at stamp (Unix ns on the real-time clock, 0 unknown), or the
// read failed with errno, or n == 0 at the end of the stream. It returns
// true when the response is over.
type recvFunc = func(n int, stamp int64, errno syscall.Errno) bool

func newRxConn(c net.Conn, kernelStamps bool) *rxConn {
	tc := &rxConn{Conn: c}
	if tcp, ok := c.(*net.TCPConn); ok {
		_ = tcp.SetNoDelay(true)
		if kernelStamps {
			tc.rx = newRxReader(tcp)
		}
	}
	return tc
}

func (c *rxConn) Read(p []byte) (int, error) {
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

// arrival returns when the bytes of the latest Read arrived, on the
// client's clock: the kernel's receive stamp when there is one, kept
// within [floor, now] (floor: the previous read's time, as bytes arrive
// in order), else now. now and wall are one reading of the client's
// clock and of the real-time clock ([Clock.NowWall]), which converts the
// kernel's real-time stamp.
func (c *rxConn) arrival(now, wall, floor int64) int64 {
	if c.rx == nil {
		return now
	}
	rx := c.rxNS.Load()
	if rx == 0 {
		return now
	}
	return arrivalOf(rx, now, wall, floor)
}

// arrivalOf converts a kernel receive stamp (real-time clock) to the
// client's clock, kept within [floor, now]. now and wall are two clock
// reads a few ns apart, so the same stamp converts to a slightly
// different time from read to read: clamp rather than fall back.
func arrivalOf(stamp, now, wall, floor int64) int64 {
	return min(max(stamp+(now-wall), floor), now)
}
