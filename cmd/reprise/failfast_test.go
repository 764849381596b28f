package main

import (
	"encoding/json"
	"errors"
	"net"
	"os"
	"path/filepath"
	"slices"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/reprise-bench/reprise"
	"github.com/reprise-bench/reprise/internal/exitcode"
	"github.com/reprise-bench/reprise/internal/mockserver"
	"github.com/reprise-bench/reprise/internal/sweep"
	"github.com/reprise-bench/reprise/replay"
)

// bundledSample is the bundled Mooncake sample: 300 rows over 102 s.
const bundledSample = "../../traces/mooncake-sample.jsonl"

// closedURL is the URL of a loopback port nothing listens on: one that
// was just listened on and closed.
func closedURL(t *testing.T) string {
	t.Helper()
	l, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	addr := l.Addr().String()
	l.Close()
	return "http://" + addr
}

// readSweep reads sweep.json of a sweep directory.
func readSweep(t *testing.T, dir string) sweep.Manifest {
	t.Helper()
	b, err := os.ReadFile(filepath.Join(dir, sweep.ManifestFile))
	if err != nil {
		t.Fatal(err)
	}
	var m sweep.Manifest
	if err := json.Unmarshal(b, &m); err != nil {
		t.Fatal(err)
	}
	return m
}

// TestDeadServerPreflight: replay, profile and sweep against a port with
// nothing listening exit 1 with one line naming the URL and the refused
// connection, before sending anything: no run directory is created, and
// the sweep's first point failed with nothing measured and the others
// never ran.
func TestDeadServerPreflight(t *testing.T) {
	u := closedURL(t)
	tests := []struct {
		name string
		args func(out string) []string
		// sent reports what was sent (a run directory, a sweep point's
		// records); "" when nothing was.
		sent func(t *testing.T, out string) string
	}{
		{"replay the bundled sample",
			func(out string) []string {
				return []string{"replay", bundledSample, "--url", u, "-m", "M", "--out", out}
			},
			func(t *testing.T, out string) string {
				if _, err := os.Stat(out); !errors.Is(err, os.ErrNotExist) {
					return "the run directory exists"
				}
				return ""
			}},
		{"profile",
			func(out string) []string {
				return []string{"profile", "--url", u, "-m", "M", "--synthetic-input-tokens-mean", "16", "--output-tokens-mean", "4",
					"--request-count", "50", "--concurrency", "2", "--artifact-dir", out}
			},
			func(t *testing.T, out string) string {
				if ents, _ := os.ReadDir(out); len(ents) > 0 {
					return "the artifact directory holds files"
				}
				return ""
			}},
		{"sweep",
			func(out string) []string {
				return []string{"sweep", "--url", u, "-m", "M", "--isl", "16", "--osl", "4", "--request-count", "50",
					"--request-rate", "1:8:x2", "--out", out}
			},
			func(t *testing.T, out string) string {
				m := readSweep(t, out)
				if len(m.Points) != 4 || m.Points[0].Status != sweep.StatusFailed || m.Points[0].Row != nil {
					return "the first point is not failed without a row"
				}
				for _, p := range m.Points[1:] {
					if p.Status != sweep.StatusPending {
						return "point " + p.Name + " is " + p.Status
					}
				}
				if ents, _ := os.ReadDir(filepath.Join(out, sweep.PointsDir, m.Points[0].Name)); len(ents) > 0 {
					return "the first point's directory holds files"
				}
				return ""
			}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			out := filepath.Join(t.TempDir(), "out")
			code, _, stderr := runCLI(t, "", tt.args(out)...)
			if code != exitcode.RunError {
				t.Errorf("exit %d, want 1: %s", code, stderr)
			}
			want := "reprise: server check: " + u + " does not answer: dial tcp " + strings.TrimPrefix(u, "http://") +
				": connect: connection refused; nothing was sent\n"
			if stderr != want {
				t.Errorf("stderr:\n%s\nwant the one line:\n%s", stderr, want)
			}
			if what := tt.sent(t, out); what != "" {
				t.Errorf("something was sent: %s", what)
			}
		})
	}
}

// TestConnectFailuresStopRun: without the preflight, a replay of the
// bundled sample (300 requests over 102 s) against nothing stops once its
// first --abort-after-connect-failures requests failed to connect: far
// fewer than 300 requests are recorded, the run directory is a valid one
// (summarize reads it), summary.json's run_info.stopped says why, and the
// exit is 1 with one line saying so.
func TestConnectFailuresStopRun(t *testing.T) {
	u := closedURL(t)
	for _, tt := range []struct {
		flags []string
		n     int
	}{
		{nil, reprise.DefaultAbortAfterConnectFailures},
		{[]string{"--abort-after-connect-failures", "3"}, 3},
	} {
		t.Run(strings.Join(append([]string{"n"}, tt.flags...), " "), func(t *testing.T) {
			out := filepath.Join(t.TempDir(), "run")
			args := append([]string{"replay", bundledSample, "--url", u, "-m", "M", "--no-preflight", "--no-server-metrics",
				"--format", "jsonl", "--quiet", "--out", out}, tt.flags...)
			code, _, stderr := runCLI(t, "", args...)
			if code != exitcode.RunError {
				t.Errorf("exit %d, want 1: %s", code, stderr)
			}
			stopped := "the first " + strconv.Itoa(tt.n) + " requests all failed to connect to " + u + ": dial tcp " +
				strings.TrimPrefix(u, "http://") + ": connect: connection refused"
			if !strings.Contains(stderr, "reprise: replay: stopped: "+stopped+" (partial results in "+out+")\n") {
				t.Errorf("stderr does not say why the run stopped:\n%s", stderr)
			}
			recs := readRecords(t, out)
			// The requests sent: the n that stopped it, and the few the
			// dispatcher had already handed to senders (the sample's
			// first rows are due together).
			if len(recs) < tt.n || len(recs) > 50 {
				t.Errorf("%d requests recorded, want %d to 50 of the trace's 300", len(recs), tt.n)
			}
			for _, r := range recs {
				if r["error_kind"] != "connect" {
					t.Errorf("a request ended %v, want connect: %v", r["error_kind"], r)
					break
				}
			}
			if ri := readSummary(t, out).Run; ri.Stopped != stopped || ri.Cancelled {
				t.Errorf("run_info: stopped %q, was_cancelled %v; want %q, false", ri.Stopped, ri.Cancelled, stopped)
			}
			code, serr, _ := runCLI(t, "", "summarize", out)
			if code != 0 || !strings.Contains(serr, "Stopped early") {
				t.Errorf("summarize: exit %d, the table does not say it stopped:\n%s", code, serr)
			}
		})
	}
}

// TestSweepStopsAtDeadServer: a sweep whose server is gone (no
// preflight) stops at its first point, whose run stopped after the
// connect failures; no other point runs, and the exit is 1.
func TestSweepStopsAtDeadServer(t *testing.T) {
	u := closedURL(t)
	out := filepath.Join(t.TempDir(), "sw")
	code, _, stderr := runCLI(t, "", "sweep", "--url", u, "-m", "M", "--isl", "16", "--osl", "4", "--request-count", "100",
		"--request-rate", "1:8:x2", "--stop-error-rate", "1", "--no-preflight", "--no-server-metrics", "--format", "jsonl",
		"--quiet", "--out", out)
	if code != exitcode.RunError || !strings.Contains(stderr, "requests all failed to connect to "+u) {
		t.Errorf("exit %d, want 1 saying the requests failed to connect: %s", code, stderr)
	}
	m := readSweep(t, out)
	if len(m.Points) != 4 || m.Points[0].Status != sweep.StatusFailed || !strings.Contains(m.Points[0].Reason, "failed to connect") {
		t.Fatalf("first point: %+v, want failed: the requests failed to connect", m.Points)
	}
	for _, p := range m.Points[1:] {
		if p.Status != sweep.StatusPending {
			t.Errorf("point %s is %s, want pending (never run)", p.Name, p.Status)
		}
	}
	if n := len(readRecords(t, filepath.Join(out, m.Points[0].Dir))); n < reprise.DefaultAbortAfterConnectFailures || n >= 100 {
		t.Errorf("the first point recorded %d requests, want from %d to fewer than the 100 planned", n, reprise.DefaultAbortAfterConnectFailures)
	}
}

// TestVerdictPrecedence: the exit code is the first verdict's, in the
// library's order (nothing succeeded before lateness before the error
// rate and goodput), and the message lists every failed check.
func TestVerdictPrecedence(t *testing.T) {
	late := replay.Stats{LatenessBudgetExceeded: true, MaxLateness: time.Millisecond,
		Lateness: replay.Percentiles{P99: 3 * time.Millisecond}, Late: 9, Dispatched: 20}
	allFailed := reprise.Verdict{Kind: reprise.AllFailed, Failed: 20, Requests: 20, Example: "http_status: HTTP 404"}
	lateness := reprise.Verdict{Kind: reprise.LatenessOverBudget, Value: 0.003, Limit: 0.001, Failed: 9, Requests: 20}
	errRate := reprise.Verdict{Kind: reprise.ErrorRateExceeded, Value: 1, Limit: 0.05, Failed: 20, Requests: 20}
	slo := reprise.Verdict{Kind: reprise.SLOFailed, Value: 0.13, Limit: 0.95}
	tests := []struct {
		name     string
		verdicts []reprise.Verdict
		code     int
		lines    []string
	}{
		{"nothing succeeded, late, errors, goodput", []reprise.Verdict{allFailed, lateness, errRate, slo}, exitcode.RunError, []string{
			"no request succeeded (20 failed; e.g. http_status: HTTP 404)",
			"also failed: schedule lateness over budget: p99 lateness 3ms > --max-lateness 1ms (9 of 20 requests later than the threshold)",
			"also failed: error rate 1.0000 > --max-error-rate 0.05 (20 of 20 requests failed)",
			"also failed: goodput: 0.1300 of requests met every SLO < --min-good-fraction 0.95"}},
		{"late and goodput", []reprise.Verdict{lateness, slo}, exitcode.Lateness, []string{
			"schedule lateness over budget: p99 lateness 3ms > --max-lateness 1ms (9 of 20 requests later than the threshold)",
			"also failed: goodput: 0.1300 of requests met every SLO < --min-good-fraction 0.95"}},
		{"goodput alone", []reprise.Verdict{slo}, exitcode.SLOBreach, []string{
			"goodput: 0.1300 of requests met every SLO < --min-good-fraction 0.95"}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			err := verdictError(&reprise.Result{Dir: "d", Stats: late, Verdicts: tt.verdicts})
			if got := exitcode.Code(err); got != tt.code {
				t.Errorf("exit %d, want %d", got, tt.code)
			}
			if got, want := err.Error(), strings.Join(tt.lines, "\n"); got != want {
				t.Errorf("message:\n%s\nwant:\n%s", got, want)
			}
		})
	}
}

// TestAllFailedListsEveryCheck: a run in which every request failed, with
// goodput SLOs, exits 1 for nothing succeeded and names the goodput and
// error-rate failures too.
func TestAllFailedListsEveryCheck(t *testing.T) {
	srv := startMockServer(t, nil)
	code, _, stderr := runCLI(t, "", "replay", "--url", srv.URL(), "--model", "not-served", "--isl", "16", "--osl", "4",
		"--concurrency", "2", "--request-count", "8", "--goodput", "ttft:1000", "--quiet", "--format", "jsonl",
		"--no-server-metrics", "--out", t.TempDir())
	if code != exitcode.RunError {
		t.Errorf("exit %d, want 1: %s", code, stderr)
	}
	for _, want := range []string{"reprise: no request succeeded (8 failed; e.g. http_status",
		"\nalso failed: error rate 1.0000 > --max-error-rate 0.05 (8 of 8 requests failed)\n",
		"\nalso failed: goodput: 0.0000 of requests met every SLO < --min-good-fraction 0.95\n"} {
		if !strings.Contains(stderr, want) {
			t.Errorf("stderr lacks %q:\n%s", want, stderr)
		}
	}
}

// TestSweepFindFloor: a search whose SLO no load meets halves the load
// down to --find-floor and no further, says so, and exits 3.
func TestSweepFindFloor(t *testing.T) {
	srv := startMockServer(t, func(c *mockserver.Config) { c.TTFT = 20 * time.Millisecond })
	out := filepath.Join(t.TempDir(), "find")
	// TTFT is at least 20 ms: an SLO of 1 ms fails at every load.
	code, _, stderr := runCLI(t, "", "sweep", "--url", srv.URL(), "--model", mockserver.DefaultModel, "--isl", "16", "--osl", "2",
		"--request-count", "2", "--find", "max-concurrency", "--find-start", "16", "--find-floor", "4", "--goodput", "ttft:1",
		"--no-server-metrics", "--format", "jsonl", "--out", out)
	if code != exitcode.SLOBreach {
		t.Errorf("exit %d, want 3: %s", code, stderr)
	}
	for _, want := range []string{"at most 24 probes", `find: no concurrency met "ttft:1" with ≥ 0.95 good down to 4 (the floor)`} {
		if !strings.Contains(stderr, want) {
			t.Errorf("stderr lacks %q:\n%s", want, stderr)
		}
	}
	var probed []float64
	for _, p := range readSweep(t, out).Found.Probes {
		if p.Valid { // a try the client could not keep on schedule is run again
			probed = append(probed, p.Value)
		}
	}
	if want := []float64{16, 8, 4}; !slices.Equal(probed, want) {
		t.Errorf("probed %v, want %v", probed, want)
	}
}
