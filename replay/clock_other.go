//go:build !linux

package replay

import "time"

// newPrecisionClock falls back to time.Sleep where clock_nanosleep with
// TIMER_ABSTIME and per-thread timer slack are not available.
func newPrecisionClock(base time.Time) clock { return newSleepClock(base) }

func threadCPU() time.Duration { return 0 }
