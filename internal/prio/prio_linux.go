package prio

import (
	"errors"
	"fmt"
	"os"
	"strconv"
	"unsafe"

	"golang.org/x/sys/unix"
)

// SetNice gives every thread of this process the normal scheduling policy
// at nice value n (a real-time policy inherited from a parent is dropped).
// It repeats its pass over /proc/self/task until a pass changes nothing,
// to catch threads the runtime started during the previous one. Lowering
// a nice value needs CAP_SYS_NICE (or RLIMIT_NICE).
func SetNice(n int) error {
	if err := Check(n); err != nil {
		return err
	}
	want := unix.SchedAttr{Size: uint32(unsafe.Sizeof(unix.SchedAttr{})), Policy: unix.SCHED_NORMAL, Nice: int32(n)}
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
			have, err := unix.SchedGetAttr(tid, 0)
			if err != nil {
				continue // the thread is gone
			}
			if have.Policy == want.Policy && have.Nice == want.Nice {
				continue
			}
			attr := want
			if err := unix.SchedSetAttr(tid, &attr, 0); err != nil {
				if errors.Is(err, unix.ESRCH) {
					continue
				}
				if errors.Is(err, unix.EPERM) || errors.Is(err, unix.EACCES) {
					return fmt.Errorf("set nice %d: %w: a lower nice value needs root or CAP_SYS_NICE (setcap cap_sys_nice+ep on the binary)", n, err)
				}
				return fmt.Errorf("set nice %d: %w", n, err)
			}
			changed++
		}
		if changed == 0 {
			return nil
		}
	}
	return nil
}

// Nice returns the calling thread's nice value.
func Nice() (int, error) {
	// The raw getpriority syscall returns 20 − nice.
	p, err := unix.Getpriority(unix.PRIO_PROCESS, 0)
	if err != nil {
		return 0, err
	}
	return 20 - p, nil
}
