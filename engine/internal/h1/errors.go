package h1

import (
	"errors"
	"fmt"
	"os"
)

// Errors Do returns besides the network's.
var (
	// ErrMalformed marks a response that is not valid HTTP/1.1: a bad
	// status line, header or chunk framing.
	ErrMalformed = errors.New("malformed HTTP response")
	// ErrTimeout is Config.Timeout expiring. It matches
	// os.ErrDeadlineExceeded.
	ErrTimeout = fmt.Errorf("request timed out (--timeout): %w", os.ErrDeadlineExceeded)
	// ErrBadHead marks a Request.Head that Do refuses to write: not one
	// request line and header lines of valid syntax (a CR, LF, NUL or
	// other control character in a header, a space or control character
	// in the path), which would put a header or a request of their own
	// on the wire. Nothing is sent.
	ErrBadHead = errors.New("request head is not valid HTTP/1.1; nothing was sent")
)
