package trace

import (
	"bytes"
	"context"
	"errors"
	"io"
	"strings"
	"sync/atomic"
	"testing"
	"time"

	"github.com/klauspost/compress/gzip"
	"github.com/klauspost/compress/zstd"
)

// guard is how long a test waits for a reader that should stop before it
// calls the reader stuck: far longer than stopping takes, so the tests
// assert that reading stops, not how fast.
const guard = 30 * time.Second

// newlines is an endless source of blank lines that calls cancel once it
// has served after bytes, so the reader is cancelled in the middle of its
// blank-line loop.
type newlines struct {
	served atomic.Int64
	after  int64
	cancel func()
}

func (n *newlines) Read(p []byte) (int, error) {
	for i := range p {
		p[i] = '\n'
	}
	if n.served.Add(int64(len(p))) >= n.after && n.cancel != nil {
		n.cancel()
	}
	return len(p), nil
}

// compressedNewlines returns an endless gzip or zstd stream of blank lines
// (a goroutine compresses into a pipe until the reader side is closed) and
// a function that closes it.
func compressedNewlines(t *testing.T, codec string) (io.Reader, func()) {
	t.Helper()
	pr, pw := io.Pipe()
	go func() {
		var w io.WriteCloser
		if codec == "gzip" {
			w = gzip.NewWriter(pw)
		} else {
			zw, err := zstd.NewWriter(pw)
			if err != nil {
				pw.CloseWithError(err)
				return
			}
			w = zw
		}
		block := bytes.Repeat([]byte{'\n'}, 1<<20)
		for {
			if _, err := w.Write(block); err != nil {
				return
			}
		}
	}()
	return pr, func() { pr.Close() }
}

// inTime runs fn and fails the test if it has not returned within guard.
func inTime(t *testing.T, what string, fn func() error) error {
	t.Helper()
	done := make(chan error, 1)
	go func() { done <- fn() }()
	select {
	case err := <-done:
		return err
	case <-time.After(guard):
		t.Fatalf("%s did not stop within %v of being cancelled", what, guard)
		return nil
	}
}

// Every loop of a reader that can run long observes Options.Context:
// skipping blank lines while looking for the first row (NewReader) or the
// next (Next), plain or decompressed. A .zst of 16 GB of newlines used to
// ignore SIGINT and SIGTERM for over 10 minutes.
func TestReaderStopsWhenCancelled(t *testing.T) {
	t.Run("first row", func(t *testing.T) {
		ctx, cancel := context.WithCancel(t.Context())
		src := &newlines{after: 8 << 20, cancel: cancel}
		err := inTime(t, "NewReader", func() error {
			_, err := NewReader("t.jsonl", src, Options{Context: ctx})
			return err
		})
		if !errors.Is(err, context.Canceled) {
			t.Fatalf("error %v, want context.Canceled", err)
		}
		if errors.Is(err, ErrRead) || errors.Is(err, ErrEmpty) {
			t.Errorf("error %v is a read or empty-trace error: cancellation is not a problem of the file", err)
		}
	})
	t.Run("next row", func(t *testing.T) {
		ctx, cancel := context.WithCancel(t.Context())
		src := &newlines{after: 1 << 62}
		r, err := NewReader("t.jsonl", io.MultiReader(strings.NewReader(`{"timestamp": 0, "input_length": 3, "output_length": 1}`+"\n"), src),
			Options{Context: ctx})
		if err != nil {
			t.Fatal(err)
		}
		defer r.Close()
		var row Row
		if err := r.Next(&row); err != nil {
			t.Fatal(err)
		}
		src.after, src.cancel = src.served.Load()+(8<<20), cancel
		err = inTime(t, "Next", func() error { return r.Next(&row) })
		if !errors.Is(err, context.Canceled) {
			t.Fatalf("error %v, want context.Canceled", err)
		}
		if pe, ok := errors.AsType[*ParseError](err); !ok || pe.Path != "t.jsonl" || pe.Line < 2 {
			t.Errorf("error %#v, want a *ParseError naming the file and the line reached", err)
		}
		if r.Err() == nil {
			t.Error("Err() is nil after a cancelled read: it must be final")
		}
	})
	for _, codec := range []string{"gzip", "zstd"} {
		t.Run(codec, func(t *testing.T) {
			src, stop := compressedNewlines(t, codec)
			defer stop()
			ctx, cancel := context.WithCancel(t.Context())
			time.AfterFunc(50*time.Millisecond, cancel)
			err := inTime(t, "NewReader over "+codec, func() error {
				_, err := NewReader("t.jsonl", src, Options{Context: ctx})
				return err
			})
			if !errors.Is(err, context.Canceled) {
				t.Fatalf("error %v, want context.Canceled", err)
			}
		})
	}
}

// Closing a Window stops its reader even in the middle of a stretch of
// blank lines: Close used to wait for the reader to find its next row.
func TestWindowCloseStopsReader(t *testing.T) {
	src := &newlines{after: 1 << 62}
	w := NewWindow(WindowConfig{Count: 2, Open: func() (*Reader, error) {
		return NewReader("t.jsonl", io.MultiReader(strings.NewReader(`{"timestamp": 0, "input_length": 3, "output_length": 1}`+"\n"), src), Options{})
	}})
	if w.Row(0) == nil {
		t.Fatalf("row 0 not read: %v", w.Err())
	}
	for src.served.Load() < 8<<20 { // the reader is in the blank lines
		time.Sleep(time.Millisecond)
	}
	inTime(t, "Window.Close", w.Close)
	if err := w.Err(); err != nil {
		t.Errorf("Err() = %v after Close; closing is not a failure of the trace", err)
	}
}
