package compare

import (
	"math"
	"math/rand/v2"
	"strings"
	"testing"
)

// simRunOffset is simRun with the whole run's TTFT moved by offset ms (a
// run-to-run variation: the machine busier during the whole run) and
// requests from stallFrom to stallTo (indexes) slowed by stall ms more.
func simRunOffset(rng *rand.Rand, n int, shift, offset float64, stallFrom, stallTo int, stall float64) *Run {
	r := simRun(rng, n, shift+offset)
	for i := stallFrom; i < stallTo && i < n; i++ {
		q := &r.reqs[i]
		for l := range q.lat {
			if !math.IsNaN(q.lat[l]) {
				q.lat[l] += stall
			}
		}
		q.end += int64(stall * 1e6)
	}
	return r
}

// TestFamilyWiseError: both sides drawn from one distribution, 200
// comparisons of single runs; at 95 % a metric of the family is called
// changed in at most 5 % of them (one comparison in 20 may hold a false
// alarm in any of its metrics), where separate intervals flagged some
// metric in about a quarter.
func TestFamilyWiseError(t *testing.T) {
	rng := rand.New(rand.NewPCG(7, 8))
	reps := 200
	if raceEnabled {
		reps = 40
	}
	any := 0
	for rep := range reps {
		cfg := NewConfig()
		cfg.Seed, cfg.Resamples, cfg.MinEffect = uint64(rep), 1000, 0
		res, err := Compare(simRun(rng, 200, 0), simRun(rng, 200, 0), cfg)
		if err != nil {
			t.Fatal(err)
		}
		for _, m := range res.Metrics {
			if m.Verdict == Better || m.Verdict == Worse {
				any++
				break
			}
		}
	}
	t.Logf("%d of %d comparisons called some metric changed", any, reps)
	if any > reps*5/100 {
		t.Errorf("%d of %d comparisons of one distribution called some metric changed, want at most %d", any, reps, reps*5/100)
	}
}

// TestReplicatesMeasureRunToRun: each run is moved as a whole by a
// draw of normal(0, 1) ms (the machine's mood during that run), both
// sides from one setting. Compared as three runs against three, the
// interval holds that run-to-run variation and flags TTFT p50 in at most
// 5 of 60 comparisons; the old view of pooled requests (the interval of
// requests alone) flags it in most. A +10 ms shift of B (ten run-to-run
// deviations) is found, its interval holding +10, in at least 95 % of
// them.
func TestReplicatesMeasureRunToRun(t *testing.T) {
	rng := rand.New(rand.NewPCG(9, 10))
	reps := 60
	if raceEnabled {
		reps = 12
	}
	side := func(shift float64) []*Run {
		var rs []*Run
		for range 3 {
			rs = append(rs, simRunOffset(rng, 200, shift, rng.NormFloat64(), 0, 0, 0))
		}
		return rs
	}
	pooled := func(rs []*Run) *Run {
		p := &Run{Label: "pooled", TraceSHA256: "t"}
		for k, r := range rs {
			for _, q := range r.reqs {
				q.row += int64(k * 1000)
				p.reqs = append(p.reqs, q)
			}
		}
		return p
	}
	flagged, pooledFlagged, found := 0, 0, 0
	for rep := range reps {
		cfg := NewConfig()
		cfg.Seed, cfg.Resamples = uint64(rep), 1000
		a, b := side(0), side(0)
		res, err := CompareGroups(a, b, cfg)
		if err != nil {
			t.Fatal(err)
		}
		if m, _ := res.Metric("ttft.p50"); m.Verdict != NoDifference {
			flagged++
		}
		cfg.MinEffect = 0
		if old, _ := Compare(pooled(a), pooled(b), cfg); old != nil {
			if m, _ := old.Metric("ttft.p50"); m.Verdict == Better || m.Verdict == Worse {
				pooledFlagged++
			}
		}
		cfg.MinEffect = DefaultMinEffect
		shifted, err := CompareGroups(a, side(10), cfg)
		if err != nil {
			t.Fatal(err)
		}
		if m, _ := shifted.Metric("ttft.p50"); m.Verdict == Worse && m.DiffLow <= 10 && 10 <= m.DiffHigh {
			found++
		}
		if rep == 0 && (shifted.RunsA != 3 || shifted.RunsB != 3 || shifted.Paired || len(shifted.A.Runs) != 3) {
			t.Errorf("result %+v: want 3 runs a side, unpaired, the runs listed", shifted)
		}
	}
	t.Logf("same setting: flagged %d of %d (pooled requests: %d); +10 ms found %d", flagged, reps, pooledFlagged, found)
	if flagged > reps/12 {
		t.Errorf("same setting, three runs a side: TTFT p50 flagged in %d of %d comparisons, want at most %d", flagged, reps, reps/12)
	}
	if pooledFlagged < reps/2 {
		t.Errorf("pooled requests flagged TTFT p50 in only %d of %d: the test's run-to-run variation is too small to test anything", pooledFlagged, reps)
	}
	if found < reps*95/100 {
		t.Errorf("+10 ms found (worse, interval holding +10) in %d of %d, want at least %d", found, reps, reps*95/100)
	}
}

// TestStallIsNotAChange: B's requests 100–139 of 200 (one stretch, a
// fifth of the run) waited 40 ms more, as when the machine stalled; the
// p90 of B passes A's by far, and the interval alone would call it
// worse, but the change shows in one part of five: no difference, said
// why. The same +40 ms over the whole run is worse.
func TestStallIsNotAChange(t *testing.T) {
	rng := rand.New(rand.NewPCG(11, 12))
	a := simRun(rng, 200, 0)
	b := simRunOffset(rng, 200, 0, 0, 100, 140, 40)
	res, err := Compare(a, b, NewConfig())
	if err != nil {
		t.Fatal(err)
	}
	m, _ := res.Metric("ttft.p90")
	if m.Verdict != NoDifference || !strings.Contains(m.Note, "of the runs' 5 consecutive parts") {
		t.Errorf("ttft.p90 with a stall in one fifth of B: %+v, want no difference, noting the parts", m)
	}
	whole, err := Compare(a, simRun(rng, 200, 40), NewConfig())
	if err != nil {
		t.Fatal(err)
	}
	if m, _ := whole.Metric("ttft.p90"); m.Verdict != Worse {
		t.Errorf("ttft.p90 with +40 ms throughout: %+v, want worse", m)
	}
}

// TestNoiseFloorAndDegradation: a +2 ms change (+20 %) with a tight
// interval is worse; with a run's own read lag p90 of 3 ms (one run a
// side) it is within the noise floor; with a degraded run whose read lag
// was 1.5 ms it stays worse only past 1.5 ms, so +1 ms... and --min-effect
// 30 % hides it.
func TestNoiseFloorAndDegradation(t *testing.T) {
	rng := rand.New(rand.NewPCG(13, 14))
	a, b := simRun(rng, 2000, 0), simRun(rng, 2000, 2)
	verdictOf := func(cfg Config) Metric {
		t.Helper()
		return ttftP50(t, []*Run{a}, []*Run{b}, cfg)
	}
	if m := verdictOf(NewConfig()); m.Verdict != Worse {
		t.Fatalf("+2 ms on 2000 requests: %+v, want worse", m)
	}
	a.noise = noise{readLagP90: 3, latenessP99: 0.1, calibrationMS: math.NaN()}
	if m := verdictOf(NewConfig()); m.Verdict != NoDifference || m.Floor != 3 || !strings.Contains(m.Note, "noise floor") {
		t.Errorf("+2 ms against a 3 ms read lag: %+v, want no difference within the 3 ms floor", m)
	}
	a.noise = noise{degraded: true, readLagP90: 1.5, latenessP99: 0.1, calibrationMS: math.NaN()}
	b.noise = noise{degraded: true, readLagP90: 1, latenessP99: 0.1, calibrationMS: math.NaN()}
	// The floor is 1.5 ms (the larger read lag); the degradation 2.5 ms
	// (both sides' read lag): +2 ms is past the one, within the other.
	if m := verdictOf(NewConfig()); m.Verdict != Inconclusive || m.Degradation != 2.5 || !strings.Contains(m.Note, "degraded") {
		t.Errorf("+2 ms with degraded runs (read lag 1.5 and 1 ms): %+v, want inconclusive, degradation 2.5 ms", m)
	}
	b.noise.degraded = false
	if m := verdictOf(NewConfig()); m.Verdict != Worse || m.Degradation != 1.5 {
		t.Errorf("+2 ms with A degraded by 1.5 ms: %+v, want worse past a 1.5 ms degradation", m)
	}
	a.noise, b.noise = noise{readLagP90: math.NaN(), latenessP99: math.NaN(), calibrationMS: math.NaN()}, noise{readLagP90: math.NaN(), latenessP99: math.NaN(), calibrationMS: math.NaN()}
	cfg := NewConfig()
	cfg.MinEffect = 0.3
	if m := verdictOf(cfg); m.Verdict != NoDifference || !strings.Contains(m.FloorWhy, "30% minimum effect") {
		t.Errorf("+2 ms (+20 %%) with --min-effect 30%%: %+v, want no difference", m)
	}
}

// TestEquivalentWithin: runs of 4000 requests from one distribution are
// equivalent within 10 % in TTFT p50 (its interval is a few percent
// wide) and not within 0.1 %.
func TestEquivalentWithin(t *testing.T) {
	rng := rand.New(rand.NewPCG(15, 16))
	a, b := simRun(rng, 4000, 0), simRun(rng, 4000, 0)
	cfg := NewConfig()
	cfg.EquivalentWithin = 0.10
	res, err := Compare(a, b, cfg)
	if err != nil {
		t.Fatal(err)
	}
	if m, _ := res.Metric("ttft.p50"); m.Verdict != Equivalent {
		t.Errorf("within 10 %%: %+v, want equivalent", m)
	}
	cfg.EquivalentWithin = 0.001
	res, _ = Compare(a, b, cfg)
	if m, _ := res.Metric("ttft.p50"); m.Verdict != NoDifference {
		t.Errorf("within 0.1 %%: %+v, want no significant difference", m)
	}
}

// TestDegradationOfReplicates: a side's value is the mean of its runs',
// so one degraded run of three moves it by a third of that run's read
// lag: a +2 ms change with one A run degraded by 4.5 ms is worse (the
// degradation is 1.5 ms), and inconclusive when all three are.
func TestDegradationOfReplicates(t *testing.T) {
	rng := rand.New(rand.NewPCG(15, 16))
	var as, bs []*Run
	for range 3 {
		as, bs = append(as, simRun(rng, 2000, 0)), append(bs, simRun(rng, 2000, 2))
	}
	verdictOf := func() Metric {
		t.Helper()
		return ttftP50(t, as, bs, NewConfig())
	}
	as[0].noise = noise{degraded: true, readLagP90: 4.5, latenessP99: 0.1, calibrationMS: math.NaN()}
	if m := verdictOf(); m.Verdict != Worse || m.Degradation != 1.5 {
		t.Errorf("+2 ms, one A run of three degraded by 4.5 ms: %+v, want worse past a 1.5 ms degradation", m)
	}
	for _, r := range as {
		r.noise = as[0].noise
	}
	if m := verdictOf(); m.Verdict != Inconclusive || m.Degradation != 4.5 {
		t.Errorf("+2 ms, every A run degraded by 4.5 ms: %+v, want inconclusive within a 4.5 ms degradation", m)
	}
}

// TestDegradationHidesNoChange: with no change, a degraded measurement
// whose error exceeds the noise floor cannot say "no difference" (it
// could hide a change the floor lets through) nor "equivalent" past the
// margin: inconclusive. One within the floor (a single run a side: its
// read lag is the floor) leaves no difference.
func TestDegradationHidesNoChange(t *testing.T) {
	rng := rand.New(rand.NewPCG(17, 18))
	a, b := simRun(rng, 2000, 0), simRun(rng, 2000, 0)
	verdictOf := func(cfg Config) Metric {
		t.Helper()
		return ttftP50(t, []*Run{a}, []*Run{b}, cfg)
	}
	if m := verdictOf(NewConfig()); m.Verdict != NoDifference {
		t.Fatalf("the same distribution: %+v, want no difference", m)
	}
	// Both sides degraded by 2 ms: 4 ms of possible error, past the 2 ms
	// floor (the larger read lag).
	a.noise = noise{degraded: true, readLagP90: 2, latenessP99: 0.1, calibrationMS: math.NaN()}
	b.noise = a.noise
	if m := verdictOf(NewConfig()); m.Verdict != Inconclusive || m.Floor != 2 || !strings.Contains(m.Note, "may hide a change of up to 4") {
		t.Errorf("no change, both sides degraded by 2 ms: %+v, want inconclusive", m)
	}
	cfg := NewConfig()
	cfg.EquivalentWithin = 0.3 // ±3 ms of a 10 ms A: less than the 4 ms
	if m := verdictOf(cfg); m.Verdict != Inconclusive {
		t.Errorf("no change within ±30 %%, degraded by 4 ms: %+v, want inconclusive", m)
	}
	cfg.EquivalentWithin = 0.5 // ±5 ms
	if m := verdictOf(cfg); m.Verdict != Equivalent {
		t.Errorf("no change within ±50 %%, degraded by 4 ms: %+v, want equivalent", m)
	}
	b.noise = noise{readLagP90: math.NaN(), latenessP99: math.NaN(), calibrationMS: math.NaN()}
	if m := verdictOf(NewConfig()); m.Verdict != NoDifference || m.Degradation != 2 || m.Floor != 2 {
		t.Errorf("no change, one side degraded by its own 2 ms floor: %+v, want no difference", m)
	}
}

// ttftP50 is the ttft.p50 metric of comparing the runs as with bs.
func ttftP50(t *testing.T, as, bs []*Run, cfg Config) Metric {
	t.Helper()
	res, err := CompareGroups(as, bs, cfg)
	if err != nil {
		t.Fatal(err)
	}
	m, _ := res.Metric("ttft.p50")
	return m
}

// TestNotesFamilyLevel checks the note on the simultaneous intervals
// prints the family's error rate as a person writes it: 5 %, not the
// float 5.000000000000004 that 100·(1 − 0.95) is.
func TestNotesFamilyLevel(t *testing.T) {
	r := &Result{Level: 0.95, Tail: 0.004, RunsA: 2, RunsB: 2, Metrics: []Metric{{Verdict: NoDifference}, {Verdict: NoDifference}}}
	got := strings.Join(notes(r, sideNoise{}, sideNoise{}), "\n")
	if !strings.Contains(got, "the 2 intervals hold together at 95% (each cuts 0.4% of resamples from each end), so the chance that any metric is called changed by noise alone is at most 5%") {
		t.Errorf("notes:\n%s", got)
	}
}
