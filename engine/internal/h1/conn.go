package engine

import (
	"io"
	"net"
	"sync/atomic"
)

// trackedConn is every connection the engine dials. Where the platform
// allows, it learns from the kernel when the bytes of each read arrived.
type trackedConn struct {
	net.Conn
	// rx reads with kernel receive timestamps; nil when they are off (not
	// Linux, HTTP/2, a connection without a socket, or refused).
	rx *rxReader
	// rxNS is the kernel's receive time of the last segment consumed by
	// the latest read, in Unix ns of the system's real-time clock; 0 when
	// unknown. Written by whichever goroutine reads (TLS's, the sender's),
	// read by the sender.
	rxNS atomic.Int64
}

func newTrackedConn(c net.Conn, kernelStamps bool) *trackedConn {
	tc := &trackedConn{Conn: c}
	if tcp, ok := c.(*net.TCPConn); ok {
		_ = tcp.SetNoDelay(true)
		if kernelStamps {
			tc.rx = newRxReader(tcp)
		}
	}
	return tc
}

func (c *trackedConn) Read(p []byte) (int, error) {
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

// arrival returns when the bytes of the latest read arrived, on the
// engine's clock: the kernel's receive stamp when there is one, kept
// within [floor, now] (floor: the previous read's time, as bytes arrive
// in order), else now. now and wall are one reading of the engine's clock
// and of the real-time clock ([Clock.NowWall]), which converts the
// kernel's real-time stamp.
func (c *trackedConn) arrival(now, wall, floor int64) int64 {
	if c == nil || c.rx == nil {
		return now
	}
	rx := c.rxNS.Load()
	if rx == 0 {
		return now
	}
	// now and wall are two clock reads a few ns apart, so the same stamp
	// converts to a slightly different time from read to read: clamp
	// into [floor, now] rather than fall back.
	return min(max(rx+(now-wall), floor), now)
}
