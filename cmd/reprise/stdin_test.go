package main

import (
	"context"
	"encoding/json"
	"fmt"
	"io"
	"os"
	"path/filepath"
	"strings"
	"sync/atomic"
	"testing"
	"time"
)

// rowSource serves a sorted Mooncake trace of rows rows (one per
// millisecond, 57 bytes each) and counts the bytes it served. Each read
// first calls onRead.
type rowSource struct {
	rows   int
	served atomic.Int64
	next   int
	buf    []byte
	onRead func()
}

func (s *rowSource) Read(p []byte) (int, error) {
	if s.onRead != nil {
		s.onRead()
	}
	for len(s.buf) < len(p) && s.next < s.rows {
		s.buf = fmt.Appendf(s.buf, `{"timestamp": %d, "input_length": 16, "output_length": 2}`+"\n", s.next)
		s.next++
	}
	if len(s.buf) == 0 {
		return 0, io.EOF
	}
	n := copy(p, s.buf)
	s.buf = s.buf[:copy(s.buf, s.buf[n:])]
	s.served.Add(int64(n))
	return n, nil
}

// runCLIFrom is runCLI with stdin read from r and a context.
func runCLIFrom(ctx context.Context, stdin io.Reader, args ...string) (int, string) {
	var out, errb strings.Builder
	code := run(ctx, append([]string{"reprise"}, args...), stdin, &out, &errb)
	return code, errb.String()
}

// `reprise replay - --request-count N` reads only the rows it replays:
// it used to read (and hold, about 7 bytes of memory per byte) the whole
// of standard input first, so an endless producer never started the run.
func TestReplayStdinStopsAtRequestCount(t *testing.T) {
	srv := newCaptureServer(t)
	src := &rowSource{rows: 150000} // 8.5 MB
	out := t.TempDir()
	code, stderr := runCLIFrom(t.Context(), src, "replay", "-", "--url", srv.URL, "--model", "m", "--no-streaming",
		"--out", out, "--format", "jsonl", "--quiet", "--request-count", "10")
	if code != 0 {
		t.Fatalf("exit %d: %s", code, stderr)
	}
	if n := len(srv.sent()); n != 10 {
		t.Errorf("%d requests sent, want 10", n)
	}
	if n := src.served.Load(); n > 1<<20 {
		t.Errorf("read %d bytes of standard input for 10 rows; want it to stop after the rows it needs (under 1 MiB)", n)
	}
	m := readManifestMap(t, out)
	if m["trace_rows"] != float64(10) {
		t.Errorf("manifest trace_rows %v, want 10", m["trace_rows"])
	}
	if m["trace_sha256"] != nil || m["trace_size_bytes"] != nil {
		t.Errorf("manifest trace_sha256 %v, trace_size_bytes %v for standard input read in part; want null", m["trace_sha256"], m["trace_size_bytes"])
	}
}

// A sorted trace of independent requests on standard input is read while
// the run goes, like a file (from an unnamed temporary copy): it used to
// be held in memory whole.
func TestReplayStdinStreamed(t *testing.T) {
	srv := newCaptureServer(t)
	out := t.TempDir()
	code, stderr := runCLIFrom(t.Context(), &rowSource{rows: 200}, "replay", "-", "--url", srv.URL, "--model", "m",
		"--no-streaming", "--out", out, "--format", "jsonl", "--speedup", "100")
	if code != 0 {
		t.Fatalf("exit %d: %s", code, stderr)
	}
	if m := readManifestMap(t, out); m["trace_streamed"] != true {
		t.Errorf("manifest trace_streamed %v: standard input was held in memory", m["trace_streamed"])
	}
	if strings.Contains(stderr, "held in memory") {
		t.Errorf("stderr says the trace is held in memory:\n%s", stderr)
	}
	if n := len(srv.sent()); n != 200 {
		t.Errorf("%d requests sent, want 200", n)
	}
}

// Standard input larger than --stdin-spool-mib is refused with a message
// naming the flag, before anything is sent.
func TestReplayStdinSpoolCap(t *testing.T) {
	srv := newCaptureServer(t)
	// 3.4 MB of rows, over a 1 MiB cap.
	code, stderr := runCLIFrom(t.Context(), &rowSource{rows: 60000}, "replay", "-", "--url", srv.URL, "--model", "m",
		"--out", t.TempDir(), "--quiet", "--stdin-spool-mib", "1")
	if code != 2 || !strings.Contains(stderr, "standard input is over 1048576 bytes") || !strings.Contains(stderr, "--stdin-spool-mib") {
		t.Errorf("exit %d, stderr %q; want 2 and the cap and its flag", code, stderr)
	}
	if n := len(srv.sent()); n != 0 {
		t.Errorf("%d requests sent, want none", n)
	}
}

// analyze-trace - keeps its copy of standard input (for a second pass over
// an unsorted trace) in a file without a name, so kill -9 leaves nothing
// in the temporary directory: it used to copy all of standard input to a
// named file first. A sorted input larger than --stdin-spool-mib needs no
// second pass and is analysed; an unsorted one is refused, naming the flag.
func TestAnalyzeStdinSpool(t *testing.T) {
	tmp := t.TempDir()
	t.Setenv("TMPDIR", tmp)
	var named atomic.Int64
	src := &rowSource{rows: 80000, onRead: func() {
		if ents, _ := os.ReadDir(tmp); len(ents) > 0 {
			named.Add(1)
		}
	}}
	code, stderr := runCLIFrom(t.Context(), src, "analyze-trace", "--json", "--stdin-spool-mib", "1", "-")
	if code != 0 {
		t.Fatalf("sorted input over the cap: exit %d: %s", code, stderr)
	}
	if n := named.Load(); n > 0 {
		t.Errorf("a named file was in $TMPDIR during %d reads of standard input", n)
	}
	if ents, _ := os.ReadDir(tmp); len(ents) > 0 {
		t.Errorf("files left in $TMPDIR: %v", ents)
	}

	unsorted := strings.NewReader(`{"timestamp": 1000, "input_length": 16, "output_length": 2}` + "\n" + strings.Repeat(`{"timestamp": 0, "input_length": 16, "output_length": 2}`+"\n", 40000))
	code, stderr = runCLIFrom(t.Context(), unsorted, "analyze-trace", "--stdin-spool-mib", "1", "-")
	if code != 2 || !strings.Contains(stderr, "--stdin-spool-mib") || !strings.Contains(stderr, "not in time order") {
		t.Errorf("unsorted input over the cap: exit %d, stderr %q; want 2, the flag and why", code, stderr)
	}
	unsorted = strings.NewReader(`{"timestamp": 1000, "input_length": 16, "output_length": 2}` + "\n" + `{"timestamp": 0, "input_length": 16, "output_length": 2}` + "\n")
	if code, stderr := runCLIFrom(t.Context(), unsorted, "analyze-trace", "-"); code != 0 {
		t.Errorf("small unsorted input: exit %d: %s", code, stderr)
	}
}

// Reading standard input stops on Ctrl-C (the context) even while the
// reader skips blank lines: the command ends with exit 1 (interrupted), not
// 2 (a bad trace). A stream of newlines used to hold it for minutes.
func TestTraceReadingInterrupted(t *testing.T) {
	for _, args := range [][]string{{"analyze-trace", "-"}, {"replay", "-", "--model", "m", "--out", t.TempDir()}} {
		t.Run(args[0], func(t *testing.T) {
			ctx, cancel := context.WithCancel(t.Context())
			var served atomic.Int64
			t.Setenv("TMPDIR", t.TempDir())
			src := readerFunc(func(p []byte) (int, error) {
				if served.Load() > 64<<20 {
					return 0, io.EOF // bounded, should cancelling not stop the command
				}
				for i := range p {
					p[i] = '\n'
				}
				if served.Add(int64(len(p))) > 8<<20 {
					cancel()
				}
				return len(p), nil
			})
			done := make(chan struct{})
			var code int
			var stderr string
			go func() {
				defer close(done)
				code, stderr = runCLIFrom(ctx, src, args...)
			}()
			select {
			case <-done:
			case <-time.After(time.Minute):
				t.Fatal("the command did not stop within a minute of being cancelled")
			}
			if code != 1 || !strings.Contains(stderr, "context canceled") {
				t.Errorf("exit %d, stderr %q; want 1 and context canceled", code, stderr)
			}
		})
	}
}

type readerFunc func(p []byte) (int, error)

func (f readerFunc) Read(p []byte) (int, error) { return f(p) }

func readManifestMap(t *testing.T, dir string) map[string]any {
	t.Helper()
	b, err := os.ReadFile(filepath.Join(dir, "manifest.json"))
	if err != nil {
		t.Fatal(err)
	}
	var m map[string]any
	if err := json.Unmarshal(b, &m); err != nil {
		t.Fatal(err)
	}
	return m
}

// synthesize --from - reads standard input without a temporary file (it
// holds the rows anyway): it used to copy all of it to a named file first.
func TestSynthesizeFromStdinNoTempFile(t *testing.T) {
	tmp := t.TempDir()
	t.Setenv("TMPDIR", tmp)
	var named atomic.Int64
	src := &rowSource{rows: 20000, onRead: func() {
		if ents, _ := os.ReadDir(tmp); len(ents) > 0 {
			named.Add(1)
		}
	}}
	out := filepath.Join(t.TempDir(), "out.jsonl")
	if code, stderr := runCLIFrom(t.Context(), src, "synthesize", "--from", "-", "-o", out, "--quiet"); code != 0 {
		t.Fatalf("exit %d: %s", code, stderr)
	}
	if n := named.Load(); n > 0 {
		t.Errorf("a named file was in $TMPDIR during %d reads of standard input", n)
	}
}
