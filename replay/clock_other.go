//go:build !linux

package replay

import "time"

// newPrecisionSleeper falls back to time.Sleep where clock_nanosleep with
// TIMER_ABSTIME and per-thread timer slack are not available.
func newPrecisionSleeper(base time.Time) sleeper { return newPlainSleeper(base) }

func threadCPU() time.Duration { return 0 }
