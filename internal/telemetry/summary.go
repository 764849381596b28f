package telemetry

import (
	"github.com/reprise-bench/reprise/engine/summary"
	"math"
	"slices"
	"sync"

	"github.com/reprise-bench/reprise/engine/record"
)

// MaxPointsPerSeries bounds the points the Accumulator keeps per known
// series (one per scrape): 100k scrapes is 27 hours at 1 s.
const MaxPointsPerSeries = 100_000

// Accumulator keeps, per target, the few known series the summary needs
// (see knownMetrics), each aggregated over its label sets per scrape. Feed
// it every scrape's samples with Add; it is safe for concurrent use.
type Accumulator struct {
	mu      sync.Mutex
	targets map[string]*targetSeries
	order   []string
	// every keeps every series, by family and label set (SeriesStats),
	// instead of the known families summed over their label sets.
	every bool
}

type targetSeries struct {
	scrapes, failed int
	// ok holds the times of the successful scrapes, ascending: a known
	// series absent from one of them was 0 then (servers create a series
	// at its first increment) or had vanished (a restart).
	ok      []int64
	scalars map[string][]point     // counters and gauges by family
	hists   map[string][]histPoint // histograms by family
	types   map[string]string      // the families' types
}

type point struct {
	t int64
	v float64
}

type histPoint struct {
	t       int64
	bounds  []float64 // sorted upper bounds, +Inf last
	counts  []float64 // cumulative counts, same order
	sum     float64
	count   float64
	hasData bool
}

// NewAccumulator returns an empty accumulator.
func NewAccumulator() *Accumulator {
	return &Accumulator{targets: map[string]*targetSeries{}}
}

// Add records one scrape's samples (all of one target and one time).
func (a *Accumulator) Add(samples []record.MetricSample) {
	if len(samples) == 0 {
		return
	}
	a.mu.Lock()
	defer a.mu.Unlock()
	// Aggregate each known family over its label sets for this scrape.
	type agg struct {
		t     int64
		typ   string
		v     float64
		hist  map[float64]float64
		sum   float64
		count float64
	}
	aggs := map[[2]string]*agg{}
	type scrape struct {
		page      bool  // samples of the page itself
		pageT     int64 // their time
		up, upT   int64 // 1 ok, 0 failed, -1 no reprise:scrape_up; its time
		pageCount float64
	}
	scrapes := map[string]*scrape{}
	for i := range samples {
		s := &samples[i]
		ts := a.target(s.Target)
		sc := scrapes[s.Target]
		if sc == nil {
			sc = &scrape{up: -1, pageCount: -1}
			scrapes[s.Target] = sc
		}
		switch s.Metric {
		case MetricScrapeUp:
			ts.scrapes++
			sc.up, sc.upT = 1, s.TimeNS
			if s.Value == 0 {
				ts.failed++
				sc.up = 0
			}
			continue
		case MetricScrapeSamples:
			sc.pageCount = s.Value
			continue
		case MetricScrapeDuration:
			continue
		}
		sc.page, sc.pageT = true, s.TimeNS
		fam, ok := a.family(s)
		if !ok {
			continue
		}
		key := [2]string{s.Target, fam}
		g := aggs[key]
		if g == nil {
			g = &agg{t: s.TimeNS, typ: s.Type}
			aggs[key] = g
		}
		switch s.Part {
		case "":
			g.v += s.Value
		case "bucket":
			if g.hist == nil {
				g.hist = map[float64]float64{}
			}
			g.hist[s.Bound] += s.Value
		case "sum":
			g.sum += s.Value
		case "count":
			g.count += s.Value
		}
	}
	// A scrape succeeded when its page is here, or when it says so and
	// its page was empty. (Files written before reprise's own series
	// shared the page's time hold them apart from the page; then the
	// page's group is the successful scrape, not the second group.)
	for name, sc := range scrapes {
		ts := a.targets[name]
		switch {
		case sc.page && sc.up != 0:
			ts.addOK(sc.pageT)
		case !sc.page && sc.up == 1 && sc.pageCount <= 0:
			ts.addOK(sc.upT)
		}
	}
	for key, g := range aggs {
		ts := a.targets[key[0]]
		ts.types[key[1]] = g.typ
		if g.typ == "histogram" {
			hp := histPoint{t: g.t, sum: g.sum, count: g.count, hasData: true}
			for b := range g.hist {
				hp.bounds = append(hp.bounds, b)
			}
			slices.Sort(hp.bounds)
			for _, b := range hp.bounds {
				hp.counts = append(hp.counts, g.hist[b])
			}
			if len(ts.hists[key[1]]) < MaxPointsPerSeries {
				ts.hists[key[1]] = append(ts.hists[key[1]], hp)
			}
			continue
		}
		if len(ts.scalars[key[1]]) < MaxPointsPerSeries {
			ts.scalars[key[1]] = append(ts.scalars[key[1]], point{g.t, g.v})
		}
	}
}

// seriesSep parts family and labels in the keys of an every accumulator.
const seriesSep = "\x00"

// family is the key s is aggregated under: its family when it is a known
// one, or with every, its family and label set (summaries are left out).
func (a *Accumulator) family(s *record.MetricSample) (string, bool) {
	if !a.every {
		_, ok := knownMetrics[s.Metric]
		return s.Metric, ok
	}
	return s.Metric + seriesSep + s.Labels, s.Type != "summary"
}

func (ts *targetSeries) addOK(t int64) {
	if n := len(ts.ok); n < MaxPointsPerSeries && (n == 0 || ts.ok[n-1] < t) {
		ts.ok = append(ts.ok, t)
	}
}

func (a *Accumulator) target(name string) *targetSeries {
	ts := a.targets[name]
	if ts == nil {
		ts = &targetSeries{scalars: map[string][]point{}, hists: map[string][]histPoint{}, types: map[string]string{}}
		a.targets[name] = ts
		a.order = append(a.order, name)
	}
	return ts
}

// The summaries are engine/summary's types, where summary.json's servers
// and gpu sections are public; the names here keep the scraper short.
type (
	GaugeStats     = summary.GaugeStats
	HistogramStats = summary.HistogramStats
	Bucket         = summary.Bucket
	ServerSummary  = summary.ServerSummary
	GPUSummary     = summary.GPUSummary
)

// Summarize returns one summary per target over the window [startNS, endNS]
// in Unix ns: from the first send to the last response end.
//
// Gauges are summarised over the scrapes inside the window. Counters and
// histograms are differenced from the last successful scrape at or before
// startNS (the baseline) to the target's last scrape: a server counts a
// request's tokens around the moment it answers, so only a scrape after
// the last response sees them all, and the run's final scrape comes after
// it. Nothing of the run is in flight after the window, so later scrapes
// add nothing of another run. A series that a successful scrape lacks
// counts as 0 there: servers create a series at its first increment, and
// one that vanishes and comes back was restarted. A decrease is a reset
// (the new value is the increase). Without a successful scrape before
// startNS, a series' first value in the window is its baseline
// ([ServerSummary.NoBaseline]).
func (a *Accumulator) Summarize(startNS, endNS int64) []ServerSummary {
	a.mu.Lock()
	defer a.mu.Unlock()
	out := make([]ServerSummary, 0, len(a.order))
	secs := float64(endNS-startNS) / 1e9
	for _, name := range a.order {
		ts := a.targets[name]
		s := ServerSummary{Target: name, Scrapes: ts.scrapes, Failed: ts.failed}
		s.NoBaseline = len(ts.ok) == 0 || ts.ok[0] > startNS
		pick := func(r role) (string, bool) {
			best, bestRank := "", uint8(255)
			for fam, km := range knownMetrics {
				if km.role != r || km.rank >= bestRank {
					continue
				}
				if len(ts.scalars[fam]) > 0 || len(ts.hists[fam]) > 0 {
					best, bestRank = fam, km.rank
				}
			}
			if best != "" && s.Family == "" {
				s.Family = knownMetrics[best].family
			}
			return best, best != ""
		}
		gauge := func(r role) *GaugeStats {
			fam, ok := pick(r)
			if !ok {
				return nil
			}
			return gaugeStats(ts.scalars[fam], startNS, endNS)
		}
		total := func(r role) *float64 {
			fam, ok := pick(r)
			if !ok {
				return nil
			}
			if pts, ok := ts.scalars[fam]; ok {
				return counterDelta(pts, ts.ok, startNS)
			}
			// A token-length histogram: its sum grows by the tokens seen.
			return counterDelta(histSums(ts.hists[fam]), ts.ok, startNS)
		}
		hist := func(r role) *HistogramStats {
			fam, ok := pick(r)
			if !ok {
				return nil
			}
			return histStats(fam, ts.hists[fam], ts.ok, startNS)
		}
		s.RunningRequests = gauge(roleRunning)
		s.WaitingRequests = gauge(roleWaiting)
		s.KVCacheUsage = gauge(roleKVUsage)
		s.PromptTokens = total(rolePromptTokens)
		if cached := total(rolePromptCachedExtra); cached != nil && s.PromptTokens != nil {
			// llama.cpp: evaluated + cached = every prompt token received.
			all := *s.PromptTokens + *cached
			s.PromptTokens, s.CachedPromptTokens = &all, cached
		}
		switch hits, queries := total(rolePrefixHits), total(rolePrefixQueries); {
		case hits != nil && queries != nil && *queries > 0:
			r := *hits / *queries
			s.PrefixCacheHitRatio = &r
		case s.CachedPromptTokens != nil && *s.PromptTokens > 0:
			r := *s.CachedPromptTokens / *s.PromptTokens
			s.PrefixCacheHitRatio = &r
		default:
			if g := gauge(roleHitRateGauge); g != nil {
				r := g.Mean
				s.PrefixCacheHitRatio = &r
			}
		}
		s.GenerationTokens = total(roleGenerationTokens)
		s.Requests = total(roleRequests)
		if secs > 0 {
			if s.PromptTokens != nil {
				v := *s.PromptTokens / secs
				s.PromptTokensPerSec = &v
			}
			if s.GenerationTokens != nil {
				v := *s.GenerationTokens / secs
				s.GenTokensPerSec = &v
			}
		}
		s.TTFT = hist(roleTTFT)
		s.ITL = hist(roleITL)
		s.E2E = hist(roleE2E)
		s.QueueTime = hist(roleQueueTime)
		out = append(out, s)
	}
	return out
}

func gaugeStats(pts []point, startNS, endNS int64) *GaugeStats {
	var n, sum float64
	g := GaugeStats{Max: math.Inf(-1)}
	for _, p := range pts {
		if p.t < startNS || p.t > endNS {
			continue
		}
		n++
		sum += p.v
		g.Max = max(g.Max, p.v)
		g.Last = p.v
	}
	if n == 0 {
		return nil
	}
	g.Mean = sum / n
	return &g
}

// step is one successful scrape of a series' target: the series' value
// there (i into its points), or absent (i = -1).
type step struct {
	t int64
	i int
}

// steps walks the successful scrapes ok and the series' point times pts
// together, in time order, calling f for each scrape: with the index of
// the series' point at that time, or -1 when the scrape lacked it. A point
// without a scrape time in ok (ok is bounded) is still visited.
func steps(ok []int64, n int, tAt func(int) int64, f func(step)) {
	j := 0
	for _, t := range ok {
		for j < n && tAt(j) < t {
			f(step{tAt(j), j})
			j++
		}
		if j < n && tAt(j) == t {
			f(step{t, j})
			j++
			continue
		}
		f(step{t, -1})
	}
	for ; j < n; j++ {
		f(step{tAt(j), j})
	}
}

// counterDelta sums the increases of a counter from its baseline (its
// value at the last successful scrape at or before startNS, 0 when that
// scrape lacked it) to its last point. A scrape without the series sets
// it to 0 (the next value is all increase), and so does a decrease (a
// reset: the new value is the increase). With no successful scrape before
// startNS, the first point is the baseline. It returns nil when the series
// has no point after startNS.
func counterDelta(pts []point, ok []int64, startNS int64) *float64 {
	var prev float64
	var delta float64
	havePrev, seen := false, false
	steps(ok, len(pts), func(i int) int64 { return pts[i].t }, func(st step) {
		if st.i < 0 {
			prev, havePrev = 0, true
			return
		}
		v := pts[st.i].v
		if st.t > startNS {
			seen = true
			if havePrev {
				if v >= prev {
					delta += v - prev
				} else {
					delta += v
				}
			}
		}
		prev, havePrev = v, true
	})
	if !seen {
		return nil
	}
	return &delta
}

func histSums(hs []histPoint) []point {
	pts := make([]point, len(hs))
	for i, h := range hs {
		pts[i] = point{h.t, h.sum}
	}
	return pts
}

// histStats accumulates the histogram's increases from its baseline to
// its last point, as counterDelta does for a counter: each step adds
// cur−prev per bucket, or cur whole after a scrape that lacked the series
// or when the count went down (a restart), then computes mean and
// quantiles of those observations. A change of bucket layout restarts the
// accumulation.
func histStats(name string, hs []histPoint, ok []int64, startNS int64) *HistogramStats {
	d, seen := histDelta(hs, ok, startNS)
	if !seen {
		return nil
	}
	bounds, counts, sum, count := d.bounds, d.counts, d.sum, d.count
	st := &HistogramStats{Metric: name, Count: count}
	if count <= 0 {
		return st
	}
	st.MeanMS = sum / count * 1e3
	q := func(q float64) (*float64, *Bucket) {
		v := bucketQuantile(q, bounds, counts) * 1e3
		if math.IsNaN(v) {
			return nil, nil
		}
		b, _ := quantileBucket(q, bounds, counts)
		return &v, &b
	}
	st.P50MS, st.P50Bucket = q(0.50)
	st.P90MS, st.P90Bucket = q(0.90)
	st.P99MS, st.P99Bucket = q(0.99)
	return st
}

// histIncrease is a histogram's increase over a window: cumulative
// counts per bound, and its sum and count.
type histIncrease struct {
	bounds, counts []float64
	sum, count     float64
}

// histDelta is the histogram's increase from its baseline to its last
// point (histStats); seen is false when it has no point after startNS.
func histDelta(hs []histPoint, ok []int64, startNS int64) (histIncrease, bool) {
	var prev *histPoint
	fromZero := false // the series was absent at the last scrape: 0
	var bounds, counts []float64
	var sum, count float64
	seen := false
	steps(ok, len(hs), func(i int) int64 { return hs[i].t }, func(st step) {
		if st.i < 0 {
			prev, fromZero = nil, true
			return
		}
		h := &hs[st.i]
		if st.t <= startNS {
			prev, fromZero = h, false
			return
		}
		seen = true
		if !slices.Equal(bounds, h.bounds) {
			bounds, counts, sum, count = h.bounds, make([]float64, len(h.bounds)), 0, 0
		}
		switch {
		case prev != nil && slices.Equal(prev.bounds, h.bounds) && h.count >= prev.count:
			for j := range counts {
				counts[j] += h.counts[j] - prev.counts[j]
			}
			sum += h.sum - prev.sum
			count += h.count - prev.count
		case prev != nil || fromZero:
			for j := range counts {
				counts[j] += h.counts[j]
			}
			sum += h.sum
			count += h.count
		}
		prev, fromZero = h, false
	})
	return histIncrease{bounds, counts, sum, count}, seen
}

// bucketQuantile is Prometheus' histogram_quantile: find the bucket holding
// rank q·total and interpolate linearly inside it (the first bucket starts
// at 0). An answer in the +Inf bucket is the highest finite bound.
func bucketQuantile(q float64, bounds, cum []float64) float64 {
	if len(bounds) == 0 {
		return math.NaN()
	}
	total := cum[len(cum)-1]
	if total <= 0 {
		return math.NaN()
	}
	rank := q * total
	for i, c := range cum {
		if c < rank {
			continue
		}
		if math.IsInf(bounds[i], 1) {
			if i == 0 {
				return math.NaN()
			}
			return bounds[i-1]
		}
		lo, prev := 0.0, 0.0
		if i > 0 {
			lo, prev = bounds[i-1], cum[i-1]
		}
		if c == prev {
			return bounds[i]
		}
		return lo + (bounds[i]-lo)*(rank-prev)/(c-prev)
	}
	return bounds[len(bounds)-1]
}

// quantileBucket is the bucket, in ms, in which bucketQuantile finds
// quantile q: the first whose cumulative count reaches rank q·total
// (the first bucket starts at 0). ok is false where bucketQuantile has
// no answer.
func quantileBucket(q float64, bounds, cum []float64) (b Bucket, ok bool) {
	if len(bounds) == 0 || cum[len(cum)-1] <= 0 {
		return Bucket{}, false
	}
	rank := q * cum[len(cum)-1]
	i := len(bounds) - 1
	for j, c := range cum {
		if c >= rank {
			i = j
			break
		}
	}
	if i > 0 {
		b.LowMS = bounds[i-1] * 1e3
	}
	if !math.IsInf(bounds[i], 1) {
		hi := bounds[i] * 1e3
		b.HighMS = &hi
	} else if i == 0 {
		return Bucket{}, false
	}
	return b, true
}

// AddAll feeds samples read back from server_metrics: each run of
// consecutive samples with one target and one time is one scrape, as the
// scraper wrote it.
func (a *Accumulator) AddAll(samples []record.MetricSample) {
	for start := 0; start < len(samples); {
		end := start + 1
		for end < len(samples) && samples[end].Target == samples[start].Target && samples[end].TimeNS == samples[start].TimeNS {
			end++
		}
		a.Add(samples[start:end])
		start = end
	}
}
