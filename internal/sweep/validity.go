package sweep

import (
	"fmt"
	"maps"
	"math"
	"slices"
	"time"

	"github.com/reprise-bench/reprise/engine/summary"
	"github.com/reprise-bench/reprise/replay"
)

// Defaults of a probe's validity: whether the client kept the schedule
// it was asked to keep, so that what the probe measured is the server's
// answer to that load (docs/format/sweep.md, "Valid probes").
const (
	// DefaultFindMinSentShare is the least share of the asked rate the
	// client must have sent at: 95 %. Below it the server was offered a
	// lighter load than the probe is named for, and a pass would certify
	// a load that was never sent.
	DefaultFindMinSentShare = 0.95
	// DefaultMinHeldShare is the least share of a closed loop's
	// concurrency the client must have kept in flight on average: 95 %.
	// Below it the server ran fewer requests than the probe is named for
	// (a starved client is slow to send the next request when one ends),
	// and its latency is that of a lighter load: at 90 % of 7 slots a
	// server whose latency grows with the requests it runs measures as if
	// at 6.3, and passes an SLA that 7 fails.
	DefaultMinHeldShare = 0.95
	// DefaultFindMaxReruns is how often an invalid probe is run again
	// before the search stops as unable to measure the load: two, so a
	// stall of the machine has to last through three probes.
	DefaultFindMaxReruns = 2
)

// Validity is whether a probe's run measured the server at the load
// asked: the client sent at least MinSentShare of the asked rate, its
// schedule lateness p99 stayed within the budget, its measurement
// quality (summary.json's measurement_quality, judged with that budget)
// is good, and a closed loop held its concurrency ([heldReason]).
type Validity struct {
	Valid bool `json:"valid"`
	// Reasons say why an invalid probe does not count, with the numbers.
	Reasons []string `json:"reasons,omitempty"`
	// AskedRate and SentRate are [schedule]'s, requests/s; SentShare
	// SentRate/AskedRate (open loop only, else 0).
	AskedRate float64 `json:"asked_rate"`
	SentRate  float64 `json:"sent_rate"`
	SentShare float64 `json:"sent_share"`
	// HeldShare is a closed loop's time-mean requests in flight over its
	// concurrency (0 when not judged).
	HeldShare float64 `json:"held_share,omitempty"`
	// LatenessP99MS is the run's schedule_lateness p99 and
	// LatenessBudgetMS the budget it was judged against, ms.
	LatenessP99MS    float64 `json:"lateness_p99_ms"`
	LatenessBudgetMS float64 `json:"lateness_budget_ms"`
	// Quality is measurement_quality's verdict with that budget (and,
	// with SLOs on whole-request times only, with the read-lag rule of
	// [readLagScoped] instead of its own check).
	Quality string `json:"quality"`
	// ReadLagFlips counts the requests that failed the SLOs by less than
	// their own read lag, when the SLOs judge only whole-request times
	// ([readLagScoped]); 0 otherwise.
	ReadLagFlips int `json:"read_lag_flips,omitempty"`
	// Waived, on a valid probe, are the reasons that would have made it
	// invalid, set aside because its queue grew faster than the client's
	// own delays could make it ([validity]).
	Waived []string `json:"waived,omitempty"`
}

// validity judges one run m of a probe. maxLate is the lateness budget
// (0: the default rule below); minShare the least sent share; minGood
// the good fraction that passes (for the read-lag rule of
// [readLagScoped]).
//
// The default budget is half the mean gap between sends at the asked
// rate, 1/(2·rate), and at least the run's late threshold. A request that
// leaves later than that reaches the server nearer its successor's time
// than its own: past it, the arrivals the server saw are no longer the
// process asked for (a stall of the machine turns a steady stream into a
// burst), and at p99 one request in a hundred may be that late. At
// 33 requests/s it is 15 ms; at 2 requests/s, 250 ms. In closed loop the
// rate is the sent one.
func validity(m *measured, openLoop bool, maxLate time.Duration, minShare, minGood float64) Validity {
	s := m.sum
	v := Validity{AskedRate: m.sched.Asked, SentRate: m.sched.Sent}
	rate := v.AskedRate
	if !openLoop || rate <= 0 {
		rate = v.SentRate
	}
	budget := maxLate
	if budget <= 0 {
		budget = max(s.Options.LateThreshold, replay.DefaultLateThreshold)
		if rate > 0 {
			budget = max(budget, time.Duration(float64(time.Second)/(2*rate)))
		}
	}
	v.LatenessBudgetMS = float64(budget) / 1e6
	if st := s.Metrics["schedule_lateness"]; st != nil {
		v.LatenessP99MS = st.P99
	}
	if openLoop && v.AskedRate > 0 {
		v.SentShare = v.SentRate / v.AskedRate
		if v.SentShare < minShare {
			v.Reasons = append(v.Reasons, fmt.Sprintf("sent %.3g of the %.4g requests/s asked (%.0f%% < %.0f%%)",
				v.SentRate, v.AskedRate, 100*v.SentShare, 100*minShare))
		}
	}
	if reason := heldReason(m, openLoop, &v); reason != "" {
		v.Reasons = append(v.Reasons, reason)
	}
	// measurement_quality with the probe's lateness budget: its lateness
	// check is then the budget's, and its other checks (read lag,
	// coalesced reads, a calibration's safe load) are the run's own,
	// but for SLOs on whole-request times (below). A run in which no
	// request succeeded measured a server that failed: that is the
	// server's verdict, not the client's.
	qs := *s
	qs.Options.LateThreshold = budget
	scoped := readLagScoped(s)
	if scoped {
		qs.Metrics = maps.Clone(s.Metrics)
		delete(qs.Metrics, "client_read_lag")
		delete(qs.Metrics, "events_per_read_max") // its check applies without read lag only
	}
	q := qs.Quality()
	v.Quality = q.Verdict
	if s.RequestCount > 0 && q.Verdict != summary.QualityGood {
		v.Reasons = append(v.Reasons, q.Reasons...)
	}
	if scoped && s.RequestCount > 0 {
		v.ReadLagFlips = m.sched.ReadLagFlips
		n := s.RequestCount + s.ErrorRequestCount
		if f := float64(s.GoodRequestCount) / float64(n); f < minGood && float64(s.GoodRequestCount+v.ReadLagFlips)/float64(n) >= minGood {
			v.Reasons = append(v.Reasons, fmt.Sprintf("%d of the %d requests missed the SLO by less than the client's own read lag: "+
				"with them the good fraction is %.1f%%, not %.1f%% (≥ %v passes), so the client, not the server, may have failed the probe",
				v.ReadLagFlips, n, 100*float64(s.GoodRequestCount+v.ReadLagFlips)/float64(n), 100*f, minGood))
			v.Quality = summary.QualityDegraded
		}
	}
	if math.IsNaN(v.LatenessP99MS) {
		v.LatenessP99MS = 0
	}
	v.Valid = len(v.Reasons) == 0
	if !v.Valid && beyondClient(m) {
		v.Valid, v.Waived, v.Reasons = true, v.Reasons, nil
	}
	return v
}

// heldReason is why a closed loop's probe did not hold its concurrency
// (DefaultMinHeldShare of it, time-averaged in flight: [scheduleAcc.held]),
// or "". The slots' idle time is c·span − busy, spread over the sends
// that refilled them: only a mean idle gap per send over the run's late
// threshold (1 ms at least) is the client's failure. Below it the gap is
// any client's turnaround, a real share of the load only for a server
// that answers in a few ms (0.3 ms after each 3 ms answer is 91 %), not
// of an LLM server's hundreds. A run of which more than a tenth of the
// requests failed is not judged: a request that fails at once leaves its
// slot idle for the client's turnaround, which is the server's doing.
func heldReason(m *measured, openLoop bool, v *Validity) string {
	c, s, sc := m.concurrency, m.sum, m.sched
	if openLoop || c <= 0 || sc.Held <= 0 || sc.Sends == 0 || s.RequestCount == 0 || 10*s.ErrorRequestCount > s.RequestCount+s.ErrorRequestCount {
		return ""
	}
	v.HeldShare = sc.Held / float64(c)
	span := float64(sc.SendSpan)
	gap := time.Duration((float64(c) - sc.Held) * span / float64(sc.Sends))
	if v.HeldShare >= DefaultMinHeldShare || gap <= max(s.Options.LateThreshold, replay.DefaultLateThreshold) {
		return ""
	}
	return fmt.Sprintf("the client held %.3g requests in flight on average of the %d asked (%.0f%% < %.0f%%; a slot waited %s on average for its next send): the server ran a lighter load than the probe is named for",
		sc.Held, c, 100*v.HeldShare, 100*DefaultMinHeldShare, gap.Round(10*time.Microsecond))
}

// readLagScoped reports whether a probe's read lag is judged by the
// requests it could have failed (below) rather than by
// measurement_quality's read-lag check: when every SLO judges a
// whole-request time (time to first token or first output token, request
// latency) or a request's inter-token latency, which is (last − first
// token) over its gaps, two stamps and no more, and the run has the read
// lag (kernel receive times).
//
// measurement_quality calls a run degraded when its read lag p90 passes
// the median gap between tokens: tokens that waited together in the
// socket are stamped together, which ruins inter-token latencies. A
// whole-request time is stamped by the kernel and moved by at most the
// longest lag of one of the request's reads (record.Request.ReadLagNS):
// a request that failed an SLO by less than that may have failed it
// because of the client. [scheduleAcc] counts those requests
// (schedule.ReadLagFlips); a failing probe whose good fraction would pass
// with them counted good is the client's failure as much as the
// server's, and invalid. A pass needs no such check: the client only
// makes times longer. A search's verdict on a TTFT SLO of 300 ms thus
// stands on a 3 ms-ITL server whose tokens the client reads in bunches.
func readLagScoped(s *summary.Summary) bool {
	if s.Metrics["client_read_lag"] == nil || len(s.Options.Goodput) == 0 {
		return false
	}
	for _, slo := range s.Options.Goodput {
		switch slo.Tag {
		case "time_to_first_token", "time_to_first_output_token", "request_latency", "inter_token_latency":
		default:
			return false
		}
	}
	return true
}

// beyondClient reports whether m's rate check found a queue that grew
// faster than the client's own delays could make it: then the server
// failed whatever the client did, and the probe is a valid fail.
//
// The rate check's slope g is that of end − intended against intended.
// The client adds to end − intended its schedule lateness (the send left
// late) and its read lag (the response was read late); each is at most
// its maximum over the run, so over the schedule's span D the client can
// tilt the line by at most (max lateness + max read lag)/D. A slope that
// exceeds that bound by SaturationZ of its standard errors is the
// server's. And a server that cannot keep up with what was sent cannot
// keep up with more: a deficit at a lighter load than asked (a low sent
// share) fails the asked load too. A search past capacity thus still
// fails on a busy machine, where the client is late by tens of ms
// beside a queue growing by seconds.
func beyondClient(m *measured) bool {
	sat := m.sat
	if !slices.Contains(sat.Reasons, "rate") || sat.RateRatio <= 0 || m.sched.IntendedSpan <= 0 {
		return false
	}
	g := 1/sat.RateRatio - 1
	seG := sat.RateDeficitSE * (1 + g) * (1 + g)
	var clientMS float64
	for _, tag := range []string{"schedule_lateness", "client_read_lag"} {
		if st := m.sum.Metrics[tag]; st != nil && st.Max > 0 {
			clientMS += st.Max
		}
	}
	bound := clientMS / 1e3 / m.sched.IntendedSpan.Seconds()
	return g-SaturationZ*seG > bound
}
