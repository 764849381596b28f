package compare

import (
	"bytes"
	"encoding/json"
	"math"
	"math/rand/v2"
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
	if !res.Paired || res.Pairs != 40 || len(res.Warnings) != 0 {
		t.Fatalf("paired %v, %d pairs, warnings %q; want 40 pairs and no warning", res.Paired, res.Pairs, res.Warnings)
	}
	for _, m := range res.Metrics {
		if m.Verdict != NoDifference && m.Verdict != NotAvailable || m.Diff != 0 && !math.IsNaN(m.Diff) {
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
