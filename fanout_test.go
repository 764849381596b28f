package reprise_test

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/reprise-bench/reprise"
	"github.com/reprise-bench/reprise/arrowio"
	"github.com/reprise-bench/reprise/engine/record"
	"github.com/reprise-bench/reprise/internal/compare"
	"github.com/reprise-bench/reprise/internal/mockserver"
)

// startMock starts an in-process mock server with the TTFT ttft and a
// normal jitter of 1 ms.
func startMock(t *testing.T, ttft time.Duration, seed uint64) *mockserver.Server {
	t.Helper()
	c := mockserver.NewConfig()
	c.Addr, c.TTFT, c.ITL, c.Seed = "127.0.0.1:0", ttft, 0, seed
	c.Jitter, c.JitterDist, c.KeepLog = time.Millisecond, mockserver.JitterNormal, false
	srv, err := mockserver.Start(context.Background(), c)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { srv.Close() })
	return srv
}

// TestFanOut sends a 150-row trace to two mock servers whose TTFT differs
// by 5 ms with --url-policy fan-out: every row is sent to both at the same
// intended instant, records name their target, summary.json reports each
// target, and compare's paired result finds B worse by an interval that
// reaches the configured +5 ms (within 0.5 ms). The send-time gaps of
// the pairs are logged (go test -v -run TestFanOut). The race detector slows the client
// several times and unevenly, by far more than 5 ms on a busy machine:
// under it the rows are 10 ms apart instead of 2 and the comparison is
// only checked to pair the targets' requests.
func TestFanOut(t *testing.T) {
	const rows = 150
	gap := 2
	if raceEnabled {
		gap = 10
	}
	var b strings.Builder
	for i := range rows {
		fmt.Fprintf(&b, `{"timestamp": %d, "input_length": %d, "output_length": 2, "hash_ids": [%d]}`+"\n", gap*i, 16<<(i%3), i)
	}
	tr := filepath.Join(t.TempDir(), "trace.jsonl")
	if err := os.WriteFile(tr, []byte(b.String()), 0o644); err != nil {
		t.Fatal(err)
	}
	a, bsrv := startMock(t, 50*time.Millisecond, 1), startMock(t, 55*time.Millisecond, 2)
	o := reprise.NewOptions()
	o.URL, o.Model = a.URL(), mockserver.DefaultModel
	o.Targets = []reprise.Target{{URL: bsrv.URL(), Headers: []string{"X-Arm: b"}}}
	o.URLPolicy = reprise.URLPolicyFanOut
	o.Trace.Path = tr
	o.Telemetry.EndpointMetrics = false
	o.Output.Dir, o.Output.Format = filepath.Join(t.TempDir(), "run"), "jsonl"
	res, err := reprise.Run(context.Background(), o)
	if err != nil {
		t.Fatal(err)
	}

	rr, err := arrowio.Open(res.Dir)
	if err != nil {
		t.Fatal(err)
	}
	type pair struct{ recs [2]*record.Request }
	jobs := map[uint64]*pair{}
	for r, err := range rr.Requests() {
		if err != nil {
			t.Fatal(err)
		}
		if r.Target < 0 || r.Target > 1 || r.RequestID%2 != uint64(r.Target) {
			t.Fatalf("request %d: target %d", r.RequestID, r.Target)
		}
		p := jobs[r.RequestID/2]
		if p == nil {
			p = &pair{}
			jobs[r.RequestID/2] = p
		}
		p.recs[r.Target] = &r
	}
	if len(jobs) != rows {
		t.Fatalf("%d fan-out requests, want %d", len(jobs), rows)
	}
	var gaps []float64
	for id, p := range jobs {
		a, b := p.recs[0], p.recs[1]
		if a == nil || b == nil || a.TraceRow != b.TraceRow || a.IntendedNS != b.IntendedNS || !a.OK() || !b.OK() {
			t.Fatalf("request %d: records %+v and %+v, want one per target of the same row and instant, both ok", id, a, b)
		}
		if a.OutputTokens != b.OutputTokens || a.InputTokens != b.InputTokens || a.OutputTokens == 0 {
			t.Fatalf("request %d: the client counted %d/%d input and %d/%d output tokens at the two targets, want equal, output > 0",
				id, a.InputTokens, b.InputTokens, a.OutputTokens, b.OutputTokens)
		}
		gaps = append(gaps, float64(max(a.SentNS-b.SentNS, b.SentNS-a.SentNS))/1e3)
	}
	slices.Sort(gaps)
	t.Logf("send-time gap of the %d pairs: p50 %.1f µs, p99 %.1f µs, max %.1f µs", len(gaps),
		gaps[len(gaps)/2], gaps[len(gaps)*99/100], gaps[len(gaps)-1])

	raw, _ := rr.Summary()
	var sum struct {
		Targets []struct {
			RunInfo struct{ URL string }  `json:"run_info"`
			Count   struct{ Avg float64 } `json:"request_count"`
		}
	}
	if err := json.Unmarshal(raw, &sum); err != nil {
		t.Fatal(err)
	}
	if len(sum.Targets) != 2 || sum.Targets[0].Count.Avg != rows || sum.Targets[1].Count.Avg != rows ||
		sum.Targets[1].RunInfo.URL != bsrv.URL() {
		t.Errorf("summary.json targets: %+v", sum.Targets)
	}

	// reprise summarize recomputes summary.json, targets included.
	set, err := rr.Settings()
	if err != nil {
		t.Fatal(err)
	}
	again, err := rr.Summarize(set.Info, set.Options)
	if err != nil {
		t.Fatal(err)
	}
	if js, err := arrowio.SummaryJSON(again, set.RecordWriter); err != nil || !bytes.Equal(js, raw) {
		t.Errorf("summarize gives another summary.json (%v):\n%s\nthe run wrote:\n%s", err, js, raw)
	}

	ra, err := compare.LoadTarget(context.Background(), res.Dir, 0)
	if err != nil {
		t.Fatal(err)
	}
	rb, err := compare.LoadTarget(context.Background(), res.Dir, 1)
	if err != nil {
		t.Fatal(err)
	}
	cmp, err := compare.Compare(ra, rb, compare.NewConfig())
	if err != nil {
		t.Fatal(err)
	}
	if !cmp.Paired || cmp.Pairs != rows || cmp.PairedBy != "fan-out request" {
		t.Fatalf("paired %v by %q with %d pairs, want %d", cmp.Paired, cmp.PairedBy, cmp.Pairs, rows)
	}
	// A's TTFT p50 far above its server's 50 ms, or a run whose own
	// measurement quality is degraded by more than the 0.5 ms checked,
	// says the machine was too busy (other processes held the CPUs) to
	// resolve 5 ms: the pairing is checked, the difference only logged.
	p50, _ := cmp.Metric("ttft.p50")
	busy := p50.A > 60 || p50.Degradation > 0.5
	if busy {
		t.Logf("A's TTFT p50 %.1f ms for a 50 ms server, degradation %.1f ms: the machine is too busy to measure 5 ms; not checking the difference", p50.A, p50.Degradation)
	}
	for _, name := range []string{"ttft.p50", "ttft.p90", "e2e.p50"} {
		if raceEnabled || busy {
			break
		}
		m, _ := cmp.Metric(name)
		// The interval must reach the configured +5 ms within half a
		// millisecond: the measured difference comes out 0.3–0.6 ms
		// short of it, with intervals about ±0.4 ms wide. The shortfall
		// follows the mock servers' seeds (swapped, it turns into a
		// surplus; two 50 ms servers differ by ±0.5 ms the same way), so
		// it is their jitter draws, not the client.
		if m.Verdict != compare.Worse || !(m.DiffLow <= 5.5 && 4.5 <= m.DiffHigh) {
			t.Errorf("%s: %+v, want worse with an interval reaching +5 ms ± 0.5 ms (A's TTFT p50 %.1f ms for a 50 ms server)",
				name, m, p50.A)
		}
		if name == "ttft.p50" {
			t.Logf("ttft.p50 B−A %+.3f ms, interval [%+.3f, %+.3f]", m.Diff, m.DiffLow, m.DiffHigh)
		}
	}
}

// TestURLPolicies: round-robin spreads the requests evenly over the
// targets by request; least-in-flight sends more to a fast target than to
// a slow one; a bad policy or target URL is a ConfigError naming the
// field.
func TestURLPolicies(t *testing.T) {
	fast, slow := startMock(t, time.Millisecond, 1), startMock(t, 40*time.Millisecond, 2)
	counts := func(policy string) [2]int {
		t.Helper()
		o := reprise.NewOptions()
		o.URL, o.Model = fast.URL(), mockserver.DefaultModel
		o.Targets = []reprise.Target{{URL: slow.URL()}}
		o.URLPolicy = policy
		o.Synthetic = reprise.SyntheticLoad{ISL: 16, OSL: 2}
		o.Replay.Concurrency, o.Replay.RequestCount = 4, 40
		o.Telemetry.EndpointMetrics = false
		o.Output.Dir, o.Output.Format = filepath.Join(t.TempDir(), "run"), "jsonl"
		res, err := reprise.Run(context.Background(), o)
		if err != nil {
			t.Fatal(err)
		}
		rr, _ := arrowio.Open(res.Dir)
		var n [2]int
		for r, err := range rr.Requests() {
			if err != nil {
				t.Fatal(err)
			}
			if !r.OK() {
				t.Fatalf("%s: request %d failed: %s", policy, r.RequestID, r.ErrorMessage)
			}
			n[r.Target]++
		}
		return n
	}
	if n := counts(reprise.URLPolicyRoundRobin); n != [2]int{20, 20} {
		t.Errorf("round-robin: %v requests per target, want 20 each", n)
	}
	if n := counts(reprise.URLPolicyLeastInFlight); n[0]+n[1] != 40 || n[0] <= n[1] {
		t.Errorf("least-in-flight: %v requests per target, want more at the fast target 0", n)
	}

	o := reprise.NewOptions()
	o.Model = "m"
	o.Targets = []reprise.Target{{URL: "ftp://x"}, {URL: "http://127.0.0.1:1", Headers: []string{"bad"}}}
	o.URLPolicy = "weighted"
	_, err := reprise.Run(context.Background(), o)
	ce, ok := errors.AsType[*reprise.ConfigError](err)
	if !ok {
		t.Fatalf("error %v, want a ConfigError", err)
	}
	var fields []string
	for _, fe := range ce.Errors {
		fields = append(fields, fe.Field)
	}
	for _, want := range []string{"URLPolicy", "Targets[0].URL", "Targets[1].Headers"} {
		if !slices.Contains(fields, want) {
			t.Errorf("ConfigError fields %q lack %s", fields, want)
		}
	}
}
