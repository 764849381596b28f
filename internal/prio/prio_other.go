//go:build !linux

package prio

import (
	"fmt"
	"runtime"
)

// SetNice is only implemented on Linux.
func SetNice(n int) error {
	if err := Check(n); err != nil {
		return err
	}
	return fmt.Errorf("set nice %d: not supported on %s", n, runtime.GOOS)
}

// Nice is only implemented on Linux.
func Nice() (int, error) {
	return 0, fmt.Errorf("nice: not supported on %s", runtime.GOOS)
}
