package httpfield

import (
	"errors"
	"fmt"

	"golang.org/x/net/http/httpguts"
)

// Check returns nil when name is a header name (an HTTP token) and value
// a header field value: no control character but horizontal tab (no CR,
// LF, NUL, ESC, DEL). The error says which and where, never the value
// (it may be a secret).
func Check(name, value string) error {
	if !httpguts.ValidHeaderFieldName(name) {
		return fmt.Errorf("%q is not a header name: want an HTTP token (letters, digits and !#$%%&'*+-.^_`|~)", name)
	}
	if err := CheckValue(value); err != nil {
		return fmt.Errorf("header %s: %w", name, err)
	}
	return nil
}

// CheckValue is Check of a value alone.
func CheckValue(value string) error {
	if httpguts.ValidHeaderFieldValue(value) {
		return nil
	}
	for i := range len(value) {
		if c := value[i]; (c < ' ' && c != '\t') || c == 0x7f {
			return fmt.Errorf("the value holds %s at byte %d; a header value holds no CR, LF, NUL or other control character", describe(c), i)
		}
	}
	return errors.New("not a header value") // unreachable: httpguts refuses only control characters
}

// CheckPath returns nil when path can be written as the request target
// of a request line: visible ASCII only (no space, CR, LF or other
// control character, nor bytes ≥ 0x80; percent-encode them).
func CheckPath(path string) error {
	for i := range len(path) {
		if c := path[i]; c <= ' ' || c >= 0x7f {
			return fmt.Errorf("the path holds %s at byte %d: a request path is visible ASCII (percent-encode spaces and other bytes, e.g. %%20)", describe(c), i)
		}
	}
	return nil
}

// describe names byte c for an error message.
func describe(c byte) string {
	switch c {
	case '\r':
		return "a CR"
	case '\n':
		return "an LF"
	case 0:
		return "a NUL"
	case ' ':
		return "a space"
	case '\t':
		return "a tab"
	}
	return fmt.Sprintf("byte 0x%02x", c)
}
