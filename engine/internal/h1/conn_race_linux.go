//go:build race

package h1

import "syscall"

// raceIOSync gives the race detector the happens-before edge between a
// socket write and the read that sees its bytes, which net.Conn.Read gets
// from package syscall's read wrapper and a raw recvmsg does not: a
// zero-byte read(2), only in race builds.
func raceIOSync(fd uintptr) { _, _ = syscall.Read(int(fd), nil) }
