package synth

import (
	"errors"
	"fmt"
	"io"
	"strings"

	"github.com/reprise-bench/reprise/trace"
)

// Streams reports whether c decides each row alone, or each session at
// its first row, so [DeriveTo] can derive a trace in arrival order row by
// row: no --sample (it draws round(F·n) of n sessions, n known only at the
// end), no length or root multiplier (the tree of shared prefixes and the
// id maps span the whole trace), Mooncake output (Bailian is re-sorted by
// estimated arrival).
func (c DeriveConfig) Streams() bool {
	return c.Sample == 1 && c.PrefixLenMultiplier == 1 && c.PromptLenMultiplier == 1 &&
		c.PrefixRootMultiplier == 1 && c.Format == trace.FormatMooncake
}

// CanStream is the first pass of a streamed derive. It reads the trace at
// path once, validating every row exactly as [trace.ReadAll] does (the
// same errors, with file, line and field), and reports whether [DeriveTo]
// gives the bytes [Derive] gives: c streams ([DeriveConfig.Streams]), the
// file is already in the order and at the offsets ReadAll returns
// ([trace.ScanSorted]), no row is cumulative (a cumulative session is
// rewritten as new tokens only, which needs its whole length first), and,
// with a window, every session's first row has a timestamp. When it does
// not, why says so, and the pass stops at the first row that shows it
// (its problems after that row are left to the whole read). It logs no
// warnings (the second read does). It keeps 8 bytes per session (and,
// with a window, each session's id), nothing per row.
func CanStream(path string, opts trace.Options, c DeriveConfig) (ok bool, why string, err error) {
	if err := c.Validate(); err != nil {
		return false, "", settings(err)
	}
	if !c.Streams() {
		return false, "--sample, a length or root multiplier, or Bailian output needs the whole trace", nil
	}
	if path == "-" {
		return false, "standard input cannot be read twice", nil
	}
	opts.Log = nil // the second read, streamed or whole, logs the warnings
	r, err := trace.Open(path, opts)
	if err != nil {
		return false, "", err
	}
	defer r.Close()
	var (
		cumulative, noTime bool
		seen               map[string]struct{}
	)
	window := !c.Window.IsZero()
	sorted, _, err := trace.ScanSorted(r, func(row *trace.Row) bool {
		if row.Cumulative {
			cumulative = true
			return false
		}
		if !window {
			return true
		}
		first := true
		if row.SessionID != "" {
			if seen == nil {
				seen = map[string]struct{}{}
			}
			_, ok := seen[row.SessionID]
			first = !ok
			if first {
				seen[strings.Clone(row.SessionID)] = struct{}{}
			}
		}
		noTime = first && !row.HasOffset
		return !noTime
	})
	switch {
	case err != nil:
		return false, "", err
	case cumulative:
		return false, "the input has cumulative sessions", nil
	case noTime:
		return false, "a session's first row has no timestamp (--window)", nil
	case !sorted:
		return false, "the input is not in arrival order", nil
	}
	return true, "", nil
}

// DeriveTo derives the trace at path, which [CanStream] accepted with the
// same opts and c, one row at a time: fn gets every output row in order,
// exactly the rows [Derive] returns for the rows of [trace.ReadAll] (not
// CeilingBefore and ExpectedCeiling, which are left 0). Memory does not
// grow with rows: it holds one row and a byte per session with an id.
// fn must not keep the row or its slices. An error of fn ends the
// derive and is returned as it is. Warnings go to opts.Log.
func DeriveTo(path string, opts trace.Options, c DeriveConfig, fn func(*trace.Row) error) (*DeriveStats, error) {
	if err := c.Validate(); err != nil {
		return nil, settings(err)
	}
	if !c.Streams() {
		return nil, settings(errors.New("derive: these settings need the whole trace (see DeriveConfig.Streams)"))
	}
	r, err := trace.Open(path, opts)
	if err != nil {
		return nil, err
	}
	defer r.Close()
	d := deriver{cfg: c}
	var row trace.Row
	for {
		err := r.Next(&row)
		if errors.Is(err, io.EOF) {
			break
		}
		if err != nil {
			return nil, err // CanStream saw every row valid: the file changed
		}
		keep, err := d.row(&row)
		if err != nil {
			return nil, err
		}
		if keep {
			if err := fn(&row); err != nil {
				return nil, err
			}
		}
	}
	return &d.st, nil
}

// Session state of a streamed derive.
const (
	sessIn  uint8 = 1 << iota // its first row is in the window
	sessCut                   // --max-isl dropped a row of it
	sessOut                   // a row of it was written
)

// deriver is Derive one row at a time, for settings that stream.
type deriver struct {
	cfg  DeriveConfig
	st   DeriveStats
	sess map[string]uint8
}

// row transforms r in place as Derive does and reports whether it is
// kept.
func (d *deriver) row(r *trace.Row) (bool, error) {
	c, st := &d.cfg, &d.st
	if r.Cumulative {
		return false, fmt.Errorf("line %d: a cumulative session cannot be derived row by row; read the trace whole", r.Line)
	}
	st.RowsIn++
	var flags uint8
	first := true
	if r.SessionID != "" {
		if d.sess == nil {
			d.sess = map[string]uint8{}
		}
		flags, first = d.sess[r.SessionID]
		first = !first
	}
	if first {
		st.SessionsIn++
		flags = sessIn
	}
	if w := c.Window; !w.IsZero() {
		if first {
			if !r.HasOffset {
				return false, settings(fmt.Errorf("--window needs arrival times, but a session (first row line %d, session %q) has none: its rows only carry delays",
					r.Line, r.SessionID))
			}
			if !w.Contains(r.Offset) {
				flags &^= sessIn
				st.WindowSessionsDropped++
			}
		}
		in := flags&sessIn != 0
		if r.HasOffset {
			if in && !w.Contains(r.Offset) {
				st.WindowRowsBeyond++
			}
			if !in && w.Contains(r.Offset) {
				st.WindowRowsBefore++
			}
			if in {
				r.Offset -= w.Start
			}
		}
	}
	keep := flags&sessIn != 0
	if keep && c.MaxISL > 0 && (flags&sessCut != 0 || r.InputTokens > c.MaxISL) {
		if flags&sessCut == 0 {
			flags |= sessCut
			st.MaxISLSessionsCut++
		}
		st.MaxISLRowsDropped++
		keep = false
	}
	if keep {
		c.scaleRow(r, st)
		st.RowsOut++
		if flags&sessOut == 0 {
			flags |= sessOut
			st.SessionsOut++
		}
	}
	if r.SessionID != "" {
		if first {
			d.sess[strings.Clone(r.SessionID)] = flags
		} else {
			d.sess[r.SessionID] = flags
		}
	}
	return keep, nil
}
