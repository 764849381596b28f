package compare

import (
	"math"
	"math/rand/v2"
	"testing"
)

// simRun is a run of n requests, one every ms, rows 0…n−1, whose TTFT
// (and E2E) is shift plus a draw of normal(10, 4) ms.
func simRun(rng *rand.Rand, n int, shift float64) *Run {
	r := &Run{Label: "sim", TraceSHA256: "t"}
	for i := range n {
		v := max(10+4*rng.NormFloat64(), 0) + shift
		q := request{row: int64(i), ok: true, osl: 2, isl: 16, cached: -1, prompt: -1,
			sent: int64(i) * 1e6, end: int64(i)*1e6 + int64(v*1e6)}
		q.lat = [nLatency]float64{v, v, math.NaN(), v}
		r.reqs = append(r.reqs, q)
	}
	return r
}

// TestCalibration checks the intervals on simulated runs of 100
// requests, free of the machine's noise: with both sides drawn from one
// distribution, no metric is called significant in more than 5 % of 200
// comparisons (the level is 95 %); with B shifted by +5 ms, the 95 %
// interval of the TTFT p50 difference holds +5 in at least 93 % of them
// (the binomial spread of 200 draws at 95 % reaches down to about 92 %).
// Under the race detector it makes the first 40 of those comparisons.
func TestCalibration(t *testing.T) {
	rng := rand.New(rand.NewPCG(1, 2))
	reps := 200
	if raceEnabled {
		reps = 40 // the same seeds: the first 40 of the 200 comparisons
	}
	flagged := map[string]int{}
	names := []string{"ttft.p50", "ttft.p90", "e2e.p50", "request_throughput", "output_token_throughput"}
	covered := 0
	for rep := range reps {
		cfg := NewConfig()
		cfg.Seed, cfg.Resamples = uint64(rep), 400
		a, b := simRun(rng, 100, 0), simRun(rng, 100, 0)
		res, err := Compare(a, b, cfg)
		if err != nil {
			t.Fatal(err)
		}
		for _, n := range names {
			if m, _ := res.Metric(n); m.Verdict != NoDifference {
				flagged[n]++
			}
		}
		shifted, err := Compare(a, simRun(rng, 100, 5), cfg)
		if err != nil {
			t.Fatal(err)
		}
		if m, _ := shifted.Metric("ttft.p50"); m.DiffLow <= 5 && 5 <= m.DiffHigh {
			covered++
		}
	}
	for _, n := range names {
		if flagged[n] > reps/20 {
			t.Errorf("%s: significant in %d of %d comparisons of one distribution, want at most %d", n, flagged[n], reps, reps/20)
		}
	}
	if covered < reps*93/100 {
		t.Errorf("the interval held the true +5 ms in %d of %d comparisons, want at least %d", covered, reps, reps*93/100)
	}
	t.Logf("flagged %v; covered %d of %d", flagged, covered, reps)
}
