package hostinfo

// Clock is the state of the host's wall clock discipline (NTP, PTP,
// chrony): how far the kernel believes the system clock is from true
// time. Shards of one run started at one instant are as far apart as
// their hosts' clocks are.
type Clock struct {
	// Source says where the state comes from: "adjtimex" on Linux, ""
	// where the system reports none (then the rest is zero).
	Source string `json:"source"`
	// Synchronized reports that a discipline keeps the clock in sync (the
	// kernel's STA_UNSYNC flag is clear and adjtimex does not return
	// TIME_ERROR).
	Synchronized bool `json:"synchronized"`
	// OffsetNS is the remaining offset the discipline is correcting, in
	// ns (adjtimex's offset).
	OffsetNS int64 `json:"offset_ns"`
	// EstErrorNS and MaxErrorNS are the kernel's estimated and maximum
	// error of the clock, in ns.
	EstErrorNS int64 `json:"est_error_ns"`
	MaxErrorNS int64 `json:"max_error_ns"`
	// Status is adjtimex's status word (STA_* flags) and State its return
	// value (TIME_OK 0 … TIME_ERROR 5).
	Status int64 `json:"status"`
	State  int   `json:"state"`
}

// Kernel flags and states of adjtimex(2).
const (
	staUnsync = 0x0040 // STA_UNSYNC: clock unsynchronized
	staNano   = 0x2000 // STA_NANO: offset in ns, not µs
	timeError = 5      // TIME_ERROR: clock not synchronized
)
