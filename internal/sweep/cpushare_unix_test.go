//go:build unix

package sweep

import (
	"syscall"
	"time"
)

// cpuShare is the fraction of one CPU this process gets while it spins
// for 200 ms of wall time: near 1 on a machine with a core to spare,
// far below it on one whose cores other processes keep busy.
func cpuShare() float64 {
	var before, after syscall.Rusage
	if syscall.Getrusage(syscall.RUSAGE_SELF, &before) != nil {
		return 1
	}
	start := time.Now()
	x := 0
	for time.Since(start) < 200*time.Millisecond {
		x++
	}
	wall := time.Since(start)
	if syscall.Getrusage(syscall.RUSAGE_SELF, &after) != nil || x == 0 {
		return 1
	}
	cpu := time.Duration(after.Utime.Nano()-before.Utime.Nano()) + time.Duration(after.Stime.Nano()-before.Stime.Nano())
	return float64(cpu) / float64(wall)
}
