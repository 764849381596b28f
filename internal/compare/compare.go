package compare

import (
	"errors"
	"fmt"
	"math"
	"math/rand/v2"
	"slices"

	"github.com/reprise-bench/reprise/engine/summary"
)

// Defaults of [Config], as [NewConfig] sets them.
const (
	// DefaultLevel is the confidence level of the intervals.
	DefaultLevel = 0.95
	// DefaultResamples is the number of bootstrap resamples: the
	// simultaneous intervals of ~18 metrics cut about 0.2 % from each
	// end of each, which 2000 resamples still rest on a few draws.
	DefaultResamples = 2000
	// DefaultSeed seeds the bootstrap draws.
	DefaultSeed = 1
	// DefaultMinEffect is the smallest relative change called a change.
	DefaultMinEffect = 0.02
	// Parts is the number of consecutive parts (by send time) in which a
	// change between single runs must show: see [CompareGroups].
	Parts = 5
	// PartsAgreeing is how many of the Parts must change the same way.
	PartsAgreeing = 4
	// Blocks is the number of blocks of consecutive requests (by send
	// time) a run is resampled in: a machine's stall slows requests in
	// a row, which resampling requests one by one would treat as
	// independent luck.
	Blocks = 20
)

// Config says how runs are compared. Build it with [NewConfig].
type Config struct {
	// Level is the confidence level of the intervals, in (0, 1).
	Level float64
	// Resamples is the number of bootstrap resamples (at least 100).
	Resamples int
	// Seed seeds the bootstrap: equal seeds give equal intervals.
	Seed uint64
	// Unpaired resamples each side on its own even when the runs replayed
	// the same trace.
	Unpaired bool
	// MinEffect is the smallest relative change (of A) that is called
	// a change, however narrow its interval: 0.02 is 2 %.
	MinEffect float64
	// EquivalentWithin, when positive, calls a metric [Equivalent] when
	// the interval of its relative change lies within ±EquivalentWithin.
	EquivalentWithin float64
}

// NewConfig returns a Config with the Default constants.
func NewConfig() Config {
	return Config{Level: DefaultLevel, Resamples: DefaultResamples, Seed: DefaultSeed, MinEffect: DefaultMinEffect}
}

// Validate reports every problem of c at once.
func (c Config) Validate() error {
	var errs []error
	if !(c.Level > 0 && c.Level < 1) {
		errs = append(errs, fmt.Errorf("Level %v: want a confidence level between 0 and 1, such as 0.95", c.Level))
	}
	if c.Resamples < 100 {
		errs = append(errs, fmt.Errorf("Resamples %d: want at least 100 (2000 is usual)", c.Resamples))
	}
	if !(c.MinEffect >= 0 && c.MinEffect < 1) {
		errs = append(errs, fmt.Errorf("MinEffect %v: want a fraction from 0 to below 1, such as 0.02 for 2%%", c.MinEffect))
	}
	if !(c.EquivalentWithin >= 0 && c.EquivalentWithin < 1) {
		errs = append(errs, fmt.Errorf("EquivalentWithin %v: want a fraction from 0 to below 1, such as 0.02 for 2%%", c.EquivalentWithin))
	}
	return errors.Join(errs...)
}

// side is one side's requests ready for resampling.
type side struct {
	reqs    []request
	sorted  [nLatency][]int32 // indices of reqs with the latency, by value
	ones    []int32           // a count of 1 per request: the run itself
	order   []int32           // indices of reqs by send time (never sent last)
	parts   [Parts][]int32    // a count of 1 per request of each part of the run, 0 elsewhere
	goodput bool
}

func newSide(reqs []request, goodput bool) *side {
	s := &side{reqs: reqs, goodput: goodput, ones: make([]int32, len(reqs)), order: make([]int32, len(reqs))}
	for i := range s.ones {
		s.ones[i] = 1
		s.order[i] = int32(i)
	}
	slices.SortStableFunc(s.order, func(x, y int32) int {
		a, b := reqs[x].sent, reqs[y].sent
		switch {
		case a == b:
			return 0
		case a == 0:
			return 1
		case b == 0:
			return -1
		case a < b:
			return -1
		}
		return 1
	})
	for p := range Parts {
		s.parts[p] = make([]int32, len(reqs))
		for _, i := range s.order[p*len(reqs)/Parts : (p+1)*len(reqs)/Parts] {
			s.parts[p][i] = 1
		}
	}
	for l := range nLatency {
		idx := make([]int32, 0, len(reqs))
		for i := range reqs {
			if !math.IsNaN(reqs[i].lat[l]) {
				idx = append(idx, int32(i))
			}
		}
		slices.SortStableFunc(idx, func(x, y int32) int {
			a, b := reqs[x].lat[l], reqs[y].lat[l]
			switch {
			case a < b:
				return -1
			case a > b:
				return 1
			}
			return 0
		})
		s.sorted[l] = idx
	}
	return s
}

// eval writes every metric of a resample to out, in metricDefs order:
// idx are the requests drawn, one per request of the run, and w how many
// times each was drawn; nil for both evaluates the run itself.
func (s *side) eval(idx, w []int32, out []float64) {
	if w == nil {
		w = s.ones
	}
	var pct [nLatency][len(percentiles)]float64
	for l := range nLatency {
		pct[l] = s.latencyPercentiles(l, w)
	}
	t := s.count(w)
	first, last := s.span(idx, w)
	// Throughputs are over the resample's benchmark duration.
	perSec := func(x int64) float64 {
		if last <= first || t.ok == 0 {
			return math.NaN()
		}
		return float64(x) / (float64(last-first) / 1e9)
	}
	for m, d := range metricDefs {
		v := math.NaN()
		switch d.kind {
		case kindPercentile:
			v = pct[d.lat][d.pi]
		case kindRequestThroughput:
			v = perSec(t.ok)
		case kindOutputThroughput:
			v = perSec(t.osl)
		case kindTotalThroughput:
			v = perSec(t.isl + t.osl)
		case kindGoodput:
			if s.goodput {
				v = perSec(t.good)
			}
		case kindErrorRate:
			if t.n > 0 {
				v = float64(t.n-t.ok) / float64(t.n)
			}
		case kindCacheHit:
			if t.prompt > 0 {
				v = float64(t.cached) / float64(t.prompt)
			}
		}
		out[m] = v
	}
}

// latencyPercentiles returns the percentiles of latency l over the requests
// drawn w times each, NaN when none has it.
func (s *side) latencyPercentiles(l int, w []int32) [len(percentiles)]float64 {
	var pct [len(percentiles)]float64
	sorted := s.sorted[l]
	var total int64
	for _, i := range sorted {
		total += int64(w[i])
	}
	if total == 0 {
		for pi := range percentiles {
			pct[pi] = math.NaN()
		}
		return pct
	}
	// The order statistics around each rank r = (n−1)·p/100, as
	// summary.Percentile interpolates between them.
	var ks [2 * len(percentiles)]int64
	var rs [len(percentiles)]float64
	for pi, p := range percentiles {
		r := float64(total-1) * p / 100
		rs[pi] = r
		ks[2*pi], ks[2*pi+1] = int64(math.Floor(r)), min(int64(math.Ceil(r)), total-1)
	}
	var vs [2 * len(percentiles)]float64
	var cum int64
	j := 0
	for _, i := range sorted {
		cum += int64(w[i])
		for j < len(ks) && ks[j] < cum {
			vs[j] = s.reqs[i].lat[l]
			j++
		}
		if j == len(ks) {
			break
		}
	}
	for pi := range percentiles {
		lo, hi := vs[2*pi], vs[2*pi+1]
		pct[pi] = lo + (hi-lo)*(rs[pi]-math.Floor(rs[pi]))
	}
	return pct
}

// tally is the weighted counts of a resample's requests.
type tally struct {
	n, ok, good int64 // requests; the ok ones; the ok ones within the SLOs
	osl, isl    int64 // output and input tokens of the ok ones
	// cached and prompt are the server's prompt tokens (cached, all) of
	// the ok requests that report them.
	cached, prompt int64
}

// count tallies the requests drawn w times each.
func (s *side) count(w []int32) tally {
	var t tally
	for i := range s.reqs {
		c := int64(w[i])
		if c == 0 {
			continue
		}
		q := &s.reqs[i]
		t.n += c
		if !q.ok {
			continue
		}
		t.ok += c
		t.osl += c * q.osl
		t.isl += c * q.isl
		if q.good {
			t.good += c
		}
		if q.prompt > 0 {
			t.cached += c * q.cached
			t.prompt += c * q.prompt
		}
	}
	return t
}

// span returns the first send and the end of a resample's benchmark
// (Unix ns; 0 for none).
//
// The resample keeps the run's schedule and redraws what happened to
// each request: slot i, sent at sent_i, takes the time request idx[i]
// took (end − sent), so the benchmark duration is
// max_i(sent_i + took_idx[i]) − first send. Redrawing the request at
// each slot, rather than the slots, leaves the first send and the
// spread of sends as the schedule made them; the end of the run varies
// as the latencies of its last requests do.
func (s *side) span(idx, w []int32) (first, last int64) {
	for i := range s.reqs {
		q := &s.reqs[i]
		if q.sent == 0 || idx == nil && w[i] == 0 {
			// Unsent, or outside the part of the run evaluated.
			continue
		}
		if first == 0 || q.sent < first {
			first = q.sent
		}
		k := i
		if idx != nil {
			k = int(idx[i])
		}
		if d := &s.reqs[k]; d.sent != 0 {
			last = max(last, q.sent+d.end-d.sent)
		}
	}
	return first, last
}

// Compare compares run b against run a: [CompareGroups] with one run a
// side.
func Compare(a, b *Run, cfg Config) (*Result, error) {
	return CompareGroups([]*Run{a}, []*Run{b}, cfg)
}

// group is one side of a comparison: its runs ready for resampling.
type group struct {
	runs  []*Run
	sides []*side
}

// eval writes the side's metrics for one resample to out: the mean, over
// R runs drawn with replacement (R the number of runs; the runs
// themselves when rng is nil), of each drawn run's metrics on a block
// resample of its requests. idx and w are scratch of the largest run's
// size; pidx and pw, when not nil, are the paired draw used instead.
func (g *group) eval(rng *rand.Rand, pidx, pw []int32, idx, w []int32, one, out []float64) {
	g.mean(out, one, func(k int) {
		sd := g.sides[k]
		if rng != nil && len(g.sides) > 1 {
			sd = g.sides[rng.IntN(len(g.sides))]
		}
		switch {
		case rng == nil:
			sd.eval(nil, nil, one)
		case pidx != nil:
			sd.eval(pidx, pw, one)
		default:
			n := len(sd.reqs)
			drawBlocks(rng, sd.order, idx[:n], w[:n])
			sd.eval(idx[:n], w[:n], one)
		}
	})
}

// evalPart writes the side's metrics on part p of each of its runs (the
// mean over runs) to out.
func (g *group) evalPart(p int, one, out []float64) {
	g.mean(out, one, func(k int) { g.sides[k].eval(nil, g.sides[k].parts[p], one) })
}

// mean writes to out the mean over the group's len(sides) evaluations
// (evalK writes the k-th into one) of each metric, NaN where none had it.
func (g *group) mean(out, one []float64, evalK func(k int)) {
	clear(out)
	cnt := make([]int, len(out))
	for k := range g.sides {
		evalK(k)
		for m, v := range one {
			if !math.IsNaN(v) {
				out[m] += v
				cnt[m]++
			}
		}
	}
	for m := range out {
		if cnt[m] == 0 {
			out[m] = math.NaN()
		} else {
			out[m] /= float64(cnt[m])
		}
	}
}

// CompareGroups compares side B (runs b, replicates of one setting)
// against side A: every metric's difference B−A with its bootstrap
// interval, noise floor and verdict, and the reasons the sides may not be
// comparable. A side's metric is the mean of its runs' metrics.
//
// The bootstrap resamples each side as it was measured: runs with
// replacement (so that run-to-run variation is in the interval), then
// each drawn run's requests in [Blocks] blocks of consecutive requests
// (so that a stall of the machine, which slows requests in a row, is
// not taken for independent luck). With a side of two or more runs the
// resampled spread is widened by √(R/(R−1)), the shortfall of a
// bootstrap over R units. Two single runs of one trace are paired by
// trace row (two targets of a fan-out run by request): both sides draw
// the same blocks.
//
// The intervals are simultaneous: each cuts the same share of resamples
// from its ends, chosen so that in Level of the resamples every metric
// lies within its interval at once. The family-wise error over the
// comparison's metrics is then at most 1 − Level, where separate
// intervals would call one metric in ten significant by chance now and
// then. A difference is a change only when its interval excludes 0, it
// exceeds the noise floor (see [noiseFloor]), when a side has a single
// run it shows the same way in at least [PartsAgreeing] of the [Parts]
// consecutive parts of the runs (a stall of the machine that slowed one
// stretch of one run is not a change of the server), and, when a run's
// measurement was degraded, it exceeds the degradation. It reads
// nothing; the runs are not changed.
func CompareGroups(a, b []*Run, cfg Config) (*Result, error) {
	if err := checkGroups(a, b, cfg); err != nil {
		return nil, err
	}
	res := newResult(a, b, cfg)
	ga, gb, paired := pairGroups(res, a, b, cfg)
	nm := len(metricDefs)
	one := make([]float64, nm)
	va, vb := make([]float64, nm), make([]float64, nm)
	ga.eval(nil, nil, nil, nil, nil, one, va)
	gb.eval(nil, nil, nil, nil, nil, one, vb)
	diffs, rels := bootstrap(ga, gb, paired, cfg, widening(len(a), len(b)), one, va, vb)
	// Metrics with enough resamples form the family.
	var family []int
	for m := range nm {
		if !math.IsNaN(vb[m]-va[m]) && countOK(diffs[m]) >= cfg.Resamples*9/10 {
			family = append(family, m)
		}
	}
	res.Tail = simultaneousTail(diffs, family, cfg.Level)
	j := judge{cfg: cfg, res: res, va: va, vb: vb, diffs: diffs, rels: rels, family: family,
		df: replicateDF(len(a), len(b)), floorsA: noiseOf(a), floorsB: noiseOf(b)}
	// The same runs on both sides (a run against itself) share their
	// measurement errors: they cancel, and no degradation moves the
	// difference.
	j.same = slices.EqualFunc(a, b, func(x, y *Run) bool { return x == y || x.Dir != "" && x.Dir == y.Dir && x.Target == y.Target })
	// Single runs leave run-to-run variation unmeasured, except two
	// targets of one fan-out run, which met the same moments.
	j.unreplicated = (len(a) == 1 || len(b) == 1) && res.PairedBy != "fan-out request"
	if j.unreplicated {
		j.agree = partsAgreeing(ga, gb, one, va, vb)
	}
	for m, d := range metricDefs {
		res.Metrics = append(res.Metrics, j.metric(m, d))
	}
	res.Notes = notes(res, j.floorsA, j.floorsB)
	if m, note, ok := compareAccuracy(a, b, cfg.Level); ok {
		m.Note = note
		res.Metrics = append(res.Metrics, m)
	}
	return res, nil
}

// checkGroups reports why the sides a and b cannot be compared under cfg:
// an invalid cfg, a side without runs, or a run without requests.
func checkGroups(a, b []*Run, cfg Config) error {
	if err := cfg.Validate(); err != nil {
		return err
	}
	if len(a) == 0 || len(b) == 0 {
		return errors.New("compare: a side has no run")
	}
	for _, r := range append(slices.Clone(a), b...) {
		if len(r.reqs) == 0 {
			return fmt.Errorf("compare %s: the run has no measured request", r.Label)
		}
	}
	return nil
}

// newResult starts the result of comparing b against a: the sides, the
// settings, and the warnings about replicates that differ, sides that may
// not be comparable and replicates measured badly.
func newResult(a, b []*Run, cfg Config) *Result {
	res := &Result{
		A: groupSide(a), B: groupSide(b), RunsA: len(a), RunsB: len(b),
		Level: cfg.Level, Resamples: cfg.Resamples, Seed: cfg.Seed, Blocks: Blocks,
	}
	for _, x := range a[1:] {
		res.Warnings = append(res.Warnings, replicateWarnings("A", a[0], x)...)
	}
	for _, x := range b[1:] {
		res.Warnings = append(res.Warnings, replicateWarnings("B", b[0], x)...)
	}
	res.Warnings = append(res.Warnings, comparability(a[0], b[0])...)
	for _, x := range a[1:] {
		res.Warnings = append(res.Warnings, qualityWarnings("A", x)...)
	}
	for _, x := range b[1:] {
		res.Warnings = append(res.Warnings, qualityWarnings("B", x)...)
	}
	return res
}

// pairGroups readies the sides a and b for resampling. Two single runs of
// one trace (or two targets of one fan-out run) are paired by trace row
// (by request), unless cfg.Unpaired or too few requests pair; res records
// the pairing and its warnings. paired reports whether they were.
func pairGroups(res *Result, a, b []*Run, cfg Config) (ga, gb *group, paired bool) {
	ga = &group{runs: a}
	gb = &group{runs: b}
	if len(a) == 1 && len(b) == 1 {
		ra, rb := a[0], b[0]
		// Two targets of one fan-out run pair by request (each trace
		// request went to both at the same instant); runs of one trace
		// by trace row.
		byJob := ra.FanOut && ra.Dir == rb.Dir && ra.Target != rb.Target
		if !cfg.Unpaired && (byJob || ra.TraceSHA256 != "" && ra.TraceSHA256 == rb.TraceSHA256) {
			res.PairedBy = "trace row"
			if byJob {
				res.PairedBy = "fan-out request"
			}
			pa, pb, ua, ub, why := pair(ra.reqs, rb.reqs, byJob)
			switch {
			case why != "":
				res.Warnings = append(res.Warnings, "requests not paired: "+why)
			case len(pa) < 2:
				res.Warnings = append(res.Warnings, fmt.Sprintf("requests not paired: only %d trace rows are in both runs", len(pa)))
			default:
				paired = true
				ga.sides, gb.sides = []*side{newSide(pa, ra.Goodput)}, []*side{newSide(pb, rb.Goodput)}
				res.Paired, res.Pairs, res.UnpairedA, res.UnpairedB = true, len(pa), ua, ub
				if ua+ub > 0 {
					res.Warnings = append(res.Warnings, fmt.Sprintf("%d requests of A and %d of B have no partner of the same trace row and are left out", ua, ub))
				}
			}
		}
		if !paired {
			res.PairedBy = ""
		}
	}
	if !paired {
		for _, r := range a {
			ga.sides = append(ga.sides, newSide(r.reqs, r.Goodput))
		}
		for _, r := range b {
			gb.sides = append(gb.sides, newSide(r.reqs, r.Goodput))
		}
	}
	return ga, gb, paired
}

// widening is √(R/(R−1)) for the smaller replicated side of sides of ra
// and rb runs (1 without).
func widening(ra, rb int) float64 {
	if r := min(ra, rb); r >= 2 {
		return math.Sqrt(float64(r) / float64(r-1))
	}
	if r := max(ra, rb); r >= 2 {
		return math.Sqrt(float64(r) / float64(r-1))
	}
	return 1
}

// bootstrap draws cfg.Resamples resamples of each side, seeded (a paired
// resample draws the same blocks of pairs for both), and returns per
// metric and resample the difference B−A and the relative difference
// B/A−1, their spread about the observed va and vb widened by widen;
// NaN where missing. one is scratch of a metric row.
func bootstrap(ga, gb *group, paired bool, cfg Config, widen float64, one, va, vb []float64) (diffs, rels [][]float64) {
	nm := len(metricDefs)
	rng := rand.New(rand.NewPCG(cfg.Seed, 0x5eed_c0de_ba5e_f00d))
	maxN := 0
	for _, g := range []*group{ga, gb} {
		for _, sd := range g.sides {
			maxN = max(maxN, len(sd.reqs))
		}
	}
	idx, w := make([]int32, maxN), make([]int32, maxN)
	var pidx, pw []int32
	if paired {
		pidx, pw = make([]int32, maxN), make([]int32, maxN)
	}
	diffs = make([][]float64, nm) // [metric][resample], NaN where missing
	rels = make([][]float64, nm)
	for m := range nm {
		diffs[m], rels[m] = make([]float64, cfg.Resamples), make([]float64, cfg.Resamples)
	}
	ra2, rb2 := make([]float64, nm), make([]float64, nm)
	for k := range cfg.Resamples {
		if paired {
			drawBlocks(rng, ga.sides[0].order, pidx, pw)
		}
		ga.eval(rng, pidx, pw, idx, w, one, ra2)
		gb.eval(rng, pidx, pw, idx, w, one, rb2)
		for m := range nm {
			d := (rb2[m] - ra2[m] - (vb[m] - va[m])) * widen
			d += vb[m] - va[m]
			diffs[m][k], rels[m][k] = d, math.NaN()
			if !math.IsNaN(d) && ra2[m] != 0 {
				rel := (rb2[m]/ra2[m] - 1)
				if va[m] != 0 {
					obs := vb[m]/va[m] - 1
					rel = obs + (rel-obs)*widen
				}
				rels[m][k] = rel
			}
		}
	}
	return diffs, rels
}

// partsAgreeing counts per metric the [Parts] parts of the runs whose
// change goes the whole run's way (va to vb). one is scratch of a metric
// row.
func partsAgreeing(ga, gb *group, one, va, vb []float64) []int {
	nm := len(metricDefs)
	agree := make([]int, nm)
	pa, pb := make([]float64, nm), make([]float64, nm)
	for p := range Parts {
		ga.evalPart(p, one, pa)
		gb.evalPart(p, one, pb)
		for m := range nm {
			// A part changes the run's way when it moves by at
			// least half the whole run's change.
			if d, all := pb[m]-pa[m], vb[m]-va[m]; all > 0 && d >= all/2 || all < 0 && d <= all/2 {
				agree[m]++
			}
		}
	}
	return agree
}

// judge holds what judging each metric of a comparison needs.
type judge struct {
	cfg          Config
	res          *Result     // its Tail, sides and pairing set
	va, vb       []float64   // the sides' metrics, observed
	diffs, rels  [][]float64 // the bootstrap's, per metric and resample
	family       []int       // the metrics of the simultaneous intervals
	df           int         // replicateDF
	floorsA      sideNoise
	floorsB      sideNoise
	same         bool  // the same runs on both sides
	unreplicated bool  // a side has a single run (not a fan-out pair)
	agree        []int // per metric, partsAgreeing (unreplicated only)
}

// metric returns metric m (of definition d) with its difference and,
// when it is in the family, its intervals, noise floor, degradation and
// verdict.
func (j *judge) metric(m int, d metricDef) Metric {
	va, vb, res, cfg := j.va, j.vb, j.res, j.cfg
	x := Metric{Name: d.name, Unit: d.unit, HigherIsBetter: d.higher, A: va[m], B: vb[m],
		Diff: vb[m] - va[m], Rel: math.NaN(),
		DiffLow: math.NaN(), DiffHigh: math.NaN(), RelLow: math.NaN(), RelHigh: math.NaN(), Verdict: NotAvailable}
	if va[m] != 0 {
		x.Rel = x.Diff / va[m]
	}
	if !slices.Contains(j.family, m) {
		return x
	}
	// With replicates, the spread of the run means rests on a few runs:
	// the interval is widened from the normal's quantile to Student's t
	// (replicateDF).
	k := 1.0
	if j.df > 0 {
		z := math.Sqrt2 * math.Erfinv(1-2*res.Tail)
		k = summary.StudentTQuantile(1-res.Tail, j.df) / z
	}
	lo, hi := interval(j.diffs[m], res.Tail, x.Diff, d.kind)
	x.DiffLow, x.DiffHigh = widened(lo, hi, x.Diff, k)
	if countOK(j.rels[m]) >= cfg.Resamples*9/10 {
		lo, hi = interval(j.rels[m], res.Tail, x.Rel, d.kind)
		x.RelLow, x.RelHigh = widened(lo, hi, x.Rel, k)
	}
	x.Floor, x.FloorWhy = noiseFloor(d, x.A, cfg.MinEffect, j.floorsA, j.floorsB, j.unreplicated)
	if !j.same {
		x.Degradation = degradation(d, x.A, j.floorsA, j.floorsB, res.A.DurationS, res.B.DurationS)
	}
	parts := -1
	if j.unreplicated && d.kind != kindErrorRate && d.kind != kindCacheHit {
		parts = j.agree[m]
	}
	x.Verdict, x.Note = verdict(d, x, cfg, parts)
	return x
}

// verdict judges one metric: equivalent when its relative interval lies
// within ±EquivalentWithin; no difference when its interval holds 0, the
// change is within the floor, or (parts ≥ 0: single runs) fewer than
// PartsAgreeing parts of the runs change its way; inconclusive when a
// degraded measurement could have made the change, or could hide one
// past the floor (or the equivalence margin) that the first two rules
// would call no difference (or equivalent); else better or worse.
func verdict(d metricDef, x Metric, cfg Config, parts int) (Verdict, string) {
	// A degraded measurement past the noise floor could hide a change the
	// floor would let through: it cannot say "no difference" (nor
	// "equivalent" past the margin), only that it cannot tell.
	hidden := x.Degradation > 0 && x.Degradation > x.Floor
	cannotTell := func(why string) (Verdict, string) {
		return Inconclusive, fmt.Sprintf("%s, but a degraded measurement may hide a change of up to %s %s", why, num(x.Degradation, x.Unit, false), x.Unit)
	}
	if e := cfg.EquivalentWithin; e > 0 && x.RelLow >= -e && x.RelHigh <= e {
		if x.Degradation > e*math.Abs(x.A) {
			return cannotTell(fmt.Sprintf("the change is within ±%g%%", e*100))
		}
		return Equivalent, ""
	}
	up, down := x.DiffLow > 0, x.DiffHigh < 0
	if !up && !down {
		if hidden {
			return cannotTell("the interval holds 0")
		}
		return NoDifference, ""
	}
	change := math.Abs(x.Diff)
	if change <= x.Floor {
		if hidden {
			return cannotTell(fmt.Sprintf("%s %s is within the noise floor", num(x.Diff, x.Unit, true), x.Unit))
		}
		return NoDifference, fmt.Sprintf("%s %s is within the noise floor %s %s (%s)", num(x.Diff, x.Unit, true), x.Unit, num(x.Floor, x.Unit, false), x.Unit, x.FloorWhy)
	}
	if parts >= 0 && parts < PartsAgreeing {
		return NoDifference, fmt.Sprintf("the change shows in only %d of the runs' %d consecutive parts: a passing stall, not the server", parts, Parts)
	}
	if x.Degradation > 0 && change <= x.Degradation {
		return Inconclusive, fmt.Sprintf("%s %s is within the %s %s a degraded measurement may account for", num(x.Diff, x.Unit, true), x.Unit, num(x.Degradation, x.Unit, false), x.Unit)
	}
	if up == d.higher {
		return Better, ""
	}
	return Worse, ""
}

// widened moves the ends of the interval lo, hi k times as far from the
// observed value.
func widened(lo, hi, observed, k float64) (float64, float64) {
	return observed - (observed-lo)*k, observed + (hi-observed)*k
}

// replicateDF is the degrees of freedom of the run-to-run spread of the
// two sides' run means, pooled: Ra + Rb − 2 (a side of one run adds
// nothing), 0 when neither side has two runs. Pooling takes the spread of
// runs to be the machine's, the same on both sides; Welch's per-metric
// degrees of freedom, from two spreads of two or three runs each, fall
// to 1 or 2 by chance and make a tenfold change unfindable.
func replicateDF(ra, rb int) int {
	if ra < 2 && rb < 2 {
		return 0
	}
	return ra + rb - 2
}

// countOK counts the values that are not NaN.
func countOK(vs []float64) int {
	n := 0
	for _, v := range vs {
		if !math.IsNaN(v) {
			n++
		}
	}
	return n
}

// simultaneousTail returns the share of resamples to cut from each end of
// every interval of the family so that, in at least level of the
// resamples, every metric of the family lies within its interval at
// once: (1−level)/2 for one metric, down to Bonferroni's
// (1−level)/(2·M) when the metrics are independent; metrics that move
// together (TTFT p50 and E2E p50) need less. Found by bisection on the
// resamples' own coverage.
func simultaneousTail(diffs [][]float64, family []int, level float64) float64 {
	hiTail := (1 - level) / 2
	if len(family) <= 1 {
		return hiTail
	}
	loTail := hiTail / float64(len(family))
	sorted := make([][]float64, len(family))
	for i, m := range family {
		sorted[i] = slices.DeleteFunc(slices.Clone(diffs[m]), math.IsNaN)
		slices.Sort(sorted[i])
	}
	n := len(diffs[family[0]])
	covers := func(tail float64) bool {
		lo, hi := make([]float64, len(family)), make([]float64, len(family))
		for i := range family {
			lo[i], hi[i] = summary.Percentile(sorted[i], tail*100), summary.Percentile(sorted[i], 100-tail*100)
		}
		inside := 0
		for k := range n {
			ok := true
			for i, m := range family {
				if v := diffs[m][k]; v < lo[i] || v > hi[i] {
					ok = false
					break
				}
			}
			if ok {
				inside++
			}
		}
		return float64(inside) >= level*float64(n)
	}
	if covers(hiTail) {
		return hiTail
	}
	for range 30 {
		mid := (loTail + hiTail) / 2
		if covers(mid) {
			loTail = mid
		} else {
			hiTail = mid
		}
	}
	return loTail
}

// interval is the percentile interval of the resampled values vs (NaN
// left out), tail (a share) cut from each end. A throughput's resamples
// redraw the response times of the run's last requests, which lengthens
// the run more often than it shortens it, so the percentile interval
// leans away from the observed value; a throughput's interval is the
// union of the percentile interval and its reflection about the observed
// value (the basic bootstrap interval), which holds the observed value.
func interval(vs []float64, tail, observed float64, kind metricKind) (lo, hi float64) {
	vs = slices.DeleteFunc(slices.Clone(vs), math.IsNaN)
	slices.Sort(vs)
	lo, hi = summary.Percentile(vs, tail*100), summary.Percentile(vs, 100-tail*100)
	switch kind {
	case kindRequestThroughput, kindOutputThroughput, kindTotalThroughput, kindGoodput:
		if !math.IsNaN(observed) {
			lo, hi = min(lo, 2*observed-hi), max(hi, 2*observed-lo)
		}
	}
	return lo, hi
}

// drawBlocks fills idx and w with a circular block resample of a run's
// n = len(idx) requests: order lists them by send time, and the slots,
// taken in that order, are filled by runs of ⌈n/Blocks⌉ consecutive
// requests starting at random places (wrapping at the end). idx[i] is the
// request drawn for request i's slot, w how many times each was drawn.
// With fewer than Blocks requests each block is one request: the plain
// bootstrap.
func drawBlocks(rng *rand.Rand, order []int32, idx, w []int32) {
	clear(w)
	n := len(idx)
	size := (n + Blocks - 1) / Blocks
	for k := 0; k < n; {
		start := rng.IntN(n)
		for j := 0; j < size && k < n; j++ {
			q := order[(start+j)%n]
			idx[order[k]] = q
			w[q]++
			k++
		}
	}
}

// pair aligns the requests of a and b by trace row (by fan-out request
// with byJob): the returned slices hold the partners at equal indices, in
// a's order. It gives a reason instead when a row appears twice in a run
// or a request has no row.
func pair(a, b []request, byJob bool) (pa, pb []request, unpairedA, unpairedB int, why string) {
	key := func(q *request) int64 {
		if byJob {
			return q.job
		}
		return q.row
	}
	at := make(map[int64]int, len(a))
	for i := range a {
		if key(&a[i]) < 0 {
			return nil, nil, 0, 0, "a request of A has no trace row"
		}
		if _, dup := at[key(&a[i])]; dup {
			return nil, nil, 0, 0, fmt.Sprintf("trace row %d appears twice in A", key(&a[i]))
		}
		at[key(&a[i])] = i
	}
	partner := make([]int, len(a))
	for i := range partner {
		partner[i] = -1
	}
	for j := range b {
		i, ok := at[key(&b[j])]
		if !ok {
			unpairedB++
			continue
		}
		if partner[i] >= 0 {
			return nil, nil, 0, 0, fmt.Sprintf("trace row %d appears twice in B", key(&b[j]))
		}
		partner[i] = j
	}
	for i, j := range partner {
		if j < 0 {
			unpairedA++
			continue
		}
		pa = append(pa, a[i])
		pb = append(pb, b[j])
	}
	return pa, pb, unpairedA, unpairedB, ""
}

// ksCritical is c(α) of the two-sample Kolmogorov–Smirnov test at
// α = 0.001: the input lengths differ when D > c(α)·√((n+m)/(n·m)).
const ksCritical = 1.949

// comparability returns why a and b may not be comparable.
func comparability(a, b *Run) []string {
	var w []string
	switch {
	case a.TraceSHA256 == b.TraceSHA256:
	case a.TraceSHA256 == "" || b.TraceSHA256 == "":
		w = append(w, fmt.Sprintf("different loads: trace_sha256 %q vs %q (one ran a synthetic load or read part of standard input)", short(a.TraceSHA256), short(b.TraceSHA256)))
	default:
		w = append(w, fmt.Sprintf("different traces: trace_sha256 %s vs %s", short(a.TraceSHA256), short(b.TraceSHA256)))
	}
	if a.Model != b.Model {
		w = append(w, fmt.Sprintf("different models: %q vs %q", a.Model, b.Model))
	}
	if a.Host != b.Host {
		w = append(w, fmt.Sprintf("different client hosts: %q vs %q", a.Host, b.Host))
	}
	if d, crit, ok := ksISL(a.reqs, b.reqs); ok && d > crit {
		w = append(w, fmt.Sprintf("different input length distributions: Kolmogorov–Smirnov D = %.3f > %.3f (α = 0.001)", d, crit))
	}
	// Inputs that were not the load's alone: the sides are not comparable.
	for _, q := range a.inputs {
		w = append(w, "A "+a.Label+": not comparable: "+q)
	}
	for _, q := range b.inputs {
		w = append(w, "B "+b.Label+": not comparable: "+q)
	}
	for _, q := range a.quality {
		w = append(w, "A "+a.Label+": "+q)
	}
	for _, q := range b.quality {
		w = append(w, "B "+b.Label+": "+q)
	}
	return w
}

// ksISL is the two-sample Kolmogorov–Smirnov statistic of the input
// lengths of a and b and its critical value; ok is false when a side has
// none.
func ksISL(a, b []request) (d, crit float64, ok bool) {
	xs := func(rs []request) []int64 {
		var v []int64
		for i := range rs {
			if rs[i].isl > 0 {
				v = append(v, rs[i].isl)
			}
		}
		slices.Sort(v)
		return v
	}
	x, y := xs(a), xs(b)
	n, m := len(x), len(y)
	if n == 0 || m == 0 {
		return 0, 0, false
	}
	i, j := 0, 0
	for i < n && j < m {
		v := min(x[i], y[j])
		for i < n && x[i] == v {
			i++
		}
		for j < m && y[j] == v {
			j++
		}
		d = max(d, math.Abs(float64(i)/float64(n)-float64(j)/float64(m)))
	}
	return d, ksCritical * math.Sqrt(float64(n+m)/float64(n*m)), true
}
