package compare

import (
	"context"
	"math"
	"os"
	"path/filepath"
	"strconv"
	"testing"
	"time"

	"github.com/reprise-bench/reprise"
	"github.com/reprise-bench/reprise/internal/mockserver"
)

// verdictTrials is how many pairs and trials TestSequentialRunsVerdicts
// makes: 10 in make test, REPRISE_VERDICT_TRIALS (20 for the issue's
// figures) when set.
func verdictTrials(t *testing.T) int {
	if v := os.Getenv("REPRISE_VERDICT_TRIALS"); v != "" {
		n, err := strconv.Atoi(v)
		if err != nil || n < 1 {
			t.Fatalf("REPRISE_VERDICT_TRIALS=%q: want a count", v)
		}
		return n
	}
	return 10
}

// startMock starts an in-process mock server whose TTFT is ttft ± 5 ms
// (normal jitter), two output tokens 2 ms apart.
func startMock(t *testing.T, ttft time.Duration) *mockserver.Server {
	t.Helper()
	mcfg := mockserver.NewConfig()
	mcfg.Addr, mcfg.TTFT, mcfg.ITL, mcfg.Seed = "127.0.0.1:0", ttft, 2*time.Millisecond, 1
	mcfg.Jitter, mcfg.JitterDist = 5*time.Millisecond, mockserver.JitterNormal
	mcfg.KeepLog = false
	srv, err := mockserver.Start(context.Background(), mcfg)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { srv.Close() })
	return srv
}

// replayOn replays tracePath against url and loads the run.
func replayOn(t *testing.T, url, tracePath string) *Run {
	t.Helper()
	o := reprise.NewOptions()
	o.URL, o.Model = url, mockserver.DefaultModel
	o.Telemetry.EndpointMetrics = false
	o.Trace.Path = tracePath
	o.Output.Dir = filepath.Join(t.TempDir(), "run")
	o.Output.Format = "jsonl"
	if _, err := reprise.Run(context.Background(), o); err != nil {
		t.Fatal(err)
	}
	return mustLoad(t, o.Output.Dir)
}

// TestSequentialRunsVerdicts is the test of verdicts on a shared
// machine, with real runs one after the other (run it beside two busy
// loops to see the machine's noise): of N pairs of same-settings runs of
// one mock server (TTFT 100 ± 5 ms), no more have any metric called
// better or worse than a comparison calibrated at its 95 % family-wise
// level would give with 98 % probability (falseAlarmBound: 2 of 10, 3 of
// 20; the measured rate is about 1 in 20), where the old per-request bootstrap
// flagged several metrics in most pairs on a busy machine; and a +10 %
// TTFT change (a second mock server at 110 ms), three runs a side, is
// found worse in ttft.p50 in at least 9 of 10 trials measured well, and
// never called better. Each run replays
// 100 requests 5 ms apart. In the no-race pass only (make test): under
// the race detector the client's own slowdown is all it would measure.
func TestSequentialRunsVerdicts(t *testing.T) {
	if raceEnabled {
		t.Skip("SKIP: -race: the race detector's slowdown of the client is what the runs would measure")
	}
	n := verdictTrials(t)
	tr := writeTrace(t, 100, 5, []int{16, 32, 64, 128})
	base, slower := startMock(t, 100*time.Millisecond), startMock(t, 110*time.Millisecond)
	// A first run warms the server's prefix cache, so that the pairs
	// compare warm against warm.
	replayOn(t, base.URL(), tr)
	replayOn(t, slower.URL(), tr)
	falseAlarms := 0
	for p := range n {
		a, b := replayOn(t, base.URL(), tr), replayOn(t, base.URL(), tr)
		cfg := NewConfig()
		cfg.Seed = uint64(p)
		res, err := Compare(a, b, cfg)
		if err != nil {
			t.Fatal(err)
		}
		var flagged []string
		for _, m := range res.Metrics {
			if m.Verdict == Better || m.Verdict == Worse {
				flagged = append(flagged, m.Name+" "+pct(m.Rel))
			}
		}
		if len(flagged) > 0 {
			falseAlarms++
			t.Logf("same settings, pair %d: %v flagged; warnings %q", p, flagged, res.Warnings)
		}
	}
	// A trial whose runs were degraded by more than a quarter of the
	// shift (summary.json's measurement quality: the client read late)
	// is one where the tool says it cannot tell (inconclusive) or its
	// interval holds the stall; power is counted over the others, when
	// they are at least half (a quiet machine has all). The same-settings
	// pairs hold whatever the load.
	found, clean := 0, 0
	for k := range n {
		var as, bs []*Run
		for range 3 {
			as = append(as, replayOn(t, base.URL(), tr))
			bs = append(bs, replayOn(t, slower.URL(), tr))
		}
		cfg := NewConfig()
		cfg.Seed = uint64(k)
		res, err := CompareGroups(as, bs, cfg)
		if err != nil {
			t.Fatal(err)
		}
		m, _ := res.Metric("ttft.p50")
		if m.Verdict == Better {
			t.Errorf("+10 %% trial %d: ttft.p50 called better: %+v", k, m)
		}
		if m.Degradation > 2.5 {
			t.Logf("+10 %% trial %d (degraded by %.1f ms, not counted): ttft.p50 %s %s [%s, %s] %s", k, m.Degradation, m.Verdict, pct(m.Rel), num(m.DiffLow, "ms", true), num(m.DiffHigh, "ms", true), m.Note)
			continue
		}
		clean++
		if m.Verdict == Worse {
			found++
		} else {
			t.Logf("+10 %% trial %d: ttft.p50 %s %s [%s, %s] %s", k, m.Verdict, pct(m.Rel), num(m.DiffLow, "ms", true), num(m.DiffHigh, "ms", true), m.Note)
		}
	}
	t.Logf("same settings: %d of %d pairs with a metric flagged; +10 %% TTFT, 3 runs a side: found in %d of %d trials measured well (%d degraded)", falseAlarms, n, found, clean, n-clean)
	if allowed := falseAlarmBound(n, 0.05, 0.02); falseAlarms > allowed {
		t.Errorf("same settings: %d of %d pairs had a metric called better or worse, want at most %d", falseAlarms, n, allowed)
	}
	switch {
	case clean < (n+1)/2:
		t.Logf("+10 %% TTFT: only %d of %d trials were measured well (the rest degraded by over 2.5 ms): the machine is too busy to check power", clean, n)
	case found < clean*9/10:
		t.Errorf("+10 %% TTFT with three runs a side: found in %d of %d trials measured well, want at least %d", found, clean, clean*9/10)
	}
}

// falseAlarmBound is the smallest k such that n comparisons, each
// flagging a same-settings pair with probability rate (the family-wise
// error a calibrated comparison allows), flag more than k with
// probability at most p: a count above it says the rate is too high, not
// that the binomial drew badly (at n = 10, rate 5 %: 2; a bound of 1
// would fail a perfectly calibrated comparison 8.6 % of the time).
func falseAlarmBound(n int, rate, p float64) int {
	term := math.Pow(1-rate, float64(n)) // P(X = 0)
	cum := term
	for k := 0; k < n; k++ {
		if 1-cum <= p {
			return k
		}
		term *= float64(n-k) / float64(k+1) * rate / (1 - rate)
		cum += term
	}
	return n
}

// TestFalseAlarmBound: the bounds TestSequentialRunsVerdicts and the
// issue's 20-pair figure use, and TestSameServerNoDifference's 5 of 40.
func TestFalseAlarmBound(t *testing.T) {
	for _, tt := range []struct {
		n    int
		p    float64
		want int
	}{{10, 0.02, 2}, {20, 0.02, 3}, {40, 0.015, 5}, {1, 0.02, 1}} {
		if got := falseAlarmBound(tt.n, 0.05, tt.p); got != tt.want {
			t.Errorf("falseAlarmBound(%d, 0.05, %g) = %d, want %d", tt.n, tt.p, got, tt.want)
		}
	}
}
