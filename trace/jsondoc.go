package trace

import (
	"bufio"
	"bytes"
	"encoding/json"
	"errors"
	"fmt"
	"io"
)

// errValueTooLarge is wrapped in the ParseError for an element of a JSON
// document over the cap on one element.
var errValueTooLarge = errors.New("JSON element too large")

// jsonDoc streams the values of a JSON document (a ShareGPT array, an
// inputs.json object) straight from the Reader's buffered input, keeping
// the line on which each value starts for messages. It frames values
// itself (strings, escapes, nested brackets) rather than through a line:
// a minified document is one line, however large. Only the element being
// read is in memory, and at most the line cap of it: a longer element is
// read to its end without being kept and reported as a row error, so
// reading goes on with the next one. Syntax errors that lose the framing
// (a bracket closed by the wrong one, a document cut short) end reading.
type jsonDoc struct {
	r     *Reader
	br    *bufio.Reader
	line  int64  // line of the next byte
	buf   []byte // the value last read
	open  []byte // brackets open in the value being read
	first []bool // per container entered with enter: no element read yet
}

// newJSONDoc returns a jsonDoc over the rest of r's input. The lines
// before it (blank lines skipped by peekDoc) are r.lr.line.
func newJSONDoc(r *Reader) *jsonDoc {
	return &jsonDoc{r: r, br: r.lr.br, line: r.lr.line + 1}
}

// fatal records err, on the current line, as the error that ends reading
// (a document whose framing is lost cannot be resynchronised) and returns
// it.
func (d *jsonDoc) fatal(field string, err error) error {
	pe := d.r.fileErr(d.line, field, err)
	d.r.lr.ioErr = pe
	return pe
}

// readFailed is the fatal error for a read that failed with err: the
// document cut short, or the read error (a corrupt gzip stream, a stopped
// read) that explains the rest.
func (d *jsonDoc) readFailed(what string, err error) error {
	if errors.Is(err, io.EOF) {
		return d.fatal("", fmt.Errorf("%w: the JSON document ends inside %s: the file is cut short; download it again", ErrRead, what))
	}
	return d.fatal("", d.r.lr.readErr(err))
}

// syntax is the fatal error for a byte that breaks the document's
// structure.
func (d *jsonDoc) syntax(what, msg string) error {
	return d.fatal("", fmt.Errorf("not valid JSON in %s: %s; fix the file (a JSON Lines file needs one object per line)", what, msg))
}

// peekByte skips white space and returns the next byte, unread.
func (d *jsonDoc) peekByte(what string) (byte, error) {
	for {
		b, err := d.br.Peek(1)
		if err != nil {
			return 0, d.readFailed(what, err)
		}
		switch b[0] {
		case '\n':
			d.line++
			fallthrough
		case ' ', '\t', '\r':
			d.br.Discard(1)
			continue
		}
		return b[0], nil
	}
}

// enter reads the byte that opens a container (want is '[' or '{').
func (d *jsonDoc) enter(want byte, what string) error {
	c, err := d.peekByte(what)
	if err != nil {
		return err
	}
	if c != want {
		return d.fatal("", fmt.Errorf("want %q to start %s, got %q", string(want), what, string(c)))
	}
	d.br.Discard(1)
	d.first = append(d.first, true)
	return nil
}

// more reports whether the container entered last has another element
// (or member), reading the comma before it; at the closing byte it
// leaves the container and returns false.
func (d *jsonDoc) more(closer byte, what string) (bool, error) {
	c, err := d.peekByte(what)
	if err != nil {
		return false, err
	}
	top := len(d.first) - 1
	if c == closer {
		d.br.Discard(1)
		d.first = d.first[:top]
		return false, nil
	}
	if d.first[top] {
		d.first[top] = false
		return true, nil
	}
	if c != ',' {
		return false, d.syntax(what, fmt.Sprintf("want ',' or %q after an element, got %q", string(closer), string(c)))
	}
	d.br.Discard(1)
	return true, nil
}

// key reads an object member's name and its colon.
func (d *jsonDoc) key(what string) (string, error) {
	raw, _, err := d.value(what, true)
	if err != nil {
		return "", err
	}
	var k string
	if len(raw) == 0 || raw[0] != '"' || json.Unmarshal(raw, &k) != nil {
		return "", d.syntax(what, fmt.Sprintf("want a member name (a string), got %.40s", raw))
	}
	c, err := d.peekByte(what)
	if err != nil {
		return "", err
	}
	if c != ':' {
		return "", d.syntax(what, fmt.Sprintf("want ':' after %q, got %q", k, string(c)))
	}
	d.br.Discard(1)
	return k, nil
}

// value reads the next value and returns its bytes (valid until the next
// call; nil unless keep) and the line it starts on. The bytes are framed,
// not validated: json.Unmarshal checks them. A value over the cap on one
// element (r.lr.maxLine) is read to its end without being kept and
// reported as a row error wrapping errValueTooLarge.
func (d *jsonDoc) value(what string, keep bool) ([]byte, int64, error) {
	c, err := d.peekByte(what)
	if err != nil {
		return nil, 0, err
	}
	start, limit := d.line, d.r.lr.maxLine
	if c == ',' || c == ':' || c == ']' || c == '}' {
		return nil, start, d.syntax(what, fmt.Sprintf("want a value, got %q", string(c)))
	}
	d.buf, d.open = d.buf[:0], d.open[:0]
	var (
		size       int64
		inStr, esc bool
		scalar     = c != '"' && c != '[' && c != '{'
	)
	for {
		chunk, err := d.br.Peek(max(d.br.Buffered(), 1))
		if len(chunk) == 0 {
			if scalar && errors.Is(err, io.EOF) {
				break // a bare number or literal at the end: more reports the rest
			}
			return nil, start, d.readFailed(what, err)
		}
		n, done, msg := d.frame(chunk, &inStr, &esc, scalar)
		if msg != "" {
			d.line += int64(bytes.Count(chunk[:n], []byte{'\n'}))
			d.br.Discard(n)
			return nil, start, d.syntax(what, msg)
		}
		d.line += int64(bytes.Count(chunk[:n], []byte{'\n'}))
		if keep && size+int64(n) <= int64(limit) {
			d.buf = append(d.buf, chunk[:n]...)
		}
		size += int64(n)
		d.br.Discard(n)
		if done {
			break
		}
	}
	if size > int64(limit) {
		return nil, start, d.r.fileErr(start, "", fmt.Errorf("%w: %s is %d bytes, over the %d-byte cap on one element of a JSON document; shorten it or take it out of the file (--skip-invalid skips it)",
			errValueTooLarge, what, size, limit))
	}
	if !keep {
		return nil, start, nil
	}
	return d.buf, start, nil
}

// frame scans chunk, the next bytes of a value, and returns how many of
// them belong to it, whether the value ends there, and a syntax message
// for a byte that breaks its framing. inStr and esc carry the string
// state from chunk to chunk; d.open the brackets.
func (d *jsonDoc) frame(chunk []byte, inStr, esc *bool, scalar bool) (int, bool, string) {
	for i := 0; i < len(chunk); i++ {
		if *inStr {
			if *esc {
				*esc = false
				continue
			}
			// Jump to the next quote or backslash: strings are most bytes.
			q := bytes.IndexByte(chunk[i:], '"')
			if q < 0 {
				q = len(chunk) - i
			}
			if k := bytes.IndexByte(chunk[i:i+q], '\\'); k >= 0 {
				i += k
				*esc = true
				continue
			}
			i += q
			if i == len(chunk) {
				break
			}
			*inStr = false
			if len(d.open) == 0 {
				return i + 1, true, ""
			}
			continue
		}
		c := chunk[i]
		if scalar {
			switch c {
			case ' ', '\t', '\r', '\n', ',', ':', ']', '}', '[', '{', '"':
				return i, true, ""
			}
			continue
		}
		switch c {
		case '"':
			*inStr = true
		case '[', '{':
			d.open = append(d.open, c)
		case ']', '}':
			top := len(d.open) - 1
			if want := d.open[top] + 2; c != want { // '['+2 is ']', '{'+2 is '}'
				return i, false, fmt.Sprintf("%q closes %q", string(c), string(d.open[top]))
			}
			d.open = d.open[:top]
			if top == 0 {
				return i + 1, true, ""
			}
		}
	}
	return len(chunk), false, ""
}

// peekDoc decides, before any line is read, whether the input is a JSON
// document read as a stream of values (by jsonDoc) rather than as lines:
// a JSON array (ShareGPT), or an inputs.json object (forced; detected
// when detectLine says so of its first line, or when that line is longer
// than the read buffer and starts {"data": [, as a minified one does). It skips the blank lines
// before the document, counting them in r.lr.line, and returns the
// format, or "" to read lines (the first line then decides, as before).
// It reads ahead only as far as the decision needs.
func (r *Reader) peekDoc() (Format, error) {
	opts := r.opts
	switch {
	case opts.Format == FormatShareGPT, opts.Format == FormatInputsJSON:
	case opts.Format == "" && opts.Columns.IsZero() && !isPromptsName(r.name):
	default:
		return "", nil
	}
	br := r.lr.br
	i := 0 // bytes of b that are white space
	for {
		b, err := br.Peek(min(br.Buffered()+1, readBufSize))
		if len(b) > i {
			for i < len(b) && (b[i] == ' ' || b[i] == '\t' || b[i] == '\r' || b[i] == '\n') {
				i++
			}
			if nl := bytes.LastIndexByte(b[:i], '\n'); nl >= 0 {
				r.lr.line += int64(bytes.Count(b[:nl+1], []byte{'\n'}))
				br.Discard(nl + 1)
				i -= nl + 1
				continue
			}
			if i < len(b) {
				break
			}
		}
		if err != nil || len(b) == readBufSize {
			return "", nil // blank to the end, or a blank line longer than the buffer: the lines tell
		}
	}
	b, _ := br.Peek(br.Buffered())
	switch c := b[i]; {
	case c == '[' && opts.Format != FormatInputsJSON:
		return FormatShareGPT, nil
	case c == '{' && opts.Format == FormatInputsJSON:
		return FormatInputsJSON, nil
	case c == '{' && opts.Format == "":
		// The first line's keys decide (detectLine), as for lines.
		for {
			line, eof := b[i:], false
			if k := bytes.IndexByte(line, '\n'); k >= 0 {
				line, eof = line[:k], true
			} else if len(b) == readBufSize {
				if startsInputsJSON(line) {
					return FormatInputsJSON, nil
				}
				return "", nil
			} else if _, err := br.Peek(len(b) + 1); err != nil {
				eof = true // the last line
			}
			if eof {
				if f, err := detectLine(line); err == nil && f == FormatInputsJSON {
					return FormatInputsJSON, nil
				}
				return "", nil
			}
			b, _ = br.Peek(br.Buffered())
		}
	}
	return "", nil
}

// startsInputsJSON reports whether b starts an object whose first member
// is "data" holding an array: the start of an inputs.json.
func startsInputsJSON(b []byte) bool {
	dec := json.NewDecoder(bytes.NewReader(b))
	for _, want := range []any{json.Delim('{'), "data", json.Delim('[')} {
		if tok, err := dec.Token(); err != nil || tok != want {
			return false
		}
	}
	return true
}
