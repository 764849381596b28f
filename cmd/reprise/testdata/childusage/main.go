// Command childusage runs a command and prints its CPU time and peak RSS,
// for the benchmarks that measure a whole reprise process
// (BenchmarkAnalyzeTraceCLI).
//
//	childusage CMD [ARG...]
//
// The command's standard input, output and error are childusage's; when it
// exits, childusage writes one line to file descriptor 3:
// "user_ns sys_ns maxrss_bytes". A Linux child starts from its parent's
// memory (Go forks with CLONE_VM), and its peak RSS as the kernel reports it
// is at least the parent's at that moment: a benchmark process holding a
// large test binary would set a floor under the figure. This program is
// that parent instead, and is a few MB. It exits with the command's status.
package main

import (
	"errors"
	"fmt"
	"os"
	"os/exec"
	"syscall"
)

func main() {
	if len(os.Args) < 2 {
		fmt.Fprintln(os.Stderr, "usage: childusage CMD [ARG...] (reports on fd 3)")
		os.Exit(2)
	}
	cmd := exec.Command(os.Args[1], os.Args[2:]...)
	cmd.Stdin, cmd.Stdout, cmd.Stderr = os.Stdin, os.Stdout, os.Stderr
	err := cmd.Run()
	if cmd.ProcessState == nil {
		fmt.Fprintln(os.Stderr, "childusage:", err)
		os.Exit(2)
	}
	ru := cmd.ProcessState.SysUsage().(*syscall.Rusage)
	report := os.NewFile(3, "report")
	if _, werr := fmt.Fprintf(report, "%d %d %d\n", ru.Utime.Nano(), ru.Stime.Nano(), ru.Maxrss<<10); werr != nil {
		fmt.Fprintln(os.Stderr, "childusage: fd 3:", werr)
		os.Exit(2)
	}
	if _, ok := errors.AsType[*exec.ExitError](err); ok {
		os.Exit(cmd.ProcessState.ExitCode())
	}
}
