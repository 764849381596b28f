package selftest

import (
	"bufio"
	"bytes"
	"context"
	"errors"
	"fmt"
	"io"
	"os"
	"os/exec"
	"path/filepath"
	"strconv"
	"strings"
	"syscall"
	"time"

	"github.com/reprise-bench/reprise/internal/mockserver"
)

// serverSettings are the mock server's flags for one child.
type serverSettings struct {
	TTFT, ITL   time.Duration
	MaxNumSeqs  int
	CPUPerToken time.Duration
	Nice        *int
}

// server is the mock server in a child process, writing its oracle log
// to a file that the parent reads a step at a time.
type server struct {
	cmd     *exec.Cmd
	url     string
	logPath string
	log     *os.File
	off     int64 // bytes of the log consumed
	line    int   // lines of the log consumed
	stderr  bytes.Buffer
	exited  chan struct{}
}

// startServer starts argv (`reprise mock-server`) with the flags of s, in
// dir, and waits (at most 10 s) until it listens.
func startServer(ctx context.Context, argv []string, dir string, s serverSettings) (*server, error) {
	if len(argv) == 0 {
		return nil, errors.New("selftest: Config.Server is empty: want the command that runs `reprise mock-server`")
	}
	if err := os.MkdirAll(dir, 0o755); err != nil {
		return nil, err
	}
	urlFile := filepath.Join(dir, "url")
	logPath := filepath.Join(dir, "oracle.jsonl")
	args := append(argv[1:len(argv):len(argv)], "--addr", "127.0.0.1:0", "--url-file", urlFile, "--event-log", logPath,
		"--model", mockserver.DefaultModel, "--ttft", s.TTFT.String(), "--itl", s.ITL.String(),
		"--max-num-seqs", strconv.Itoa(s.MaxNumSeqs), "--idle-timeout", "0", "--prefix-cache-tokens", "0")
	if s.CPUPerToken > 0 {
		args = append(args, "--cpu-per-token", s.CPUPerToken.String())
	}
	if s.Nice != nil {
		args = append(args, "--nice", strconv.Itoa(*s.Nice))
	}
	srv := &server{logPath: logPath, exited: make(chan struct{})}
	srv.cmd = exec.Command(argv[0], args...)
	srv.cmd.Stderr = &limitedWriter{w: &srv.stderr, n: 64 << 10}
	// The child must not inherit REPRISE_MOCK_* settings of the user's
	// shell that would change the latency model under test.
	srv.cmd.Env = withoutPrefix(os.Environ(), "REPRISE_MOCK_")
	if err := srv.cmd.Start(); err != nil {
		return nil, fmt.Errorf("start the mock server (%s): %w", argv[0], err)
	}
	go func() { _ = srv.cmd.Wait(); close(srv.exited) }()
	deadline := time.Now().Add(10 * time.Second)
	for {
		if b, err := os.ReadFile(urlFile); err == nil {
			srv.url = strings.TrimSpace(string(b))
			break
		}
		select {
		case <-srv.exited:
			return nil, fmt.Errorf("the mock server exited before it listened: %s", strings.TrimSpace(srv.stderr.String()))
		case <-ctx.Done():
			srv.stop()
			return nil, ctx.Err()
		case <-time.After(20 * time.Millisecond):
		}
		if time.Now().After(deadline) {
			srv.stop()
			return nil, fmt.Errorf("the mock server did not listen within 10 s: %s", strings.TrimSpace(srv.stderr.String()))
		}
	}
	f, err := os.Open(logPath)
	if err != nil {
		srv.stop()
		return nil, fmt.Errorf("the mock server's log: %w", err)
	}
	srv.log = f
	return srv, nil
}

// pid is the child's process id.
func (s *server) pid() int { return s.cmd.Process.Pid }

// next returns the log lines written since the last call, waiting (at
// most 5 s) until there are at least want: a request's line is written
// just after its last byte, which the client may read first.
func (s *server) next(want int) ([]mockserver.RequestLog, error) {
	var out []mockserver.RequestLog
	deadline := time.Now().Add(5 * time.Second)
	for {
		if _, err := s.log.Seek(s.off, io.SeekStart); err != nil {
			return nil, err
		}
		r := bufio.NewReaderSize(s.log, 1<<20)
		for {
			b, err := r.ReadBytes('\n')
			if err != nil { // a line not finished yet stays for the next read
				break
			}
			s.off += int64(len(b))
			s.line++
			l, err := mockserver.ParseLogLine(b, s.line)
			if err != nil {
				return nil, fmt.Errorf("%s: %w", s.logPath, err)
			}
			out = append(out, l)
		}
		if len(out) >= want || time.Now().After(deadline) {
			return out, nil
		}
		time.Sleep(10 * time.Millisecond)
	}
}

// cpu returns the child's user+system CPU time so far, from /proc (clock
// ticks of 10 ms); ok is false where there is no /proc.
func (s *server) cpu() (time.Duration, bool) {
	b, err := os.ReadFile("/proc/" + strconv.Itoa(s.pid()) + "/stat")
	if err != nil {
		return 0, false
	}
	str := string(b)
	i := strings.LastIndexByte(str, ')')
	if i < 0 || i+2 > len(str) {
		return 0, false
	}
	f := strings.Fields(str[i+2:])
	if len(f) < 13 {
		return 0, false
	}
	ut, err1 := strconv.ParseInt(f[11], 10, 64)
	st, err2 := strconv.ParseInt(f[12], 10, 64)
	if err1 != nil || err2 != nil {
		return 0, false
	}
	return time.Duration(ut+st) * (time.Second / 100), true
}

// stop ends the child (SIGTERM, then SIGKILL after 5 s) and closes the
// log.
func (s *server) stop() {
	if s.log != nil {
		_ = s.log.Close()
	}
	select {
	case <-s.exited:
		return
	default:
	}
	_ = s.cmd.Process.Signal(syscall.SIGTERM)
	select {
	case <-s.exited:
	case <-time.After(5 * time.Second):
		_ = s.cmd.Process.Kill()
		<-s.exited
	}
}

// limitedWriter keeps the first n bytes written to it.
type limitedWriter struct {
	w io.Writer
	n int
}

func (l *limitedWriter) Write(p []byte) (int, error) {
	if l.n > 0 {
		k := min(len(p), l.n)
		_, _ = l.w.Write(p[:k])
		l.n -= k
	}
	return len(p), nil
}

func withoutPrefix(env []string, prefix string) []string {
	out := env[:0:0]
	for _, e := range env {
		if !strings.HasPrefix(e, prefix) {
			out = append(out, e)
		}
	}
	return out
}
