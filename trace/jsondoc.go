package trace

import (
	"bytes"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"slices"
)

// jsonDoc streams the values of a JSON document (a ShareGPT array, an
// inputs.json object) with encoding/json's Decoder, keeping the line on
// which each value starts for messages. Reading is streaming: only the
// value being decoded and the decoder's read-ahead are in memory.
type jsonDoc struct {
	r   *Reader
	lt  *lineTracker
	dec *json.Decoder
}

// newJSONDoc returns a jsonDoc over the rest of r's input, starting with
// the line r's lineReader last returned (the first non-blank line, read
// for detection).
func newJSONDoc(r *Reader) *jsonDoc {
	first := append(slices.Clip(r.lr.cur), '\n')
	r.lr.replay = false
	src := io.MultiReader(bytes.NewReader(first), r.lr.br)
	lt := &lineTracker{r: src, base: r.lr.line}
	dec := json.NewDecoder(lt)
	dec.UseNumber()
	return &jsonDoc{r: r, lt: lt, dec: dec}
}

// line returns the line of the byte the decoder is at.
func (d *jsonDoc) line() int64 { return d.lt.line(d.dec.InputOffset()) }

// elementLine returns the line on which the next value starts: the
// decoder's offset is where the last token ended, so white space and a
// comma still in its buffer are skipped first.
func (d *jsonDoc) elementLine() int64 {
	off := d.dec.InputOffset()
	var b [1]byte
	buf := d.dec.Buffered()
	for {
		if n, _ := buf.Read(b[:]); n == 0 {
			break
		}
		if c := b[0]; c != ' ' && c != '\t' && c != '\r' && c != '\n' && c != ',' {
			break
		}
		off++
	}
	return d.lt.line(off)
}

// fatal records err, on the current line, as the error that ends reading
// (a document that is not valid JSON cannot be resynchronised) and
// returns it.
func (d *jsonDoc) fatal(field string, err error) error {
	if d.lt.err != nil { // a read error (e.g. corrupt gzip) explains the rest
		err = d.r.lr.readErr(d.lt.err)
	}
	pe := d.r.fileErr(d.line(), field, err)
	d.r.lr.ioErr = pe
	return pe
}

// syntax wraps a decoder error into a message saying what to do.
func (d *jsonDoc) syntax(what string, err error) error {
	if errors.Is(err, io.EOF) || errors.Is(err, io.ErrUnexpectedEOF) {
		return fmt.Errorf("%w: the JSON document ends inside %s: the file is cut short; download it again", ErrRead, what)
	}
	return fmt.Errorf("not valid JSON in %s: %v; fix the file (a JSON Lines file needs one object per line)", what, err)
}

// delim reads the next token and checks it is want.
func (d *jsonDoc) delim(want json.Delim, what string) error {
	tok, err := d.dec.Token()
	if err != nil {
		return d.fatal("", d.syntax(what, err))
	}
	if got, ok := tok.(json.Delim); !ok || got != want {
		return d.fatal("", fmt.Errorf("want %q to start %s, got %v", string(want), what, tok))
	}
	return nil
}

// lineTracker counts the newlines of what it reads so that a byte offset
// (json.Decoder.InputOffset) can be turned into a line number. It keeps
// the offsets of the newlines after the last offset asked about only:
// offsets are asked in increasing order, so memory stays bounded by the
// decoder's read-ahead.
type lineTracker struct {
	r    io.Reader
	base int64   // line of the first byte
	off  int64   // bytes read so far
	nl   []int64 // offsets of newlines not yet counted into done
	done int64   // newlines before the last offset asked about
	err  error   // the first read error (not io.EOF)
}

func (t *lineTracker) Read(p []byte) (int, error) {
	n, err := t.r.Read(p)
	for i := 0; i < n; {
		k := bytes.IndexByte(p[i:n], '\n')
		if k < 0 {
			break
		}
		t.nl = append(t.nl, t.off+int64(i+k))
		i += k + 1
	}
	t.off += int64(n)
	if err != nil && !errors.Is(err, io.EOF) && t.err == nil {
		t.err = err
	}
	return n, err
}

// line returns the 1-based line of the byte at off.
func (t *lineTracker) line(off int64) int64 {
	k := 0
	for k < len(t.nl) && t.nl[k] < off {
		k++
	}
	t.done += int64(k)
	t.nl = append(t.nl[:0], t.nl[k:]...)
	return t.base + t.done
}
