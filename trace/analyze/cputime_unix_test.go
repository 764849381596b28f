//go:build unix

package analyze

import (
	"syscall"
	"time"
)

// cpuTime returns the CPU time (user + system) the process has used so far.
// Benchmarks report rows per CPU second next to rows per wall second because
// the shared 2-core machine is often overloaded, which distorts wall time.
func cpuTime() time.Duration {
	var ru syscall.Rusage
	if err := syscall.Getrusage(syscall.RUSAGE_SELF, &ru); err != nil {
		return 0
	}
	return time.Duration(ru.Utime.Nano() + ru.Stime.Nano())
}
