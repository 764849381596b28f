package exitcode

import (
	"errors"
	"fmt"
	"testing"
)

func TestCode(t *testing.T) {
	base := errors.New("boom")
	tests := []struct {
		name string
		err  error
		want int
		hint string
	}{
		{"nil", nil, OK, ""},
		{"plain", base, RunError, ""},
		{"usage", UsageError(base, "try --help"), Usage, "try --help"},
		{"wrapped usage", fmt.Errorf("read: %w", Usagef("bad %s", "x")), Usage, ""},
		{"slo", &Error{Code: SLOBreach, Err: base}, SLOBreach, ""},
		{"lateness", fmt.Errorf("run: %w", &Error{Code: Lateness, Err: base, Hint: "h"}), Lateness, "h"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			if got := Code(tt.err); got != tt.want {
				t.Errorf("Code = %d, want %d", got, tt.want)
			}
			if got := Hint(tt.err); got != tt.hint {
				t.Errorf("Hint = %q, want %q", got, tt.hint)
			}
		})
	}
	if !errors.Is(UsageError(base, ""), base) {
		t.Error("UsageError does not unwrap to its cause")
	}
}
