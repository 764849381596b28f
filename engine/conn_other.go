//go:build !linux

package engine

import "net"

// rxReader is Linux's receive-timestamp reader; elsewhere reads are
// stamped when they return.
type rxReader struct{}

func newRxReader(*net.TCPConn) *rxReader { return nil }

func (*rxReader) read([]byte) (int, int64, error) { panic("unreachable") }
