package reprise

import (
	"fmt"
	"strings"

	"github.com/reprise-bench/reprise/engine/summary"
	"github.com/reprise-bench/reprise/replay"
)

// VerdictKind names what a completed run failed.
type VerdictKind string

// The verdicts, in the order [Run] lists them, which is their order of
// precedence: an interrupted run is judged no further; a run in which
// nothing succeeded measured nothing, which outweighs everything else;
// late dispatch makes the remaining checks unreliable.
const (
	// Interrupted: Run's context was cancelled (Aborted: Options.Abort
	// was closed as well); the results are partial.
	Interrupted VerdictKind = "interrupted"
	// AllFailed: not one measured request succeeded.
	AllFailed VerdictKind = "all_failed"
	// LatenessOverBudget: the p99 schedule lateness passed
	// Replay.MaxLateness. Value and Limit are in seconds.
	LatenessOverBudget VerdictKind = "lateness_over_budget"
	// ErrorRateExceeded: more than MaxErrorRate of the measured requests
	// failed. Value is the error rate.
	ErrorRateExceeded VerdictKind = "error_rate_exceeded"
	// SLOFailed: fewer than MinGoodFraction of the requests met every
	// goodput SLO. Value is the fraction that did.
	SLOFailed VerdictKind = "slo_failed"
	// AccuracyBelow: the graded requests' accuracy is below the
	// goodput's minimum accuracy (Goodput "accuracy:V"). Value is the
	// accuracy, Limit the minimum; Failed and Requests count the graded
	// requests answered wrong and all of them.
	AccuracyBelow VerdictKind = "accuracy_below"
)

// Verdict is one failed check of a completed run, with its numbers.
type Verdict struct {
	Kind VerdictKind
	// Value is what was measured and Limit the option it broke (see the
	// kinds); both are 0 for Interrupted and AllFailed.
	Value, Limit float64
	// Failed and Requests count the measured requests that failed and
	// all measured requests (for lateness: late and dispatched ones).
	Failed, Requests int64
	// Example is the first error of an AllFailed run, "kind: message",
	// empty when the summary holds none.
	Example string
	// Aborted reports, for Interrupted, that in-flight requests were
	// cancelled at once.
	Aborted bool
}

// String says what failed, with the numbers, naming Options fields.
func (v Verdict) String() string {
	switch v.Kind {
	case Interrupted:
		if v.Aborted {
			return "interrupted twice: in-flight requests were cancelled at once"
		}
		return "interrupted"
	case LatenessOverBudget:
		return fmt.Sprintf("p99 lateness %gs > Replay.MaxLateness %gs (%d of %d requests late)", v.Value, v.Limit, v.Failed, v.Requests)
	case AllFailed:
		return fmt.Sprintf("no request succeeded (%d failed)", v.Failed)
	case ErrorRateExceeded:
		return fmt.Sprintf("error rate %.4f > MaxErrorRate %v (%d of %d requests failed)", v.Value, v.Limit, v.Failed, v.Requests)
	case SLOFailed:
		return fmt.Sprintf("goodput: %.4f of requests met every SLO < MinGoodFraction %v", v.Value, v.Limit)
	case AccuracyBelow:
		return fmt.Sprintf("accuracy %.4f < the Goodput minimum %v (%d of %d graded requests wrong)", v.Value, v.Limit, v.Failed, v.Requests)
	}
	return string(v.Kind)
}

// verdicts are every check a run failed, in the order of the kinds; an
// interrupted run gets that verdict alone. Empty when the run passed.
func verdicts(o *Options, s *summary.Summary, st *replay.Stats, interrupted, aborted bool) []Verdict {
	if interrupted {
		return []Verdict{{Kind: Interrupted, Aborted: aborted}}
	}
	var vs []Verdict
	if s.RequestCount == 0 && s.ErrorRequestCount > 0 {
		// Nothing reached an answer: there is no measurement to judge.
		v := Verdict{Kind: AllFailed, Failed: int64(s.ErrorRequestCount), Requests: int64(s.ErrorRequestCount)}
		if len(s.Errors) > 0 {
			// One line, whatever the message held (a server's page).
			v.Example = fmt.Sprintf("%s: %s", s.Errors[0].Kind, strings.Join(strings.Fields(s.Errors[0].Message), " "))
		}
		vs = append(vs, v)
	}
	if st.Check() != nil {
		vs = append(vs, Verdict{Kind: LatenessOverBudget, Value: st.Lateness.P99.Seconds(), Limit: st.MaxLateness.Seconds(),
			Failed: st.Late, Requests: st.Dispatched})
	}
	if r := s.ErrorRate(); r > o.MaxErrorRate {
		vs = append(vs, Verdict{Kind: ErrorRateExceeded, Value: r, Limit: o.MaxErrorRate,
			Failed: int64(s.ErrorRequestCount), Requests: int64(s.ErrorRequestCount + s.RequestCount)})
	}
	if len(s.Options.Goodput) > 0 && s.GoodRequestFraction < o.MinGoodFraction {
		vs = append(vs, Verdict{Kind: SLOFailed, Value: s.GoodRequestFraction, Limit: o.MinGoodFraction})
	}
	if min, ok := s.Options.MinAccuracy(); ok && s.Accuracy != nil && s.Accuracy.All.Accuracy < min {
		a := s.Accuracy.All
		vs = append(vs, Verdict{Kind: AccuracyBelow, Value: a.Accuracy, Limit: min, Failed: int64(a.Graded - a.Correct), Requests: int64(a.Graded)})
	}
	return vs
}
