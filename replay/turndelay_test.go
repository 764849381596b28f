package replay

import (
	"testing"
	"time"

	"github.com/reprise-bench/reprise/trace"
)

// TestTurnDelayCapAndIgnore: a two-turn session whose second turn waits
// 50 ms of think time after the first (which completes at once): as
// recorded it is sent at 50 ms, with MaxTurnDelay 20 ms at 20 ms, with
// IgnoreTurnDelays at 0.
func TestTurnDelayCapAndIgnore(t *testing.T) {
	rows := []trace.Row{
		{Index: 0, Line: 1, SessionID: "s", Turn: 0, ParentID: -1, RequestID: -1, InputTokens: 8, OutputTokens: 2},
		{Index: 1, Line: 2, SessionID: "s", Turn: 1, ParentID: -1, RequestID: -1, InputTokens: 8, OutputTokens: 2, Delay: ms(50), HasDelay: true},
	}
	for _, tc := range []struct {
		name   string
		ignore bool
		max    time.Duration
		want   time.Duration
	}{
		{"as recorded", false, 0, ms(50)},
		{"capped", false, ms(20), ms(20)},
		{"cap above", false, ms(80), ms(50)},
		{"ignored", true, 0, 0},
	} {
		t.Run(tc.name, func(t *testing.T) {
			cfg := NewConfig()
			cfg.Mode, cfg.Concurrency = ModeConcurrency, 1
			cfg.IgnoreTurnDelays, cfg.MaxTurnDelay = tc.ignore, tc.max
			var l jobLog
			_, wall0 := runVirtual(t, cfg, rows, &l)
			js := l.byID()
			if len(js) != 2 {
				t.Fatalf("%d jobs, want 2", len(js))
			}
			if got := time.Duration(js[1].IntendedNS - wall0); got != tc.want {
				t.Errorf("second turn due at %v, want %v", got, tc.want)
			}
		})
	}
}
