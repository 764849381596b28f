package trace

import (
	"errors"
	"fmt"
)

// The errors exposed.
var (
	// ErrLFSPointer is returned for a Git LFS pointer file instead of data.
	ErrLFSPointer = errors.New("file is a Git LFS pointer, not the trace data")
	// ErrUnknownFormat is returned when detection cannot tell the format.
	ErrUnknownFormat = errors.New("cannot tell the trace format")
	// ErrEmpty is returned when a trace has no content but blank lines
	// (after decompression): there is no row and no header to read,
	// whether the format is detected or named.
	ErrEmpty = errors.New("the trace is empty")
	// ErrHeader is returned when the header of a CSV trace lacks a column
	// its format needs, or cannot be split: no row can be read, so
	// skipping invalid rows does not help.
	ErrHeader = errors.New("bad CSV header")
	// ErrRead is returned when the file cannot be read to its end (an I/O
	// error, or a compressed stream that is corrupt or cut short): no fix
	// to a row helps.
	ErrRead = errors.New("read")
	// ErrIsDir is returned when the path given as a trace is a directory.
	ErrIsDir = errors.New("is a directory, not a trace file")
)

// ParseError is a problem with one row (or the header) of a trace file. It
// names the file, the 1-based line, the field and what to do about it:
//
//	conversation.jsonl:1042: hash_ids: 3 ids but input_length 2000 needs 4 at block size 512
type ParseError struct {
	Path  string // file name as given by the user; "-" for stdin
	Line  int64  // 1-based line; 0 when the error is about the whole file
	Field string // field or column name; "" when not about one field
	Err   error
}

func (e *ParseError) Error() string {
	s := e.Path
	if e.Line > 0 {
		s += fmt.Sprintf(":%d", e.Line)
	}
	if e.Field != "" {
		s += ": " + e.Field
	}
	return s + ": " + e.Err.Error()
}

// Unwrap returns the underlying error.
func (e *ParseError) Unwrap() error { return e.Err }
