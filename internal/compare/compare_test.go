package compare

import (
	"bytes"
	"encoding/json"
	"math"
	"math/rand/v2"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/reprise-bench/reprise/arrowio"
)

// TestRunAgainstItself: a mock-server run compared with itself is paired
// row for row, differs by nothing and is never significant; its point
// estimates are the ones in its summary.json.
func TestRunAgainstItself(t *testing.T) {
	tr := writeTrace(t, 40, 1, []int{16, 32, 64})
	a := mustLoad(t, replayMock(t, server{ttft: 5 * time.Millisecond, jitter: time.Millisecond, seed: 1}, tr, 0))
	res, err := Compare(a, a, NewConfig())
	if err != nil {
		t.Fatal(err)
	}
	// A busy machine may degrade the run's own measurement_quality, and
	// the warnings then say so; nothing else may differ from itself.
	others := slices.DeleteFunc(slices.Clone(res.Warnings), func(w string) bool { return strings.Contains(w, ": measurement_quality: ") })
	if !res.Paired || res.Pairs != 40 || len(others) != 0 {
		t.Fatalf("paired %v, %d pairs, warnings %q; want 40 pairs and no comparability warning", res.Paired, res.Pairs, res.Warnings)
	}
	for _, m := range res.Metrics {
		// Its measurement errors are the same on both sides: even a
		// degraded run has no degradation against itself.
		if m.Verdict != NoDifference && m.Verdict != NotAvailable || m.Diff != 0 && !math.IsNaN(m.Diff) || m.Degradation != 0 {
			t.Errorf("%s: %+v, want no difference", m.Name, m)
		}
	}
	rr, _ := arrowio.Open(a.Dir)
	raw, _ := rr.Summary()
	var sum map[string]json.RawMessage
	if err := json.Unmarshal(raw, &sum); err != nil {
		t.Fatal(err)
	}
	var ttft, e2e struct{ P50, P90, P99 float64 }
	json.Unmarshal(sum["time_to_first_token"], &ttft)
	json.Unmarshal(sum["request_latency"], &e2e)
	var thr, reqs struct{ Avg float64 }
	json.Unmarshal(sum["output_token_throughput"], &thr)
	json.Unmarshal(sum["request_throughput"], &reqs)
	for name, want := range map[string]float64{"ttft.p50": ttft.P50, "ttft.p90": ttft.P90, "ttft.p99": ttft.P99,
		"e2e.p99": e2e.P99, "output_token_throughput": thr.Avg, "request_throughput": reqs.Avg, "error_rate": 0} {
		m, _ := res.Metric(name)
		if math.Abs(m.A-want) > 1e-9*math.Abs(want) {
			t.Errorf("%s of the run = %v, summary.json says %v", name, m.A, want)
		}
	}
}

// TestKnownShift: B is A's distribution shifted by +5 ms (simulated
// runs); the paired verdict is worse with an interval holding +5, the
// same seed gives the same numbers, a +5 % gate on the p50 fails and a
// +100 % one does not, and the table and JSON say so.
func TestKnownShift(t *testing.T) {
	rng := rand.New(rand.NewPCG(3, 4))
	a, b := simRun(rng, 200, 0), simRun(rng, 200, 5)
	a.Label, b.Label = "runs/a", "runs/b"
	res, err := Compare(a, b, NewConfig())
	if err != nil {
		t.Fatal(err)
	}
	for _, name := range []string{"ttft.p50", "ttft.p90", "e2e.p50"} {
		m, _ := res.Metric(name)
		if m.Verdict != Worse || !(m.DiffLow <= 5 && 5 <= m.DiffHigh) {
			t.Errorf("%s: %+v, want worse with an interval holding +5 ms", name, m)
		}
	}
	again, _ := Compare(a, b, NewConfig())
	m1, _ := res.Metric("ttft.p99")
	m2, _ := again.Metric("ttft.p99")
	if m1 != m2 {
		t.Errorf("same seed, different results: %+v vs %+v", m1, m2)
	}
	gates, err := ParseThresholds([]string{"ttft.p50:+5%,ttft.p90:+100%"})
	if err != nil {
		t.Fatal(err)
	}
	br := res.Breaches(gates)
	if len(br) != 1 || br[0].Threshold.Metric != "ttft.p50" {
		t.Errorf("breaches %v, want ttft.p50:+5%% alone (+50%% beats 5%%, not 100%%)", br)
	}

	var tbl, js bytes.Buffer
	if err := WriteTable(&tbl, []*Result{res}); err != nil {
		t.Fatal(err)
	}
	lines := map[string]string{}
	for l := range strings.Lines(tbl.String()) {
		if f := strings.Fields(l); len(f) > 0 {
			lines[f[0]] = strings.TrimSpace(l)
		}
	}
	if !strings.Contains(tbl.String(), "paired by trace row: 200 pairs") || !strings.HasSuffix(lines["ttft.p50"], "worse") ||
		!strings.HasSuffix(lines["goodput"], "n/a") {
		t.Errorf("table:\n%s", tbl.String())
	}
	if err := WriteJSON(&js, []*Result{res}, gates); err != nil {
		t.Fatal(err)
	}
	var doc struct {
		Comparisons []struct {
			Breaches []string
			Metrics  []struct {
				Name    string
				CI      [2]*float64
				Verdict string
			}
		}
	}
	if err := json.Unmarshal(js.Bytes(), &doc); err != nil {
		t.Fatalf("JSON: %v\n%s", err, js.String())
	}
	c := doc.Comparisons[0]
	if len(c.Breaches) != 1 || c.Metrics[0].Name != "ttft.p50" || c.Metrics[0].Verdict != "worse" || c.Metrics[0].CI[0] == nil {
		t.Errorf("JSON:\n%s", js.String())
	}
	for _, m := range c.Metrics {
		if m.Name == "goodput" && (m.Verdict != "n/a" || m.CI[0] != nil) {
			t.Errorf("goodput without SLOs: %+v, want n/a with a null interval", m)
		}
	}
}

// TestSameServerNoDifference: two copies of the same server (same timing,
// their own jitter draws) as the two targets of a fan-out replay are found
// not significantly different in TTFT, E2E and throughput in at least
// 95 % of seeded repetitions. Fan-out sends each request to both at the
// same instant, so what the machine does beside the test (it may be
// shared) slows both alike; two runs one after the other would differ by
// that.
//
// At a 95 % level a correct interval calls 5 % of such comparisons
// significant, so the count over 40 repetitions is binomial(40, 0.05):
// the test fails when a metric is significant in more than 5 of them,
// which a 5 % rate passes 98.6 % of the time and a 12.5 % rate (twice
// too many) fails more often than not. The race detector slows the
// client tenfold and unevenly, which no interval can know of: under it
// the test makes 6 repetitions and only guards against gross errors (a
// metric significant in more than half of them).
func TestSameServerNoDifference(t *testing.T) {
	reps, allowed := 40, 5
	if raceEnabled {
		reps, allowed = 6, 3
	}
	tr := writeTrace(t, 24, 2, []int{16, 32, 64})
	names := []string{"ttft.p50", "ttft.p90", "e2e.p50", "e2e.p90", "output_token_throughput"}
	flagged := map[string]int{}
	for rep := range reps {
		s := server{ttft: 20 * time.Millisecond, jitter: 8 * time.Millisecond, seed: uint64(2 * rep)}
		s2 := s
		s2.seed++
		a, b := fanOutPair(t, s, s2, tr)
		cfg := NewConfig()
		cfg.Seed = uint64(rep)
		res, err := Compare(a, b, cfg)
		if err != nil {
			t.Fatal(err)
		}
		if !res.Paired || res.PairedBy != "fan-out request" {
			t.Fatalf("not paired by fan-out request: %+v", res)
		}
		for _, n := range names {
			// Inconclusive (a degraded measurement) is no claim either
			// way; better or worse is.
			if m, _ := res.Metric(n); m.Verdict == Better || m.Verdict == Worse {
				flagged[n]++
			}
		}
	}
	for _, n := range names {
		t.Logf("%s: %d of %d repetitions significant", n, flagged[n], reps)
		if flagged[n] > allowed {
			t.Errorf("%s: a significant difference in %d of %d repetitions of the same server, want at most %d", n, flagged[n], reps, allowed)
		}
	}
}
