//go:build !linux

package engine

import (
	"net"
	"syscall"
)

// rxReader is Linux's receive-timestamp reader; elsewhere reads are
// stamped when they return.
type rxReader struct{}

func newRxReader(*net.TCPConn) *rxReader { return nil }

func (*rxReader) read([]byte) (int, int64, error) { panic("unreachable") }

func (*rxReader) loop([]byte, func(int, int64, syscall.Errno) bool) error { panic("unreachable") }

// peekSocket is Linux's liveness check of an idle connection; elsewhere a
// connection the server closed fails its next request, which is retried.
func peekSocket(uintptr, *byte) (int, syscall.Errno) { return 0, syscall.EAGAIN }
