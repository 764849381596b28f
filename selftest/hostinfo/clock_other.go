//go:build !linux

package hostinfo

// ClockState reports no state (ok false): only Linux's adjtimex is read.
func ClockState() (c Clock, ok bool) { return Clock{}, false }
