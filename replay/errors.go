package replay

import "github.com/reprise-bench/reprise/internal/fieldmsg"

// FieldError is a problem with the value of a [Config] field, alone or
// together with other fields. Its message names every field it speaks of
// as Go spells it ("Speedup needs the fixed schedule (Mode fixed)");
// [FieldError.Format] spells them as the caller's users know them, as the
// reprise command does with its flags. [Config.Validate], [Config.ModeFor], [NewPlan] and
// [NewStreamPlan] report configuration problems as FieldErrors (several
// joined with errors.Join), and [Stats.Check] reports a lateness budget
// breach as one that wraps [ErrLatenessBudget].
type FieldError struct {
	// Field is the Config field to change ("Speedup").
	Field string
	// format is a fmt format in which {Name} stands for the Config
	// field Name; args are its operands.
	format string
	args   []any
}

// fieldError returns a FieldError for field; format names Config fields
// as {Name} (see [FieldError.Format]).
func fieldError(field, format string, args ...any) *FieldError {
	return &FieldError{Field: field, format: format, args: args}
}

// Error returns the message, naming fields as Go spells them.
func (e *FieldError) Error() string { return e.render(nil).Error() }

// Format returns the message with every Config field it names spelled
// name(field), where field is the name as Go spells it ("MaxLateness");
// a nil name spells them as Go does, as Error does.
func (e *FieldError) Format(name func(field string) string) string {
	return e.render(name).Error()
}

// Unwrap returns the errors the message wraps ([ErrLatenessBudget] for
// [Stats.Check]'s), or nil.
func (e *FieldError) Unwrap() []error {
	switch u := e.render(nil).(type) {
	case interface{ Unwrap() error }:
		return []error{u.Unwrap()}
	case interface{ Unwrap() []error }:
		return u.Unwrap()
	}
	return nil
}

// render formats the message with the fields spelled by name.
func (e *FieldError) render(name func(string) string) error {
	return fieldmsg.Render(e.format, e.args, name)
}
