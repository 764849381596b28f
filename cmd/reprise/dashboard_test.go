package main

import (
	"encoding/json"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"regexp"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/google/go-cmp/cmp"

	"github.com/reprise-bench/reprise/internal/mockserver"
)

// The dashboard tests run the CLI (this test binary, as TestCLIChild does)
// in a tmux pane of a fixed size, as a person at a terminal would, and read
// what is on the screen with capture-pane. tmux is one of the tools make
// test installs (scripts/need-tools.sh).

// tmuxPane is one tmux server with one session of one pane.
type tmuxPane struct {
	t    *testing.T
	sock string
}

// startTmux runs the CLI with args in a new width×height tmux pane, with
// env added to its environment. When the CLI exits the pane prints
// "EXIT=<status>" and stays.
func startTmux(t *testing.T, width, height int, env []string, args ...string) *tmuxPane {
	t.Helper()
	if _, err := exec.LookPath("tmux"); err != nil {
		t.Fatalf("tmux not found (%v): scripts/need-tools.sh installs it (Debian: apt-get install tmux)", err)
	}
	dir := t.TempDir()
	p := &tmuxPane{t: t, sock: filepath.Join(dir, "tmux.sock")}
	conf := filepath.Join(dir, "tmux.conf")
	if err := os.WriteFile(conf, []byte("set -g history-limit 100000\nset -g status off\n"), 0o644); err != nil {
		t.Fatal(err)
	}
	var script strings.Builder
	script.WriteString("cd " + strconv.Quote(dir) + "\n")
	for _, kv := range append([]string{cliChildEnv + "=" + cliChildArgv, "HOME=" + dir, "REPRISE_CALIBRATION=off"}, env...) {
		k, v, _ := strings.Cut(kv, "=")
		fmt.Fprintf(&script, "export %s=%s\n", k, strconv.Quote(v))
	}
	script.WriteString(strconv.Quote(os.Args[0]) + " -test.run='^TestCLIChild$' -test.count=1 --")
	for _, a := range args {
		script.WriteString(" " + strconv.Quote(a))
	}
	script.WriteString("\necho EXIT=$?\nexec sleep 600\n")
	sh := filepath.Join(dir, "run.sh")
	if err := os.WriteFile(sh, []byte(script.String()), 0o755); err != nil {
		t.Fatal(err)
	}
	p.tmux("-f", conf, "new-session", "-d", "-s", "t", "-x", strconv.Itoa(width), "-y", strconv.Itoa(height), "sh "+sh)
	t.Cleanup(func() { exec.Command("tmux", "-S", p.sock, "kill-server").Run() })
	return p
}

func (p *tmuxPane) tmux(args ...string) string {
	p.t.Helper()
	out, err := exec.Command("tmux", append([]string{"-S", p.sock}, args...)...).CombinedOutput()
	if err != nil {
		p.t.Fatalf("tmux %s: %v\n%s", strings.Join(args, " "), err, out)
	}
	return string(out)
}

// screen is what the pane shows now; all adds the history above it.
func (p *tmuxPane) screen(all bool) string {
	args := []string{"capture-pane", "-p", "-t", "t"}
	if all {
		args = append(args, "-J", "-S", "-")
	}
	return p.tmux(args...)
}

// waitFor polls the screen (all: with the history) until ok holds, and
// returns that screen; it fails after a minute, printing the screen.
func (p *tmuxPane) waitFor(what string, all bool, ok func(screen string) bool) string {
	p.t.Helper()
	deadline := time.Now().Add(2 * time.Minute)
	for {
		s := p.screen(all)
		if ok(s) {
			return s
		}
		if time.Now().After(deadline) {
			p.t.Fatalf("the screen never showed %s; it shows:\n%s", what, s)
		}
		time.Sleep(50 * time.Millisecond)
	}
}

var exitLine = regexp.MustCompile(`(?m)^EXIT=(\d+)$`)

// wait waits for the CLI to exit and returns its status and the whole
// screen's history.
func (p *tmuxPane) wait() (int, string) {
	p.t.Helper()
	s := p.waitFor("the exit status", true, func(s string) bool { return exitLine.MatchString(s) })
	n, _ := strconv.Atoi(exitLine.FindStringSubmatch(s)[1])
	return n, s
}

// frame is the dashboard's numbers as read off the screen.
type frame struct {
	sent, done, inflight, failed, planned int
	kinds                                 map[string]int
	rows                                  map[string][]string // metric → its six columns
	lines                                 []string
}

var (
	countsLine = regexp.MustCompile(`^requests  sent (\d+)  done (\d+)  in flight (\d+)  failed (\d+)(?:  of (\d+))?$`)
	kindPart   = regexp.MustCompile(`([a-z_]+) (\d+)`)
)

// lastFrame reads the last dashboard frame whose header says state out of
// a screen's history.
func lastFrame(t *testing.T, screen, state string) frame {
	t.Helper()
	lines := strings.Split(screen, "\n")
	start := -1
	for i, l := range lines {
		if strings.HasPrefix(l, "reprise · ") && strings.HasSuffix(strings.TrimSpace(l), "["+state+"]") {
			start = i
		}
	}
	if start < 0 {
		t.Fatalf("no [%s] frame on the screen:\n%s", state, screen)
	}
	f := frame{kinds: map[string]int{}, rows: map[string][]string{}}
	for _, l := range lines[start:] {
		f.lines = append(f.lines, l)
		if m := countsLine.FindStringSubmatch(l); m != nil {
			f.sent, _ = strconv.Atoi(m[1])
			f.done, _ = strconv.Atoi(m[2])
			f.inflight, _ = strconv.Atoi(m[3])
			f.failed, _ = strconv.Atoi(m[4])
			f.planned, _ = strconv.Atoi(m[5])
		}
		if rest, ok := strings.CutPrefix(l, "failed by "); ok && rest != "none" {
			for _, m := range kindPart.FindAllStringSubmatch(rest, -1) {
				f.kinds[m[1]], _ = strconv.Atoi(m[2])
			}
		}
		for _, name := range []string{"TTFT", "TTFO", "ITL", "latency", "lateness", "read lag"} {
			if rest, ok := strings.CutPrefix(l, fmt.Sprintf("%-10s", name)); ok {
				f.rows[name] = strings.Fields(rest)
			}
		}
		if strings.HasPrefix(l, "run over") || strings.HasPrefix(l, "q ") {
			break
		}
	}
	return f
}

// displayed parses a latency as the dashboard writes it ("850µs",
// "4.25ms", "123.4ms", "1.23s") into ms, with half a unit of its last
// digit: the rounding of the display.
func displayed(t *testing.T, s string) (ms, rounding float64) {
	t.Helper()
	units := []struct {
		suffix string
		ms     float64
	}{{"µs", 1e-3}, {"ms", 1}, {"ns", 1e-6}, {"s", 1e3}}
	for _, u := range units {
		num, ok := strings.CutSuffix(s, u.suffix)
		if !ok {
			continue
		}
		v, err := strconv.ParseFloat(num, 64)
		if err != nil {
			t.Fatalf("latency %q: %v", s, err)
		}
		decimals := 0
		if _, frac, ok := strings.Cut(num, "."); ok {
			decimals = len(frac)
		}
		return v * u.ms, 0.5 * u.ms * mathPow10(-decimals)
	}
	t.Fatalf("latency %q: no unit", s)
	return 0, 0
}

func mathPow10(n int) float64 {
	v := 1.0
	for ; n < 0; n++ {
		v /= 10
	}
	return v
}

// summaryOf reads a run directory's summary.json.
func summaryOf(t *testing.T, dir string) map[string]json.RawMessage {
	t.Helper()
	b, err := os.ReadFile(filepath.Join(dir, "summary.json"))
	if err != nil {
		t.Fatal(err)
	}
	var m map[string]json.RawMessage
	if err := json.Unmarshal(b, &m); err != nil {
		t.Fatal(err)
	}
	return m
}

func summaryStat(t *testing.T, m map[string]json.RawMessage, tag, field string) float64 {
	t.Helper()
	var st map[string]any
	if err := json.Unmarshal(m[tag], &st); err != nil {
		t.Fatalf("summary.json %s: %v", tag, err)
	}
	v, ok := st[field].(float64)
	if !ok {
		t.Fatalf("summary.json %s has no %s: %s", tag, field, m[tag])
	}
	return v
}

func summaryKinds(t *testing.T, m map[string]json.RawMessage) map[string]int {
	t.Helper()
	kinds := map[string]int{}
	if err := json.Unmarshal(m["errors_by_kind"], &kinds); err != nil {
		t.Fatal(err)
	}
	return kinds
}

// TestDashboardTmux replays against the mock (a tenth of the requests
// answered 429) with --ui dashboard in an 80×24 tmux pane: while it runs
// the screen is the dashboard, and it follows a resize to 100×30; at the
// end the last frame stays on the screen above the summary, and its
// numbers are summary.json's: the request counts and errors by kind
// exactly, the latency quantiles within their display rounding.
func TestDashboardTmux(t *testing.T) {
	if testing.Short() {
		t.Skip("runs the CLI in tmux")
	}
	fault, err := mockserver.ParseFaultRate("429@0.1")
	if err != nil {
		t.Fatal(err)
	}
	srv := startMockServer(t, func(c *mockserver.Config) {
		c.TTFT, c.ITL, c.Faults = 3*time.Millisecond, 500*time.Microsecond, []mockserver.FaultRate{fault}
	})
	out := filepath.Join(t.TempDir(), "run")
	p := startTmux(t, 80, 24, nil, "replay", "--url", srv.URL(), "--model", mockserver.DefaultModel, "--isl", "32", "--osl", "8",
		"--streaming", "--request-rate", "40", "--request-count", "160", "--max-error-rate", "1", "--ui", "dashboard", "--out", out)

	running := p.waitFor("the dashboard running", false, func(s string) bool {
		return strings.Contains(s, "[running]") && countsLine.MatchString(lineWith(s, "requests  sent"))
	})
	if lines := strings.Split(strings.TrimRight(running, "\n"), "\n"); len(lines) > 24 {
		t.Errorf("the 80×24 pane shows %d lines", len(lines))
	}
	for _, want := range []string{"TTFT", "TTFO", "ITL", "latency", "lateness", "read lag", "req/s", "server    ", "quality   ", "q stop sending"} {
		if !strings.Contains(running, want) {
			t.Errorf("the running dashboard lacks %q:\n%s", want, running)
		}
	}
	p.tmux("resize-window", "-t", "t", "-x", "100", "-y", "30")
	p.waitFor("the dashboard at 100 columns", false, func(s string) bool {
		h := lineWith(s, "reprise · ")
		return len([]rune(h)) == 100 && strings.HasSuffix(h, "]")
	})

	code, screen := p.wait()
	if code != 0 {
		t.Fatalf("exit %d:\n%s", code, screen)
	}
	f := lastFrame(t, screen, "finished")
	t.Logf("the final frame:\n%s", strings.Join(f.lines, "\n"))
	sum := summaryOf(t, out)
	ok, errs := int(summaryStat(t, sum, "request_count", "avg")), int(summaryStat(t, sum, "error_request_count", "avg"))
	if f.sent != 160 || f.done != 160 || f.planned != 160 || f.inflight != 0 {
		t.Errorf("final frame: sent %d, done %d of %d, %d in flight; want 160, 160 of 160, 0:\n%s", f.sent, f.done, f.planned, f.inflight, strings.Join(f.lines, "\n"))
	}
	if f.failed != errs || f.done-f.failed != ok || errs == 0 {
		t.Errorf("final frame: %d done, %d failed; summary.json: %d ok, %d errors (the mock answers a tenth 429)", f.done, f.failed, ok, errs)
	}
	if d := cmp.Diff(summaryKinds(t, sum), f.kinds); d != "" {
		t.Errorf("errors by kind, summary.json (-) vs the screen (+):\n%s", d)
	}
	for _, c := range []struct {
		row, tag string
		col      int
		field    string
	}{
		{"TTFT", "time_to_first_token", 3, "p50"}, {"TTFT", "time_to_first_token", 5, "p99"},
		{"ITL", "inter_token_latency", 3, "p50"}, {"latency", "request_latency", 4, "p90"},
		{"lateness", "schedule_lateness", 3, "p50"},
	} {
		cols := f.rows[c.row]
		if len(cols) != 6 {
			t.Fatalf("%s row %q: want 6 columns", c.row, cols)
		}
		got, r := displayed(t, cols[c.col])
		want := summaryStat(t, sum, c.tag, c.field)
		if d := got - want; d > r*1.0001 || d < -r*1.0001 {
			t.Errorf("%s %s on screen %s, summary.json %.6f ms: off by more than the display's rounding %g ms", c.row, c.field, cols[c.col], want, r)
		}
	}
	if !strings.Contains(screen[strings.Index(screen, "[finished]"):], "Time to first token") {
		t.Errorf("the summary table does not follow the final frame:\n%s", screen)
	}
}

// lineWith is the first line of screen containing s ("" for none).
func lineWith(screen, s string) string {
	for l := range strings.SplitSeq(screen, "\n") {
		if strings.Contains(l, s) {
			return l
		}
	}
	return ""
}

// TestDashboardStopKeys presses q in the dashboard of a run whose
// requests take a minute each (--grace 10m): the first press stops
// sending and the requests in flight are waited for, the second cancels
// them, as the first and second Ctrl-C do. The run then ends interrupted
// (exit 1) with every request it sent recorded as cancelled.
func TestDashboardStopKeys(t *testing.T) {
	if testing.Short() {
		t.Skip("runs the CLI in tmux")
	}
	srv := startMockServer(t, func(c *mockserver.Config) { c.TTFT = time.Minute })
	out := filepath.Join(t.TempDir(), "run")
	p := startTmux(t, 80, 24, nil, "replay", "--url", srv.URL(), "--model", mockserver.DefaultModel, "--isl", "32", "--osl", "4",
		"--streaming", "--request-rate", "20", "--request-count", "100000", "--grace", "10m", "--ui", "dashboard", "--out", out)
	p.waitFor("requests in flight", false, func(s string) bool {
		m := countsLine.FindStringSubmatch(lineWith(s, "requests  sent"))
		return m != nil && strings.Contains(s, "[running]") && atoi(m[3]) >= 3
	})
	p.tmux("send-keys", "-t", "t", "q")
	stopping := p.waitFor("the run stopping", false, func(s string) bool { return strings.Contains(s, "[stopping: no new requests]") })
	if !strings.Contains(stopping, "q again: cancel the") {
		t.Errorf("the stopping dashboard does not say what q does now:\n%s", stopping)
	}
	p.tmux("send-keys", "-t", "t", "q")
	code, screen := p.wait()
	if code != 1 || !strings.Contains(screen, "interrupted twice") {
		t.Fatalf("exit %d, want 1 (interrupted twice):\n%s", code, screen)
	}
	f := lastFrame(t, screen, "interrupted")
	sum := summaryOf(t, out)
	kinds := summaryKinds(t, sum)
	if f.sent == 0 || f.sent >= 100000 || f.done != f.sent || f.failed != f.sent || kinds["cancelled"] != f.sent {
		t.Errorf("final frame: sent %d, done %d, failed %d; summary.json cancelled %d: want every sent request cancelled",
			f.sent, f.done, f.failed, kinds["cancelled"])
	}
}

// TestDashboardStopKeyOnce presses q once in a run of quick requests: it
// stops sending, the requests in flight finish (none is cancelled), and
// the run ends interrupted with what it sent measured.
func TestDashboardStopKeyOnce(t *testing.T) {
	if testing.Short() {
		t.Skip("runs the CLI in tmux")
	}
	srv := startMockServer(t, func(c *mockserver.Config) { c.TTFT = 5 * time.Millisecond })
	out := filepath.Join(t.TempDir(), "run")
	p := startTmux(t, 80, 24, nil, "replay", "--url", srv.URL(), "--model", mockserver.DefaultModel, "--isl", "32", "--osl", "4",
		"--streaming", "--request-rate", "50", "--request-count", "100000", "--ui", "dashboard", "--out", out)
	p.waitFor("requests done", false, func(s string) bool {
		m := countsLine.FindStringSubmatch(lineWith(s, "requests  sent"))
		return m != nil && strings.Contains(s, "[running]") && atoi(m[2]) >= 10
	})
	p.tmux("send-keys", "-t", "t", "q")
	code, screen := p.wait()
	if code != 1 || !strings.Contains(screen, "interrupted; partial results written") {
		t.Fatalf("exit %d, want 1 (interrupted):\n%s", code, screen)
	}
	f := lastFrame(t, screen, "interrupted")
	sum := summaryOf(t, out)
	if ok := int(summaryStat(t, sum, "request_count", "avg")); f.sent >= 100000 || f.done != f.sent || f.failed != 0 || ok != f.done {
		t.Errorf("final frame: sent %d, done %d, failed %d; summary.json %d ok: want every sent request done and ok", f.sent, f.done, f.failed, ok)
	}
	// The log line of the stop, held while the dashboard was up, follows
	// its last frame.
	if after := screen[strings.LastIndex(screen, "[interrupted]"):]; !strings.Contains(after, "interrupted: no new requests") {
		t.Errorf("the stop's log line is not after the last frame:\n%s", screen)
	}
}

// TestDashboardDumbTerminal: with TERM=dumb --ui dashboard is the
// progress line.
func TestDashboardDumbTerminal(t *testing.T) {
	if testing.Short() {
		t.Skip("runs the CLI in tmux")
	}
	srv := startMockServer(t, nil)
	out := filepath.Join(t.TempDir(), "run")
	p := startTmux(t, 80, 24, []string{"TERM=dumb"}, "replay", "--url", srv.URL(), "--model", mockserver.DefaultModel, "--isl", "32", "--osl", "4",
		"--request-rate", "50", "--request-count", "20", "--ui", "dashboard", "--out", out)
	code, screen := p.wait()
	if code != 0 || strings.Contains(screen, "[finished]") || !strings.Contains(screen, "sent 20  done 20  in flight 0  errors 0") {
		t.Errorf("exit %d; want 0 and the progress line, no dashboard:\n%s", code, screen)
	}
}

func atoi(s string) int {
	n, _ := strconv.Atoi(s)
	return n
}
