package runout

import (
	"fmt"
	"strings"

	"github.com/reprise-bench/reprise"
	"github.com/reprise-bench/reprise/internal/exitcode"
)

// VerdictError maps the verdicts of a completed run to an exit code
// (docs/format/cli.md): the first verdict's, as they come in their order
// of precedence (1 interrupted or no request succeeded, 4 lateness, 3
// --max-error-rate or goodput), with every failed check in the message,
// one a line; nil when the run passed. spell rewrites an error
// to name the options as the command's users know them.
func VerdictError(res *reprise.Result, spell func(error) error) error {
	if len(res.Verdicts) == 0 {
		return nil
	}
	first := verdictExit(res, res.Verdicts[0], spell)
	if len(res.Verdicts) == 1 {
		return first
	}
	lines := []string{first.Err.Error()}
	for _, v := range res.Verdicts[1:] {
		lines = append(lines, "also failed: "+verdictExit(res, v, spell).Err.Error())
	}
	return &exitcode.Error{Code: first.Code, Err: &verdictsError{msg: strings.Join(lines, "\n"), first: first.Err}, Hint: first.Hint}
}

// verdictsError is the message of several failed checks; it unwraps to
// the first one's.
type verdictsError struct {
	msg   string
	first error
}

func (e *verdictsError) Error() string { return e.msg }
func (e *verdictsError) Unwrap() error { return e.first }

// verdictExit is one verdict's exit code, message and hint.
func verdictExit(res *reprise.Result, v reprise.Verdict, spell func(error) error) *exitcode.Error {
	switch v.Kind {
	case reprise.Interrupted:
		if v.Aborted {
			return &exitcode.Error{Code: exitcode.RunError,
				Err: fmt.Errorf("interrupted twice: in-flight requests were cancelled at once; partial results written to %s", res.Dir)}
		}
		return &exitcode.Error{Code: exitcode.RunError, Err: fmt.Errorf("interrupted; partial results written to %s", res.Dir)}
	case reprise.LatenessOverBudget:
		return &exitcode.Error{Code: exitcode.Lateness, Err: spell(res.Stats.Check()),
			Hint: "the client could not keep the schedule: lower the load, add --senders, or raise --max-lateness"}
	case reprise.AllFailed:
		msg := ""
		if v.Example != "" {
			msg = "; e.g. " + v.Example
		}
		return &exitcode.Error{Code: exitcode.RunError,
			Err:  fmt.Errorf("no request succeeded (%d failed%s)", v.Failed, msg),
			Hint: "check --url, --model and --endpoint, and that the server is up; every failure is in the records"}
	case reprise.ErrorRateExceeded:
		return &exitcode.Error{Code: exitcode.SLOBreach,
			Err:  fmt.Errorf("error rate %.4f > --max-error-rate %v (%d of %d requests failed)", v.Value, v.Limit, v.Failed, v.Requests),
			Hint: "every failure is in the records (error_kind, error_message); --max-error-rate 1 accepts any error rate"}
	case reprise.SLOFailed:
		return &exitcode.Error{Code: exitcode.SLOBreach,
			Err: fmt.Errorf("goodput: %.4f of requests met every SLO < --min-good-fraction %v", v.Value, v.Limit)}
	case reprise.AccuracyBelow:
		return &exitcode.Error{Code: exitcode.SLOBreach,
			Err:  fmt.Errorf("accuracy %.4f < --goodput accuracy:%v (%d of %d graded requests wrong)", v.Value, v.Limit, v.Failed, v.Requests),
			Hint: "the grades are in the records (accuracy_answer, accuracy_expected, accuracy_correct)"}
	}
	return &exitcode.Error{Code: exitcode.RunError, Err: fmt.Errorf("%s; results in %s", v, res.Dir)}
}
