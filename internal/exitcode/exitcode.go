// Package exitcode is the one table of reprise's process exit codes, and
// the error type that carries a code and a hint from deep in a run up to main.
//
//	code  meaning
//	0     success
//	1     the run could not run (setup failure, broken output, cancelled before results,
//	      a server that does not answer, or a replay in which not one request succeeded)
//	2     usage or configuration error: nothing was sent
//	3     a goodput SLO or --max-error-rate threshold failed; sweep --find (or a profile
//	      --search-recipe) found no load meeting the SLOs down to its floor
//	4     schedule lateness over the --max-lateness budget; sweep --find (or a recipe)
//	      cannot measure a load on this machine (the client did not keep its schedule
//	      in every try)
//
// Codes 3 and 4 are verdicts on a run that completed and wrote its files.
// When a run fails several checks, the code is the first of 1, 4, 3 that
// applies (reprise.VerdictKind's order) and the message lists them all.
package exitcode

import (
	"context"
	"errors"
	"fmt"
)

// The exit codes. See the package documentation for their meaning.
const (
	OK        = 0
	RunError  = 1
	Usage     = 2
	SLOBreach = 3
	Lateness  = 4
)

// Error is an error that ends the process with Code. Hint, when set, is a
// one-line suggestion printed after the error.
type Error struct {
	Code int
	Err  error
	Hint string
}

func (e *Error) Error() string {
	if e.Err == nil {
		return fmt.Sprintf("exit status %d", e.Code)
	}
	return e.Err.Error()
}

// Unwrap returns the wrapped error.
func (e *Error) Unwrap() error { return e.Err }

// ExitCode returns Code; it lets urfave/cli and callers treat Error as an
// exit coder.
func (e *Error) ExitCode() int { return e.Code }

// UsageError wraps err as a usage or configuration error (code 2).
func UsageError(err error, hint string) error {
	return &Error{Code: Usage, Err: err, Hint: hint}
}

// Usagef formats a usage error (code 2).
func Usagef(format string, args ...any) error {
	return &Error{Code: Usage, Err: fmt.Errorf(format, args...)}
}

// Code maps err to a process exit code: nil is OK, an *Error carries its
// own code, anything else is a run error.
func Code(err error) int {
	if err == nil {
		return OK
	}
	if e, ok := errors.AsType[*Error](err); ok {
		return e.Code
	}
	if errors.Is(err, context.Canceled) {
		return RunError
	}
	return RunError
}

// Hint returns the hint carried by err, or "".
func Hint(err error) string {
	if e, ok := errors.AsType[*Error](err); ok {
		return e.Hint
	}
	return ""
}
