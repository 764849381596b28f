package synth

import "errors"

// The errors exposed.
var (
	// ErrSettings is matched (errors.Is) by every error of Derive and
	// Generate that the settings or the input caused — an invalid value, a
	// target out of reach, a window over a trace without timestamps — as
	// opposed to a failure of the run itself. Nothing was produced; the
	// message says what to change.
	ErrSettings = errors.New("synthesis settings")
)

// settingsError marks err as caused by the settings (ErrSettings).
type settingsError struct{ err error }

func (e *settingsError) Error() string        { return e.err.Error() }
func (e *settingsError) Unwrap() error        { return e.err }
func (e *settingsError) Is(target error) bool { return target == ErrSettings }

func settings(err error) error {
	if err == nil {
		return nil
	}
	return &settingsError{err}
}

// errBug marks an internal inconsistency: never a settings error.
var errBug = errors.New("BUG")
