// Package prio sets the nice value of the whole process: every one of its
// threads. `reprise replay --nice` and `reprise mock-server --nice` use
// it, so that on a machine shared with a server (or other work) the
// kernel runs reprise's reads and sends first when both want a CPU, or
// lets a co-located mock server yield.
//
// Linux keeps nice values per thread, and a new thread inherits its
// creator's; once every current thread is set, the threads the Go runtime
// starts later follow. Nice values weigh only against threads of the same
// autogroup (session) and cgroup: see docs/format/cli.md.
package prio

import "fmt"

// Check reports a nice value outside the kernel's range, -20 to 19.
func Check(n int) error {
	if n < -20 || n > 19 {
		return fmt.Errorf("nice %d is out of range: want -20 (runs first) to 19 (runs last)", n)
	}
	return nil
}
