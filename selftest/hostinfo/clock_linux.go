package hostinfo

import "golang.org/x/sys/unix"

// ClockState reads the wall clock's state with adjtimex(2) in read-only
// mode (no privilege needed). ok is false when the call fails.
func ClockState() (c Clock, ok bool) {
	var tx unix.Timex // Modes 0: read only
	state, err := unix.Adjtimex(&tx)
	if err != nil {
		return Clock{}, false
	}
	return clockFromTimex(state, int64(tx.Status), int64(tx.Offset), int64(tx.Esterror), int64(tx.Maxerror)), true
}

// clockFromTimex converts adjtimex's fields: offset in µs (ns with
// STA_NANO), errors in µs.
func clockFromTimex(state int, status, offset, esterror, maxerror int64) Clock {
	if status&staNano == 0 {
		offset *= 1000
	}
	return Clock{Source: "adjtimex", Synchronized: status&staUnsync == 0 && state != timeError,
		OffsetNS: offset, EstErrorNS: esterror * 1000, MaxErrorNS: maxerror * 1000, Status: status, State: state}
}
