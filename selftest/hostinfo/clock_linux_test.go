package hostinfo

import "testing"

func TestClockFromTimex(t *testing.T) {
	for _, tc := range []struct {
		state                   int
		status, off, est, maxer int64
		want                    Clock
	}{
		// Synchronized (STA_PLL), offset in µs.
		{0, 0x0001, -12, 40, 500, Clock{Source: "adjtimex", Synchronized: true, OffsetNS: -12000, EstErrorNS: 40000, MaxErrorNS: 500000, Status: 1}},
		// STA_NANO: the offset is already ns.
		{0, 0x2001, 700, 1, 2, Clock{Source: "adjtimex", Synchronized: true, OffsetNS: 700, EstErrorNS: 1000, MaxErrorNS: 2000, Status: 0x2001}},
		// STA_UNSYNC.
		{0, 0x0040, 0, 0, 16000000, Clock{Source: "adjtimex", OffsetNS: 0, MaxErrorNS: 16000000000, Status: 0x40}},
		// TIME_ERROR.
		{5, 0x0001, 0, 0, 0, Clock{Source: "adjtimex", Status: 1, State: 5}},
	} {
		if got := clockFromTimex(tc.state, tc.status, tc.off, tc.est, tc.maxer); got != tc.want {
			t.Errorf("clockFromTimex(%d, %#x, …) = %+v, want %+v", tc.state, tc.status, got, tc.want)
		}
	}
	if c, ok := ClockState(); !ok || c.Source != "adjtimex" || c.MaxErrorNS < 0 {
		t.Errorf("ClockState() = %+v, %v", c, ok)
	}
}
