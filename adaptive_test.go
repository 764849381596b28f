package reprise_test

import (
	"bufio"
	"context"
	"encoding/json"
	"errors"
	"math"
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/reprise-bench/reprise"
	"github.com/reprise-bench/reprise/arrowio"
	"github.com/reprise-bench/reprise/engine/record"
	"github.com/reprise-bench/reprise/internal/adaptive"
	"github.com/reprise-bench/reprise/internal/mockserver"
)

// adaptiveMock is the recipe tests' mock (internal/sweep's recipeMock):
// S = 8 slots, t0 = TTFT + P·ISL = 20 + 16 = 36 ms, ITL(c) = 20 ms +
// 4 ms per running request, OSL 6. Below S a request holds its slot
// T(c) = t0 + 5·ITL(c), so E2E(c) = T(c) ≤ T(8) = 276 ms; past S every
// slot is busy and, by Little's law, E2E(c) = c·T(8)/8. The largest
// concurrency whose mean request latency is at most 400 ms is then
// floor(400·8/276) = 11.
const (
	adaptiveSlots = 8
	adaptiveISL   = 16
	adaptiveOSL   = 6
	adaptiveSLAMS = 400.0
)

func adaptiveE2E(c int) float64 {
	t0 := 20.0 + 1.0*adaptiveISL
	hold := func(c int) float64 { return t0 + float64(adaptiveOSL-1)*(20+4*float64(min(c, adaptiveSlots)-1)) }
	if c <= adaptiveSlots {
		return hold(c)
	}
	return float64(c) * hold(adaptiveSlots) / adaptiveSlots
}

// TestAdaptiveScaleAgainstTheMock: one run with --adaptive-scale finds
// the concurrency the mock's settings put at the SLA (within ±1 or
// 10 %), holds it, writes both artifacts, and the mock's oracle log
// shows no request sent while the requests in flight were at the
// controller's setting.
func TestAdaptiveScaleAgainstTheMock(t *testing.T) {
	if raceEnabled {
		t.Skip("a calibration against the mock's latency curve: the race detector slows the client")
	}
	if testing.Short() {
		t.Skip("about 8 s of requests against the mock")
	}
	want := 0
	for c := 1; c <= 32; c++ {
		if adaptiveE2E(c) <= adaptiveSLAMS {
			want = c
		}
	}
	mc := mockserver.NewConfig()
	mc.Addr, mc.MaxNumSeqs, mc.TTFT, mc.PrefillPerToken, mc.ITL, mc.ITLPerRunning = "127.0.0.1:0", adaptiveSlots, 20*time.Millisecond, time.Millisecond, 20*time.Millisecond, 4*time.Millisecond
	mc.PrefixCacheTokens = 0
	srv, err := mockserver.Start(context.Background(), mc)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { srv.Close() })
	o := reprise.NewOptions()
	o.URL, o.Model, o.Streaming = srv.URL(), mockserver.DefaultModel, true
	o.Synthetic = reprise.SyntheticLoad{ISL: adaptiveISL, OSL: adaptiveOSL}
	o.Replay.Concurrency, o.Replay.Duration, o.Replay.Grace = 32, 30*time.Second, time.Second
	o.Output.Dir = filepath.Join(t.TempDir(), "run")
	o.Telemetry.EndpointMetrics = false
	a := reprise.NewAdaptiveOptions()
	a.Min, a.Period, a.Sustain, a.MinCompleted = 2, 700*time.Millisecond, 700*time.Millisecond, 8
	a.SLAs = []string{"request_latency:avg:le:" + strconv.FormatFloat(adaptiveSLAMS, 'g', -1, 64)}
	o.Adaptive = &a
	res, err := reprise.Run(context.Background(), o)
	if err != nil {
		t.Fatal(err)
	}
	s := res.Adaptive
	evs := readAdaptiveEvents(t, filepath.Join(res.Dir, adaptive.EventsFile))
	for _, e := range evs {
		t.Logf("%s %d → %d: %d requests, %v, passed %v", e.Event, e.Before, e.After, e.Completed, e.SLAValues, fmtPassed(e.Passed))
	}
	t.Logf("found %d (status %s, %s), derived %d", s.Boundary, s.Status, s.Reason, want)
	if s.Boundary == 0 {
		t.Fatal("no boundary found")
	}
	if d := math.Abs(float64(s.Boundary - want)); d > 1 && d > 0.1*float64(want) {
		t.Errorf("boundary %d, derived from the mock's settings %d", s.Boundary, want)
	}
	if s.Status != adaptive.StatusComplete || evs[len(evs)-1].Event != adaptive.EventComplete {
		t.Errorf("status %s (%s), last event %s: want the boundary sustained", s.Status, s.Reason, evs[len(evs)-1].Event)
	}
	b, err := os.ReadFile(filepath.Join(res.Dir, adaptive.SummaryFile))
	if err != nil {
		t.Fatal(err)
	}
	var onDisk adaptive.Summary
	if err := json.Unmarshal(b, &onDisk); err != nil || onDisk.Boundary != s.Boundary || onDisk.Status != s.Status || len(onDisk.Windows) != len(evs) {
		t.Errorf("%s: boundary %d, %d windows (%v); want %d, %d", adaptive.SummaryFile, onDisk.Boundary, len(onDisk.Windows), err, s.Boundary, len(evs))
	}
	ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
	defer cancel()
	if err := srv.WaitIdle(ctx); err != nil {
		t.Fatal(err)
	}
	checkInFlight(t, readRecords(t, res.Dir), srv.Log(), evs)
}

func fmtPassed(p *bool) string {
	if p == nil {
		return "inconclusive"
	}
	return strconv.FormatBool(*p)
}

// checkInFlight: at every request's arrival at the mock, the requests
// the mock had in flight (received, their last write not yet begun: the
// client cannot have seen them end) are at most the controller's setting
// when the client dispatched it.
func checkInFlight(t *testing.T, reqs []record.Request, log []mockserver.RequestLog, evs []adaptive.Event) {
	t.Helper()
	setting := func(at int64) int { // the setting in effect at at, the higher one around a change
		s := evs[0].After
		for _, e := range evs[1:] {
			if e.TimestampNS > at {
				break
			}
			if at-e.TimestampNS < int64(time.Millisecond) {
				s = max(s, e.After)
				continue
			}
			s = e.After
		}
		return s
	}
	dispatched := map[string]int64{}
	for _, r := range reqs {
		dispatched[strconv.FormatUint(r.RequestID, 10)] = r.DispatchedNS
	}
	end := func(l *mockserver.RequestLog) int64 {
		if n := len(l.Events); n > 0 {
			return l.Events[n-1].StartNS
		}
		return l.EndNS
	}
	peak := 0
	for i := range log {
		a := &log[i]
		d, ok := dispatched[a.ClientRequestID]
		if !ok {
			t.Fatalf("server request %s is not in the records", a.ClientRequestID)
		}
		n := 0
		for j := range log {
			if b := &log[j]; b.ReceivedNS <= a.ReceivedNS && a.ReceivedNS < end(b) {
				n++
			}
		}
		peak = max(peak, n)
		if lim := setting(d); n > lim {
			t.Errorf("request %s: %d in flight at the mock, the setting was %d", a.ClientRequestID, n, lim)
		}
	}
	t.Logf("%d requests; at most %d in flight at the mock", len(log), peak)
}

func readAdaptiveEvents(t *testing.T, path string) []adaptive.Event {
	t.Helper()
	f, err := os.Open(path)
	if err != nil {
		t.Fatal(err)
	}
	defer f.Close()
	var evs []adaptive.Event
	sc := bufio.NewScanner(f)
	for sc.Scan() {
		var e adaptive.Event
		if err := json.Unmarshal(sc.Bytes(), &e); err != nil {
			t.Fatalf("%s: %v", path, err)
		}
		evs = append(evs, e)
	}
	if len(evs) == 0 || evs[0].Event != adaptive.EventStarted {
		t.Fatalf("%s: %d events, want %s first", path, len(evs), adaptive.EventStarted)
	}
	return evs
}

func readRecords(t *testing.T, dir string) []record.Request {
	t.Helper()
	rd, err := arrowio.Open(dir)
	if err != nil {
		t.Fatal(err)
	}
	var reqs []record.Request
	for r, err := range rd.Requests() {
		if err != nil {
			t.Fatal(err)
		}
		reqs = append(reqs, r)
	}
	return reqs
}

// TestAdaptiveOptionsErrors: a run without a duration, a sustain or an
// SLA is refused before anything is sent, naming the field.
func TestAdaptiveOptionsErrors(t *testing.T) {
	o := reprise.NewOptions()
	o.URL, o.Model = "http://127.0.0.1:1", "m"
	o.Replay.Concurrency = 8
	a := reprise.NewAdaptiveOptions()
	a.SLAs = []string{"request_latency:p95:100"}
	o.Adaptive = &a
	_, err := reprise.Run(context.Background(), o)
	ce, ok := errors.AsType[*reprise.ConfigError](err)
	if !ok {
		t.Fatalf("Run = %v, want a *ConfigError", err)
	}
	msg := ce.Error()
	for _, want := range []string{"Replay.Duration", "Adaptive.SLAs", "METRIC:STAT:OP:THRESHOLD"} {
		if !strings.Contains(msg, want) {
			t.Errorf("error %q does not name %q", msg, want)
		}
	}
}
