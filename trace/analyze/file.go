package analyze

import (
	"context"
	"crypto/sha256"
	"encoding/hex"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"os"
	"strconv"
	"strings"

	"github.com/reprise-bench/reprise/internal/spool"
	"github.com/reprise-bench/reprise/trace"
)

// FileConfig configures [File].
type FileConfig struct {
	// Analyzer configures the time-order statistics. Its BlockSize, when
	// set, is also passed to the reader and used by the AIPerf section.
	Analyzer Config
	// Trace configures the reader (format, strictness, skipping). Its
	// Context, when nil, is File's.
	Trace trace.Options
	// Stdin is read when the path is "-"; nil means os.Stdin.
	Stdin io.Reader
	// StdinSpool caps the copy of standard input kept for a second pass
	// (see [File]), in bytes; 0 means spool.DefaultMax.
	StdinSpool int64
}

// File analyses the trace at path ("-" for standard input) and returns the
// full report: source identity (size, sha256, format, rows read/kept and
// dropped by reason), time-order statistics and the AIPerf section.
//
// It streams the file once, feeding the AIPerf section in file order and
// the [Analyzer] in file order as well. If some row arrives earlier than its
// predecessor (and Trace.Strict is off), the time-order statistics are
// recomputed from [trace.ReadAll], which holds the rows in memory and sorts
// them stably; Source.Sorted then says so. For that second pass, standard
// input is copied as it is read to a temporary file without a name (a
// killed process leaves nothing behind), up to cfg.StdinSpool bytes: a
// larger input is analysed if it is in time order, and refused if not.
//
// Reading stops when ctx is done. Row errors are returned as
// *trace.ParseError (file, line, field, fix) unless Trace.SkipInvalid
// counts and skips them.
func File(ctx context.Context, path string, cfg FileConfig) (*Report, error) {
	if cfg.Trace.Context == nil {
		cfg.Trace.Context = ctx
	}
	if cfg.Analyzer.BlockSize > 0 && cfg.Trace.BlockSize == 0 {
		cfg.Trace.BlockSize = cfg.Analyzer.BlockSize
	}
	in, again, c, err := openTrace(path, cfg)
	if err != nil {
		return nil, err
	}
	defer c.Close()
	h := sha256.New()
	counted := &countingReader{r: io.TeeReader(in, h), ctx: ctx}
	rd, err := trace.NewReader(path, counted, cfg.Trace)
	if err != nil {
		return nil, err
	}
	defer rd.Close()

	blockSize := cfg.Analyzer.BlockSize
	if blockSize <= 0 {
		blockSize = rd.BlockSize()
	}
	if blockSize <= 0 {
		blockSize = 512 // AIPerf's default; irrelevant without ids
	}
	a := New(cfg.Analyzer)
	p := NewAIPerf(blockSize)
	deps, err := firstPass(ctx, rd, a, p)
	if err != nil {
		return nil, err
	}
	// Hash whatever the reader did not need to read.
	if _, err := io.Copy(io.Discard, counted); err != nil {
		return nil, fmt.Errorf("read trace %s: %w", path, err)
	}
	src := source(path, rd, counted.n, h.Sum(nil))

	// A second pass reads quietly: the first pass logged the warnings.
	quiet := cfg.Trace
	quiet.Log = nil
	if a.OutOfOrder() > 0 {
		// ReadAll keeps a row without a timestamp right after the row
		// before it (in its session), so the effective arrivals are those
		// of the first pass.
		rows, err := again(quiet)
		if err != nil {
			return nil, err
		}
		a = inTimeOrder(cfg.Analyzer, rows)
		src.Sorted = true
	}
	rep := a.Report()
	rep.Source = src
	rep.AIPerf = p.Report()
	if deps {
		// The graph needs every row at once: read them again (dependent
		// traces are agent traces, far smaller than a day of traffic).
		rows, err := again(quiet)
		if err != nil {
			return nil, err
		}
		rep.Dependencies = dependencies(rows)
	}
	return rep, nil
}

// rereader reads the whole trace a second time, with opts, and returns
// its rows as [trace.ReadAll] does.
type rereader func(opts trace.Options) ([]trace.Row, error)

// openTrace opens the trace at path ("-" for standard input, spooled for
// a second pass as [File] says) and returns what the first pass reads,
// the second pass, and what to close when both are done.
func openTrace(path string, cfg FileConfig) (io.Reader, rereader, io.Closer, error) {
	if path == "-" {
		return openStdin(path, cfg)
	}
	f, err := os.Open(path)
	if err != nil {
		return nil, nil, nil, fmt.Errorf("open trace: %w", err)
	}
	again := func(opts trace.Options) ([]trace.Row, error) {
		rows, _, err := trace.ReadAll(path, opts)
		return rows, err
	}
	return f, again, f, nil
}

// openStdin is openTrace of standard input (cfg.Stdin when set), copied
// as it is read, up to cfg.StdinSpool bytes, for the second pass.
func openStdin(path string, cfg FileConfig) (io.Reader, rereader, io.Closer, error) {
	stdin := cfg.Stdin
	if stdin == nil {
		stdin = os.Stdin
	}
	sp, err := spool.New(stdin, spool.Config{Max: cfg.StdinSpool, Drop: true, What: "standard input"})
	if err != nil {
		return nil, nil, nil, err
	}
	again := func(opts trace.Options) ([]trace.Row, error) {
		if sp.Dropped() {
			limit := cfg.StdinSpool
			if limit <= 0 {
				limit = spool.DefaultMax
			}
			return nil, &trace.ParseError{Path: path, Err: fmt.Errorf("%w: standard input is not in time order, so it is read a second time "+
				"to sort it, and it is over the %d bytes (--stdin-spool-mib) kept of it for that: "+
				"raise --stdin-spool-mib, or save it to a file and give its path", spool.ErrFull, limit)}
		}
		copied, err := sp.Reopen()
		if err != nil {
			return nil, err
		}
		rd, err := trace.NewReader(path, copied, opts)
		if err != nil {
			return nil, err
		}
		defer rd.Close()
		rows, _, err := trace.ReadAllFrom(rd)
		return rows, err
	}
	return sp, again, sp, nil
}

// firstPass reads rd to the end in file order, feeding a and p, and says
// whether a row waits for another (the dependency graph then needs a
// second pass). Invalid rows are read on and returned at once, joined
// (the first trace.MaxRowErrors and a count of the rest); reading stops
// when ctx is done.
func firstPass(ctx context.Context, rd *trace.Reader, a *Analyzer, p *AIPerf) (bool, error) {
	var row trace.Row
	deps := false
	var rowErrs []error // the first trace.MaxRowErrors invalid rows
	nInvalid := 0
	for n := 0; ; n++ {
		if n&0xffff == 0 {
			if err := ctx.Err(); err != nil {
				return false, err
			}
		}
		err := rd.Next(&row)
		if errors.Is(err, io.EOF) {
			break
		}
		if err != nil {
			if rd.Err() != nil {
				return false, err
			}
			// Keep reading: every invalid row is reported at once.
			if len(rowErrs) < trace.MaxRowErrors {
				rowErrs = append(rowErrs, err)
			}
			nInvalid++
			continue
		}
		if nInvalid > 0 {
			continue
		}
		a.Add(&row)
		p.addInterned(&row, a) // same rows, same order: share the id numbering
		deps = deps || row.WaitFor != nil
	}
	if nInvalid > 0 {
		if nInvalid > len(rowErrs) {
			rowErrs = append(rowErrs, fmt.Errorf("… and %d more invalid rows (%d in all)", nInvalid-len(rowErrs), nInvalid))
		}
		return false, errors.Join(rowErrs...)
	}
	return deps, nil
}

// source is the report's identity of the trace at path that rd read: its
// size in bytes and SHA-256 sum, its format and block size, and the rows
// rd read, kept and dropped by reason.
func source(path string, rd *trace.Reader, size int64, sum []byte) *Source {
	st := rd.Stats()
	src := &Source{
		Path:      path,
		Bytes:     size,
		SHA256:    hex.EncodeToString(sum),
		Format:    string(rd.Format()),
		BlockSize: rd.BlockSize(),
		RowsRead:  st.Read,
		RowsKept:  st.Kept,
	}
	for _, d := range []struct {
		reason string
		n      int64
	}{{"invalid", st.DroppedInvalid}, {"failed", st.DroppedFailed}, {"filtered", st.DroppedFiltered}} {
		if d.n > 0 {
			if src.Dropped == nil {
				src.Dropped = map[string]int64{}
			}
			src.Dropped[d.reason] = d.n
		}
	}
	return src
}

// inTimeOrder returns a new Analyzer of cfg fed rows, as the second pass
// read them, in time order.
func inTimeOrder(cfg Config, rows []trace.Row) *Analyzer {
	a := New(cfg)
	if order, at := timeOrder(rows); order != nil {
		for _, i := range order {
			a.addAt(&rows[i], at[i])
		}
	} else {
		for i := range rows {
			a.Add(&rows[i])
		}
	}
	return a
}

// countingReader counts the bytes read through it and stops when ctx is
// done.
type countingReader struct {
	r   io.Reader
	n   int64
	ctx context.Context
}

func (c *countingReader) Read(p []byte) (int, error) {
	if err := c.ctx.Err(); err != nil {
		return 0, err
	}
	n, err := c.r.Read(p)
	c.n += int64(n)
	return n, err
}

// WriteJSON writes rep as the indented JSON document of
// docs/format/analyze-json.md, followed by a newline.
func WriteJSON(w io.Writer, rep *Report) error {
	enc := json.NewEncoder(w)
	enc.SetIndent("", "  ")
	return enc.Encode(rep)
}

// ParseTokens parses a token count with an optional decimal suffix: K
// (10³), M (10⁶) or G (10⁹), case-insensitive, fractions allowed before a
// suffix: "3M" = 3,000,000, "0.5M" = 500,000, "4096" = 4,096.
func ParseTokens(s string) (int64, error) {
	t := strings.TrimSpace(s)
	mult := 1.0
	if n := len(t); n > 0 {
		switch t[n-1] {
		case 'k', 'K':
			mult = 1e3
		case 'm', 'M':
			mult = 1e6
		case 'g', 'G':
			mult = 1e9
		}
		if mult != 1 {
			t = t[:n-1]
		}
	}
	v, err := strconv.ParseFloat(t, 64)
	if err != nil || v < 0 || v*mult > 1e15 || (mult == 1 && v != float64(int64(v))) {
		return 0, fmt.Errorf("token count %q: want a whole number with an optional K, M or G suffix, e.g. 500K or 3M", s)
	}
	return int64(v*mult + 0.5), nil
}

// ParseCacheSizes parses a comma-separated list of token counts (see
// [ParseTokens]), e.g. "1M,3M,10M,50M". An empty string gives no sizes.
func ParseCacheSizes(s string) ([]int64, error) {
	if strings.TrimSpace(s) == "" {
		return []int64{}, nil
	}
	var out []int64
	var errs []error
	for part := range strings.SplitSeq(s, ",") {
		v, err := ParseTokens(part)
		if err != nil {
			errs = append(errs, err)
			continue
		}
		out = append(out, v)
	}
	return out, errors.Join(errs...)
}
