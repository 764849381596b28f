package trace

import (
	"bytes"
	"errors"
	"fmt"
	"strconv"
	"strings"
	"time"
)

// splitCSV splits one CSV record (RFC 4180 quoting, no embedded line
// breaks) into dst, reusing it. Unquoted fields alias line; quoted fields
// with doubled quotes are copied.
func splitCSV(line []byte, dst [][]byte) ([][]byte, error) {
	dst = dst[:0]
	i := 0
	for {
		if i < len(line) && line[i] == '"' {
			var out []byte
			j := i + 1
			start := j
			for {
				k := bytes.IndexByte(line[j:], '"')
				if k < 0 {
					return dst, errors.New("unterminated quoted field (line breaks inside fields are not supported)")
				}
				j += k
				if j+1 < len(line) && line[j+1] == '"' {
					out = append(out, line[start:j+1]...)
					j += 2
					start = j
					continue
				}
				break
			}
			if out != nil {
				out = append(out, line[start:j]...)
				dst = append(dst, out)
			} else {
				dst = append(dst, line[start:j])
			}
			j++
			if j < len(line) && line[j] != ',' {
				return dst, errors.New(`text after a closing quote; quote the whole field and double inner quotes ("")`)
			}
			if j >= len(line) {
				return dst, nil
			}
			i = j + 1
			continue
		}
		k := bytes.IndexByte(line[i:], ',')
		if k < 0 {
			return append(dst, line[i:]), nil
		}
		dst = append(dst, line[i:i+k])
		i += k + 1
	}
}

// csvColumn is one column a CSV format reads, found by header name.
type csvColumn struct {
	name     string // as documented; matched case-insensitively
	required bool
	index    int // -1 when absent
}

// csvDecoder decodes the CSV formats. Each format supplies its columns and
// a function that fills a row from the fields.
type csvDecoder struct {
	r        *Reader
	cols     []csvColumn
	nfields  int
	fields   [][]byte
	fill     func(d *csvDecoder, row *Row) error
	sessions *sessions
}

// col returns the trimmed field of column i of d.cols, or nil if absent.
func (d *csvDecoder) col(i int) []byte {
	c := d.cols[i]
	if c.index < 0 || c.index >= len(d.fields) {
		return nil
	}
	return bytes.TrimSpace(d.fields[c.index])
}

// newCSVDecoder returns the decoder of r's CSV format, after reading the
// header (the first non-blank line, which r.lr replays) and finding the
// format's columns in it by name. A header without a required column, or
// one that does not split, is an ErrHeader error.
func newCSVDecoder(r *Reader) (*csvDecoder, error) {
	d := &csvDecoder{r: r, sessions: newSessions()}
	switch r.format {
	case FormatBurstGPT:
		d.cols = []csvColumn{{name: "Timestamp", required: true}, {name: "Model", required: true},
			{name: "Request tokens", required: true}, {name: "Response tokens", required: true},
			{name: "Session ID"}, {name: "Log Type"}}
		d.fill = (*csvDecoder).burstGPT
	case FormatAzure:
		d.cols = []csvColumn{{name: "TIMESTAMP", required: true}, {name: "ContextTokens", required: true},
			{name: "GeneratedTokens", required: true}, {name: "NumImages"}}
		d.fill = (*csvDecoder).azure
	case FormatVidur:
		d.cols = []csvColumn{{name: "arrived_at", required: true}, {name: "num_prefill_tokens", required: true},
			{name: "num_decode_tokens", required: true}}
		d.fill = (*csvDecoder).vidur
	case FormatSplitwiseSim:
		d.cols = []csvColumn{{name: "arrival_timestamp", required: true}, {name: "prompt_size", required: true},
			{name: "token_size", required: true}, {name: "request_id"}}
		d.fill = (*csvDecoder).splitwiseSim
	default:
		return nil, fmt.Errorf("BUG: no CSV decoder for %q", r.format)
	}
	for i := range d.cols {
		d.cols[i].index = -1
	}
	line, err := r.lr.next() // the header (replayed)
	if err != nil {
		return nil, r.fileErr(r.lr.line, "", err)
	}
	hdr, err := splitCSV(line, nil)
	if err != nil {
		return nil, r.fileErr(r.lr.line, "", fmt.Errorf("%w: %w; a %s trace starts with a header naming the columns %s",
			ErrHeader, err, r.format, strings.Join(requiredNames(d.cols), ", ")))
	}
	d.nfields = len(hdr)
	found := make([]string, len(hdr))
	for i, h := range hdr {
		found[i] = strings.TrimSpace(string(h))
		for c := range d.cols {
			if d.cols[c].index < 0 && strings.EqualFold(found[i], d.cols[c].name) {
				d.cols[c].index = i
			}
		}
	}
	var missing []string
	for _, c := range d.cols {
		if c.required && c.index < 0 {
			missing = append(missing, c.name)
		}
	}
	if len(missing) > 0 {
		what := "no column"
		if len(missing) > 1 {
			what = "no columns"
		}
		return nil, r.fileErr(r.lr.line, "", fmt.Errorf("%w: %s %s (the columns found are %s); a %s trace needs %s, in any order and case: rename the header's columns, or read the file as the format it is",
			ErrHeader, what, quoteList(missing), quoteList(found), r.format, strings.Join(requiredNames(d.cols), ", ")))
	}
	return d, nil
}

func requiredNames(cols []csvColumn) []string {
	var n []string
	for _, c := range cols {
		if c.required {
			n = append(n, c.name)
		}
	}
	return n
}

// quoteList quotes names and joins them with commas, the first
// maxQuoted only: a file in another format can have any header.
func quoteList(names []string) string {
	const maxQuoted = 20
	var b strings.Builder
	for i, n := range names {
		if i == maxQuoted {
			fmt.Fprintf(&b, " and %d more", len(names)-i)
			break
		}
		if i > 0 {
			b.WriteString(", ")
		}
		b.WriteString(strconv.Quote(shorten(n)))
	}
	return b.String()
}

func shorten(s string) string {
	if len(s) > 200 {
		return s[:200] + "…"
	}
	return s
}

func (d *csvDecoder) next(row *Row) error {
	lr := &d.r.lr
	for {
		line, err := d.r.nextRow(row)
		if err != nil {
			return err
		}
		if d.fields, err = splitCSV(line, d.fields); err != nil {
			return d.r.fileErr(lr.line, "", err)
		}
		for _, c := range d.cols {
			if c.required && c.index >= len(d.fields) {
				return d.r.fileErr(lr.line, c.name, fmt.Errorf("missing: the row has %d fields, the header %d", len(d.fields), d.nfields))
			}
		}
		return d.fill(d, row)
	}
}

func (d *csvDecoder) rowErr(field, format string, args ...any) error {
	return d.r.fileErr(d.r.lr.line, field, fmt.Errorf(format, args...))
}

// seconds parses column i as a non-negative number of seconds.
func (d *csvDecoder) seconds(i int) (time.Duration, error) {
	v := d.col(i)
	ns, st := parseFixed(v, 9)
	switch {
	case st == fixedSyntax:
		return 0, d.rowErr(d.cols[i].name, "%q is not a number; want seconds", v)
	case st == fixedRange:
		return 0, d.rowErr(d.cols[i].name, "%s seconds is out of range", v)
	case ns < 0:
		return 0, d.rowErr(d.cols[i].name, "%s is negative; want seconds ≥ 0", v)
	}
	return time.Duration(ns), nil
}

// tokens parses column i as a token count ≥ min.
func (d *csvDecoder) tokens(i, min int) (int, error) {
	v := d.col(i)
	n, msg := parseCount(v)
	if msg != "" {
		return 0, d.rowErr(d.cols[i].name, "%q: %s; want a whole number of tokens", v, msg)
	}
	if n < min {
		return 0, d.rowErr(d.cols[i].name, "%d tokens; must be ≥ %d (fix the row, or pass --skip-invalid to drop such rows)", n, min)
	}
	return n, nil
}

// input parses column i as an input length ≥ min within the Reader's
// input cap (Options.MaxInputTokens).
func (d *csvDecoder) input(i, min int) (int, error) {
	n, err := d.tokens(i, min)
	if err != nil {
		return 0, err
	}
	if err := d.r.overInput(n); err != nil {
		return 0, d.r.fileErr(d.r.lr.line, d.cols[i].name, err)
	}
	return n, nil
}

// burstGPT columns: 0 Timestamp, 1 Model, 2 Request, 3 Response, 4 Session ID.
func (d *csvDecoder) burstGPT(row *Row) error {
	var err error
	if row.Offset, err = d.seconds(0); err != nil {
		return err
	}
	row.HasOffset = true
	if row.InputTokens, err = d.input(2, 0); err != nil {
		return err
	}
	if row.OutputTokens, err = d.tokens(3, 0); err != nil {
		return err
	}
	// Failed requests have zero response (sometimes zero request) tokens.
	row.Failed = row.InputTokens == 0 || row.OutputTokens == 0
	row.Kind = d.sessions.intern(d.col(1))
	if s := d.col(4); len(s) > 0 {
		row.SessionID, row.Turn = d.sessions.turn(s)
	}
	return nil
}

// Azure timestamp layouts (docs/format/traces.md, azure). Go accepts a fraction
// after the seconds even when the layout has none.
const (
	azureNaive = "2006-01-02 15:04:05"
	azureZoned = "2006-01-02 15:04:05Z07:00"
)

// azure columns: 0 TIMESTAMP, 1 ContextTokens, 2 GeneratedTokens, 3 NumImages.
func (d *csvDecoder) azure(row *Row) error {
	v := string(d.col(0))
	var (
		t   time.Time
		err error
	)
	switch {
	case strings.IndexByte(v, 'T') >= 0:
		t, err = time.Parse(time.RFC3339Nano, v)
	case len(v) > 19 && (strings.HasSuffix(v, "Z") || strings.LastIndexAny(v, "+-") > 10):
		t, err = time.Parse(azureZoned, v)
	default:
		t, err = time.Parse(azureNaive, v) // naive times are UTC
	}
	if err != nil {
		return d.rowErr("TIMESTAMP", "%q is not a time like 2023-11-16 18:15:46.6805900, 2024-05-10 00:00:00.009930+00:00 or 2024-10-15T12:00:00.269Z", shorten(v))
	}
	if y := t.Year(); y < 1900 || y > 2200 {
		return d.rowErr("TIMESTAMP", "%q is outside the years 1900–2200", v)
	}
	row.Offset, row.HasOffset = time.Duration(t.UnixNano()), true
	if row.InputTokens, err = d.input(1, 1); err != nil {
		return err
	}
	if row.OutputTokens, err = d.tokens(2, 1); err != nil {
		return err
	}
	if len(d.col(3)) > 0 {
		if row.Images, err = d.tokens(3, 0); err != nil {
			return err
		}
	}
	return nil
}

// vidur columns: 0 arrived_at, 1 num_prefill_tokens, 2 num_decode_tokens.
func (d *csvDecoder) vidur(row *Row) error {
	var err error
	if row.Offset, err = d.seconds(0); err != nil {
		return err
	}
	row.HasOffset = true
	if row.InputTokens, err = d.input(1, 1); err != nil {
		return err
	}
	row.OutputTokens, err = d.tokens(2, 1)
	return err
}

// splitwiseSim columns: 0 arrival_timestamp, 1 prompt_size, 2 token_size, 3 request_id.
func (d *csvDecoder) splitwiseSim(row *Row) error {
	var err error
	if row.Offset, err = d.seconds(0); err != nil {
		return err
	}
	row.HasOffset = true
	if row.InputTokens, err = d.input(1, 1); err != nil {
		return err
	}
	if row.OutputTokens, err = d.tokens(2, 1); err != nil {
		return err
	}
	if len(d.col(3)) > 0 {
		id, st := parseFixed(d.col(3), 0)
		if st != fixedOK {
			return d.rowErr("request_id", "%q is not an integer", d.col(3))
		}
		row.RequestID = id
	}
	return nil
}
