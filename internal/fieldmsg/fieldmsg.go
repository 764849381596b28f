// Package fieldmsg formats error messages that name configuration fields,
// so that each caller can spell the fields as its users know them: Go's
// field names for a library, flags for the command line. It backs
// replay.FieldError and reprise.FieldError.
package fieldmsg

import (
	"errors"
	"fmt"
	"strings"
)

// Render formats format with args as fmt.Errorf does, after replacing
// every {Name} in format by name(Name) (by Name itself when name is nil).
// Only the format is rewritten, never the operands, so a value that looks
// like {Name} is printed as given. The result wraps the %w operands.
func Render(format string, args []any, name func(field string) string) error {
	var b strings.Builder
	f := format
	for {
		i := strings.IndexByte(f, '{')
		if i < 0 {
			break
		}
		j := strings.IndexByte(f[i+1:], '}')
		if j < 0 {
			break
		}
		field := f[i+1 : i+1+j]
		b.WriteString(f[:i])
		if name != nil {
			field = name(field)
		}
		b.WriteString(strings.ReplaceAll(field, "%", "%%"))
		f = f[i+2+j:]
	}
	b.WriteString(f)
	if len(args) == 0 {
		return errors.New(strings.ReplaceAll(b.String(), "%%", "%"))
	}
	return fmt.Errorf(b.String(), args...)
}
