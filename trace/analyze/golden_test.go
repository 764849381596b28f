package analyze

import (
	"math"
	"math/rand/v2"
	"testing"

	gocmp "github.com/google/go-cmp/cmp"

	"github.com/reprise-bench/reprise/internal/testfiles"
	"github.com/reprise-bench/reprise/trace"
)

// Golden values from docs/reference/real-traces.md §2-§4. Tolerances
// follow its §6: integers exact, ratios ±0.0005, % of ceiling ±0.2 points;
// statistics printed with fewer digits are checked to the printed digit.

type want struct {
	name string
	got  float64
	want float64
	tol  float64 // 0 = exact
}

func check(t *testing.T, ws []want) {
	t.Helper()
	for _, w := range ws {
		if d := math.Abs(w.got - w.want); d > w.tol || math.IsNaN(w.got) {
			t.Errorf("%s = %v, want %v (±%v)", w.name, w.got, w.want, w.tol)
		}
	}
}

const (
	ratioTol = 0.0005
	pctTol   = 0.2
)

type lruGolden struct {
	capTokens     int64
	tokenHit      float64
	pctCeiling    float64
	blockHit      float64 // NaN = not in the reference table
	speedup       float64 // NaN = not in the reference table
	speedupPrints int     // decimals printed
}

type cacheGolden struct {
	rows, distinct, inTokens, totalIDs int64
	tokenHit, blockHit, speedup        float64
	reused                             int64
	skew                               [4]float64
	reuseTime                          [4]float64 // p50 p80 p90 p99, seconds
	reuseTimeTol                       float64
	within                             [3]float64 // percent within 10/60/600 s
	dist                               [3]float64 // p50 p80 p90
	lru                                []lruGolden
}

var nan = math.NaN()

var conversationCache = cacheGolden{
	rows: 12031, distinct: 182790, inTokens: 144793823, totalIDs: 288500,
	tokenHit: 0.3736, blockHit: 0.3664, speedup: 1.596, reused: 44144,
	skew:      [4]float64{0.3165, 0.5771, 0.7514, 0.9282},
	reuseTime: [4]float64{114.0, 324.0, 519.0, 1578.0}, reuseTimeTol: 0.05,
	within: [3]float64{11.69, 28.21, 93.71},
	dist:   [3]float64{384, 1109, 1748},
	lru: []lruGolden{
		{500_000, 0.0454, 12.1, nan, nan, 0},
		{1_000_000, 0.0542, 14.5, 0.0532, 1.057, 3},
		{2_000_000, 0.0855, 22.9, nan, nan, 0},
		{3_000_000, 0.1382, 37.0, 0.1355, 1.160, 3},
		{5_000_000, 0.2102, 56.3, nan, nan, 0},
		{10_000_000, 0.2908, 77.8, 0.2852, 1.410, 3},
		{20_000_000, 0.3581, 95.9, nan, nan, 0},
		{30_000_000, 0.3658, 97.9, nan, nan, 0},
		{50_000_000, 0.3707, 99.2, 0.3635, 1.589, 3},
		{100_000_000, 0.3736, 100.0, 0.3664, 1.596, 3},
	},
}

var syntheticCache = cacheGolden{
	rows: 3993, distinct: 43924, inTokens: 61194628, totalIDs: 121877,
	tokenHit: 0.6512, blockHit: 0.6396, speedup: 2.867, reused: 18251,
	skew:      [4]float64{0.1007, 0.3087, 0.4956, 0.7529},
	reuseTime: [4]float64{59.39, 187.37, 281.76, 582.89}, reuseTimeTol: 0.005,
	within: [3]float64{16.71, 50.29, 99.12},
	dist:   [3]float64{233, 728, 1100},
	lru: []lruGolden{
		{500_000, 0.0827, 12.7, nan, nan, 0},
		{1_000_000, 0.1421, 21.8, 0.1395, 1.166, 3},
		{2_000_000, 0.2315, 35.5, nan, nan, 0},
		{3_000_000, 0.3151, 48.4, 0.3094, 1.460, 3},
		{5_000_000, 0.4278, 65.7, nan, nan, 0},
		{10_000_000, 0.5768, 88.6, 0.5665, 2.363, 3},
		{20_000_000, 0.6510, 99.96, nan, nan, 0},
		{30_000_000, 0.6512, 100.0, nan, nan, 0},
		{50_000_000, 0.6512, 100.0, 0.6396, 2.867, 3},
	},
}

func capacities(g cacheGolden) []int64 {
	var c []int64
	for _, l := range g.lru {
		c = append(c, l.capTokens)
	}
	return c
}

func checkCache(t *testing.T, c *Cache, g cacheGolden) {
	t.Helper()
	if c == nil {
		t.Fatal("no cache section")
	}
	ws := []want{
		{"rows with ids", float64(c.RowsWithIDs), float64(g.rows), 0},
		{"distinct blocks", float64(c.DistinctBlocks), float64(g.distinct), 0},
		{"Σ input tokens", float64(c.InputTokens), float64(g.inTokens), 0},
		{"Σ ids", float64(c.TotalBlocks), float64(g.totalIDs), 0},
		{"token hit ratio", c.TokenHitRatio, g.tokenHit, ratioTol},
		{"block hit ratio", c.BlockHitRatio, g.blockHit, ratioTol},
		{"ideal speedup", *c.IdealSpeedup, g.speedup, 0.0005},
		{"blocks reused", float64(c.BlocksReused), float64(g.reused), 0},
		{"reuse within 10 s %", 100 * c.ReuseTime.Within10s, g.within[0], 0.005},
		{"reuse within 60 s %", 100 * c.ReuseTime.Within60s, g.within[1], 0.005},
		{"reuse within 600 s %", 100 * c.ReuseTime.Within600s, g.within[2], 0.005},
		{"reuse time p50", c.ReuseTime.P50, g.reuseTime[0], g.reuseTimeTol},
		{"reuse time p80", c.ReuseTime.P80, g.reuseTime[1], g.reuseTimeTol},
		{"reuse time p90", c.ReuseTime.P90, g.reuseTime[2], g.reuseTimeTol},
		{"reuse time p99", c.ReuseTime.P99, g.reuseTime[3], g.reuseTimeTol},
		{"reuse distance p50", c.ReuseDistance.P50, g.dist[0], 0.5},
		{"reuse distance p80", c.ReuseDistance.P80, g.dist[1], 0.5},
		{"reuse distance p90", c.ReuseDistance.P90, g.dist[2], 0.5},
	}
	for i, s := range c.Skew {
		ws = append(ws, want{"skew top " + pct(s.Fraction), s.Share, g.skew[i], ratioTol})
	}
	if len(c.LRU) != len(g.lru) {
		t.Fatalf("%d LRU points, want %d", len(c.LRU), len(g.lru))
	}
	for i, l := range g.lru {
		p := c.LRU[i]
		name := "LRU " + fmtTokens(l.capTokens) + " "
		ws = append(ws,
			want{name + "capacity", float64(p.CapacityTokens), float64(l.capTokens), 0},
			want{name + "token hit", p.TokenHitRatio, l.tokenHit, ratioTol},
			want{name + "% of ceiling", 100 * p.FractionOfCeiling, l.pctCeiling, pctTol},
		)
		if !math.IsNaN(l.blockHit) {
			ws = append(ws,
				want{name + "block hit", p.BlockHitRatio, l.blockHit, ratioTol},
				want{name + "speedup", *p.IdealSpeedup, l.speedup, 0.0005})
		}
	}
	check(t, ws)
}

func pct(f float64) string { return fmtPercent(f) }

type arrivalGolden struct {
	rows               int64
	span, rate         float64
	rateTol            float64
	peak1s             int64
	peak1min           float64 // avg req/s in the busiest minute
	gapMean, gapP50    float64
	gapMax             float64
	gapTol             float64
	cv                 float64
	zeroPct            float64
	distinctTimestamps int64
}

func checkArrivals(t *testing.T, r *Report, g arrivalGolden) {
	t.Helper()
	a := r.Arrivals
	check(t, []want{
		{"rows", float64(r.Rows), float64(g.rows), 0},
		{"span", r.SpanSeconds, g.span, 0.0005},
		{"mean rate", a.MeanRate, g.rate, g.rateTol},
		{"peak 1 s", float64(a.Peak1s), float64(g.peak1s), 0},
		{"peak 1 min", a.Peak1minRate, g.peak1min, 0.005},
		{"gap mean", a.Gaps.Mean, g.gapMean, g.gapTol},
		{"gap p50", a.Gaps.P50, g.gapP50, g.gapTol},
		{"gap max", a.Gaps.Max, g.gapMax, g.gapTol},
		{"gap CV", a.GapCV, g.cv, 0.0005},
		{"zero gaps %", 100 * a.ZeroGapShare, g.zeroPct, 0.005},
		{"distinct timestamps", float64(a.DistinctTimestamps), float64(g.distinctTimestamps), 0},
	})
}

// aiperfGolden is docs/reference/real-traces.md §3: hit, isl, osl, context, unique
// statistics as mean, std, min, p25, median, p75, max (NaN = not given).
type aiperfGolden struct {
	total, unique, groups int64
	reuse, hitRate        float64
	hit, isl, osl         [7]float64
	ctx, uniq             [7]float64
}

func checkAIPerf(t *testing.T, s *AIPerfStats, g aiperfGolden) {
	t.Helper()
	ws := []want{
		{"total_requests", float64(s.TotalRequests), float64(g.total), 0},
		{"unique_prefixes", float64(s.UniquePrefixes), float64(g.unique), 0},
		{"num_prefix_groups", float64(s.NumPrefixGroups), float64(g.groups), 0},
		{"prefix_reuse_ratio", s.PrefixReuseRatio, g.reuse, ratioTol},
		{"cache_hit_rate", s.CacheHitRate, g.hitRate, ratioTol},
	}
	series := []struct {
		name string
		m    *MetricStats
		g    [7]float64
		tol  float64
	}{
		{"hit_rate_stats", s.HitRateStats, g.hit, ratioTol},
		{"isl_stats", s.ISLStats, g.isl, 0.005},
		{"osl_stats", s.OSLStats, g.osl, 0.005},
		{"context_length_stats", s.ContextStats, g.ctx, 0.005},
		{"unique_prompt_length_stats", s.UniquePromptStat, g.uniq, 0.005},
	}
	for _, se := range series {
		if se.m == nil {
			t.Errorf("%s is nil", se.name)
			continue
		}
		vals := [7]float64{se.m.Mean, se.m.StdDev, se.m.Min, se.m.P25, se.m.Median, se.m.P75, se.m.Max}
		names := [7]string{"mean", "std_dev", "min", "p25", "median", "p75", "max"}
		for i := range vals {
			if !math.IsNaN(se.g[i]) {
				ws = append(ws, want{se.name + "." + names[i], vals[i], se.g[i], se.tol})
			}
		}
	}
	check(t, ws)
}

type lengthGolden struct {
	isl, osl          [5]float64 // mean p50 p90 p99 max (NaN = not given)
	inTotal, outTotal int64
	oslLE3            int64 // -1 = not given
	over32k, over128k int64 // -1 = not given
}

func checkLengths(t *testing.T, r *Report, g lengthGolden) {
	t.Helper()
	ws := []want{
		{"Σ input", float64(r.Lengths.InputTokens), float64(g.inTotal), 0},
		{"Σ output", float64(r.Lengths.OutputTokens), float64(g.outTotal), 0},
	}
	if g.oslLE3 >= 0 {
		ws = append(ws, want{"rows OSL ≤ 3", float64(r.Lengths.OSLAtMost3), float64(g.oslLE3), 0})
	}
	if g.over32k >= 0 {
		ws = append(ws,
			want{"rows ISL > 32k", float64(r.Lengths.ISLOver32k), float64(g.over32k), 0},
			want{"rows ISL > 128k", float64(r.Lengths.ISLOver128k), float64(g.over128k), 0})
	}
	for _, x := range []struct {
		name string
		s    Stats
		g    [5]float64
	}{{"isl", r.ISL, g.isl}, {"osl", r.OSL, g.osl}} {
		vals := [5]float64{x.s.Mean, x.s.P50, x.s.P90, x.s.P99, x.s.Max}
		names := [5]string{"mean", "p50", "p90", "p99", "max"}
		for i := range vals {
			// The reference prints means to 0.01-0.1 and percentiles as
			// whole tokens (2,734.5 prints as 2,734).
			tol := 0.5
			if i == 0 {
				tol = 0.05
			}
			if !math.IsNaN(x.g[i]) {
				ws = append(ws, want{x.name + " " + names[i], vals[i], x.g[i], tol})
			}
		}
	}
	check(t, ws)
}

func TestGoldenMooncakeConversation(t *testing.T) {
	rep := analyzeFile(t, testfiles.Trace(t, "mooncake/conversation_trace.jsonl"), Config{CacheSizes: capacities(conversationCache)})
	checkCache(t, rep.Cache, conversationCache)
	checkArrivals(t, rep, arrivalGolden{
		rows: 12031, span: 3536.999, rate: 3.40, rateTol: 0.005, peak1s: 28, peak1min: 4.12,
		gapMean: 0.294, gapP50: 0, gapMax: 3.003, gapTol: 0.0005, cv: 3.034, zeroPct: 90.20,
		distinctTimestamps: 1180,
	})
	checkLengths(t, rep, lengthGolden{
		isl:     [5]float64{12035.06, 6909, nan, nan, 126195},
		osl:     [5]float64{342.62, 350, nan, nan, 2000},
		inTotal: 144793823, outTotal: 4122048, oslLE3: 334, over32k: 828, over128k: 0,
	})
	checkAIPerf(t, rep.AIPerf, aiperfGolden{
		total: 12031, unique: 182790, groups: 1, reuse: 0.5194, hitRate: 0.3843,
		hit:  [7]float64{0.3843, 0.3365, nan, 0.0667, 0.3333, 0.6667, nan},
		isl:  [7]float64{12035.06, 15800.34, 891, 2306.5, 6909, 15367, 126195},
		osl:  [7]float64{342.62, 249.91, 1, 156.5, 350, 472, 2000},
		ctx:  [7]float64{6373.59, 12024.63, 512, nan, 1536, nan, 122880},
		uniq: [7]float64{5661.48, 12353.50, 0, nan, 594, nan, 125683},
	})
	if rep.Cache.PrefixRoots != 1 || rep.Cache.MaxDepth != 247 {
		t.Errorf("prefix roots %d, max depth %d; want 1 and 247", rep.Cache.PrefixRoots, rep.Cache.MaxDepth)
	}
}

func TestGoldenMooncakeSynthetic(t *testing.T) {
	rep := analyzeFile(t, testfiles.Trace(t, "mooncake/synthetic_trace.jsonl"), Config{CacheSizes: capacities(syntheticCache)})
	checkCache(t, rep.Cache, syntheticCache)
	checkArrivals(t, rep, arrivalGolden{
		rows: 3993, span: 1022.025, rate: 3.91, rateTol: 0.005, peak1s: 13, peak1min: 4.55,
		gapMean: 0.256, gapP50: 0.175, gapMax: 2.119, gapTol: 0.0005, cv: 1.011, zeroPct: 0.28,
		distinctTimestamps: 3982,
	})
	checkLengths(t, rep, lengthGolden{
		isl:     [5]float64{15325.48, 11587, nan, nan, 191378},
		osl:     [5]float64{149.12, 69, nan, nan, 893},
		inTotal: 61194628, outTotal: 595432, oslLE3: 391, over32k: 645, over128k: 10,
	})
	checkAIPerf(t, rep.AIPerf, aiperfGolden{
		total: 3993, unique: 43924, groups: 408, reuse: 0.7894, hitRate: 0.4232,
		hit:  [7]float64{0.4232, 0.4741, nan, 0, 0, 0.9667, nan},
		isl:  [7]float64{15325.48, 18380.15, 13, 277, 11587, 23175, 191378},
		osl:  [7]float64{149.12, 178.15, 1, 11, 69, 250, 893},
		ctx:  [7]float64{12307.66, 18305.34, 0, nan, 2754, nan, 190976},
		uniq: [7]float64{3017.82, 8050.66, 0, nan, 296, nan, 134773},
	})
	if rep.Cache.MaxDepth != 374 {
		t.Errorf("max depth %d, want 374", rep.Cache.MaxDepth)
	}
}

func TestGoldenAzure(t *testing.T) {
	tests := []struct {
		file    string
		arrival arrivalGolden
		lengths lengthGolden
	}{
		{
			file: "azure2023/AzureLLMInferenceTrace_code.csv",
			// Extremely bursty: CV 13, 67 requests in one second.
			arrival: arrivalGolden{
				rows: 8819, span: 3435.948, rate: 2.567, rateTol: 0.0005, peak1s: 67, peak1min: 10.53,
				gapMean: 0.3897, gapP50: 0.0638, gapMax: 217.17, gapTol: 0.005, cv: 13.151, zeroPct: 0,
				distinctTimestamps: 8819,
			},
			lengths: lengthGolden{
				isl:     [5]float64{2047.8, 1469, 5188, 7436, 7437},
				osl:     [5]float64{27.9, 13, 55, 251, 1899},
				inTotal: 18059974, outTotal: 245896, oslLE3: -1, over32k: -1,
			},
		},
		{
			file: "azure2023/AzureLLMInferenceTrace_conv.csv",
			arrival: arrivalGolden{
				rows: 19366, span: 3501.722, rate: 5.530, rateTol: 0.0005, peak1s: 16, peak1min: 8.45,
				gapMean: 0.1808, gapP50: 0.1184, gapMax: 4.31, gapTol: 0.005, cv: 1.094, zeroPct: 0,
				distinctTimestamps: 19366,
			},
			lengths: lengthGolden{
				isl:     [5]float64{1154.7, 1020, 2734, 4142, 14050},
				osl:     [5]float64{211.1, 129, 424, 601, 1000},
				inTotal: 22361870, outTotal: 4088665, oslLE3: -1, over32k: -1,
			},
		},
	}
	for _, tt := range tests {
		t.Run(tt.file, func(t *testing.T) {
			rep := analyzeFile(t, testfiles.Trace(t, tt.file), Config{})
			checkArrivals(t, rep, tt.arrival)
			checkLengths(t, rep, tt.lengths)
			if rep.Cache != nil {
				t.Error("cache section present for a trace without hash ids")
			}
		})
	}
}

// TestShuffledInputIsSortedStably shuffles whole timestamp groups of the
// conversation trace (rows sharing a timestamp keep their relative order, so
// a stable sort restores the original sequence exactly): the time-order
// statistics must be identical to the sorted file's, while AIPerf's
// file-order hit rate must change.
func TestShuffledInputIsSortedStably(t *testing.T) {
	rows := loadMooncake(t, testfiles.Trace(t, "mooncake/conversation_trace.jsonl"))
	var groups [][]trace.Row
	for i := 0; i < len(rows); {
		j := i
		for j < len(rows) && rows[j].Offset == rows[i].Offset {
			j++
		}
		groups = append(groups, rows[i:j])
		i = j
	}
	rng := rand.New(rand.NewPCG(1, 2))
	rng.Shuffle(len(groups), func(i, j int) { groups[i], groups[j] = groups[j], groups[i] })
	var shuffled []trace.Row
	for _, g := range groups {
		shuffled = append(shuffled, g...)
	}
	if order, _ := timeOrder(shuffled); order == nil || order[0] == 0 {
		t.Fatal("shuffle left the first row in place; pick another seed")
	}

	cfg := Config{CacheSizes: []int64{3_000_000, 50_000_000}}
	want, got := Rows(rows, cfg), Rows(shuffled, cfg)
	wa, ga := want.AIPerf, got.AIPerf
	want.AIPerf, got.AIPerf = nil, nil
	if d := diffJSON(want, got); d != "" {
		t.Errorf("time-order report differs after shuffling (-sorted +shuffled):\n%s", d)
	}
	if wa.CacheHitRate == ga.CacheHitRate {
		t.Errorf("AIPerf cache_hit_rate %v unchanged by shuffling: not file order", ga.CacheHitRate)
	}
	if wa.UniquePrefixes != ga.UniquePrefixes || wa.PrefixReuseRatio != ga.PrefixReuseRatio {
		t.Error("order-independent AIPerf statistics changed with the order")
	}

	// Fed unsorted, the streaming Analyzer notices.
	a := New(cfg)
	for i := range shuffled {
		a.Add(&shuffled[i])
	}
	if a.OutOfOrder() == 0 {
		t.Error("Analyzer.OutOfOrder = 0 on shuffled input")
	}
}

// analyzeFile runs File on a real trace with format detection.
func analyzeFile(t *testing.T, path string, cfg Config) *Report {
	t.Helper()
	rep, err := File(t.Context(), path, FileConfig{Analyzer: cfg})
	if err != nil {
		t.Fatal(err)
	}
	if rep.Source.Sorted {
		t.Errorf("%s: reported as unsorted", path)
	}
	return rep
}

// TestFileMatchesIndependentLoader checks the trace readers against the
// test's own encoding/json and encoding/csv loaders: same report.
func TestFileMatchesIndependentLoader(t *testing.T) {
	for _, tc := range []struct {
		name   string
		load   func(testing.TB, string) []trace.Row
		format string
	}{
		{"mooncake/conversation_trace.jsonl", loadMooncake, "mooncake"},
		{"mooncake/synthetic_trace.jsonl", loadMooncake, "mooncake"},
		{"azure2023/AzureLLMInferenceTrace_code.csv", loadAzure, "azure"},
		{"splitwise/splitwise_conv.csv", loadSplitwise, "vidur"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			path := testfiles.Trace(t, tc.name)
			want := Rows(tc.load(t, path), Config{})
			got := analyzeFile(t, path, Config{})
			if got.Source.Format != tc.format || got.Source.RowsKept != want.Rows || got.Source.RowsRead != want.Rows {
				t.Errorf("source = %+v", got.Source)
			}
			got.Source = nil
			if d := diffJSON(want, got); d != "" {
				t.Errorf("trace reader vs independent loader (-loader +reader):\n%s", d)
			}
		})
	}
}

func diffJSON(want, got *Report) string { return gocmp.Diff(want, got) }
