package main

import (
	"bytes"
	"fmt"
	"math"
	"os"
	"path/filepath"
	"regexp"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/reprise-bench/reprise/arrowio"
	"github.com/reprise-bench/reprise/engine/summary"
	"github.com/reprise-bench/reprise/internal/mockserver"
	"github.com/reprise-bench/reprise/internal/testfiles"
)

// shardLatenessBudget bounds the p99 schedule lateness of
// TestShardedReplayMooncake's runs, single-process and merged alike. It is
// generous because five processes share a small test machine that other
// work loads too (p99 reached 1.8 s at a load average of 27 on 2 cores);
// it catches a shard whose schedule is anchored anywhere but at the
// common instant, which makes every request late by the difference.
const shardLatenessBudget = 5 * time.Second

// TestShardedReplayMooncake: the first 30 s of the Mooncake conversation
// trace (92 rows, at 10×) replayed by 4 shard processes (this test binary
// re-executed) against one mock server from one --start-at, then merged,
// sends every trace row exactly once, and the merged summary's request
// counts, token totals and cache fidelity equal a single-process run's
// against a fresh server; both keep the same lateness budget.
func TestShardedReplayMooncake(t *testing.T) {
	lines := bytes.SplitAfter(testfiles.TraceBytes(t, "mooncake/conversation_trace.jsonl"), []byte("\n"))
	window := 30 * time.Second
	if replayRowsUnderRace > 0 {
		window = 10 * time.Second // the race detector slows prompt synthesis tenfold
	}
	var head []byte
	ts := regexp.MustCompile(`"timestamp": (\d+)`)
	for _, l := range lines {
		m := ts.FindSubmatch(l)
		if m == nil {
			break
		}
		if ms, _ := strconv.Atoi(string(m[1])); time.Duration(ms)*time.Millisecond > window {
			break
		}
		head = append(head, l...)
	}
	// Short answers keep the test's CPU on the schedule, not on tokens.
	head = regexp.MustCompile(`"output_length": \d+`).ReplaceAll(head, []byte(`"output_length": 16`))
	root := t.TempDir()
	tracePath := filepath.Join(root, "mooncake-head.jsonl")
	if err := os.WriteFile(tracePath, head, 0o644); err != nil {
		t.Fatal(err)
	}
	rows := bytes.Count(head, []byte("\n"))
	mock := func() *mockserver.Server {
		return startMockServer(t, func(c *mockserver.Config) {
			c.MaxNumSeqs, c.PrefixCacheTokens = 1024, 16<<20 // no eviction: cached tokens follow the trace alone
		})
	}
	args := func(url, out string) []string {
		return []string{"replay", tracePath, "--url", url, "--model", mockserver.DefaultModel, "--speedup", "10",
			"--no-server-metrics", "--quiet", "-o", out}
	}

	single := filepath.Join(root, "single")
	t0 := time.Now()
	if code, _, stderr := runCLI(t, "", args(mock().URL(), single)...); code != 0 {
		t.Fatalf("single-process run: exit %d: %s", code, stderr)
	}
	// What the single run spent besides its schedule (reading the trace,
	// building prompts, writing files) says how long the shards need
	// before their first request on this machine (the race detector makes
	// it ten times longer).
	prep := max(0, time.Since(t0)-window/10)

	// The shards: processes started together, waiting for one instant
	// far enough ahead for each to read the trace and build its first
	// requests.
	srv := mock()
	startAt := time.Now().Add(max(3*time.Second, 2*prep+time.Second)).UTC().Format(time.RFC3339Nano)
	const n = 4
	dirs := make([]string, n)
	var stderrs [n]bytes.Buffer
	cmds := make([]interface{ Wait() error }, n)
	for i := range n {
		dirs[i] = filepath.Join(root, fmt.Sprintf("shard-%d", i))
		cmd := cliChild(t, "", append(args(srv.URL(), dirs[i]), "--shard", fmt.Sprintf("%d/%d", i, n), "--start-at", startAt)...)
		cmd.Stderr = &stderrs[i]
		if err := cmd.Start(); err != nil {
			t.Fatal(err)
		}
		cmds[i] = cmd
	}
	for i, c := range cmds {
		if err := c.Wait(); err != nil {
			t.Errorf("shard %d/%d: %v: %s", i, n, err, stderrs[i].String())
		}
	}
	if t.Failed() {
		return
	}
	merged := filepath.Join(root, "merged")
	if code, _, stderr := runCLI(t, "", append([]string{"merge", "-o", merged}, dirs...)...); code != 0 {
		t.Fatalf("merge: exit %d: %s", code, stderr)
	}

	// Every trace row exactly once, as in the single-process run.
	// intended maps each row to its intended send time (Unix ns).
	sent := func(dir string) (map[int64]int, map[int64]int64) {
		run, err := arrowio.Open(dir)
		if err != nil {
			t.Fatal(err)
		}
		m, at := map[int64]int{}, map[int64]int64{}
		for r, err := range run.Requests() {
			if err != nil {
				t.Fatal(err)
			}
			m[r.TraceRow]++
			at[r.TraceRow] = r.IntendedNS
		}
		return m, at
	}
	sm, sAt := sent(single)
	mm, mAt := sent(merged)
	if len(mm) != rows || len(sm) != rows {
		t.Errorf("%d rows: the merged run sent %d distinct rows, the single run %d", rows, len(mm), len(sm))
	}
	for row, c := range mm {
		if c != 1 || sm[row] != 1 {
			t.Errorf("trace row %d sent %d times by the shards, %d by the single run", row, c, sm[row])
		}
	}
	// Each row is due at the same time after the common instant as after
	// the single run's start (the single run's first row is its time
	// zero): the shards share one timeline. Only clock slewing between the
	// readings can move it, by far less than the tolerance.
	zero := int64(math.MaxInt64)
	for _, at := range sAt {
		zero = min(zero, at)
	}
	start, err := time.Parse(time.RFC3339Nano, startAt)
	if err != nil {
		t.Fatal(err)
	}
	for row, at := range mAt {
		if d := time.Duration((at - start.UnixNano()) - (sAt[row] - zero)); d < -time.Millisecond || d > time.Millisecond {
			t.Errorf("trace row %d: due %v after --start-at in the shards, %v after the start in the single run",
				row, time.Duration(at-start.UnixNano()), time.Duration(sAt[row]-zero))
		}
	}
	// The shards' manifests record the common instant.
	for i, d := range dirs {
		b, err := os.ReadFile(filepath.Join(d, "manifest.json"))
		if err != nil || !strings.Contains(string(b), `"start_at": "`+startAt+`"`) {
			t.Errorf("shard %d's manifest lacks start_at %s (%v)", i, startAt, err)
		}
	}

	ss, ms := readSummary(t, single), readSummary(t, merged)
	type totals struct {
		Requests, Errors int
		ISL, OSL         int64
		Cached, Expected int64
		Fidelity         string
	}
	tot := func(s *summary.Summary) totals {
		return totals{s.RequestCount, s.ErrorRequestCount, s.TotalISL, s.TotalOSL, s.ServerCachedTokens, s.ExpectedCachedTokens,
			strconv.FormatFloat(s.CacheFidelity, 'f', 6, 64)}
	}
	if a, b := tot(ss), tot(ms); a != b || a.Requests != rows || a.Expected == 0 {
		t.Errorf("single-process %+v, merged %+v (%d rows)", a, b, rows)
	}
	for name, s := range map[string]*summary.Summary{"single": ss, "merged": ms} {
		st := s.Metrics["schedule_lateness"]
		if st != nil {
			t.Logf("%s run: schedule lateness p50 %.3f ms, p99 %.3f ms", name, st.P50, st.P99)
		}
		if st == nil || st.Count != rows || time.Duration(st.P99*float64(time.Millisecond)) > shardLatenessBudget {
			t.Errorf("%s run: schedule lateness %+v: want %d requests within the %v budget", name, st, rows, shardLatenessBudget)
		}
	}
}

// readSummary recomputes a run's summary from its files.
func readSummary(t *testing.T, dir string) *summary.Summary {
	t.Helper()
	run, err := arrowio.Open(dir)
	if err != nil {
		t.Fatal(err)
	}
	set, err := run.Settings()
	if err != nil {
		t.Fatal(err)
	}
	s, err := run.Summarize(set.Info, set.Options)
	if err != nil {
		t.Fatal(err)
	}
	return s
}
