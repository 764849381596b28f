package trace

// Hot path: every line of every trace passes through lineReader.next;
// allocation test TestNextAllocs in alloc_test.go.

import (
	"bufio"
	"errors"
	"fmt"
	"io"
)

const (
	// readBufSize is the bufio buffer size: most lines fit, so most lines
	// are returned without copying.
	readBufSize = 64 << 10
	// DefaultMaxLineBytes caps one line of a trace (Bailian and AIPerf rows
	// can exceed bufio.Scanner's 64 KiB default; nothing legitimate comes
	// near 64 MiB). Longer lines are reported with their line number and
	// skipped, never buffered whole.
	DefaultMaxLineBytes = 64 << 20
)

// errLineTooLong is wrapped in the ParseError for a line over the cap.
var errLineTooLong = errors.New("line too long")

// lineReader yields the lines of a text stream without their "\n" or
// "\r\n" terminator, counting 1-based line numbers. The returned slice is
// valid until the next call. A final line without a newline is returned.
type lineReader struct {
	br      *bufio.Reader
	spill   []byte // holds lines longer than br's buffer
	maxLine int
	line    int64  // number of the line last returned
	cur     []byte // the line last returned
	replay  bool   // return cur again on the next call
	eof     bool
	ioErr   error        // sticky read error (not io.EOF)
	codec   string       // "gzip" or "zstd" when br reads a decompressor, for messages
	stop    func() error // why reading stopped (Reader.stopped); nil: never
}

// readErr is the sticky error for a failed read: ErrRead, and for a
// compressed stream that ends early, which one and what was read (the
// caller's ParseError names the line reading stopped on).
func (l *lineReader) readErr(err error) error {
	if l.stop != nil {
		// A decompressor may have wrapped the stop error: report it as is.
		if serr := l.stop(); serr != nil {
			return serr
		}
	}
	if l.codec != "" && errors.Is(err, io.ErrUnexpectedEOF) {
		return fmt.Errorf("%w: the %s stream is cut short on this line (the lines before it were read whole): %w", ErrRead, l.codec, err)
	}
	return fmt.Errorf("%w: %w", ErrRead, err)
}

// next returns the next line. At the end it returns io.EOF. A line over
// maxLine bytes is consumed and reported as errLineTooLong (l.line is its
// number), so the caller may skip it and go on. Read errors are sticky.
func (l *lineReader) next() ([]byte, error) {
	if l.replay {
		l.replay = false
		return l.cur, nil
	}
	if l.ioErr != nil {
		return nil, l.ioErr
	}
	if l.eof {
		return nil, io.EOF
	}
	b, err := l.br.ReadSlice('\n')
	if errors.Is(err, bufio.ErrBufferFull) {
		l.spill = append(l.spill[:0], b...)
		for errors.Is(err, bufio.ErrBufferFull) {
			if len(l.spill) > l.maxLine {
				return nil, l.skipLong()
			}
			b, err = l.br.ReadSlice('\n')
			l.spill = append(l.spill, b...)
		}
		b = l.spill
	}
	if err != nil {
		if !errors.Is(err, io.EOF) {
			l.ioErr = l.readErr(err)
			return nil, l.ioErr
		}
		l.eof = true
		if len(b) == 0 {
			return nil, io.EOF
		}
	}
	if len(b) > l.maxLine+2 {
		l.line++
		return nil, fmt.Errorf("%w: %d bytes, over the %d-byte cap; split or shorten the row", errLineTooLong, len(b), l.maxLine)
	}
	l.line++
	if n := len(b); n > 0 && b[n-1] == '\n' {
		b = b[:n-1]
	}
	if n := len(b); n > 0 && b[n-1] == '\r' {
		b = b[:n-1]
	}
	l.cur = b
	return b, nil
}

// skipLong discards the rest of an over-long line.
func (l *lineReader) skipLong() error {
	n := len(l.spill)
	l.spill = l.spill[:0]
	for {
		b, err := l.br.ReadSlice('\n')
		n += len(b)
		if errors.Is(err, bufio.ErrBufferFull) {
			continue
		}
		l.line++
		if err != nil {
			if !errors.Is(err, io.EOF) {
				l.ioErr = l.readErr(err)
				return l.ioErr
			}
			l.eof = true
		}
		return fmt.Errorf("%w: more than %d bytes (the cap); split or shorten the row", errLineTooLong, l.maxLine)
	}
}

// isBlank reports whether b holds only JSON/CSV white space.
func isBlank(b []byte) bool {
	for _, c := range b {
		if c != ' ' && c != '\t' && c != '\r' {
			return false
		}
	}
	return true
}
