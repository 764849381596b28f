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
	fifo, r := namedPipe(t) // the output fits the pipe's buffer
	code, _, errOut := runCLI(t, "", "synthesize", "--rate", "5", "--requests", "20", "-q", "-o", fifo)
	if code != 0 {
		t.Fatalf("exit %d: %s", code, errOut)
	}
	stillPipe(t, fifo)
	if err := r.SetReadDeadline(time.Now().Add(5 * time.Second)); err != nil {
		t.Fatal(err)
	}
	buf := make([]byte, 1<<16)
	n, err := r.Read(buf)
	if err != nil || bytes.Count(buf[:n], []byte("\n")) != 20 {
		t.Errorf("read %d bytes from the pipe (%v), want 20 rows:\n%s", n, err, buf[:n])
	}
}

// TestReportToNamedPipe: report -o naming a named pipe writes the whole
// report into it and leaves it a pipe (the report was written to a
// temporary file renamed over the path, so `-o /dev/null` as root
// replaced the device with a regular file).
func TestReportToNamedPipe(t *testing.T) {
	srv := startMockServer(t, nil)
	run := filepath.Join(t.TempDir(), "run")
	code, _, stderr := runCLI(t, "", "replay", "../../traces/mooncake-sample.jsonl", "--url", srv.URL(),
		"--model", "reprise-mock", "--speedup", "1000", "--request-count", "10", "--out", run, "--quiet")
	if code != 0 {
		t.Fatalf("replay exit %d: %s", code, stderr)
	}
	fifo, r := namedPipe(t)
	// The report is larger than the pipe's buffer: read it as it comes,
	// up to its last line.
	got := make(chan []byte, 1)
	go func() {
		var all []byte
		buf := make([]byte, 1<<16)
		_ = r.SetReadDeadline(time.Now().Add(60 * time.Second))
		for !bytes.Contains(all, []byte("</html>")) {
			n, err := r.Read(buf)
			all = append(all, buf[:n]...)
			if err != nil {
				break
			}
		}
		got <- all
	}()
	code, _, errOut := runCLI(t, "", "report", "-o", fifo, run)
	if code != 0 {
		t.Fatalf("exit %d: %s", code, errOut)
	}
	html := <-got
	stillPipe(t, fifo)
	if !bytes.HasPrefix(html, []byte("<!DOCTYPE html>")) || !bytes.Contains(html, []byte(`data-chart="cdf-ttft"`)) {
		t.Errorf("read %d bytes from the pipe, want the report; it starts %.80q", len(html), html)
	}
}

// namedPipe makes a named pipe and opens it for reading and writing, so
// that it neither blocks a command's open nor ends at its close; it is
// closed with the test.
func namedPipe(t *testing.T) (string, *os.File) {
	t.Helper()
	fifo := filepath.Join(t.TempDir(), "pipe")
	if err := syscall.Mkfifo(fifo, 0o644); err != nil {
		t.Fatal(err)
	}
	r, err := os.OpenFile(fifo, os.O_RDWR, 0)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { r.Close() })
	return fifo, r
}

// stillPipe fails t unless fifo is still a named pipe after a command
// wrote to it (not a regular file renamed over it).
func stillPipe(t *testing.T, fifo string) {
	t.Helper()
	fi, err := os.Lstat(fifo)
	if err != nil || fi.Mode()&os.ModeNamedPipe == 0 {
		t.Fatalf("after the command %s is %v (%v), want a named pipe", fifo, fi.Mode(), err)
	}
}
