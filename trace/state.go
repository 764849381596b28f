package trace

// The Reader's state and what every format's decoder calls on it: the
// next line or row, a row error, the input cap, a warning.

import (
	"errors"
	"fmt"
	"log/slog"
	"time"
)

// ReadStats counts what a Reader did. At io.EOF, Read = Kept +
// DroppedInvalid + DroppedFailed + DroppedFiltered + the number of row
// errors Next returned (none with SkipInvalid).
type ReadStats struct {
	// Read is the number of data rows decoded, valid or not (an AIPerf
	// multi_turn line counts once per turn).
	Read int64
	// Kept is the number of rows returned by Next.
	Kept int64
	// DroppedInvalid counts rows skipped as invalid (Options.SkipInvalid).
	DroppedInvalid int64
	// DroppedFailed counts failed rows dropped (Options.DropFailed).
	DroppedFailed int64
	// DroppedFiltered counts rows dropped by Options.ModelFilter.
	DroppedFiltered int64
	// Failed counts kept rows with Row.Failed set.
	Failed int64
	// OutOfOrder counts kept rows whose arrival is earlier than the
	// previous kept row's.
	OutOfOrder int64
	// Moved counts rows whose position the stable sort in ReadAll changed.
	Moved int64
	// Orphans counts Bailian rows whose parent_chat_id was not seen on an
	// earlier line; each starts its own session.
	Orphans int64
	// DefaultedOutput counts kept rows given Options.DefaultOutputTokens.
	DefaultedOutput int64
	// NoOutput counts kept rows left without an output length (neither
	// DefaultOutputTokens nor RequireOutput), with Options.CountNoOutput.
	NoOutput int64
	// Warnings counts warning events: skipped rows, out-of-order rows
	// and orphans.
	Warnings int64
	// FirstWarnings holds the messages of the first few warnings.
	FirstWarnings []string
}

// maxWarnings is how many warning messages ReadStats keeps and logs.
const maxWarnings = 10

// Reader streams the rows of one trace. Memory is constant in the number
// of rows, except for the per-session maps of formats with sessions
// (Bailian chat_id → session, session_id → turn count), which grow with
// the number of requests (Bailian) or sessions.
//
// A Reader is not safe for concurrent use.
type Reader struct {
	name     string
	opts     Options
	format   Format
	block    int
	maxInput int  // Options.MaxInputTokens in effect
	payload  bool // the row just decoded is a Mooncake payload row

	quit       <-chan struct{} // closed when the Window reading r closes
	closers    []func() error
	compressed bool // gzip or zstd: the file size says nothing of the rows
	lr         lineReader
	dec        decoder

	// idsBuf and rawBuf back Row.HashIDs and Row.Raw; reused by each Next.
	idsBuf   []uint64
	rawBuf   []byte
	media    mediaRefs // resolved media references (design 0022)
	mediaBuf []byte    // a row's media parts while it is decoded

	stats   ReadStats
	err     error // sticky fatal error
	index   int64
	base    int64 // raw offset of the first kept row with an offset
	hasBase bool
	prev    time.Duration // offset of the previous kept row
	hasPrev bool
	prevLn  int64
}

// decoder decodes the rows of one format. next fills row (every field
// except Index) or returns io.EOF, a row error (a *ParseError; the row is
// consumed) or, when the reader's lineReader has ioErr set, a read error
// after which reading cannot go on.
type decoder interface {
	next(row *Row) error
}

// nextLine returns the next non-blank line of a line-oriented format. A
// line over the cap is a row error naming it (the caller may skip it and
// go on); at the end it returns io.EOF.
func (r *Reader) nextLine() ([]byte, error) {
	for {
		line, err := r.lr.next()
		if err != nil {
			if errors.Is(err, errLineTooLong) {
				return nil, r.fileErr(r.lr.line, "", err)
			}
			return nil, err
		}
		if !isBlank(line) {
			return line, nil
		}
	}
}

// nextRow reads the next non-blank line and resets row to it.
func (r *Reader) nextRow(row *Row) ([]byte, error) {
	line, err := r.nextLine()
	if err == nil {
		resetRow(row, r.lr.line)
	}
	return line, err
}

func (r *Reader) fileErr(line int64, field string, err error) *ParseError {
	return &ParseError{Path: r.name, Line: line, Field: field, Err: err}
}

// overInput is the error for an input length over the cap, or nil.
func (r *Reader) overInput(n int) error {
	if n <= r.maxInput {
		return nil
	}
	return fmt.Errorf("%d tokens, over the cap of %d (--max-input-tokens): fix the row, or raise --max-input-tokens", n, r.maxInput)
}

// warn counts a warning, keeps its message if among the first few and
// logs it.
func (r *Reader) warn(msg string, err error) {
	r.stats.Warnings++
	if len(r.stats.FirstWarnings) >= maxWarnings {
		return
	}
	r.stats.FirstWarnings = append(r.stats.FirstWarnings, err.Error())
	// At most maxWarnings lines per trace, so the plain Warn (which checks
	// the level itself) costs nothing that matters; Options has no context.
	if l := r.opts.Log; l != nil {
		l.Warn(msg, slog.String("error", err.Error()))
		if len(r.stats.FirstWarnings) == maxWarnings {
			l.Warn("further trace warnings are only counted", slog.String("trace", r.name))
		}
	}
}

// mediaCacheSize bounds the media a Reader keeps by reference, so that a
// dataset naming the same file on many rows reads and checks it once.
const mediaCacheSize = 256

type cachedMedia struct {
	part []byte     // the chat content part
	st   MediaStats // of this item alone
}

// mediaRefs is a Reader's cache of resolved media references.
type mediaRefs struct {
	cache map[string]*cachedMedia
	order []string
}
