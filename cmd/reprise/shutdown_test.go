package main

import (
	"bufio"
	"encoding/json"
	"io"
	"net/http"
	"net/http/httptest"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"sync/atomic"
	"syscall"
	"testing"
	"time"

	"github.com/reprise-bench/reprise/arrowio"
	"github.com/reprise-bench/reprise/engine/record"
	"github.com/reprise-bench/reprise/internal/telemetry"
)

// hangingServer answers the first ok chat requests at once and holds every
// later one until the client gives up; its /metrics page answers the
// first scrape (the baseline) and never answers another.
type hangingServer struct {
	*httptest.Server
	answered, held, scrapes atomic.Int64
}

func newHangingServer(t *testing.T, ok int64) *hangingServer {
	t.Helper()
	s := &hangingServer{}
	var n atomic.Int64
	s.Server = httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		if r.URL.Path == "/metrics" {
			if s.scrapes.Add(1) == 1 {
				io.WriteString(w, "# TYPE demo_requests_total counter\ndemo_requests_total 1\n")
				return
			}
			<-r.Context().Done() // never answers
			return
		}
		if r.Method == http.MethodGet {
			http.NotFound(w, r) // no /v1/models for the preflight: it passes on any answer
			return
		}
		io.Copy(io.Discard, r.Body)
		if n.Add(1) > ok {
			s.held.Add(1)
			<-r.Context().Done()
			return
		}
		w.Header().Set("Content-Type", "application/json")
		io.WriteString(w, `{"id":"x","object":"chat.completion","model":"m","choices":[{"index":0,`+
			`"message":{"role":"assistant","content":"ok"},"finish_reason":"length"}],`+
			`"usage":{"prompt_tokens":1,"completion_tokens":1,"total_tokens":2}}`)
		s.answered.Add(1)
	}))
	t.Cleanup(s.Close)
	return s
}

// TestReplayFinalScrapeDeadline: a /metrics target that stops answering
// gets the short final-scrape deadline, not the scrape timeout, and the
// final scrape is recorded as timed out (reprise:scrape_up 0).
func TestReplayFinalScrapeDeadline(t *testing.T) {
	srv := newHangingServer(t, 1<<30)
	out := t.TempDir()
	code, _, stderr := runCLI(t, "", "replay", "--url", srv.URL, "--model", "m", "--isl", "8", "--osl", "2", "--no-streaming",
		"--request-count", "3", "--concurrency", "1", "--quiet", "--out", out, "--metrics-interval", "1h")
	if code != 0 {
		t.Fatalf("exit %d: %s", code, stderr)
	}
	samples, err := arrowio.ReadMetricSamples(out)
	if err != nil {
		t.Fatal(err)
	}
	var up, took []record.MetricSample
	for _, s := range samples {
		switch s.Metric {
		case telemetry.MetricScrapeUp:
			up = append(up, s)
		case telemetry.MetricScrapeDuration:
			took = append(took, s)
		}
	}
	if len(up) < 2 || up[0].Value != 1 || up[len(up)-1].Value != 0 {
		t.Fatalf("scrape_up %v: want the baseline up and the final scrape recorded down", up)
	}
	// The final scrape ended at its own deadline, well before the scrape
	// timeout would have.
	if last := took[len(took)-1].Value; last >= telemetry.DefaultTimeout.Seconds() {
		t.Errorf("final scrape took %.3f s: it waited for the scrape timeout (%v), not the final deadline (%v)",
			last, telemetry.DefaultTimeout, finalScrapeTimeout)
	}
	if want := "no answer within " + finalScrapeTimeout.String(); !strings.Contains(stderr, want) {
		t.Errorf("stderr lacks %q:\n%s", want, stderr)
	}
}

// finalScrapeTimeout is the library's deadline of the final scrape
// (reprise's finalScrapeTimeout).
const finalScrapeTimeout = time.Second

// Environment of TestReplaySecondInterrupt's child process.
const interruptChildEnv = "REPRISE_TEST_INTERRUPT_CHILD" // the replay's arguments, JSON

// TestReplaySecondInterrupt runs a replay in a child process against a
// server that answers 3 requests and holds the others, with a grace period
// of an hour. The first SIGINT stops sending and waits for the held
// requests; the second cancels them at once: the child exits 1 (within a
// generous guard, far below the grace) with the finished records readable,
// every file complete and the cancelled requests recorded as such.
func TestReplaySecondInterrupt(t *testing.T) {
	if spec := os.Getenv(interruptChildEnv); spec != "" {
		var args []string
		if err := json.Unmarshal([]byte(spec), &args); err != nil {
			t.Fatal(err)
		}
		os.Exit(runMain(append([]string{"reprise"}, args...), os.Stdin, os.Stdout, os.Stderr))
	}
	const ok, concurrency = 3, 4
	srv := newHangingServer(t, ok)
	out := filepath.Join(t.TempDir(), "run")
	args := []string{"replay", "--url", srv.URL, "--model", "m", "--isl", "8", "--osl", "2", "--no-streaming",
		"--concurrency", "4", "--request-count", "100", "--grace", "1h", "--out", out, "--metrics-interval", "1h"}
	spec, _ := json.Marshal(args)
	cmd := exec.Command(os.Args[0], "-test.run=^TestReplaySecondInterrupt$")
	cmd.Env = append(os.Environ(), interruptChildEnv+"="+string(spec))
	stderr, err := cmd.StderrPipe()
	if err != nil {
		t.Fatal(err)
	}
	if err := cmd.Start(); err != nil {
		t.Fatal(err)
	}
	exited := make(chan error, 1)
	lines := make(chan string, 1024)
	go func() {
		sc := bufio.NewScanner(stderr)
		for sc.Scan() {
			lines <- sc.Text()
		}
		close(lines)
		exited <- cmd.Wait()
	}()
	var log strings.Builder
	guard := time.After(2 * time.Minute) // not a speed assertion: the grace is an hour
	waitFor := func(what string, cond func(line string) bool) {
		t.Helper()
		for {
			select {
			case line, open := <-lines:
				if !open {
					t.Fatalf("child ended before %s:\n%s", what, log.String())
				}
				log.WriteString(line + "\n")
				if cond(line) {
					return
				}
			case <-time.After(50 * time.Millisecond):
				if cond("") {
					return
				}
			case <-guard:
				cmd.Process.Kill()
				t.Fatalf("no %s within the guard:\n%s", what, log.String())
			}
		}
	}
	waitFor("held requests", func(string) bool { return srv.answered.Load() == ok && srv.held.Load() == concurrency })
	cmd.Process.Signal(syscall.SIGINT)
	waitFor("first interrupt", func(l string) bool { return strings.Contains(l, "interrupted: no new requests") })
	cmd.Process.Signal(syscall.SIGINT)
	var werr error
	for done := false; !done; {
		select {
		case line, open := <-lines:
			if open {
				log.WriteString(line + "\n")
			}
		case werr = <-exited:
			done = true
		case <-guard:
			cmd.Process.Kill()
			t.Fatalf("the second SIGINT did not stop the run:\n%s", log.String())
		}
	}
	if ee, isExit := werr.(*exec.ExitError); !isExit || ee.ExitCode() != 1 {
		t.Fatalf("child: %v, want exit 1:\n%s", werr, log.String())
	}
	if !strings.Contains(log.String(), "interrupted twice") {
		t.Errorf("stderr does not say the second interrupt cancelled the run:\n%s", log.String())
	}
	reqs, err := arrowio.ReadRequests(out)
	if err != nil {
		t.Fatalf("records not readable: %v\n%s", err, log.String())
	}
	var okN, cancelled int
	for _, r := range reqs {
		switch r.ErrorKind {
		case record.ErrNone:
			okN++
		case record.ErrCancelled:
			cancelled++
		}
	}
	if okN != ok || cancelled != concurrency || len(reqs) != ok+concurrency {
		t.Errorf("%d records: %d ok, %d cancelled; want %d ok and %d cancelled", len(reqs), okN, cancelled, ok, concurrency)
		t.Log(log.String())
	}
	err = filepath.Walk(out, func(p string, fi os.FileInfo, err error) error {
		if err == nil && strings.HasSuffix(p, ".tmp") {
			t.Errorf("%s was left incomplete", p)
		}
		return err
	})
	if err != nil {
		t.Fatal(err)
	}
	if _, err := os.Stat(filepath.Join(out, "summary.json")); err != nil {
		t.Error(err)
	}
}

// baselineScrapeTimeout is the library's bound on the scrape before the
// first request (reprise's maxBaselineWait).
const baselineScrapeTimeout = 500 * time.Millisecond

// TestReplayBaselineScrapeBound: a /metrics that never answers holds the
// start of a run for the baseline's short bound, not 2 s (issue 37, item
// 21): the baseline is recorded as a failed scrape that got no answer
// within the bound, and the requests are sent and succeed.
func TestReplayBaselineScrapeBound(t *testing.T) {
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		switch {
		case r.URL.Path == "/metrics":
			<-r.Context().Done() // never answers
		case r.Method == http.MethodGet:
			http.NotFound(w, r)
		default:
			io.Copy(io.Discard, r.Body)
			w.Header().Set("Content-Type", "application/json")
			io.WriteString(w, `{"id":"x","object":"chat.completion","model":"m","choices":[{"index":0,`+
				`"message":{"role":"assistant","content":"ok"},"finish_reason":"length"}],`+
				`"usage":{"prompt_tokens":1,"completion_tokens":1,"total_tokens":2}}`)
		}
	}))
	t.Cleanup(srv.Close)
	out := t.TempDir()
	code, _, stderr := runCLI(t, "", "replay", "--url", srv.URL, "--model", "m", "--isl", "8", "--osl", "2", "--no-streaming",
		"--request-count", "2", "--concurrency", "1", "--quiet", "--out", out, "--metrics-interval", "1h")
	if code != 0 {
		t.Fatalf("exit %d: %s", code, stderr)
	}
	// The first failed scrape the warning quotes is the baseline's.
	if want := "first=\"GET " + srv.URL + "/metrics: no answer within " + baselineScrapeTimeout.String(); !strings.Contains(stderr, want) {
		t.Errorf("stderr lacks %q:\n%s", want, stderr)
	}
	samples, err := arrowio.ReadMetricSamples(out)
	if err != nil {
		t.Fatal(err)
	}
	var up []record.MetricSample
	for _, s := range samples {
		if s.Metric == telemetry.MetricScrapeUp {
			up = append(up, s)
		}
	}
	if len(up) != 2 || up[0].Value != 0 {
		t.Errorf("scrape_up %v: want the baseline and the final scrape, the baseline down", up)
	}
}
