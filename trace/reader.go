package trace

import (
	"bufio"
	"bytes"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"maps"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"syscall"
	"time"

	"github.com/klauspost/compress/gzip"
	"github.com/klauspost/compress/zstd"

	"github.com/reprise-bench/reprise/internal/httpfield"
)

// Open opens the trace at path ("-" reads standard input) and returns a
// Reader positioned at its first row. The caller must Close it.
func Open(path string, opts Options) (*Reader, error) {
	if path == "-" {
		return NewReader("-", os.Stdin, opts)
	}
	f, err := os.Open(path)
	if err != nil {
		return nil, fmt.Errorf("open trace: %w", err)
	}
	r, err := NewReader(path, f, opts)
	if err != nil {
		f.Close()
		return nil, err
	}
	r.closers = append(r.closers, f.Close)
	return r, nil
}

// NewReader returns a Reader for the trace in src; name is used in error
// messages. gzip and zstd content is decompressed transparently, detected by
// magic bytes. NewReader reads ahead to detect the format (unless
// opts.Format is set) and to parse a CSV header. Close releases decompressor
// resources but does not close src.
func NewReader(name string, src io.Reader, opts Options) (*Reader, error) {
	r := &Reader{name: name, opts: opts}
	if err := r.init(src); err != nil {
		r.Close()
		return nil, err
	}
	return r, nil
}

// Detect reads the start of the trace in src and returns its format, by
// the rules of docs/format/traces.md: magic bytes pick a decompressor, then
// the first non-blank line decides — JSON keys for JSONL, header names for
// CSV. Git LFS pointers, ServeGen distributions and JSON arrays
// (ShareGPT) are reported as errors that say what to do.
func Detect(name string, src io.Reader) (Format, error) {
	r, err := NewReader(name, src, Options{})
	if err != nil {
		return "", err
	}
	f := r.Format()
	r.Close()
	return f, nil
}

func (r *Reader) init(src io.Reader) error {
	opts := r.opts
	if opts.Format != "" && !opts.Format.valid() {
		_, err := ParseFormat(string(opts.Format))
		return r.fileErr(0, "", err)
	}
	if opts.BlockSize < 0 {
		return r.fileErr(0, "", fmt.Errorf("block size %d is negative; use 0 for the format's default", opts.BlockSize))
	}
	if opts.MaxRows < 0 {
		return r.fileErr(0, "", fmt.Errorf("row limit %d is negative; use 0 to read every row", opts.MaxRows))
	}
	if opts.MaxInputTokens < 0 || opts.MaxInputTokens > maxTokens {
		return r.fileErr(0, "", fmt.Errorf("input length cap %d is out of range; want 1 to %d tokens, or 0 for the default", opts.MaxInputTokens, maxTokens))
	}
	if opts.DefaultOutputTokens < 0 || opts.DefaultOutputTokens > maxTokens {
		return r.fileErr(0, "", fmt.Errorf("default output length %d is out of range; want 1 to %d tokens, or 0 for none", opts.DefaultOutputTokens, maxTokens))
	}
	r.maxInput = opts.MaxInputTokens
	if r.maxInput == 0 {
		r.maxInput = DefaultMaxInputTokens
	}
	br := bufio.NewReaderSize(stopReader{src, r.stopped}, readBufSize)
	magic, perr := br.Peek(4)
	if errors.Is(perr, syscall.EISDIR) {
		return r.fileErr(0, "", ErrIsDir)
	}
	if bytes.Equal(magic, parquetMagic) && (opts.Format == "" || opts.Format == FormatTable) {
		var pq io.Reader = br
		if f, ok := src.(*os.File); ok {
			pq = f // nothing read from it yet but br's buffer: seek back
			if _, err := f.Seek(0, io.SeekStart); err != nil {
				pq = io.MultiReader(br, f)
			}
		}
		return r.openParquet(pq)
	}
	codec := ""
	switch {
	case len(magic) >= 2 && magic[0] == 0x1f && magic[1] == 0x8b:
		gz, err := gzip.NewReader(br)
		if errors.Is(err, io.EOF) || errors.Is(err, io.ErrUnexpectedEOF) {
			return r.fileErr(1, "", fmt.Errorf("%w: the gzip stream is cut short in its header, before line 1: %w", ErrRead, io.ErrUnexpectedEOF))
		}
		if err != nil {
			return r.fileErr(1, "", fmt.Errorf("%w: gzip header: %w", ErrRead, err))
		}
		r.closers = append(r.closers, gz.Close)
		r.compressed, codec = true, "gzip"
		br = bufio.NewReaderSize(stopReader{gz, r.stopped}, readBufSize)
	case len(magic) == 4 && bytes.Equal(magic, []byte{0x28, 0xb5, 0x2f, 0xfd}):
		zr, err := zstd.NewReader(br,
			zstd.WithDecoderConcurrency(1),
			zstd.WithDecoderMaxWindow(zstdMaxWindow),
			zstd.WithDecoderMaxMemory(zstdMaxWindow*2))
		if err != nil {
			return r.fileErr(1, "", fmt.Errorf("%w: zstd: %w", ErrRead, err))
		}
		r.closers = append(r.closers, func() error { zr.Close(); return nil })
		r.compressed, codec = true, "zstd"
		br = bufio.NewReaderSize(stopReader{zr, r.stopped}, readBufSize)
	}
	if bom, _ := br.Peek(3); bytes.Equal(bom, []byte{0xef, 0xbb, 0xbf}) {
		br.Discard(3)
	}
	r.lr = lineReader{br: br, maxLine: DefaultMaxLineBytes, codec: codec, stop: r.stopped}

	// A JSON document is read as a stream of values, not of lines.
	docFormat, err := r.peekDoc()
	if err != nil {
		return err
	}
	if docFormat != "" {
		r.format = docFormat
		return r.initDecoder(newJSONDoc(r), nil)
	}
	// First non-blank line: LFS pointer check, detection, CSV header.
	var first []byte
	for {
		line, err := r.lr.next()
		if errors.Is(err, io.EOF) {
			break
		}
		if err != nil {
			ln := r.lr.line // a line over the cap: its number
			if r.lr.ioErr != nil {
				ln++ // a read error: the line reading stopped on
			}
			return r.fileErr(ln, "", err)
		}
		if !isBlank(line) {
			first = line
			break
		}
	}
	if first != nil && bytes.HasPrefix(first, []byte("version https://git-lfs.github.com/spec/")) {
		return r.lfsError()
	}
	if first == nil {
		return r.emptyError()
	}
	r.format = opts.Format
	if r.format == "" && !opts.Columns.IsZero() {
		r.format = FormatTable
	}
	if r.format == "" && isPromptsName(r.name) {
		r.format = FormatPrompts
	}
	if r.format == "" {
		f, err := detectLine(first)
		if err != nil {
			return r.fileErr(r.lr.line, "", err)
		}
		r.format = f
	}
	r.lr.replay = true
	return r.initDecoder(nil, first)
}

// initDecoder checks the options against r.format and makes its decoder;
// doc is the JSON document a ShareGPT array or an inputs.json is read
// from (nil: lines, whose first non-blank one is first).
func (r *Reader) initDecoder(doc *jsonDoc, first []byte) error {
	opts := r.opts
	if opts.ModelFilter != "" && r.format != FormatBurstGPT {
		return r.fileErr(0, "", fmt.Errorf("model filter %q applies only to burstgpt traces, not %s: drop the filter, or read a burstgpt trace", opts.ModelFilter, r.format))
	}
	r.block = 0
	if bs := r.format.DefaultBlockSize(); bs > 0 {
		r.block = bs
		if opts.BlockSize > 0 {
			r.block = opts.BlockSize
		}
	}
	var err error
	switch r.format {
	case FormatMooncake, FormatBailian:
		d := newJSONLDecoder(r)
		if r.format == FormatMooncake && opts.BlockSize == 0 {
			// A recorded trace declares its block size (block_size) on
			// every row: the first one's is the file's.
			if n := d.fileBlockSize(first); n > 0 {
				r.block = n
			}
		}
		r.dec = d
	case FormatAIPerfSingle:
		r.dec = &aiperfDecoder{r: r, sessions: newSessions()}
	case FormatAIPerfMulti:
		r.dec = &aiperfDecoder{r: r, multi: true, sessions: newSessions()}
	case FormatWeka:
		r.dec = newWekaDecoder(r)
	case FormatAIPerfDAG:
		r.dec = newAIPerfDAGDecoder(r)
	case FormatAIPerfGraph:
		r.dec = newGraphIRDecoder(r)
	case FormatShareGPT:
		r.dec = &shareGPTDecoder{r: r, doc: doc}
	case FormatPrompts:
		r.dec = &promptsDecoder{r: r}
	case FormatTable:
		r.dec, err = newTableDecoder(r)
	case FormatInputsJSON:
		if doc == nil { // forced, on a file that does not start with an object
			return r.fileErr(r.lr.line, "", fmt.Errorf("want \"{\" to start the inputs.json object, got %.40q", r.lr.cur))
		}
		r.dec = &inputsDecoder{r: r, doc: doc}
	default:
		r.dec, err = newCSVDecoder(r)
	}
	return err
}

// errWindowClosed stops the reader of a Window that was closed.
var errWindowClosed = errors.New("the window was closed")

// stopped returns why reading must stop (Options.Context is done, or the
// Window that opened the Reader was closed), or nil.
func (r *Reader) stopped() error {
	select {
	case <-r.quit: // nil unless a Window reads: never ready
		return errWindowClosed
	default:
	}
	if ctx := r.opts.Context; ctx != nil && ctx.Err() != nil {
		return fmt.Errorf("reading stopped: %w", ctx.Err())
	}
	return nil
}

// stopReader checks stop before every read of r: each layer of a Reader
// (the source, the decompressed stream) reads through one, so every loop
// that reads (skipping blank lines, decompressing) stops within one
// buffer's worth of data once stop reports an error.
type stopReader struct {
	r    io.Reader
	stop func() error
}

func (s stopReader) Read(p []byte) (int, error) {
	if err := s.stop(); err != nil {
		return 0, err
	}
	return s.r.Read(p)
}

// zstdMaxWindow lets the zstd decoder read files compressed with
// --long=27 (128 MiB windows); it also bounds the decoder's memory.
const zstdMaxWindow = 1 << 27

func (r *Reader) lfsError() error {
	var oid, size string
	for range 4 {
		line, err := r.lr.next()
		if err != nil {
			break
		}
		s := string(bytes.TrimSpace(line))
		if v, ok := strings.CutPrefix(s, "oid "); ok {
			oid = v
		}
		if v, ok := strings.CutPrefix(s, "size "); ok {
			size = v
		}
	}
	where := "in the repository"
	include := r.name
	if root, rel, ok := repoPath(r.name); ok {
		where, include = "in the repository "+root, rel
	} else if r.name != "-" {
		include = filepath.Base(r.name) // matches the name in any directory
	}
	return r.fileErr(1, "", fmt.Errorf("%w (oid %s, size %s bytes): the clone has only the pointer; run `git lfs install && git lfs pull --include=%q` %s, or download the object (e.g. from media.githubusercontent.com/media/<owner>/<repo>/<rev>/<path>) and check its sha256",
		ErrLFSPointer, orUnknown(oid), orUnknown(size), include, where))
}

// repoPath returns the root of the Git working tree holding the file at
// path (the nearest directory above it with a .git entry) and the file's
// slash-separated path inside it, which `git lfs pull --include` matches;
// ok is false for standard input or a file outside any working tree.
func repoPath(path string) (root, rel string, ok bool) {
	if path == "-" {
		return "", "", false
	}
	abs, err := filepath.Abs(path)
	if err != nil {
		return "", "", false
	}
	for dir := filepath.Dir(abs); ; {
		if _, err := os.Lstat(filepath.Join(dir, ".git")); err == nil {
			rel, err := filepath.Rel(dir, abs)
			if err != nil {
				return "", "", false
			}
			return dir, filepath.ToSlash(rel), true
		}
		up := filepath.Dir(dir)
		if up == dir {
			return "", "", false
		}
		dir = up
	}
}

// emptyError is the error for a trace without a non-blank line: it says
// what the reader saw, so a truncated download or an empty pipe is told
// apart from a file of blank lines.
func (r *Reader) emptyError() error {
	what := "0 bytes"
	if r.lr.line > 0 {
		what = fmt.Sprintf("%d blank lines", r.lr.line)
		if r.lr.line == 1 {
			what = "1 blank line"
		}
	}
	if r.compressed {
		what += " once decompressed"
	}
	if r.name == "-" {
		what += " on standard input"
	}
	return r.fileErr(0, "", fmt.Errorf("%w: %s, so no rows to read; give a trace with at least one row (a CSV trace: its header line, then the rows)",
		ErrEmpty, what))
}

func orUnknown(s string) string {
	if s == "" {
		return "unknown"
	}
	return s
}

// Format returns the format being read (detected or forced).
func (r *Reader) Format() Format { return r.format }

// BlockSize returns the tokens per hash id in effect: the format default
// or Options.BlockSize; 0 for formats without hash ids.
func (r *Reader) BlockSize() int { return r.block }

// Stats returns the counters so far. The FirstWarnings slice is shared;
// do not modify it.
func (r *Reader) Stats() ReadStats { return r.stats }

// Close releases the decompressor and the file opened by Open. It is
// safe to call more than once.
func (r *Reader) Close() error {
	var errs []error
	for i := len(r.closers) - 1; i >= 0; i-- {
		if err := r.closers[i](); err != nil {
			errs = append(errs, err)
		}
	}
	r.closers = nil
	return errors.Join(errs...)
}

// Err returns the error that ended reading (I/O, decompression, format),
// or nil. Row errors are not sticky: after one, Next goes on with the next
// row, which is how callers report every invalid row at once.
func (r *Reader) Err() error { return r.err }

// Next reads the next row into row, overwriting every field. row.HashIDs
// and row.Raw point into buffers the Reader reuses on the next call (see
// [Row]; Clone a row to keep it). Rows come in file order; Offset is relative to the
// first kept row that has one and may be negative in unsorted traces. At the
// end Next returns io.EOF. A row error is a *ParseError; without
// SkipInvalid the caller may call Next again to go on after it. Read
// errors and Strict order violations are final.
//
// Next does not allocate for plain Mooncake rows once its buffers have
// grown to the longest row (TestNextAllocs).
func (r *Reader) Next(row *Row) error {
	if r.err != nil {
		return r.err
	}
	if r.opts.MaxRows > 0 && r.stats.Kept >= r.opts.MaxRows {
		return io.EOF
	}
	for {
		err := r.dec.next(row)
		if err != nil {
			if errors.Is(err, io.EOF) {
				return io.EOF
			}
			if r.lr.ioErr != nil {
				if pe, ok := errors.AsType[*ParseError](err); ok {
					r.err = pe
				} else {
					r.err = r.fileErr(r.lr.line+1, "", err)
				}
				return r.err
			}
			r.stats.Read++
			r.index++
			if r.opts.SkipInvalid {
				r.stats.DroppedInvalid++
				r.warn("skipped invalid row", err)
				continue
			}
			return err
		}
		r.stats.Read++
		row.Index = r.index
		r.index++
		if r.opts.ModelFilter != "" && !strings.EqualFold(row.Kind, r.opts.ModelFilter) {
			r.stats.DroppedFiltered++
			continue
		}
		if row.Failed && r.opts.DropFailed {
			r.stats.DroppedFailed++
			continue
		}
		if row.OutputTokens == 0 && !r.payload && row.Failed && r.opts.RequireOutput && r.opts.DefaultOutputTokens == 0 {
			// A request that failed in the source has no output length
			// to ask for: a replay leaves it out, counted as DropFailed
			// would, instead of stopping on it.
			r.stats.DroppedFailed++
			continue
		}
		if err := r.headerFields(row); err != nil {
			if r.opts.SkipInvalid {
				r.stats.DroppedInvalid++
				r.warn("skipped invalid row", err)
				continue
			}
			return err
		}
		if row.OutputTokens == 0 && !r.payload {
			if err := r.noOutput(row); err != nil {
				if r.opts.SkipInvalid {
					r.stats.DroppedInvalid++
					r.warn("skipped invalid row", err)
					continue
				}
				return err
			}
		}
		if row.HasOffset {
			raw := int64(row.Offset)
			if !r.hasBase {
				r.base, r.hasBase = raw, true
			}
			row.Offset = time.Duration(raw - r.base)
			if r.hasPrev && row.Offset < r.prev {
				if r.opts.Strict {
					r.err = r.fileErr(row.Line, "timestamp", fmt.Errorf(
						"arrival %v is earlier than %v on line %d; the trace is not sorted: sort it or drop --strict (rows are then sorted stably)",
						row.Offset, r.prev, r.prevLn))
					return r.err
				}
				r.stats.OutOfOrder++
				r.warn("row out of order", r.fileErr(row.Line, "timestamp", fmt.Errorf("arrival %v is earlier than %v on line %d", row.Offset, r.prev, r.prevLn)))
			}
			r.prev, r.hasPrev, r.prevLn = row.Offset, true, row.Line
		}
		if row.Failed {
			r.stats.Failed++
		}
		r.stats.Kept++
		return nil
	}
}

// noOutput handles a row without an output length (see
// Options.DefaultOutputTokens and RequireOutput): it gives the row the
// default, or returns the row error, or nil to keep it as it is.
func (r *Reader) noOutput(row *Row) error {
	field := "output_length"
	if r.format == FormatBurstGPT {
		field = "Response tokens"
	}
	const unbounded = "the request would have no max_tokens (with ignore_eos the server never stops)"
	switch {
	case r.opts.DefaultOutputTokens > 0:
		row.OutputTokens = r.opts.DefaultOutputTokens
		r.stats.DefaultedOutput++
		return nil
	case !r.opts.RequireOutput:
		if r.opts.CountNoOutput {
			r.stats.NoOutput++
		}
		return nil
	}
	return r.fileErr(row.Line, field, fmt.Errorf("missing: %s; give the row an output_length, or pass --osl N to send rows without one with N output tokens", unbounded))
}

// headerFields is the row error for a session id or a "headers" object
// that cannot be sent as HTTP headers, or nil. A replay may send the
// session id as a header (--session-header, a template's
// {{session_id}}) and sends a row's headers as they are: a CR or LF in
// them would add headers or smuggle a second request, whatever reader
// made the row, so every row is checked here.
func (r *Reader) headerFields(row *Row) error {
	if row.SessionID != "" {
		if err := httpfield.CheckValue(row.SessionID); err != nil {
			return r.fileErr(row.Line, "session_id", fmt.Errorf("%.40q: %w (a replay may send it as a header: --session-header, a template's {{session_id}}); fix the row", row.SessionID, err))
		}
	}
	if len(row.Raw) == 0 || !bytes.Contains(row.Raw, []byte(`"headers"`)) {
		return nil
	}
	var raw struct {
		Headers json.RawMessage `json:"headers"`
	}
	if json.Unmarshal(row.Raw, &raw) != nil || len(raw.Headers) == 0 || string(raw.Headers) == "null" {
		return nil // not this check's to report
	}
	var hs map[string]string
	if err := json.Unmarshal(raw.Headers, &hs); err != nil {
		return r.fileErr(row.Line, "headers", errors.New("want an object of header names and string values"))
	}
	names := slices.Sorted(maps.Keys(hs))
	for _, k := range names {
		if err := httpfield.Check(k, hs[k]); err != nil {
			return r.fileErr(row.Line, "headers", fmt.Errorf("%w; fix the row", err))
		}
	}
	return nil
}

// ReadAll reads the whole trace at path and returns its rows sorted stably
// by arrival, re-based so the earliest row is at offset 0. Rows without an
// offset (delay-only session turns) stay right after the row before them
// in their session (or in the file). Stats.Moved counts rows the sort moved.
// Unlike Next, the returned rows own their memory.
func ReadAll(path string, opts Options) ([]Row, ReadStats, error) {
	r, err := Open(path, opts)
	if err != nil {
		return nil, ReadStats{}, err
	}
	defer r.Close()
	hint := 0
	if path != "-" && !r.compressed {
		hint = countLines(path)
	}
	return readAll(r, hint)
}

// countLines counts the lines of the file at path (0 when it can't be
// read): an upper bound of its rows but for AIPerf multi_turn, so ReadAll
// can size its slices once. Growing them by appending holds the old and
// the new array at once, the peak of loading a million-row trace; the
// count costs one more read of a file the page cache has just seen.
func countLines(path string) int {
	f, err := os.Open(path)
	if err != nil {
		return 0
	}
	defer f.Close()
	buf := make([]byte, 1<<20)
	n, last := 0, byte('\n')
	for {
		k, err := f.Read(buf)
		if k > 0 {
			n += bytes.Count(buf[:k], []byte{'\n'})
			last = buf[k-1]
		}
		if err != nil {
			break
		}
	}
	if last != '\n' {
		n++
	}
	return n
}

// MaxRowErrors is how many invalid rows ReadAll and ReadAllFrom report
// (each as a *ParseError, joined) before only counting the rest.
const MaxRowErrors = 20

// ReadAllFrom reads every remaining row of r like ReadAll: stably sorted by
// arrival and re-based to the earliest. It reads the whole trace even when
// rows are invalid, so the caller can report every problem at once: the
// error then joins the first MaxRowErrors row errors (each a *ParseError)
// and counts the rest. An I/O or format error ends the read at once. It
// does not close r.
func ReadAllFrom(r *Reader) ([]Row, ReadStats, error) {
	return readAll(r, 0)
}

// rowErrors collects the invalid rows of a read: the first MaxRowErrors
// errors, and how many in all.
type rowErrors struct {
	errs []error
	n    int
}

func (e *rowErrors) add(err error) {
	if len(e.errs) < MaxRowErrors {
		e.errs = append(e.errs, err)
	}
	e.n++
}

// next reads r's next valid row into row, collecting the invalid rows it
// passes in e. It returns false at the end of the rows, or at an I/O or
// format error, which it returns: nothing after it can be read.
func (e *rowErrors) next(r *Reader, row *Row) (bool, error) {
	for {
		err := r.Next(row)
		switch {
		case err == nil:
			return true, nil
		case errors.Is(err, io.EOF):
			return false, nil
		case r.Err() != nil:
			return false, err
		}
		e.add(err)
	}
}

// err joins the collected errors (nil when every row was valid).
func (e *rowErrors) err() error {
	if e.n == 0 {
		return nil
	}
	errs := e.errs
	if e.n > len(errs) {
		errs = append(errs, fmt.Errorf("… and %d more invalid rows (%d in all)", e.n-len(errs), e.n))
	}
	return errors.Join(errs...)
}

// Scan reads every remaining row of r, in file order, and calls fn with
// each valid one, keeping nothing: the streaming counterpart of
// [ReadAllFrom] for a first pass that validates a trace too large to hold.
// It reports problems exactly as ReadAllFrom does: the error joins the
// first MaxRowErrors row errors (each a *ParseError) and counts the rest;
// an I/O or format error ends the scan at once. After the first invalid
// row fn is no longer called (the rest is only validated). fn must not
// keep row or its slices (see [Reader.Next]); Clone what it keeps. Rows
// are not sorted: ReadStats.OutOfOrder says whether ReadAll would have
// moved any. Scan does not close r.
func Scan(r *Reader, fn func(row *Row)) (ReadStats, error) {
	var (
		row Row
		bad rowErrors
	)
	for {
		ok, err := bad.next(r, &row)
		if err != nil {
			return r.Stats(), err
		}
		if !ok {
			break
		}
		if bad.n == 0 {
			fn(&row)
		}
	}
	return r.Stats(), bad.err()
}

// ScanSorted is [Scan] that also checks that the rows are already where
// ReadAll puts them: in file order (no row sorts before the one above it)
// and at the same offsets (no row arrives before the first, so the
// re-basing to the earliest arrival is the Reader's to the first). fn
// returns false to stop. It stops at the first valid row that breaks the
// order, or when fn returns false, and returns sorted false without
// reading the rest (nor reporting its problems: ReadAll does). Otherwise
// it reads every row: err reports the problems exactly as Scan does, or
// sorted is true and the rows Next returns are, one by one, the rows
// ReadAll returns. After the first invalid row the order is no
// longer checked and fn no longer called. It keeps 8 bytes per session
// and per request id (the last sort key of each), nothing per row.
func ScanSorted(r *Reader, fn func(row *Row) bool) (sorted bool, stats ReadStats, err error) {
	var (
		row  Row
		bad  rowErrors
		sk   sortKeys
		prev int64
		n    int
	)
	for {
		ok, err := bad.next(r, &row)
		if err != nil {
			return false, r.Stats(), err
		}
		if !ok {
			break
		}
		if bad.n > 0 {
			continue
		}
		key := sk.next(&row)
		if (n > 0 && key < prev) || r.stats.OutOfOrder > 0 || !fn(&row) {
			return false, r.Stats(), nil
		}
		prev = key
		n++
	}
	return bad.n == 0, r.Stats(), bad.err()
}

// sortKeys gives each row, in file order, the key ReadAll sorts it by: its
// offset; for a row without one, its session's last key (or the row
// above's); raised to the key of every row it waits for.
type sortKeys struct {
	// last sort key per session, for rows without an offset
	sessKey map[string]int64
	lastKey int64
	// sort key per request id, for dependent rows
	reqKey map[int64]int64
}

func (s *sortKeys) next(row *Row) int64 {
	key := s.lastKey
	if row.HasOffset {
		key = int64(row.Offset)
	} else if k, ok := s.sessKey[row.SessionID]; ok && row.SessionID != "" {
		key = k
	}
	if row.SessionID != "" {
		if s.sessKey == nil {
			s.sessKey = map[string]int64{}
		}
		s.sessKey[row.SessionID] = key
	}
	// A dependent row sorts no earlier than what it waits for, so the
	// sorted rows stay in dependency order (design 0008).
	for _, d := range row.WaitFor {
		if k, ok := s.reqKey[d]; ok && k > key {
			key = k
		}
	}
	if row.RequestID >= 0 {
		if s.reqKey == nil {
			s.reqKey = map[int64]int64{}
		}
		s.reqKey[row.RequestID] = key
	}
	s.lastKey = key
	return key
}

// readAll is ReadAllFrom with room for hint rows made up front.
func readAll(r *Reader, hint int) ([]Row, ReadStats, error) {
	var (
		rows  = make([]Row, 0, hint)
		keys  = make([]int64, 0, hint)
		arena []uint64
		raw   []byte
		row   Row
		sk    sortKeys
		bad   rowErrors
	)
	for {
		ok, err := bad.next(r, &row)
		if err != nil {
			return nil, r.Stats(), err
		}
		if !ok {
			break
		}
		if bad.n > 0 {
			continue // only validating the rest
		}
		c := row
		if row.HashIDs != nil {
			if cap(arena)-len(arena) < len(row.HashIDs) {
				arena = make([]uint64, 0, max(1<<16, len(row.HashIDs)))
			}
			n := len(arena)
			arena = append(arena, row.HashIDs...)
			c.HashIDs = arena[n:len(arena):len(arena)]
		}
		if row.WaitFor != nil {
			c.WaitFor = slices.Clone(row.WaitFor)
		}
		if row.Raw != nil {
			if cap(raw)-len(raw) < len(row.Raw) {
				raw = make([]byte, 0, max(1<<16, len(row.Raw)))
			}
			n := len(raw)
			raw = append(raw, row.Raw...)
			c.Raw = raw[n:len(raw):len(raw)]
		}
		rows = append(rows, c)
		keys = append(keys, sk.next(&row))
	}
	stats := r.Stats()
	if err := bad.err(); err != nil {
		return nil, stats, err
	}
	if !slices.IsSorted(keys) {
		perm := make([]int32, len(rows))
		for i := range perm {
			perm[i] = int32(i)
		}
		slices.SortStableFunc(perm, func(a, b int32) int {
			switch ka, kb := keys[a], keys[b]; {
			case ka < kb:
				return -1
			case ka > kb:
				return 1
			}
			return 0
		})
		sorted := make([]Row, len(rows))
		for i, p := range perm {
			sorted[i] = rows[p]
			if int(p) != i {
				stats.Moved++
			}
		}
		rows = sorted
	}
	// Re-base to the earliest arrival.
	var minOff time.Duration
	found := false
	for i := range rows {
		if rows[i].HasOffset && (!found || rows[i].Offset < minOff) {
			minOff, found = rows[i].Offset, true
		}
	}
	if found && minOff != 0 {
		for i := range rows {
			if rows[i].HasOffset {
				rows[i].Offset -= minOff
			}
		}
	}
	return rows, stats, nil
}
