package sweep

import (
	"cmp"
	"encoding/json"
	"fmt"
	"slices"
	"time"

	"github.com/reprise-bench/reprise/arrowio"
	"github.com/reprise-bench/reprise/engine/record"
	"github.com/reprise-bench/reprise/engine/summary"
	"github.com/reprise-bench/reprise/replay"
)

// schedule is what a run's records say about the schedule its client
// was asked to keep and the one it kept.
type schedule struct {
	// Asked is the rate the schedule asked for, requests/s: the measured
	// requests over the span of their intended times, less the shifts
	// --late shift applied (a shifted schedule asks for the same load
	// later, not for less of it). Sent is the rate they were sent at,
	// over the span of their send times. Both 0 with fewer than two.
	Asked, Sent float64
	// SendSpan is the time from the first measured send to the last;
	// IntendedSpan from the first intended time to the last (shifts
	// included: the span the saturation checks' slope is taken over).
	SendSpan, IntendedSpan time.Duration
	// ReadLagFlips counts the measured requests that failed the SLOs by
	// less than their own read lag ([readLagFlip]).
	ReadLagFlips int
	// Held is the time-mean number of requests in the server over the
	// measured sends' span ([scheduleAcc.held]); 0 when not known. Sends
	// counts the measured sends in that span after the first.
	Held  float64
	Sends int
}

// scheduleAcc accumulates a [schedule] over a run's measured requests.
type scheduleAcc struct {
	intended, late []int64 // per measured request with an intended time
	sent           []int64 // per measured request that was sent
	opts           summary.Options
	flips          int
	// in and out are when each request (warmup too) reached the server
	// and left it, as far as the client knows; sessions that some
	// request was a later turn of a session.
	in, out  []int64
	sessions bool
}

// hold records a request of the run, warmup included: it was in the
// server from its write (the send when not recorded) until its end less
// its read lag (the bytes waited in the socket, the server was done).
func (a *scheduleAcc) hold(r *record.Request) {
	a.sessions = a.sessions || r.Turn > 0
	start, end := r.WroteNS, r.EndNS-max(r.ReadLagNS, 0)
	if start == 0 {
		start = r.SentNS
	}
	if start != 0 && end > start {
		a.in, a.out = append(a.in, start), append(a.out, end)
	}
}

// held is the time-mean of the requests in the server between the first
// and the last measured send: in a closed loop at concurrency c every
// slot is busy then, each sending its next request when its last one
// ends, so a faithful client holds c. 0 without two measured sends, or
// for sessions (a slot waits out a turn's delay by design).
func (a *scheduleAcc) held() float64 {
	if len(a.sent) < 2 || a.sessions {
		return 0
	}
	lo, hi := slices.Min(a.sent), slices.Max(a.sent)
	if hi <= lo {
		return 0
	}
	var busy float64
	for i := range a.in {
		if s, e := max(a.in[i], lo), min(a.out[i], hi); e > s {
			busy += float64(e - s)
		}
	}
	return busy / float64(hi-lo)
}

func (a *scheduleAcc) add(r *record.Request) {
	if len(a.opts.Goodput) > 0 && r.OK() && !summary.Good(r, a.opts) && readLagFlip(r, a.opts) {
		a.flips++
	}
	a.intended = append(a.intended, r.IntendedNS)
	a.late = append(a.late, r.LatenessNS)
	if r.SentNS != 0 {
		a.sent = append(a.sent, r.SentNS)
	}
}

// schedule computes the [schedule]. With shift, the late policy was
// --late shift: every request later than threshold moved the rest of the
// schedule back by its lateness, so the intended times after it include
// that shift. The schedule's own span is the intended span less the
// shifts made by the requests before the last one.
func (a *scheduleAcc) schedule(shift bool, threshold time.Duration) schedule {
	sc := schedule{ReadLagFlips: a.flips, Held: a.held(), Sends: max(len(a.sent)-1, 0)}
	if len(a.sent) >= 2 {
		lo, hi := slices.Min(a.sent), slices.Max(a.sent)
		sc.SendSpan = time.Duration(hi - lo)
		if hi > lo {
			sc.Sent = float64(len(a.sent)-1) / sc.SendSpan.Seconds()
		}
	}
	if len(a.intended) < 2 {
		return sc
	}
	idx := make([]int, len(a.intended))
	for i := range idx {
		idx[i] = i
	}
	slices.SortStableFunc(idx, func(p, q int) int { return cmp.Compare(a.intended[p], a.intended[q]) })
	span := a.intended[idx[len(idx)-1]] - a.intended[idx[0]]
	sc.IntendedSpan = time.Duration(span)
	if shift {
		if threshold <= 0 {
			threshold = replay.DefaultLateThreshold
		}
		for _, i := range idx[:len(idx)-1] {
			if a.late[i] > int64(threshold) {
				span -= a.late[i]
			}
		}
	}
	if span > 0 {
		sc.Asked = float64(len(a.intended)-1) / (float64(span) / 1e9)
	}
	return sc
}

// runReplay is what a run's manifest.json says of its schedule: whether
// it used --late shift, and its closed loop's concurrency (0 for an open
// loop or a concurrency ramp, whose slots are not all busy by design).
// The zero value when it has none.
type runReplay struct {
	shift       bool
	concurrency int
}

func readRunReplay(rr *arrowio.RunReader) (runReplay, error) {
	b, err := rr.Manifest()
	if err != nil {
		return runReplay{}, nil
	}
	var m struct {
		Replay struct {
			Late            string `json:"late"`
			Mode            string `json:"mode"`
			Concurrency     int    `json:"concurrency"`
			ConcurrencyRamp string `json:"concurrency_ramp"`
		} `json:"replay"`
	}
	if err := json.Unmarshal(b, &m); err != nil {
		return runReplay{}, fmt.Errorf("%s: %w", arrowio.ManifestFile, err)
	}
	rp := runReplay{shift: replay.LatePolicy(m.Replay.Late) == replay.LateShift}
	if replay.Mode(m.Replay.Mode) == replay.ModeConcurrency && (m.Replay.ConcurrencyRamp == "" || m.Replay.ConcurrencyRamp == "0s") {
		rp.concurrency = m.Replay.Concurrency
	}
	return rp, nil
}

// readLagFlip reports whether r, a measured request that failed o's
// SLOs, meets them once its times are taken back by its read lag.
func readLagFlip(r *record.Request, o summary.Options) bool {
	if r.ReadLagNS <= 0 || !r.OK() {
		return false
	}
	q := *r
	q.TTFTNS = max(q.TTFTNS-r.ReadLagNS, 0)
	q.TTFONS = max(q.TTFONS-r.ReadLagNS, 0)
	q.E2ENS = max(q.E2ENS-r.ReadLagNS, 1)
	// A request's ITL is (last − first token)/(output tokens − 1): two
	// stamps, each late by at most the read lag.
	if n := r.OutputLength(); n > 1 {
		q.ITLNS = max(q.ITLNS-float64(r.ReadLagNS)/float64(n-1), 0)
	}
	return summary.Good(&q, o)
}
