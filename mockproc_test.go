package reprise

import (
	"bufio"
	"context"
	"encoding/json"
	"fmt"
	"os"
	"os/exec"
	"runtime/pprof"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/reprise-bench/reprise/internal/mockserver"
	"github.com/reprise-bench/reprise/internal/prio"
)

// The benchmarks that compare the client with the mock server's oracle
// log run the server in a child process (this test binary, re-executed),
// as a user's server would be: in-process, client and server share the
// Go scheduler and garbage collector, and the server's own stamps suffer
// from the client's load. Both processes stamp Unix ns as the wall clock
// read once plus monotonic time, so their stamps compare directly while
// the system clock is not being slewed (no NTP on the CI machines).

const mockChildEnv = "REPRISE_ENGINE_TEST_MOCK"

// mockChildConfig is what the parent asks of the child server.
type mockChildConfig struct {
	TTFT, ITL  time.Duration
	MaxNumSeqs int
	Nice       int
}

func TestMain(m *testing.M) {
	if spec := os.Getenv(mockChildEnv); spec != "" {
		os.Exit(runMockChild(spec))
	}
	code := m.Run()
	removeMergeBase()
	os.Exit(code)
}

// runMockChild serves until its standard input closes. It prints the URL,
// then answers "reset" (forget the log) with "ok" and "log" with the log
// as one JSON line.
func runMockChild(spec string) int {
	var c mockChildConfig
	if err := json.Unmarshal([]byte(spec), &c); err != nil {
		fmt.Fprintln(os.Stderr, err)
		return 2
	}
	cfg := mockserver.NewConfig()
	cfg.Addr = "127.0.0.1:0"
	cfg.TTFT, cfg.ITL, cfg.MaxNumSeqs, cfg.KeepLog = c.TTFT, c.ITL, c.MaxNumSeqs, true
	srv, err := mockserver.Start(context.Background(), cfg)
	if err != nil {
		fmt.Fprintln(os.Stderr, err)
		return 1
	}
	defer srv.Close()
	// The child inherits its parent's nice value, which the benchmark may
	// have lowered (benchTTFTError). Where it cannot be set (without the
	// privilege, or off Linux), only a nice value other than 0 is missed.
	if have, err := prio.Nice(); err != nil || have != c.Nice {
		if err := prio.SetNice(c.Nice); err != nil && c.Nice != 0 {
			fmt.Fprintln(os.Stderr, err)
			return 1
		}
	}
	if f := os.Getenv(mockChildEnv + "_CPUPROFILE"); f != "" {
		// The server's CPU profile, for benchmarks: how it spends its time
		// bounds how much of the machine the client gets.
		w, err := os.Create(f)
		if err != nil {
			fmt.Fprintln(os.Stderr, err)
			return 1
		}
		if err := pprof.StartCPUProfile(w); err != nil {
			fmt.Fprintln(os.Stderr, err)
			return 1
		}
		defer w.Close()
		defer pprof.StopCPUProfile()
	}
	out := bufio.NewWriter(os.Stdout)
	fmt.Fprintln(out, srv.URL())
	out.Flush()
	in := bufio.NewScanner(os.Stdin)
	for in.Scan() {
		switch in.Text() {
		case "reset":
			srv.ResetLog()
			fmt.Fprintln(out, "ok")
		case "log":
			// The client can read a response's end just before the server logs it.
			if err := srv.WaitIdle(context.Background()); err != nil {
				fmt.Fprintln(os.Stderr, err)
				return 1
			}
			if err := json.NewEncoder(out).Encode(srv.Log()); err != nil {
				fmt.Fprintln(os.Stderr, err)
				return 1
			}
		}
		out.Flush()
	}
	return 0
}

// mockProc is a mock server in a child process.
type mockProc struct {
	cmd *exec.Cmd
	in  *os.File
	out *bufio.Reader
	url string
}

func startMockProcess(tb testing.TB, c mockChildConfig) *mockProc {
	tb.Helper()
	spec, _ := json.Marshal(c)
	cmd := exec.Command(os.Args[0], "-test.run=^$")
	cmd.Env = append(os.Environ(), mockChildEnv+"="+string(spec))
	cmd.Stderr = os.Stderr
	w, err := cmd.StdinPipe()
	if err != nil {
		tb.Fatal(err)
	}
	r, err := cmd.StdoutPipe()
	if err != nil {
		tb.Fatal(err)
	}
	if err := cmd.Start(); err != nil {
		tb.Fatal(err)
	}
	p := &mockProc{cmd: cmd, in: w.(*os.File), out: bufio.NewReaderSize(r, 1<<20)}
	tb.Cleanup(func() { p.in.Close(); _ = cmd.Wait() })
	p.url = strings.TrimSpace(p.line(tb))
	return p
}

func (p *mockProc) line(tb testing.TB) string {
	s, err := p.out.ReadString('\n')
	if err != nil {
		tb.Fatalf("mock server process: %v", err)
	}
	return s
}

func (p *mockProc) reset(tb testing.TB) {
	fmt.Fprintln(p.in, "reset")
	p.line(tb)
}

func (p *mockProc) log(tb testing.TB) []mockserver.RequestLog {
	fmt.Fprintln(p.in, "log")
	var l []mockserver.RequestLog
	if err := json.Unmarshal([]byte(p.line(tb)), &l); err != nil {
		tb.Fatal(err)
	}
	return l
}

// cpu returns the child's user+system CPU time so far (clock-tick
// resolution, from /proc).
func (p *mockProc) cpu(tb testing.TB) time.Duration {
	b, err := os.ReadFile("/proc/" + strconv.Itoa(p.cmd.Process.Pid) + "/stat")
	if err != nil {
		tb.Skip("no /proc: child CPU unknown")
	}
	s := string(b)
	f := strings.Fields(s[strings.LastIndexByte(s, ')')+2:])
	ut, _ := strconv.ParseInt(f[11], 10, 64)
	st, _ := strconv.ParseInt(f[12], 10, 64)
	return time.Duration(ut+st) * (time.Second / 100)
}
