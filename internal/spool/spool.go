// Package spool keeps a copy of a stream that can be read only once
// (standard input) in a temporary file without a name, so that it can be
// read again, up to a size cap.
//
// The file is removed from its directory as soon as it is created (on
// systems that allow removing an open file, which every Unix does): the
// data lives only as long as the open file, so a process killed with
// SIGKILL leaves nothing behind. Where the removal fails (Windows), Close
// removes it.
package spool

import (
	"errors"
	"fmt"
	"io"
	"os"
	"sync"
)

// ErrFull is returned when a stream is larger than the Spool's cap.
var ErrFull = errors.New("the input is larger than the cap of its temporary copy")

// DefaultMax is the cap of a Spool, in bytes, when Config.Max is 0: 4 GiB.
const DefaultMax = 4 << 30

// Config configures a [Spool].
type Config struct {
	// Dir is where the temporary file is created; "" is os.TempDir()
	// ($TMPDIR). On a tmpfs the copy is held in memory.
	Dir string
	// Max caps the bytes kept; 0 means DefaultMax.
	Max int64
	// Drop makes a stream over Max pass through whole while the copy is
	// given up (Dropped, and Reopen fails); without it the read over Max
	// fails with ErrFull.
	Drop bool
	// What names the stream in the error over the cap ("standard
	// input"); the caller adds what its users can do about it.
	What string
}

// Spool reads a stream through, keeping a copy for [Spool.Reopen]. Read
// must not be called concurrently; Reopen's readers may be used
// concurrently with each other, after the reads that filled the copy.
type Spool struct {
	src     io.Reader
	cfg     Config
	f       *os.File
	name    string // the file's name while it has one (Close removes it)
	n       int64
	dropped bool
	err     error // sticky write error

	closeOnce sync.Once
	closed    bool
}

// New creates the temporary file for a copy of src and removes its name.
func New(src io.Reader, cfg Config) (*Spool, error) {
	if cfg.Max <= 0 {
		cfg.Max = DefaultMax
	}
	if cfg.What == "" {
		cfg.What = "the input"
	}
	f, err := os.CreateTemp(cfg.Dir, "reprise-spool-*")
	if err != nil {
		return nil, fmt.Errorf("temporary copy of %s: %w", cfg.What, err)
	}
	s := &Spool{src: src, cfg: cfg, f: f}
	if err := os.Remove(f.Name()); err != nil {
		s.name = f.Name() // cannot remove an open file here: Close does
	}
	return s, nil
}

// Read reads from the stream and keeps what it returns. Over the cap it
// fails with ErrFull, or with Config.Drop gives up the copy and goes on.
func (s *Spool) Read(p []byte) (int, error) {
	if s.err != nil {
		return 0, s.err
	}
	n, err := s.src.Read(p)
	if n > 0 && !s.dropped {
		if s.n+int64(n) > s.cfg.Max {
			if !s.cfg.Drop {
				s.err = s.full()
				return 0, s.err
			}
			s.drop()
		} else if _, werr := s.f.WriteAt(p[:n], s.n); werr != nil {
			s.err = fmt.Errorf("temporary copy of %s: %w", s.cfg.What, werr)
			return 0, s.err
		} else {
			s.n += int64(n)
		}
	}
	return n, err
}

func (s *Spool) full() error {
	return fmt.Errorf("%w: %s is over %d bytes (its temporary copy in %s holds at most that)",
		ErrFull, s.cfg.What, s.cfg.Max, dirName(s.cfg.Dir))
}

func dirName(dir string) string {
	if dir == "" {
		return os.TempDir()
	}
	return dir
}

// drop gives up the copy: the file is released at once.
func (s *Spool) drop() {
	s.dropped = true
	s.f.Truncate(0)
}

// Dropped reports whether the copy was given up (Config.Drop, over the cap).
func (s *Spool) Dropped() bool { return s.dropped }

// Size returns the number of bytes kept.
func (s *Spool) Size() int64 { return s.n }

// Reopen returns a reader of the bytes kept so far, from the first. It
// fails with ErrFull when the copy was dropped, and after Close.
func (s *Spool) Reopen() (io.Reader, error) {
	switch {
	case s.closed:
		return nil, fmt.Errorf("temporary copy of %s: closed", s.cfg.What)
	case s.dropped:
		return nil, s.full()
	}
	return io.NewSectionReader(s.f, 0, s.n), nil
}

// Close releases the file (and removes its name where New could not). It
// is safe to call more than once.
func (s *Spool) Close() error {
	var err error
	s.closeOnce.Do(func() {
		s.closed = true
		err = s.f.Close()
		if s.name != "" {
			if rerr := os.Remove(s.name); err == nil {
				err = rerr
			}
		}
	})
	return err
}
