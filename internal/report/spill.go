package report

import (
	"bufio"
	"encoding/binary"
	"errors"
	"fmt"
	"io"
	"math"
	"os"
)

// viewSize is the bytes of one reqView in a spill file.
const viewSize = 5*8 + 7*4 + 2*4 + 2

// spill holds the first pass's reqViews for the second, in a temporary
// file read back in order: decoding a record file again (and asking the
// summary for each request's values again) costs several times what
// reading these fixed-size views costs. The file is removed from its
// directory as soon as it is made, as internal/spool's is (the open file
// keeps the data), so a report killed midway leaves nothing behind; where
// that fails (Windows), close removes it.
type spill struct {
	f       *os.File
	w       *bufio.Writer
	buf     [viewSize]byte
	n       int
	removed bool
}

func newSpill() (*spill, error) {
	f, err := os.CreateTemp("", "reprise-report-*.views")
	if err != nil {
		return nil, fmt.Errorf("report: temporary file: %w", err)
	}
	return &spill{f: f, w: bufio.NewWriterSize(f, 1<<20), removed: os.Remove(f.Name()) == nil}, nil
}

// put appends v.
func (s *spill) put(v *reqView) error {
	b := s.buf[:]
	le := binary.LittleEndian
	for i, t := range [5]int64{v.intended, v.sent, v.first, v.last, v.end} {
		le.PutUint64(b[8*i:], uint64(t))
	}
	for i, x := range [7]float32{v.ttft, v.ttfo, v.itl, v.e2e, v.lateness, v.readLag, v.cacheErr} {
		le.PutUint32(b[40+4*i:], math.Float32bits(x))
	}
	le.PutUint32(b[68:], uint32(v.isl))
	le.PutUint32(b[72:], uint32(v.osl))
	b[76] = v.kind
	b[77] = 0
	if v.warm {
		b[77] = 1
	}
	s.n++
	_, err := s.w.Write(b)
	return err
}

// each calls f with every view put, in order.
func (s *spill) each(f func(v *reqView)) error {
	if err := s.w.Flush(); err != nil {
		return fmt.Errorf("report: temporary file: %w", err)
	}
	if _, err := s.f.Seek(0, io.SeekStart); err != nil {
		return fmt.Errorf("report: temporary file: %w", err)
	}
	r := bufio.NewReaderSize(s.f, 1<<20)
	le := binary.LittleEndian
	var v reqView
	b := s.buf[:]
	for range s.n {
		if _, err := io.ReadFull(r, b); err != nil {
			return fmt.Errorf("report: temporary file: %w", err)
		}
		v.intended, v.sent, v.first = int64(le.Uint64(b[0:])), int64(le.Uint64(b[8:])), int64(le.Uint64(b[16:]))
		v.last, v.end = int64(le.Uint64(b[24:])), int64(le.Uint64(b[32:]))
		f32 := func(i int) float32 { return math.Float32frombits(le.Uint32(b[40+4*i:])) }
		v.ttft, v.ttfo, v.itl, v.e2e = f32(0), f32(1), f32(2), f32(3)
		v.lateness, v.readLag, v.cacheErr = f32(4), f32(5), f32(6)
		v.isl, v.osl = int32(le.Uint32(b[68:])), int32(le.Uint32(b[72:]))
		v.kind, v.warm = b[76], b[77] == 1
		f(&v)
	}
	return nil
}

// close closes the file, and removes it if newSpill could not.
func (s *spill) close() error {
	if s == nil {
		return nil
	}
	err := s.f.Close()
	if !s.removed {
		err = errors.Join(err, os.Remove(s.f.Name()))
	}
	return err
}
