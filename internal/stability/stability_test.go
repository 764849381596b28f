package stability

import (
	"testing"
	"time"

	"github.com/reprise-bench/reprise/engine/record"
)

// win is a one-second window of n requests of mean latency ms.
func win(n int, ms float64) Window {
	return Window{StartNS: 0, EndNS: int64(time.Second), Completed: n, LatencyNS: ms * 1e6}
}

// TestStable checks perf_analyzer's rule on synthetic windows: the last
// three, max / min ≤ 1 + pct/100 for throughput and latency each.
func TestStable(t *testing.T) {
	for _, tc := range []struct {
		name string
		ws   []Window
		pct  float64
		want bool
	}{
		{"two windows", []Window{win(10, 100), win(10, 100)}, 10, false},
		{"equal", []Window{win(10, 100), win(10, 100), win(10, 100)}, 10, true},
		{"throughput at the bound", []Window{win(10, 100), win(11, 100), win(10, 100)}, 10, true},
		{"throughput past it", []Window{win(10, 100), win(12, 100), win(10, 100)}, 10, false},
		{"latency past it", []Window{win(10, 100), win(10, 100), win(10, 111)}, 10, false},
		{"only the last three count", []Window{win(1, 900), win(10, 100), win(10, 105), win(10, 100)}, 10, true},
		{"an empty window", []Window{win(10, 100), win(0, 0), win(10, 100)}, 999, false},
		{"999 % takes any", []Window{win(1, 10), win(9, 90), win(5, 50)}, 999, true},
		{"none succeeded", []Window{win(10, 100), win(10, 0), win(10, 100)}, 999, false},
	} {
		if got := Stable(tc.ws, tc.pct); got != tc.want {
			t.Errorf("%s: Stable = %v, want %v", tc.name, got, tc.want)
		}
	}
}

// TestWatch feeds a watch synthetic records: warmup and failed requests
// count as the rule says, a steady load stops at the third window, a
// changing one at the most windows.
func TestWatch(t *testing.T) {
	const period = time.Second
	feed := func(w *Watch, n int, e2e time.Duration) {
		for range n {
			w.Observe(&record.Request{E2ENS: int64(e2e)})
		}
		w.Observe(&record.Request{Phase: record.PhaseWarmup, E2ENS: int64(time.Hour)})
		w.Observe(&record.Request{ErrorKind: record.ErrHTTPStatus, E2ENS: int64(time.Hour)})
	}
	steady := NewWatch(10, 5, period)
	for k := int64(1); k <= 3; k++ {
		feed(steady, 10, 100*time.Millisecond)
		stop, reason := steady.Check(k * int64(period))
		if want := k == 3; stop != want || want && reason != "stable" {
			t.Fatalf("steady window %d: stop %v (%q)", k, stop, reason)
		}
	}
	r := steady.Report()
	if !r.Stable || len(r.Windows) != 3 || r.Windows[0].StartNS != 0 || r.Windows[2].Completed != 11 ||
		r.Windows[1].LatencyNS != 1e8 || r.Windows[1].Throughput != 11 || r.IntervalNS != int64(period) {
		t.Errorf("steady report %+v", r)
	}
	changing := NewWatch(10, 4, period)
	for k := int64(1); k <= 4; k++ {
		feed(changing, int(10*k), 100*time.Millisecond)
		stop, reason := changing.Check(k * int64(period))
		if want := k == 4; stop != want || want && reason != "max windows" {
			t.Fatalf("changing window %d: stop %v (%q)", k, stop, reason)
		}
	}
	if r := changing.Report(); r.Stable || len(r.Windows) != 4 {
		t.Errorf("changing report %+v", r)
	}
}
