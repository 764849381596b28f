package engine

import (
	"os"
	"strconv"

	"golang.org/x/sys/unix"
)

// setNice gives every thread of this process the nice value n. Linux nice
// values are per thread and a new thread inherits its creator's, so once
// all current threads are set the runtime's future threads follow; the
// pass repeats to catch threads created during it. Nice values only weigh
// against threads of the same autogroup (session), which the benchmark's
// child server shares with its parent.
func setNice(n int) error {
	for range 10 {
		tasks, err := os.ReadDir("/proc/self/task")
		if err != nil {
			return err
		}
		changed := 0
		for _, t := range tasks {
			tid, err := strconv.Atoi(t.Name())
			if err != nil {
				continue
			}
			// The raw getpriority syscall returns 20 − nice.
			p, err := unix.Getpriority(unix.PRIO_PROCESS, tid)
			if err != nil || 20-p == n {
				continue // gone, or already set
			}
			if err := unix.Setpriority(unix.PRIO_PROCESS, tid, n); err != nil {
				return err
			}
			changed++
		}
		if changed == 0 {
			return nil
		}
	}
	return nil
}
