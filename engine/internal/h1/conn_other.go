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
type rxReader struct{ rc *Reactor }

func newRxReader(*net.TCPConn) *rxReader { return nil }

func (*rxReader) read([]byte) (int, int64, error) { panic("unreachable") }

func (*rxReader) loop([]byte, func(int, int64, syscall.Errno) bool) error { panic("unreachable") }

// peekSocket is Linux's liveness check of an idle connection; elsewhere a
// connection the server closed fails its next request, which is retried.
func peekSocket(uintptr, *byte) (int, syscall.Errno) { return 0, syscall.EAGAIN }

// Reactor is Linux's epoll reader of many connections; elsewhere each
// sender reads its own.
type Reactor struct{}

func NewReactor() (*Reactor, error) { return nil, errors.ErrUnsupported }

func (*Reactor) Close() {}

func (*rxReader) useReactor(*Reactor) {}

func (*rxReader) await(context.Context, time.Time, []byte, func(int, int64, syscall.Errno) bool) error {
	panic("unreachable")
}

// Held returns how many sockets rc is reading now: none.
func (*Reactor) Held() int { return 0 }
