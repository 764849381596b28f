package reprise

import (
	"errors"
	"fmt"
	"strings"

	"github.com/reprise-bench/reprise/internal/fieldmsg"
	"github.com/reprise-bench/reprise/replay"
)

// ConfigError is every problem with the options, or with the trace they
// name, found before anything was sent or created. Each problem is a
// [*FieldError] naming the field to change.
type ConfigError struct {
	// Errors are the problems, in the order they were found; never empty.
	Errors []*FieldError
}

// Error returns the problems one a line, naming fields as Go spells them
// ("Output.Format \"csv\": want parquet, arrow or jsonl").
func (e *ConfigError) Error() string { return e.Format(nil) }

// Format returns the problems one a line with every field spelled
// name(path), as [FieldError.Format] does.
func (e *ConfigError) Format(name func(path string) string) string {
	lines := make([]string, len(e.Errors))
	for i, fe := range e.Errors {
		lines[i] = fe.Format(name)
	}
	return strings.Join(lines, "\n")
}

// Unwrap returns the problems, each a *FieldError.
func (e *ConfigError) Unwrap() []error {
	out := make([]error, len(e.Errors))
	for i, fe := range e.Errors {
		out[i] = fe
	}
	return out
}

// FieldError is a problem with the value of an [Options] field, alone or
// together with other fields, or with the trace that Trace names. Field is
// the field's path from Options ("Output.Dir", "Replay.Speedup",
// "Trace.Path"). The message names every field it speaks of by its path
// as Go spells it ("Replay.Speedup needs the fixed schedule (Replay.Mode
// fixed)"); [FieldError.Format] spells them as the caller's users know
// them, as the reprise command does with its flags. [Run] returns
// FieldErrors in a [*ConfigError] before anything is sent, and alone for a
// field that fails later (the run directory of Output.Dir in use, a
// profile file that cannot be written).
type FieldError struct {
	// Field is the path of the Options field to change.
	Field string
	// format is a fmt format in which {Path} stands for the Options field
	// at Path; args are its operands.
	format string
	args   []any
	// replay, when not nil, is the replay.Config problem this is: its
	// fields are Options.Replay's.
	replay *replay.FieldError
}

// fieldError returns a FieldError for the field at path; format names
// Options fields as {Path} (see [FieldError.Format]).
func fieldError(path, format string, args ...any) *FieldError {
	return &FieldError{Field: path, format: format, args: args}
}

// Error returns the message, naming fields by their paths.
func (e *FieldError) Error() string { return e.Format(nil) }

// Format returns the message with every Options field it names spelled
// name(path), where path is the field's path from Options
// ("Replay.MaxLateness"); a nil name spells the paths as they are, as
// Error does.
func (e *FieldError) Format(name func(path string) string) string {
	return e.render(name).Error()
}

// Unwrap returns the errors the message wraps, or nil.
func (e *FieldError) Unwrap() []error {
	if e.replay != nil {
		return []error{e.replay}
	}
	switch u := e.render(nil).(type) {
	case interface{ Unwrap() error }:
		return []error{u.Unwrap()}
	case interface{ Unwrap() []error }:
		return u.Unwrap()
	}
	return nil
}

func (e *FieldError) render(name func(string) string) error {
	if name == nil {
		name = func(path string) string { return path }
	}
	if e.replay != nil {
		return errors.New(e.replay.Format(func(f string) string { return name("Replay." + f) }))
	}
	return fieldmsg.Render(e.format, e.args, name)
}

// fieldErrors returns the problems of err as FieldErrors: a
// *replay.FieldError becomes one of Options.Replay, a *FieldError stays
// as it is, and any other error is one of the field at path. Errors
// joined with errors.Join are taken one by one.
func fieldErrors(err error, path string) []*FieldError {
	if err == nil {
		return nil
	}
	switch e := err.(type) {
	case *FieldError:
		return []*FieldError{e}
	case *ConfigError:
		return e.Errors
	case *replay.FieldError:
		return []*FieldError{{Field: "Replay." + e.Field, replay: e}}
	case interface{ Unwrap() []error }:
		if isJoin(err) {
			var out []*FieldError
			for _, x := range e.Unwrap() {
				out = append(out, fieldErrors(x, path)...)
			}
			return out
		}
	}
	return []*FieldError{fieldError(path, "%w", err)}
}

// isJoin reports whether err is errors.Join's: its message is its
// errors' messages one a line.
func isJoin(err error) bool {
	u, ok := err.(interface{ Unwrap() []error })
	if !ok {
		return false
	}
	msgs := make([]string, 0, len(u.Unwrap()))
	for _, x := range u.Unwrap() {
		msgs = append(msgs, x.Error())
	}
	return err.Error() == strings.Join(msgs, "\n")
}

// TelemetryError is a failure to start collecting telemetry
// ([Options.Telemetry]): the GPU source cannot be opened, or a telemetry
// table cannot be created. Nothing was sent.
type TelemetryError struct {
	Err error
}

func (e *TelemetryError) Error() string { return e.Err.Error() }

// Unwrap returns the failure.
func (e *TelemetryError) Unwrap() error { return e.Err }

// UnreachableError reports that a server did not answer. With Requests 0
// the check before the first request failed ([PreflightOptions]): nothing
// was sent and no run directory was created. Otherwise the first Requests
// requests of the run to end all failed to connect
// ([Options.AbortAfterConnectFailures]): the run stopped, and [Run]
// returns the [Result] of what it recorded with the error.
type UnreachableError struct {
	// URL is the target that did not answer, as files name it (without
	// user info).
	URL string
	// Requests is how many requests had failed to connect when the run
	// stopped; 0 when the preflight failed.
	Requests int
	// Err is why: the connection's error, or the preflight's timeout.
	Err error
}

func (e *UnreachableError) Error() string {
	if e.Requests == 0 {
		return fmt.Sprintf("server check: %s does not answer: %v; nothing was sent", e.URL, e.Err)
	}
	return fmt.Sprintf("stopped: the first %d requests all failed to connect to %s: %v", e.Requests, e.URL, e.Err)
}

// Unwrap returns the failure.
func (e *UnreachableError) Unwrap() error { return e.Err }

// FailedRequestsError reports that a run was aborted because more than
// [Options.FailedRequestThreshold] of its measured requests had failed:
// the run stopped, and [Run] returns the [Result] of what it recorded
// with the error.
type FailedRequestsError struct {
	// Failed of Ended measured requests had failed when the run stopped.
	Failed, Ended int64
	// Threshold is Options.FailedRequestThreshold.
	Threshold float64
}

func (e *FailedRequestsError) Error() string { return "stopped: " + e.reason() }

// reason is the message without its "stopped: " (summary.json's
// run_info.stopped).
func (e *FailedRequestsError) reason() string {
	return fmt.Sprintf("%d of %d measured requests failed (%.1f %%), over the failed-request threshold of %.1f %%",
		e.Failed, e.Ended, 100*float64(e.Failed)/float64(e.Ended), 100*e.Threshold)
}
