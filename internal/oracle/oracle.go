// Package oracle compares a client's request records with the mock
// server's oracle log (internal/mockserver): how far each client
// timestamp lies from the moment the server wrote the event it stamps.
// BenchmarkTTFTError and `reprise selftest` both measure with [Compare],
// so their numbers mean the same thing.
package oracle

import (
	"fmt"
	"math"
	"strconv"

	"github.com/reprise-bench/reprise/engine/record"
	"github.com/reprise-bench/reprise/engine/summary"
	"github.com/reprise-bench/reprise/internal/mockserver"
)

// ClockSlack tolerates the difference between the client's and the
// server's clocks (both the wall clock read once at start plus monotonic
// time) when checking that no client stamp precedes the server's write.
const ClockSlack = 200e3 // ns

// Errors are distributions, in ms, over the ok requests with content
// events: of the distance between a client stamp and the interval in which
// the server wrote the event ([mockserver.Event.StartNS, TimeNS]; 0 inside
// it) for the first token (TTFT's error) and the last token (E2E's
// error), of |client − server| mean ITL, and of the first token's interval
// width (the oracle's own uncertainty).
type Errors struct {
	First, Last, ITL, Width summary.Stats
	// Joined counts the requests compared.
	Joined int
}

// Compare joins reqs to log by X-Request-Id (a record's RequestID) and
// returns the timing errors, with a problem for every request that is not
// in the log, failed, disagrees with the server's token counts or stamps
// a token before the server began writing it. Neither argument is
// modified.
func Compare(reqs []record.Request, log []mockserver.RequestLog) (Errors, []error) {
	logs := make(map[string]*mockserver.RequestLog, len(log))
	for i := range log {
		logs[log[i].ClientRequestID] = &log[i]
	}
	var problems []error
	var dFirst, dLast, dITL, width []float64
	for i := range reqs {
		r := &reqs[i]
		l := logs[strconv.FormatUint(r.RequestID, 10)]
		if l == nil {
			problems = append(problems, fmt.Errorf("request %d not in the server log", r.RequestID))
			continue
		}
		if !r.OK() {
			problems = append(problems, fmt.Errorf("request %d failed: %s %s", r.RequestID, r.ErrorKind, r.ErrorMessage))
			continue
		}
		if int(r.ServerCompletionTokens) != l.OutputTokens || int(r.ServerPromptTokens) != l.PromptTokens {
			problems = append(problems, fmt.Errorf("request %d: usage %d/%d, server log %d/%d", r.RequestID,
				r.ServerPromptTokens, r.ServerCompletionTokens, l.PromptTokens, l.OutputTokens))
		}
		var first, last *mockserver.Event
		n := 0
		for j := range l.Events {
			ev := &l.Events[j]
			if ev.Kind == mockserver.EventContent || ev.Kind == mockserver.EventReasoning {
				if first == nil {
					first = ev
				}
				last = ev
				n++
			}
		}
		if int(r.ContentEvents) != n {
			problems = append(problems, fmt.Errorf("request %d: %d content events, server sent %d", r.RequestID, r.ContentEvents, n))
		}
		if n == 0 {
			continue
		}
		if r.FirstTokenNS < first.StartNS-ClockSlack || r.LastTokenNS < last.StartNS-ClockSlack {
			problems = append(problems, fmt.Errorf("request %d: client stamps before the server's write began: first %d < %d or last %d < %d",
				r.RequestID, r.FirstTokenNS, first.StartNS, r.LastTokenNS, last.StartNS))
		}
		dFirst = append(dFirst, outside(r.FirstTokenNS, first.StartNS, first.TimeNS))
		dLast = append(dLast, outside(r.LastTokenNS, last.StartNS, last.TimeNS))
		width = append(width, float64(first.TimeNS-first.StartNS)/1e6)
		if n >= 2 && r.ServerCompletionTokens >= 2 {
			serverITL := float64(last.TimeNS-first.TimeNS) / float64(r.ServerCompletionTokens-1)
			dITL = append(dITL, math.Abs(r.ITLNS-serverITL)/1e6)
		}
	}
	return Errors{First: summary.Compute(dFirst), Last: summary.Compute(dLast), ITL: summary.Compute(dITL),
		Width: summary.Compute(width), Joined: len(dFirst)}, problems
}

// outside returns how far t lies outside [lo, hi], in ms.
func outside(t, lo, hi int64) float64 {
	switch {
	case t < lo:
		return float64(lo-t) / 1e6
	case t > hi:
		return float64(t-hi) / 1e6
	}
	return 0
}
