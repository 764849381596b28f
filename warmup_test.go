package reprise

import (
	"context"
	"path/filepath"
	"strconv"
	"testing"
	"time"

	"github.com/reprise-bench/reprise/arrowio"
	"github.com/reprise-bench/reprise/engine/record"
	"github.com/reprise-bench/reprise/internal/mockserver"
)

// TestWarmupPhaseOwnLoad: a warmup phase of 6 requests at concurrency 1
// before a measured run of 16 at concurrency 4. In the mock's oracle log
// (requests told apart by their X-Request-Id: warmup ids start at
// WarmupRequestIDBase) the warmup requests never overlap, every one
// ended before the first measured request arrived, and the measured
// ones reach 4 in flight. The records hold 6 warmup and 16 measured
// rows, and the summary counts the 16.
func TestWarmupPhaseOwnLoad(t *testing.T) {
	srv := startMock(t, func(c *mockserver.Config) { c.TTFT, c.ITL = 10*time.Millisecond, 2*time.Millisecond })
	o := NewOptions()
	o.URL, o.Model = srv.URL(), mockserver.DefaultModel
	o.Synthetic = SyntheticLoad{ISL: 16, OSL: 6}
	o.Replay.Concurrency, o.Replay.RequestCount = 4, 16
	o.Warmup = WarmupLoad{Requests: 6, Concurrency: 1}
	o.Output.Dir = filepath.Join(t.TempDir(), "run")
	o.Telemetry.EndpointMetrics = false
	res, err := Run(context.Background(), o)
	if err != nil {
		t.Fatal(err)
	}
	if res.Summary.RequestCount != 16 {
		t.Errorf("summary counts %d requests, want the 16 measured", res.Summary.RequestCount)
	}
	if err := srv.WaitIdle(context.Background()); err != nil {
		t.Fatal(err)
	}
	var wFrom, wTo, pFrom, pTo []int64
	for _, l := range srv.Log() {
		id, err := strconv.ParseUint(l.ClientRequestID, 10, 64)
		if err != nil {
			t.Fatalf("request %d: X-Request-Id %q", l.Seq, l.ClientRequestID)
		}
		if id >= WarmupRequestIDBase {
			wFrom, wTo = append(wFrom, l.ReceivedNS), append(wTo, l.EndNS)
		} else {
			pFrom, pTo = append(pFrom, l.ReceivedNS), append(pTo, l.EndNS)
		}
	}
	if len(wFrom) != 6 || len(pFrom) != 16 {
		t.Fatalf("mock saw %d warmup and %d measured requests, want 6 and 16", len(wFrom), len(pFrom))
	}
	if got := maxOverlap(wFrom, wTo); got != 1 {
		t.Errorf("warmup phase had %d requests in flight at once, want 1 (its own concurrency)", got)
	}
	if got := maxOverlap(pFrom, pTo); got < 2 || got > 4 {
		t.Errorf("measured phase had at most %d in flight, want 2 to 4 (concurrency 4)", got)
	}
	lastWarm, firstProf := int64(0), pFrom[0]
	for _, e := range wTo {
		lastWarm = max(lastWarm, e)
	}
	for _, f := range pFrom {
		firstProf = min(firstProf, f)
	}
	if lastWarm >= firstProf {
		t.Errorf("a warmup request ended %v after the first measured one arrived", time.Duration(lastWarm-firstProf))
	}
	rd, err := arrowio.Open(res.Dir)
	if err != nil {
		t.Fatal(err)
	}
	n := map[record.Phase]int{}
	for r, err := range rd.Requests() {
		if err != nil {
			t.Fatal(err)
		}
		n[r.Phase]++
	}
	if n[record.PhaseWarmup] != 6 || n[record.PhaseProfile] != 16 {
		t.Errorf("records: %v, want 6 warmup and 16 profile", n)
	}
}

// TestWarmupPhaseDuration: a warmup phase of 60 ms at 200 requests/s
// (constant) sends the requests due in it, all recorded as warmup, and
// the measured run's requests come after the last of them ended.
func TestWarmupPhaseDuration(t *testing.T) {
	srv := startMock(t, func(c *mockserver.Config) { c.TTFT, c.ITL = time.Millisecond, 0 })
	o := NewOptions()
	o.URL, o.Model = srv.URL(), mockserver.DefaultModel
	o.Synthetic = SyntheticLoad{ISL: 8, OSL: 2}
	o.Replay.Concurrency, o.Replay.RequestCount = 2, 4
	o.Warmup = WarmupLoad{Duration: 60 * time.Millisecond, RequestRate: 200, Arrival: "constant", Grace: time.Second}
	o.Output.Dir = filepath.Join(t.TempDir(), "run")
	o.Telemetry.EndpointMetrics = false
	res, err := Run(context.Background(), o)
	if err != nil {
		t.Fatal(err)
	}
	rd, err := arrowio.Open(res.Dir)
	if err != nil {
		t.Fatal(err)
	}
	var warm, prof []record.Request
	for r, err := range rd.Requests() {
		if err != nil {
			t.Fatal(err)
		}
		if r.Phase == record.PhaseWarmup {
			warm = append(warm, r)
		} else {
			prof = append(prof, r)
		}
	}
	// Due at 0, 5, …, 55 ms: 12 (a request due at 60 ms is past it).
	if len(warm) != 12 || len(prof) != 4 {
		t.Fatalf("%d warmup and %d measured records, want 12 and 4", len(warm), len(prof))
	}
	for _, w := range warm {
		if w.RequestID < WarmupRequestIDBase {
			t.Errorf("warmup request id %d below WarmupRequestIDBase", w.RequestID)
		}
		for _, p := range prof {
			if w.EndNS > p.SentNS {
				t.Errorf("warmup request %d ended after measured request %d was sent", w.RequestID, p.RequestID)
			}
		}
	}
}
