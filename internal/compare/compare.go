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
	// DefaultResamples is the number of bootstrap resamples; the ends of
	// a 95 % interval then rest on 25 resamples each.
	DefaultResamples = 1000
	// DefaultSeed seeds the bootstrap draws.
	DefaultSeed = 1
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
}

// NewConfig returns a Config with the Default constants.
func NewConfig() Config {
	return Config{Level: DefaultLevel, Resamples: DefaultResamples, Seed: DefaultSeed}
}

// Validate reports every problem of c at once.
func (c Config) Validate() error {
	var errs []error
	if !(c.Level > 0 && c.Level < 1) {
		errs = append(errs, fmt.Errorf("Level %v: want a confidence level between 0 and 1, such as 0.95", c.Level))
	}
	if c.Resamples < 100 {
		errs = append(errs, fmt.Errorf("Resamples %d: want at least 100 (1000 is usual)", c.Resamples))
	}
	return errors.Join(errs...)
}

// Verdict is what a metric's interval says of B against A.
type Verdict string

// The verdicts.
const (
	// Better: the interval excludes 0 on the metric's good side.
	Better Verdict = "better"
	// Worse: the interval excludes 0 on the metric's bad side.
	Worse Verdict = "worse"
	// NoDifference: the interval contains 0.
	NoDifference Verdict = "no_significant_difference"
	// NotAvailable: a side has no value for the metric (no streamed
	// request for TTFT, no goodput SLOs, no server cache counts).
	NotAvailable Verdict = "n/a"
)

type metricKind uint8

const (
	kindPercentile metricKind = iota
	kindRequestThroughput
	kindOutputThroughput
	kindTotalThroughput
	kindGoodput
	kindErrorRate
	kindCacheHit
)

// metricDef is one headline metric.
type metricDef struct {
	name   string
	unit   string
	higher bool // larger is better
	kind   metricKind
	lat    int     // kindPercentile: index into latencyTags
	p      float64 // kindPercentile: the percentile
	pi     int     // kindPercentile: index into percentiles
}

// percentiles are the latency percentiles compared.
var percentiles = [...]float64{50, 90, 99}

// metricDefs are the compared metrics in table order.
var metricDefs = func() []metricDef {
	var ds []metricDef
	for l, n := range latencyNames {
		for pi, p := range percentiles {
			ds = append(ds, metricDef{name: fmt.Sprintf("%s.p%g", n, p), unit: "ms", kind: kindPercentile, lat: l, p: p, pi: pi})
		}
	}
	return append(ds,
		metricDef{name: "request_throughput", unit: "req/s", higher: true, kind: kindRequestThroughput},
		metricDef{name: "output_token_throughput", unit: "tokens/s", higher: true, kind: kindOutputThroughput},
		metricDef{name: "total_token_throughput", unit: "tokens/s", higher: true, kind: kindTotalThroughput},
		metricDef{name: "goodput", unit: "req/s", higher: true, kind: kindGoodput},
		metricDef{name: "error_rate", unit: "ratio", kind: kindErrorRate},
		metricDef{name: "cache_hit_ratio", unit: "ratio", higher: true, kind: kindCacheHit},
	)
}()

// MetricNames returns the names of the compared metrics in table order
// ("ttft.p50" … "cache_hit_ratio").
func MetricNames() []string {
	out := make([]string, len(metricDefs))
	for i, d := range metricDefs {
		out[i] = d.name
	}
	return out
}

func metricByName(name string) (metricDef, bool) {
	for _, d := range metricDefs {
		if d.name == name {
			return d, true
		}
	}
	return metricDef{}, false
}

// Side describes one side of a comparison.
type Side struct {
	Label       string  `json:"label"`
	Dir         string  `json:"dir"`
	TraceSHA256 string  `json:"trace_sha256"`
	Model       string  `json:"model"`
	Host        string  `json:"host"`
	Requests    int     `json:"requests"`
	DurationS   float64 `json:"duration_s"`
}

// Metric is the comparison of one metric. Values are NaN where they do
// not exist (a side without the metric; a relative difference from 0).
type Metric struct {
	// Name is the metric ("ttft.p99", "output_token_throughput", …).
	Name string
	// Unit is the unit of A, B and the differences.
	Unit string
	// HigherIsBetter gives the metric's good direction.
	HigherIsBetter bool
	// A and B are the metric of each side, as summary.json gives it.
	A, B float64
	// Diff is B−A and Rel is (B−A)/A.
	Diff, Rel float64
	// DiffLow, DiffHigh and RelLow, RelHigh bound the bootstrap interval
	// of Diff and Rel at the result's level.
	DiffLow, DiffHigh float64
	RelLow, RelHigh   float64
	// Verdict says whether B is better, worse or not significantly
	// different.
	Verdict Verdict
}

// Result is the comparison of B against A.
type Result struct {
	A, B Side
	// Paired reports that requests were paired, by trace row, or by
	// fan-out request (PairedBy); Pairs counts the pairs, UnpairedA and
	// UnpairedB the measured requests of each side without a partner
	// (left out of the comparison).
	Paired               bool
	PairedBy             string
	Pairs                int
	UnpairedA, UnpairedB int
	// Level, Resamples and Seed are the bootstrap's.
	Level     float64
	Resamples int
	Seed      uint64
	// Metrics are the compared metrics in table order.
	Metrics []Metric
	// Warnings say why the runs may not be comparable.
	Warnings []string
}

// Metric returns the comparison of the named metric, and whether the
// result has it.
func (r *Result) Metric(name string) (Metric, bool) {
	for _, m := range r.Metrics {
		if m.Name == name {
			return m, true
		}
	}
	return Metric{}, false
}

// side is one side's requests ready for resampling.
type side struct {
	reqs    []request
	sorted  [nLatency][]int32 // indices of reqs with the latency, by value
	ones    []int32           // a count of 1 per request: the run itself
	goodput bool
}

func newSide(reqs []request, goodput bool) *side {
	s := &side{reqs: reqs, goodput: goodput, ones: make([]int32, len(reqs))}
	for i := range s.ones {
		s.ones[i] = 1
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
		sorted := s.sorted[l]
		var total int64
		for _, i := range sorted {
			total += int64(w[i])
		}
		if total == 0 {
			for pi := range percentiles {
				pct[l][pi] = math.NaN()
			}
			continue
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
			pct[l][pi] = lo + (hi-lo)*(rs[pi]-math.Floor(rs[pi]))
		}
	}
	var n, ok, good, osl, isl, cached, prompt int64
	for i := range s.reqs {
		c := int64(w[i])
		if c == 0 {
			continue
		}
		q := &s.reqs[i]
		n += c
		if !q.ok {
			continue
		}
		ok += c
		osl += c * q.osl
		isl += c * q.isl
		if q.good {
			good += c
		}
		if q.prompt > 0 {
			cached += c * q.cached
			prompt += c * q.prompt
		}
	}
	// The resample keeps the run's schedule and redraws what happened to
	// each request: slot i, sent at sent_i, takes the time request
	// idx[i] took (end − sent), so the benchmark duration is
	// max_i(sent_i + took_idx[i]) − first send. Redrawing the request at
	// each slot, rather than the slots, leaves the first send and the
	// spread of sends as the schedule made them; the end of the run
	// varies as the latencies of its last requests do.
	var first, last int64
	for i := range s.reqs {
		q := &s.reqs[i]
		if q.sent == 0 {
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
	// Throughputs are over the resample's benchmark duration.
	perSec := func(x int64) float64 {
		if last <= first || ok == 0 {
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
			v = perSec(ok)
		case kindOutputThroughput:
			v = perSec(osl)
		case kindTotalThroughput:
			v = perSec(isl + osl)
		case kindGoodput:
			if s.goodput {
				v = perSec(good)
			}
		case kindErrorRate:
			if n > 0 {
				v = float64(n-ok) / float64(n)
			}
		case kindCacheHit:
			if prompt > 0 {
				v = float64(cached) / float64(prompt)
			}
		}
		out[m] = v
	}
}

// Compare compares run b against run a: every metric's difference B−A
// with its bootstrap interval and verdict, and the reasons the runs may
// not be comparable. It reads nothing; a and b are not changed.
func Compare(a, b *Run, cfg Config) (*Result, error) {
	if err := cfg.Validate(); err != nil {
		return nil, err
	}
	if len(a.reqs) == 0 || len(b.reqs) == 0 {
		empty := a
		if len(a.reqs) > 0 {
			empty = b
		}
		return nil, fmt.Errorf("compare %s: the run has no measured request", empty.Label)
	}
	res := &Result{
		A: a.side(), B: b.side(), Level: cfg.Level, Resamples: cfg.Resamples, Seed: cfg.Seed,
		Warnings: comparability(a, b),
	}
	ra, rb := a.reqs, b.reqs
	// Two targets of one fan-out run pair by request (each trace request
	// went to both at the same instant); runs of one trace by trace row.
	byJob := a.FanOut && a.Dir == b.Dir && a.Target != b.Target
	pooled := len(a.replicates) > 0 || len(b.replicates) > 0
	if !cfg.Unpaired && !pooled && (byJob || a.TraceSHA256 != "" && a.TraceSHA256 == b.TraceSHA256) {
		res.PairedBy = "trace row"
		if byJob {
			res.PairedBy = "fan-out request"
		}
		pa, pb, ua, ub, why := pair(a.reqs, b.reqs, byJob)
		switch {
		case why != "":
			res.Warnings = append(res.Warnings, "requests not paired: "+why)
		case len(pa) < 2:
			res.Warnings = append(res.Warnings, fmt.Sprintf("requests not paired: only %d trace rows are in both runs", len(pa)))
		default:
			ra, rb = pa, pb
			res.Paired, res.Pairs, res.UnpairedA, res.UnpairedB = true, len(pa), ua, ub
			if ua+ub > 0 {
				res.Warnings = append(res.Warnings, fmt.Sprintf("%d requests of A and %d of B have no partner of the same trace row and are left out", ua, ub))
			}
		}
	}
	sa := newSide(ra, a.Goodput)
	sb := newSide(rb, b.Goodput)
	nm := len(metricDefs)
	va, vb := make([]float64, nm), make([]float64, nm)
	sa.eval(nil, nil, va)
	sb.eval(nil, nil, vb)

	// The bootstrap: counts per request, drawn with replacement; a
	// paired resample draws pairs, so both sides get the same counts.
	rng := rand.New(rand.NewPCG(cfg.Seed, 0x5eed_c0de_ba5e_f00d))
	ia, wa := make([]int32, len(ra)), make([]int32, len(ra))
	ib, wb := ia, wa
	if !res.Paired {
		ib, wb = make([]int32, len(rb)), make([]int32, len(rb))
	}
	diffs := make([][]float64, nm)
	rels := make([][]float64, nm)
	ra2, rb2 := make([]float64, nm), make([]float64, nm)
	for range cfg.Resamples {
		draw(rng, ia, wa)
		if !res.Paired {
			draw(rng, ib, wb)
		}
		sa.eval(ia, wa, ra2)
		sb.eval(ib, wb, rb2)
		for m := range nm {
			d := rb2[m] - ra2[m]
			if math.IsNaN(d) {
				continue
			}
			diffs[m] = append(diffs[m], d)
			if ra2[m] != 0 {
				rels[m] = append(rels[m], d/ra2[m])
			}
		}
	}
	tail := (1 - cfg.Level) / 2 * 100
	for m, d := range metricDefs {
		x := Metric{Name: d.name, Unit: d.unit, HigherIsBetter: d.higher, A: va[m], B: vb[m],
			Diff: vb[m] - va[m], Rel: math.NaN(),
			DiffLow: math.NaN(), DiffHigh: math.NaN(), RelLow: math.NaN(), RelHigh: math.NaN(), Verdict: NotAvailable}
		if va[m] != 0 {
			x.Rel = x.Diff / va[m]
		}
		// An interval needs most resamples to have the metric: a metric
		// that a resample can lose (a rare streamed request) is too thin.
		if !math.IsNaN(x.Diff) && len(diffs[m]) >= cfg.Resamples*9/10 {
			x.DiffLow, x.DiffHigh = interval(diffs[m], tail, x.Diff, d.kind)
			if len(rels[m]) >= cfg.Resamples*9/10 {
				x.RelLow, x.RelHigh = interval(rels[m], tail, x.Rel, d.kind)
			}
			x.Verdict = NoDifference
			if up, down := x.DiffLow > 0, x.DiffHigh < 0; up || down {
				if up == d.higher {
					x.Verdict = Better
				} else {
					x.Verdict = Worse
				}
			}
		}
		res.Metrics = append(res.Metrics, x)
	}
	return res, nil
}

// interval is the percentile interval of the resampled values vs (which
// it sorts), tail percent cut from each end. A throughput's resamples
// redraw the response times of the run's last requests, which lengthens
// the run more often than it shortens it, so the percentile interval
// leans away from the observed value; a throughput's interval is the
// union of the percentile interval and its reflection about the observed
// value (the basic bootstrap interval), which holds the observed value.
func interval(vs []float64, tail, observed float64, kind metricKind) (lo, hi float64) {
	slices.Sort(vs)
	lo, hi = summary.Percentile(vs, tail), summary.Percentile(vs, 100-tail)
	switch kind {
	case kindRequestThroughput, kindOutputThroughput, kindTotalThroughput, kindGoodput:
		if !math.IsNaN(observed) {
			lo, hi = min(lo, 2*observed-hi), max(hi, 2*observed-lo)
		}
	}
	return lo, hi
}

// draw fills idx with len(idx) draws with replacement from 0…len−1 and w
// with how many times each was drawn.
func draw(rng *rand.Rand, idx, w []int32) {
	clear(w)
	n := len(w)
	for i := range idx {
		k := int32(rng.IntN(n))
		idx[i] = k
		w[k]++
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

func (r *Run) side() Side {
	var first, last int64
	for i := range r.reqs {
		if q := &r.reqs[i]; q.sent != 0 {
			if first == 0 || q.sent < first {
				first = q.sent
			}
			last = max(last, q.end)
		}
	}
	return Side{Label: r.Label, Dir: r.Dir, TraceSHA256: r.TraceSHA256, Model: r.Model, Host: r.Host,
		Requests: len(r.reqs), DurationS: float64(last-first) / 1e9}
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
	for _, q := range a.notes {
		w = append(w, "A "+a.Label+": "+q)
	}
	for _, q := range b.notes {
		w = append(w, "B "+b.Label+": "+q)
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

func short(sha string) string {
	if len(sha) > 12 {
		return sha[:12]
	}
	return sha
}
