//go:build unix

package main

import (
	"bytes"
	"os"
	"path/filepath"
	"syscall"
	"testing"
	"time"
)

// TestSynthesizeToNamedPipe: -o naming a named pipe (as /dev/null is a
// device) writes into it, and leaves it a pipe; a temporary file renamed
// over the path would replace it with a regular file.
func TestSynthesizeToNamedPipe(t *testing.T) {
	fifo := filepath.Join(t.TempDir(), "pipe")
	if err := syscall.Mkfifo(fifo, 0o644); err != nil {
		t.Fatal(err)
	}
	// Opened for reading and writing, the pipe neither blocks the
	// command's open nor ends at its close; the output fits its buffer.
	r, err := os.OpenFile(fifo, os.O_RDWR, 0)
	if err != nil {
		t.Fatal(err)
	}
	defer r.Close()
	code, _, errOut := runCLI(t, "", "synthesize", "--rate", "5", "--requests", "20", "-q", "-o", fifo)
	if code != 0 {
		t.Fatalf("exit %d: %s", code, errOut)
	}
	fi, err := os.Lstat(fifo)
	if err != nil || fi.Mode()&os.ModeNamedPipe == 0 {
		t.Fatalf("after the command %s is %v (%v), want a named pipe", fifo, fi.Mode(), err)
	}
	if err := r.SetReadDeadline(time.Now().Add(5 * time.Second)); err != nil {
		t.Fatal(err)
	}
	buf := make([]byte, 1<<16)
	n, err := r.Read(buf)
	if err != nil || bytes.Count(buf[:n], []byte("\n")) != 20 {
		t.Errorf("read %d bytes from the pipe (%v), want 20 rows:\n%s", n, err, buf[:n])
	}
}
