package sweep

import (
	"strings"
	"testing"
	"time"

	"github.com/reprise-bench/reprise/engine/record"
	"github.com/reprise-bench/reprise/engine/summary"
)

// TestScheduleUndoesShifts: under --late shift a late request moves the
// rest of the schedule, so the intended times stretch; the asked rate is
// the schedule's own, without the shifts, and the sent rate shows what
// the stall cost.
func TestScheduleUndoesShifts(t *testing.T) {
	const ms = int64(1e6)
	var a scheduleAcc
	// 11 requests asked every 100 ms (10/s); the 6th left 500 ms late
	// and shifted the last five by 500 ms.
	for i := range int64(11) {
		r := record.Request{IntendedNS: (10 + i) * 100 * ms}
		if i >= 6 {
			r.IntendedNS += 500 * ms
		}
		r.SentNS = r.IntendedNS
		if i == 5 {
			r.LatenessNS = 500 * ms
			r.SentNS += 500 * ms
		}
		a.add(&r)
	}
	got := a.schedule(true, time.Millisecond)
	// Asked: 10 gaps over 1.5 s − 0.5 s of shift = 10/s; sent: 10 gaps
	// over 1.5 s.
	if got.Asked < 9.999 || got.Asked > 10.001 || got.Sent < 6.66 || got.Sent > 6.67 {
		t.Errorf("shift: asked %v, sent %v; want 10 and 6.67", got.Asked, got.Sent)
	}
	// Read as a burst schedule the same times ask for what was sent.
	if got := a.schedule(false, time.Millisecond); got.Asked > 6.67 {
		t.Errorf("burst: asked %v, want 6.67", got.Asked)
	}
}

// probeRun is a run of 201 requests asked at 20/s over 10 s, with the
// given sent rate and lateness p99 (ms) and saturation.
func probeRun(sent, lateP99, lateMax float64, sat Saturation) *measured {
	s := &summary.Summary{RequestCount: 200, Metrics: map[string]*summary.Stats{
		"schedule_lateness":   {P99: lateP99, Max: lateMax},
		"inter_token_latency": {P50: 40},
		"client_read_lag":     {P90: 0.5, Max: 1},
	}}
	s.Options.LateThreshold = time.Millisecond
	return &measured{sum: s, sat: sat, sched: schedule{Asked: 20, Sent: sent, IntendedSpan: 10 * time.Second}}
}

func TestValidity(t *testing.T) {
	saturated := func(ratio float64) Saturation {
		return Saturation{RateRatio: ratio, RateDeficitSE: 0.005, Reasons: []string{"rate"}}
	}
	for _, c := range []struct {
		name    string
		m       *measured
		maxLate time.Duration
		valid   bool
		reason  string
		waived  bool
	}{
		// The default budget at 20/s is half the 50 ms gap: 25 ms.
		{"kept its schedule", probeRun(20, 10, 30, Saturation{}), 0, true, "", false},
		{"late", probeRun(20, 30, 60, Saturation{}), 0, false, "schedule lateness p99 30 ms > 25 ms", false},
		{"late within a given budget", probeRun(20, 30, 60, Saturation{}), 40 * time.Millisecond, true, "", false},
		// 0.70 of the 2.03 requests/s asked in the issue: here 14 of 20.
		{"sent too little", probeRun(14, 10, 30, Saturation{}), 0, false, "sent 14 of the 20 requests/s asked (70% < 95%)", false},
		// Completions at half the rate: g = 1, far beyond the client's
		// (60 + 1) ms over 10 s = 0.0061.
		{"saturated beyond the client", probeRun(20, 30, 60, saturated(0.5)), 0, true, "", true},
		// g = 1/0.995 − 1 = 0.005, within what 60 ms of lateness and the
		// slope's noise explain.
		{"saturated within the client's delays", probeRun(20, 30, 60, saturated(0.995)), 0, false, "lateness", false},
	} {
		v := validity(c.m, true, c.maxLate, DefaultFindMinSentShare, 0.9)
		if v.Valid != c.valid || (c.reason != "" && !strings.Contains(strings.Join(v.Reasons, "; "), c.reason)) || (len(v.Waived) > 0) != c.waived {
			t.Errorf("%s: valid %v, reasons %q, waived %q; want valid %v with %q, waived %v", c.name, v.Valid, v.Reasons, v.Waived,
				c.valid, c.reason, c.waived)
		}
	}
}

// TestValidityReadLagScopedToSLOs: measurement_quality's read-lag check
// (read lag p90 over the median inter-token gap) decides a probe only
// when an SLO judges per-token times; with SLOs on whole-request times a
// failing probe is invalid only when the requests that missed the SLO by
// less than their own read lag would make it pass.
func TestValidityReadLagScopedToSLOs(t *testing.T) {
	for _, c := range []struct {
		name      string
		goodput   string
		good      int // of 200
		flips     int
		valid     bool
		reasonHas string
	}{
		// A 3 ms ITL read in bunches (p90 lag 10 ms > 3 ms), TTFT SLO.
		{"a pass stands", "ttft:300", 190, 5, true, ""},
		// 170 + 5 = 175 of 200 is still < 90 %: the server failed.
		{"a fail the lag cannot explain", "ttft:300", 170, 5, true, ""},
		// 170 + 15 = 185 ≥ 180: the client may have failed it.
		{"a fail the lag can explain", "ttft:300", 170, 15, false, "15 of the 200 requests missed the SLO by less than the client's own read lag"},
		// A request's ITL is (last − first token)/(gaps): two stamps, each
		// late by at most the read lag, judged as the whole-request times.
		{"an ITL SLO: a pass stands", "ttft:300 itl:10", 190, 0, true, ""},
		{"an ITL SLO: a fail the lag can explain", "ttft:300 itl:10", 170, 15, false, "missed the SLO by less than the client's own read lag"},
	} {
		m := probeRun(20, 5, 10, Saturation{})
		m.sum.Metrics["client_read_lag"] = &summary.Stats{P90: 10, P99: 40, Max: 40}
		m.sum.Metrics["inter_token_latency"] = &summary.Stats{P50: 3}
		m.sum.GoodRequestCount = c.good
		m.sched.ReadLagFlips = c.flips
		slos, err := summary.ParseGoodput(c.goodput)
		if err != nil {
			t.Fatal(err)
		}
		m.sum.Options.Goodput = slos
		v := validity(m, true, 0, DefaultFindMinSentShare, 0.9)
		if v.Valid != c.valid || (c.reasonHas != "" && !strings.Contains(strings.Join(v.Reasons, "; "), c.reasonHas)) {
			t.Errorf("%s: valid %v, reasons %q; want valid %v with %q", c.name, v.Valid, v.Reasons, c.valid, c.reasonHas)
		}
	}
}

// TestReadLagFlip: a request that failed a TTFT SLO by less than its
// read lag could have met it; one that failed by more could not.
func TestReadLagFlip(t *testing.T) {
	slos, err := summary.ParseGoodput("ttft:300")
	if err != nil {
		t.Fatal(err)
	}
	o := summary.Options{Goodput: slos, Streaming: true}
	const ms = int64(1e6)
	for _, c := range []struct {
		ttft, lag int64
		want      bool
	}{{320, 40, true}, {320, 10, false}, {290, 40, false}} {
		r := record.Request{Phase: record.PhaseProfile, IntendedNS: 1, SentNS: 1, FirstTokenNS: 1 + c.ttft*ms, TTFTNS: c.ttft * ms,
			LastTokenNS: 1 + c.ttft*ms, EndNS: 1 + c.ttft*ms, E2ENS: c.ttft * ms, ReadLagNS: c.lag * ms}
		// 290 ms meets the SLO: it is no flip, it is good.
		if got := !summary.Good(&r, o) && readLagFlip(&r, o); got != c.want {
			t.Errorf("TTFT %d ms, read lag %d ms: flip %v, want %v", c.ttft, c.lag, got, c.want)
		}
	}
}

// TestHeldConcurrency: a closed loop at concurrency 4 whose client takes
// 10 ms to send a slot's next request after one of 90 ms ends holds 3.6
// in flight (90 %): the probe is invalid, the server ran a lighter load.
// With 1 ms gaps it holds 3.96 (99 %) and counts; a session's turns
// (delays by design) are not judged, nor gaps within the late threshold.
func TestHeldConcurrency(t *testing.T) {
	const ms = int64(1e6)
	run := func(hold, gap int64, turns bool) *measured {
		var a scheduleAcc
		for slot := range int64(4) {
			at := slot * ms / 10 // the slots start 0.1 ms apart
			for k := range 10 {
				r := record.Request{SentNS: at, WroteNS: at, EndNS: at + hold, IntendedNS: at}
				if turns && k > 0 {
					r.Turn = int32(k)
				}
				if k == 0 {
					r.Phase = record.PhaseWarmup
				}
				a.hold(&r)
				if r.Phase != record.PhaseWarmup {
					a.add(&r)
				}
				at += hold + gap
			}
		}
		s := &summary.Summary{RequestCount: 36, Metrics: map[string]*summary.Stats{}}
		return &measured{sum: s, sched: a.schedule(false, 0), concurrency: 4}
	}
	for _, c := range []struct {
		name  string
		m     *measured
		held  float64 // the time-mean in flight, ±0.05
		valid bool
	}{
		{"10 ms gaps", run(90*ms, 10*ms, false), 3.6, false},
		{"1 ms gaps", run(90*ms, ms, false), 3.96, true},
		{"sessions", run(90*ms, 10*ms, true), 0, true},
		// A server that answers in 3 ms, a client that sends the next
		// 0.3 ms after: 91 %, but any client's turnaround, not a failure.
		{"fast server", run(3*ms, 3*ms/10, false), 3.64, true},
	} {
		v := validity(c.m, false, time.Second, DefaultFindMinSentShare, 0.9)
		if d := c.m.sched.Held - c.held; d > 0.05 || d < -0.05 || v.Valid != c.valid {
			t.Errorf("%s: held %.3f (want %.2f), valid %v %v", c.name, c.m.sched.Held, c.held, v.Valid, v.Reasons)
		}
		if !c.valid && (len(v.Reasons) == 0 || !strings.Contains(v.Reasons[0], "requests in flight on average of the 4 asked (90% < 95%; a slot waited 9")) {
			t.Errorf("%s: reasons %v", c.name, v.Reasons)
		}
	}
}
