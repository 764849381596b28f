package analyze

import (
	"math"
	"math/rand/v2"
	"slices"
	"testing"
	"time"

	gocmp "github.com/google/go-cmp/cmp"
	"github.com/google/go-cmp/cmp/cmpopts"

	"github.com/reprise-bench/reprise/internal/testfiles"
	"github.com/reprise-bench/reprise/trace"
)

// numpyPercentile is the oracle: sort everything, interpolate linearly.
func numpyPercentile(x []float64, p float64) float64 {
	s := slices.Clone(x)
	slices.Sort(s)
	r := p / 100 * float64(len(s)-1)
	lo := math.Floor(r)
	hi := math.Ceil(r)
	return s[int(lo)] + (s[int(hi)]-s[int(lo)])*(r-lo)
}

func TestHistMatchesSortedOracle(t *testing.T) {
	rng := rand.New(rand.NewPCG(7, 8))
	for _, tc := range []struct {
		name  string
		scale int64
		gen   func() int64
	}{
		{"small ints", 1, func() int64 { return rng.Int64N(50) }},
		{"wide ints", 1, func() int64 { return rng.Int64N(1 << 24) }}, // beyond the dense range
		{"ms in ns", int64(time.Millisecond), func() int64 { return rng.Int64N(5000) * int64(time.Millisecond) }},
		{"ns mixed", int64(time.Millisecond), func() int64 { return rng.Int64N(1e10) - 1e9 }},
		{"single", 1, func() int64 { return 42 }},
		{"µs in ns", int64(time.Microsecond), func() int64 { return rng.Int64N(5000) * int64(time.Microsecond) }},
	} {
		t.Run(tc.name, func(t *testing.T) {
			h := newHist(tc.scale, 1<<16)
			var xs []float64
			for range 1001 {
				v := tc.gen()
				h.add(v)
				xs = append(xs, float64(v))
			}
			// remove is exact too.
			h.remove(int64(xs[0]))
			xs = xs[1:]
			s := h.sorted()
			var sum float64
			for _, x := range xs {
				sum += x
			}
			mean := sum / float64(len(xs))
			var ss float64
			for _, x := range xs {
				ss += (x - mean) * (x - mean)
			}
			got := s.stats(1)
			want := Stats{
				Count: int64(len(xs)), Mean: mean, Std: math.Sqrt(ss / float64(len(xs))),
				Min: slices.Min(xs), Max: slices.Max(xs),
				P25: numpyPercentile(xs, 25), P50: numpyPercentile(xs, 50), P75: numpyPercentile(xs, 75),
				P80: numpyPercentile(xs, 80), P90: numpyPercentile(xs, 90), P99: numpyPercentile(xs, 99),
			}
			if d := gocmp.Diff(want, got, cmpopts.EquateApprox(1e-12, 1e-6)); d != "" {
				t.Errorf("stats differ from the oracle (-want +got):\n%s", d)
			}
			cut := xs[len(xs)/2]
			var le uint64
			for _, x := range xs {
				if x <= cut {
					le++
				}
			}
			if got := s.countLE(cut); got != le {
				t.Errorf("countLE(%v) = %d, want %d", cut, got, le)
			}
		})
	}
}

// randomRows makes a small trace whose ids are NOT chained (an id may appear
// at any position, and twice in a row), so leading-run and seen-id counts
// differ, with ties in time.
func randomRows(rng *rand.Rand, n, ids int) []trace.Row {
	rows := make([]trace.Row, n)
	var t time.Duration
	for i := range rows {
		if rng.IntN(3) > 0 {
			t += time.Duration(rng.IntN(2000)) * time.Millisecond
		}
		k := rng.IntN(12)
		var h []uint64
		for range k {
			h = append(h, uint64(rng.IntN(ids))*0x9e3779b97f4a7c15) // sparse, never dense
		}
		in := 0
		if k > 0 {
			in = (k-1)*16 + 1 + rng.IntN(16)
		} else {
			in = 1 + rng.IntN(100)
		}
		rows[i] = trace.Row{
			Index: int64(i), Offset: t, HasOffset: true, InputTokens: in, OutputTokens: rng.IntN(10),
			BlockSize: 16, HashIDs: h, ParentID: -1, RequestID: -1,
		}
	}
	return rows
}

// TestRatioHist checks the pair-counting histogram of ratios against a map
// of the float64 ratios: the same distinct values (equal ratios of
// different pairs merged) with the same counts, for small and large
// denominators (beyond the dense array), and unpair round trips.
func TestRatioHist(t *testing.T) {
	rng := rand.New(rand.NewPCG(11, 12))
	h := newRatioHist()
	want := map[float64]uint64{}
	for i := range 20000 {
		k := 1 + rng.IntN(40)
		if i%10 == 0 {
			k = 1 + rng.IntN(1_000_000)
		}
		m := rng.IntN(k + 1)
		h.add(m, k)
		want[float64(m)/float64(k)]++
	}
	got := h.sorted()
	if len(got.bins) != len(want) {
		t.Fatalf("%d distinct ratios, want %d", len(got.bins), len(want))
	}
	for i, b := range got.bins {
		if want[b.v] != b.n || i > 0 && got.bins[i-1].v >= b.v {
			t.Fatalf("ratio %v: count %d, want %d (or not ascending)", b.v, b.n, want[b.v])
		}
	}
	for _, k := range []int64{0, 1, 2, 3, 94_906_265, 1 << 31} {
		for _, m := range []int64{0, k / 2, k} {
			if gm, gk := unpair(k*(k+1)/2 + m); gm != m || gk != k {
				t.Errorf("unpair(pair(%d, %d)) = %d, %d", m, k, gm, gk)
			}
		}
	}
}

// TestLRUMatchesPrefixCache checks the analyzer's dense-array LRU against
// PrefixCache, an independent implementation (map + slot list) of the same
// semantics, on non-chained traces and several capacities.
func TestLRUMatchesPrefixCache(t *testing.T) {
	rng := rand.New(rand.NewPCG(3, 4))
	for trial := range 20 {
		rows := randomRows(rng, 300, 10+trial*10)
		// Slots 0, 1, 1, 6, 10, 25, 625: a zero and a one-slot cache, a
		// duplicate, given in a shuffled order on odd trials.
		caps := []int64{0, 16, 17, 100, 160, 400, 10_000}
		if trial%2 == 1 {
			rng.Shuffle(len(caps), func(i, j int) { caps[i], caps[j] = caps[j], caps[i] })
		}
		a := New(Config{CacheSizes: caps})
		for i := range rows {
			a.Add(&rows[i])
		}
		rep := a.Report()
		var total int64
		for _, r := range rows {
			if len(r.HashIDs) > 0 {
				total += int64(r.InputTokens)
			}
		}
		for i, c := range append(caps, InfiniteCapacity) {
			pc := NewPrefixCache(16, c)
			var hit int64
			for _, r := range rows {
				if len(r.HashIDs) > 0 {
					hit += int64(pc.Access(r.HashIDs, r.InputTokens))
				}
			}
			got := rep.Cache.TokenHitRatio
			if i < len(caps) {
				got = rep.Cache.LRU[i].TokenHitRatio
			}
			if want := ratio(hit, total); got != want {
				t.Errorf("trial %d capacity %d: analyzer token hit %v, PrefixCache %v", trial, c, got, want)
			}
		}
	}
}

func TestPrefixCache(t *testing.T) {
	c := NewPrefixCache(16, 48) // 3 slots
	if got := c.Access([]uint64{1, 2, 3}, 40); got != 0 {
		t.Fatalf("cold access cached %d tokens", got)
	}
	tests := []struct {
		ids  []uint64
		in   int
		want int
		why  string
	}{
		{[]uint64{1, 2, 3}, 40, 40, "full hit capped at the prompt length (3·16 = 48 > 40)"},
		{[]uint64{1, 9, 3}, 40, 16, "leading run stops at the first miss although 3 is cached"},
		{[]uint64{2, 3}, 20, 0, "2 was evicted by 9 (LRU order after the last access: 3, 9, 1)"},
	}
	for _, tt := range tests {
		if got := c.Access(tt.ids, tt.in); got != tt.want {
			t.Errorf("Access(%v, %d) = %d, want %d: %s", tt.ids, tt.in, got, tt.want, tt.why)
		}
	}
	if c.Len() != 3 {
		t.Errorf("Len = %d, want 3 (capacity)", c.Len())
	}
	z := NewPrefixCache(16, 0)
	z.Insert([]uint64{1})
	if z.Lookup([]uint64{1}, 10) != 0 || z.Len() != 0 {
		t.Error("a zero-capacity cache cached something")
	}
}

// aiperfOracle is AIPerf's prefix_analyzer.py transcribed literally: lists of
// every row, tuple prefixes, a second pass for the context split.
func aiperfOracle(rows []trace.Row, B int) *AIPerfStats {
	var isl, osl, ctx, uniq, hits []float64
	prefixes := map[string]int{}
	type pairKey struct {
		pos int
		id  uint64
	}
	pairs := map[pairKey]int{}
	firsts := map[uint64]int{}
	seen := map[uint64]bool{}
	key := func(h []uint64) string {
		b := make([]byte, 0, 8*len(h))
		for _, x := range h {
			for i := range 8 {
				b = append(b, byte(x>>(8*i)))
			}
		}
		return string(b)
	}
	for _, r := range rows {
		isl = append(isl, float64(r.InputTokens))
		if r.OutputTokens > 0 || r.Failed { // 0 of a row that did not fail: no output length
			osl = append(osl, float64(r.OutputTokens))
		}
		for i := range r.HashIDs {
			prefixes[key(r.HashIDs[:i+1])]++
			pairs[pairKey{i, r.HashIDs[i]}]++
		}
		if len(r.HashIDs) > 0 {
			firsts[r.HashIDs[0]]++
			f := len(r.HashIDs)
			for j, id := range r.HashIDs {
				if !seen[id] {
					f = j
					break
				}
			}
			hits = append(hits, float64(f)/float64(len(r.HashIDs)))
			for _, id := range r.HashIDs {
				seen[id] = true
			}
		}
	}
	for _, r := range rows {
		if len(r.HashIDs) == 0 {
			ctx = append(ctx, 0)
			uniq = append(uniq, float64(r.InputTokens))
			continue
		}
		rep := 0
		for i, id := range r.HashIDs {
			if pairs[pairKey{i, id}] > 1 {
				rep++
			}
		}
		c := float64(r.InputTokens)
		if rep < len(r.HashIDs) {
			c = float64(rep * B)
		}
		ctx = append(ctx, c)
		uniq = append(uniq, float64(r.InputTokens)-c)
	}
	ms := func(x []float64) *MetricStats {
		if len(x) == 0 {
			return nil
		}
		var sum float64
		for _, v := range x {
			sum += v
		}
		m := sum / float64(len(x))
		var ss float64
		for _, v := range x {
			ss += (v - m) * (v - m)
		}
		return &MetricStats{Mean: m, StdDev: math.Sqrt(ss / float64(len(x))), Min: slices.Min(x),
			P25: numpyPercentile(x, 25), Median: numpyPercentile(x, 50), P75: numpyPercentile(x, 75), Max: slices.Max(x)}
	}
	s := &AIPerfStats{TotalRequests: int64(len(rows)), UniquePrefixes: int64(len(prefixes))}
	var reused, all int
	for _, c := range prefixes {
		all += c
		if c > 1 {
			reused += c
		}
	}
	s.PrefixReuseRatio = ratio(int64(reused), int64(all))
	for _, c := range firsts {
		if c > 1 {
			s.NumPrefixGroups++
		}
	}
	s.ISLStats, s.OSLStats, s.ContextStats, s.UniquePromptStat, s.HitRateStats = ms(isl), ms(osl), ms(ctx), ms(uniq), ms(hits)
	if s.HitRateStats != nil {
		s.CacheHitRate = s.HitRateStats.Mean
	}
	s.MinISL, s.MaxISL, s.AvgISL = int64(s.ISLStats.Min), int64(s.ISLStats.Max), s.ISLStats.Mean
	if s.OSLStats != nil {
		s.MinOSL, s.MaxOSL, s.AvgOSL = int64(s.OSLStats.Min), int64(s.OSLStats.Max), s.OSLStats.Mean
	}
	return s
}

func TestAIPerfMatchesOracle(t *testing.T) {
	rng := rand.New(rand.NewPCG(5, 6))
	for trial := range 30 {
		rows := randomRows(rng, 1+rng.IntN(200), 1+rng.IntN(30))
		p := NewAIPerf(16)
		for i := range rows {
			p.Add(&rows[i])
		}
		if d := gocmp.Diff(aiperfOracle(rows, 16), p.Report(), cmpopts.EquateApprox(1e-12, 1e-9)); d != "" {
			t.Fatalf("trial %d: AIPerf differs from the literal oracle (-want +got):\n%s", trial, d)
		}
	}
}

// TestAddAllocs is the allocation budget of the hot path: a row whose ids,
// lengths and gaps have all been seen before costs no allocation.
func TestAddAllocs(t *testing.T) {
	rows := loadMooncake(t, testfiles.Trace(t, "mooncake/conversation_trace.jsonl"))
	a := New(Config{})
	for i := range rows {
		a.Add(&rows[i])
	}
	r := rows[len(rows)-1]
	if n := testing.AllocsPerRun(1000, func() { a.Add(&r) }); n != 0 {
		t.Errorf("Add allocates %v times per row, want 0", n)
	}
}

func TestKindsTurnsSessions(t *testing.T) {
	// A Bailian-like session: turn 2 extends turn 1's prefix.
	rows := []trace.Row{
		{Offset: 0, HasOffset: true, InputTokens: 32, BlockSize: 16, HashIDs: []uint64{1, 2}, SessionID: "a", Turn: 0, Kind: "text"},
		{Offset: time.Second, HasOffset: true, InputTokens: 48, BlockSize: 16, HashIDs: []uint64{1, 2, 3}, SessionID: "a", Turn: 1, Kind: "text"},
		{Offset: time.Second, HasOffset: true, InputTokens: 16, BlockSize: 16, HashIDs: []uint64{7}, SessionID: "b", Turn: 0, Kind: "image"},
		{HasDelay: true, Delay: 2 * time.Second, InputTokens: 10, SessionID: "b", Turn: 1, Kind: "image"},
	}
	rep := Rows(rows, Config{CacheSizes: []int64{}})
	c := rep.Cache
	wantKinds := []Group{
		{Name: "image", Rows: 2, InputTokens: 16, HitTokens: 0, TokenHitRatio: 0, HitShare: 0},
		{Name: "text", Rows: 2, InputTokens: 80, HitTokens: 32, TokenHitRatio: 0.4, HitShare: 1},
	}
	if d := gocmp.Diff(wantKinds, c.ByKind); d != "" {
		t.Errorf("by kind (-want +got):\n%s", d)
	}
	if len(c.ByTurn) != 2 || c.ByTurn[1].Name != "2" || c.ByTurn[1].HitTokens != 32 {
		t.Errorf("by turn = %+v", c.ByTurn)
	}
	if rep.Session == nil || rep.Session.Sessions != 2 || rep.Session.TurnsPerSession.Max != 2 {
		t.Errorf("sessions = %+v", rep.Session)
	}
	// The delay-timed row sits at its session's previous arrival + 2 s.
	if rep.Arrivals.TimedByDelay != 1 || rep.SpanSeconds != 3 {
		t.Errorf("timed by delay %d, span %v s; want 1 and 3", rep.Arrivals.TimedByDelay, rep.SpanSeconds)
	}
	if c.PrefixRoots != 2 || c.MaxDepth != 3 {
		t.Errorf("roots %d depth %d, want 2 and 3", c.PrefixRoots, c.MaxDepth)
	}
}

func TestEmpty(t *testing.T) {
	rep := Rows(nil, Config{})
	if rep.Rows != 0 || rep.Cache != nil || rep.AIPerf.ISLStats != nil {
		t.Errorf("empty report = %+v", rep)
	}
}

// TestLRUStackRanks drives lruStack with random rows (ids repeat within
// and across rows, over small and larger id sets so that the bitmap is
// compacted many times) and compares every rank, and every row's leading
// runs per capacity, with a plain recency list (move to front, rank =
// index); the full consistency check runs after each row, and must catch a
// corrupted tree node.
func TestLRUStackRanks(t *testing.T) {
	rng := rand.New(rand.NewPCG(9, 10))
	// 3, 50, 700 ids: the bitmap is mostly dead times and is compacted;
	// 5,000: it grows, then is compacted into a larger one; 50,000: mostly
	// new blocks, the bitmap and tree grow instead.
	for _, c := range []struct{ ids, rows int }{{3, 3000}, {50, 3000}, {700, 3000}, {5000, 3000}, {50_000, 1500}} {
		ids := c.ids
		l := newLRUStack([]int{1, 3, 8})
		num := map[int]int32{} // id → dense block number, in order of first use
		var recency []int32    // most recent first
		for row := range c.rows {
			k := 1 + rng.IntN(12)
			idx := make([]int32, k)
			prev := 0
			for j := range idx {
				id := rng.IntN(ids)
				if j > 0 && rng.IntN(3) > 0 {
					id = (prev + 1) % ids // runs of neighbours, as in chained traces
				}
				prev = id
				b, ok := num[id]
				if !ok {
					b = int32(len(num))
					num[id] = b
				}
				idx[j] = b
			}
			l.grow(len(num))
			rc := rankCache{w: -1}
			for _, b := range idx {
				if int(b) >= l.live {
					continue
				}
				want := slices.Index(recency, b)
				if got := l.rank(b, &rc); got != want {
					t.Fatalf("ids %d row %d: rank of block %d is %d, want %d", ids, row, b, got, want)
				}
			}
			// leadingRuns over the leading blocks used before: for each
			// capacity, the first of rank ≥ slots, from the recency list.
			m := 0
			for m < len(idx) && int(idx[m]) < l.live {
				m++
			}
			want := make([]int, len(l.slots))
			for i, s := range l.slots {
				want[i] = m
				for j, b := range idx[:m] {
					if slices.Index(recency, b) >= s {
						want[i] = j
						break
					}
				}
			}
			got := make([]int, len(l.slots))
			l.leadingRuns(idx[:m], got)
			if !slices.Equal(got, want) {
				t.Fatalf("ids %d row %d: leading runs %v, want %v (row %v)", ids, row, got, want, idx)
			}
			l.touchAll(idx)
			for _, b := range idx {
				if i := slices.Index(recency, b); i >= 0 {
					recency = slices.Delete(recency, i, i+1)
				}
				recency = slices.Insert(recency, 0, b)
			}
			l.verify()
		}
		if ids >= 700 && l.done < 8 {
			t.Fatalf("ids %d: only %d complete words: the tree was hardly used", ids, l.done)
		}
		func() {
			defer func() {
				if recover() == nil {
					t.Errorf("ids %d: verify did not notice a wrong tree node", ids)
				}
			}()
			l.tree[l.done]++
			l.verify()
		}()
	}
}

// TestPrefixCacheAllocs is the allocation budget of the engine's per-request
// calls: none for a lookup, none for an access that hits or evicts once the
// cache is full.
func TestPrefixCacheAllocs(t *testing.T) {
	c := NewPrefixCache(16, 16*1000)
	ids := make([]uint64, 8)
	next := uint64(0)
	fresh := func() {
		for i := range ids {
			ids[i] = next
			next++
		}
	}
	for range 200 { // fill the 1,000 slots, then churn
		fresh()
		c.Access(ids, 128)
	}
	if n := testing.AllocsPerRun(100, func() { c.Lookup(ids, 128) }); n != 0 {
		t.Errorf("Lookup allocates %v times", n)
	}
	if n := testing.AllocsPerRun(100, func() { c.Access(ids, 128) }); n != 0 {
		t.Errorf("Access (hit) allocates %v times", n)
	}
	if n := testing.AllocsPerRun(100, func() { fresh(); c.Access(ids, 128) }); n != 0 {
		t.Errorf("Access (evicting) allocates %v times", n)
	}
}
