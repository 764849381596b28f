//go:build !linux

package h1

import (
	"context"
	"errors"
	"net"
	"syscall"
	"time"
)

// rxReader is Linux's receive-timestamp reader; elsewhere reads are
// stamped when they return.
type rxReader struct{ rc *reactor }

func newRxReader(*net.TCPConn) *rxReader { return nil }

// holdStamps is Linux's: kernel stamping is on while a socket asks.
func holdStamps() func() { return nil }

func (*rxReader) read([]byte) (int, int64, error) { panic("unreachable") }

func (*rxReader) loop([]byte, func(int, int64, syscall.Errno) bool) error { panic("unreachable") }

func (*rxReader) exchange(_, _ []byte, _ func(), _ func(int, int64, syscall.Errno) bool) (int, syscall.Errno, error) {
	panic("unreachable")
}

// peekSocket is Linux's liveness check of an idle connection; elsewhere a
// connection the server closed fails its next request, which is retried.
func peekSocket(uintptr, *byte) (int, syscall.Errno) { return 0, syscall.EAGAIN }

// reactor is Linux's epoll reader of many connections; elsewhere each
// sender reads its own.
type reactor struct{}

func newReactor() (*reactor, error) { return nil, errors.ErrUnsupported }

func (*reactor) close() {}

func (*rxReader) useReactor(*reactor) {}

func (*rxReader) await(context.Context, time.Time, []byte, func(int, int64, syscall.Errno) bool) error {
	panic("unreachable")
}

// Held returns how many sockets rc is reading now: none.
func (*reactor) held() int { return 0 }
