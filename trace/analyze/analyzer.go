// Hot path: Analyzer.Add runs once per trace row; its allocation budget is
// TestAddAllocs and its speed BenchmarkAnalyzeMooncake.

package analyze

import (
	"cmp"
	"math"
	"slices"
	"strconv"
	"time"

	"github.com/reprise-bench/reprise/trace"
)

// DefaultCacheSizes returns the LRU capacities, in tokens, analysed when the
// caller gives none: 1M, 3M, 10M and 50M tokens (the Mooncake paper's local
// vs global cache sizes bracket 3M and 50M).
func DefaultCacheSizes() []int64 { return []int64{1_000_000, 3_000_000, 10_000_000, 50_000_000} }

// Config configures an [Analyzer].
type Config struct {
	// BlockSize is the number of tokens per hash id; 0 takes the first
	// row's Row.BlockSize.
	BlockSize int
	// CacheSizes are the LRU capacities in tokens; nil means
	// DefaultCacheSizes, an empty non-nil slice means none.
	CacheSizes []int64
}

// Analyzer accumulates the time-order statistics of a trace, one row at a
// time. Feed it rows in arrival order; a row earlier than its predecessor
// is still counted but makes the arrival and reuse statistics meaningless,
// which [Analyzer.OutOfOrder] reports so the caller can sort and start over
// ([File] and [Rows] do).
//
// Memory grows with distinct hash ids (16 bytes of block state and 4 for
// the LRU stack whatever the number of capacities (none without one), kept
// in pages of 4,096 blocks; 4 to 24 for interning and one bit for the
// prefix roots, times up to 2 for slice growth), distinct sessions and
// distinct values of the lengths, gaps and reuse times; never with the
// number of rows as such.
//
// An Analyzer is not safe for concurrent use. Use [New]; the zero value is
// not usable.
type Analyzer struct {
	cfg Config
	// media accumulates the rows' images, audio and video (design 0022).
	media mediaAcc

	rows         int64
	first, prev  int64 // arrival ns of the first and previous row
	outOfOrder   int64
	timedByDelay int64
	distinctTS   int64
	zeroGaps     int64
	secBucket    int64
	secN, peakS  int64
	minBucket    int64
	minN, peakM  int64
	gaps         *hist

	isl, osl                    *hist
	inTok, outTok               int64
	over8k, over32k, over128k   int64
	oslLE3, oslUnknown          int64
	sessions                    map[string]*session
	rowsInSessions              int64
	kinds                       map[string]*groupAcc
	turns                       map[string]*groupAcc
	sawKind, sawTurn, sawBlocks bool

	// Cache state, indexed by dense block number.
	blockSize   int
	ids         interner
	blocks      paged[blockState]
	roots       []uint64 // bit b set: dense block b was some row's first block
	nRoots      int64
	rowsIDs     int64
	totalBlocks int64
	hitBlocks   int64
	hitTokens   int64
	idTokens    int64
	maxDepth    int64
	reuseTime   *hist
	reuseDist   *hist
	lrus        []lruAcc
	lru         *lruStack
	runs        []int // per lruStack capacity: this row's leading run
	scratch     []int32
	// scratch holds the dense numbers of the last row's ids and nBefore
	// the number of blocks before it, for AIPerf.addInterned.
	nBefore int32
}

// blockState is what the analyzer keeps per distinct block.
//
// lastRow is the row's arrival-order index modulo 2³²: reuse distances are
// computed in uint32 arithmetic, exact for any distance below 2³² rows even
// after the index wraps, and the struct stays 16 bytes.
type blockState struct {
	last    int64  // arrival ns of the last row containing the block
	lastRow uint32 // arrival-order index of that row, mod 2³²
	hits    uint32 // reuse hits (infinite cache)
}

type session struct {
	last  int64
	turns int64
}

type groupAcc struct {
	rows, inTok, hitTok int64
}

type lruAcc struct {
	capTokens int64
	slots     int
	cache     int // index into lruStack.slots; -1 for a capacity under one block
	hitBlocks int64
	hitTokens int64
}

// New returns an empty Analyzer.
func New(cfg Config) *Analyzer {
	if cfg.CacheSizes == nil {
		cfg.CacheSizes = DefaultCacheSizes()
	}
	a := &Analyzer{
		cfg:       cfg,
		gaps:      newHist(int64(time.Millisecond), 1<<20),
		isl:       newHist(1, 1<<20),
		osl:       newHist(1, 1<<20),
		sessions:  make(map[string]*session),
		kinds:     make(map[string]*groupAcc),
		turns:     make(map[string]*groupAcc),
		reuseTime: newHist(int64(time.Millisecond), 1<<20),
		reuseDist: newHist(1, 1<<20),
	}
	return a
}

// OutOfOrder returns how many rows arrived earlier than the row before.
func (a *Analyzer) OutOfOrder() int64 { return a.outOfOrder }

// Rows returns the number of rows added.
func (a *Analyzer) Rows() int64 { return a.rows }

// arrival returns the row's arrival time in ns: its offset, or for a row
// without a timestamp its session's previous arrival plus its delay, or
// the previous row's arrival plus the delay when it has no session (the
// effective arrival; [arrivals] applies the same rule to a slice).
func (a *Analyzer) arrival(r *trace.Row, s *session) int64 {
	if r.HasOffset {
		return int64(r.Offset)
	}
	if s != nil && s.turns > 0 {
		return s.last + int64(r.Delay)
	}
	if a.rows == 0 {
		return int64(r.Delay)
	}
	return a.prev + int64(r.Delay)
}

// session returns the row's session state, creating it; nil without one.
func (a *Analyzer) session(r *trace.Row) *session {
	if r.SessionID == "" {
		return nil
	}
	s := a.sessions[r.SessionID]
	if s == nil {
		s = &session{}
		a.sessions[r.SessionID] = s
	}
	return s
}

// Add accounts one row, which must not arrive before the previous one (see
// [Analyzer.OutOfOrder]); a row without a timestamp arrives at its
// effective arrival (see [Arrivals.TimedByDelay]). It does not retain r or
// its slices. It allocates only when the row brings a new hash id,
// session, kind, turn or distinct value (amortised growth of the per-block
// arrays and histograms).
func (a *Analyzer) Add(r *trace.Row) {
	s := a.session(r)
	a.add(r, s, a.arrival(r, s))
}

// addAt is Add with the row's arrival t (ns) given: the effective arrival
// computed in file order, for rows fed in time order (see timeOrder).
func (a *Analyzer) addAt(r *trace.Row, t int64) {
	a.add(r, a.session(r), t)
}

func (a *Analyzer) add(r *trace.Row, s *session, t int64) {
	a.media.add(r)
	if !r.HasOffset {
		a.timedByDelay++
	}
	if s != nil {
		s.last = t
		s.turns++
		a.rowsInSessions++
	}
	a.addArrival(t)
	a.addLengths(r)

	var hitTok int64
	if len(r.HashIDs) > 0 {
		hitTok = a.addBlocks(r, t)
	}
	if r.Kind != "" {
		a.sawKind = true
		g := a.kinds[r.Kind]
		if g == nil {
			g = &groupAcc{}
			a.kinds[r.Kind] = g
		}
		g.add(r, hitTok)
	}
	if r.SessionID != "" || r.Turn > 0 {
		a.sawTurn = true
		g := a.turns[turnName(r.Turn)]
		if g == nil {
			g = &groupAcc{}
			a.turns[turnName(r.Turn)] = g
		}
		g.add(r, hitTok)
	}
	a.rows++
}

func (g *groupAcc) add(r *trace.Row, hitTok int64) {
	g.rows++
	if len(r.HashIDs) > 0 {
		g.inTok += int64(r.InputTokens)
		g.hitTok += hitTok
	}
}

// turnNames avoids formatting an integer per row. Names are 1-based (the
// first turn is "1"), as Bailian and users count them; Row.Turn is 0-based.
var turnNames = [...]string{"1", "2", "3", "4", "5", "6", "7", "8", "9"}

// turnName names the group of 0-based turn t; turns 10 and later share one.
func turnName(t int) string {
	if t >= 0 && t < len(turnNames) {
		return turnNames[t]
	}
	if t < 0 {
		return strconv.Itoa(t + 1)
	}
	return "10+"
}

func (a *Analyzer) addArrival(t int64) {
	if a.rows == 0 {
		a.first, a.prev = t, t
		a.distinctTS = 1
		a.secN, a.peakS, a.minN, a.peakM = 1, 1, 1, 1
		return
	}
	gap := t - a.prev
	if gap < 0 {
		a.outOfOrder++
	}
	if gap == 0 {
		a.zeroGaps++
	} else {
		a.distinctTS++
	}
	a.gaps.add(gap)
	a.prev = t

	off := t - a.first
	sec := floorDiv(off, int64(time.Second))
	if sec == a.secBucket {
		a.secN++
	} else {
		a.secBucket, a.secN = sec, 1
	}
	a.peakS = max(a.peakS, a.secN)
	mn := floorDiv(off, int64(time.Minute))
	if mn == a.minBucket {
		a.minN++
	} else {
		a.minBucket, a.minN = mn, 1
	}
	a.peakM = max(a.peakM, a.minN)
}

func floorDiv(a, b int64) int64 {
	q := a / b
	if a%b != 0 && a < 0 {
		q--
	}
	return q
}

func (a *Analyzer) addLengths(r *trace.Row) {
	in, out := int64(r.InputTokens), int64(r.OutputTokens)
	a.isl.add(in)
	a.inTok += in
	if unknownOutput(r) {
		a.oslUnknown++
	} else {
		a.osl.add(out)
		a.outTok += out
		if out <= 3 {
			a.oslLE3++
		}
	}
	if in > 8192 {
		a.over8k++
	}
	if in > 32768 {
		a.over32k++
	}
	if in > 131072 {
		a.over128k++
	}
}

// unknownOutput reports a row without an output length: OutputTokens 0
// and not a failed request (a BurstGPT failed row did produce 0 tokens).
func unknownOutput(r *trace.Row) bool { return r.OutputTokens == 0 && !r.Failed }

// addBlocks runs the infinite cache and every LRU over the row's ids and
// returns the infinite-cache hit tokens.
func (a *Analyzer) addBlocks(r *trace.Row, t int64) int64 {
	if a.blockSize == 0 {
		a.initCache(r)
	}
	a.sawBlocks = true
	B := int64(a.blockSize)
	L := int64(r.InputTokens)
	k := len(r.HashIDs)

	// Intern: map every id to its dense block number. A number below
	// nBefore was seen in an earlier row (the infinite cache holds it).
	nBefore := int32(a.blocks.len())
	a.nBefore = nBefore
	idx := a.ids.appendNumbers(a.scratch[:0], r.HashIDs)
	a.scratch = idx
	if n := a.ids.len(); n > int(nBefore) {
		a.blocks.grow(n)
		if len(a.lru.slots) > 0 {
			a.lru.grow(n)
		}
		a.roots = growTo(a.roots, (n+63)/64)
	}

	// Infinite cache: leading run of previously seen blocks, m long.
	// The blocks of a shared prefix were usually last used by the same
	// earlier row, so equal reuse times come in runs: count each run once.
	var runLast int64
	var runRow uint32
	var runN uint64
	m := 0
	for _, b := range idx {
		if b >= nBefore {
			break
		}
		m++
		st := a.blocks.at(b)
		st.hits++
		if runN > 0 && st.last == runLast && st.lastRow == runRow {
			runN++
			continue
		}
		if runN > 0 {
			a.reuseTime.addN(t-runLast, runN)
			a.reuseDist.addN(int64(uint32(a.rows)-runRow), runN)
		}
		runLast, runRow, runN = st.last, st.lastRow, 1
	}
	if runN > 0 {
		a.reuseTime.addN(t-runLast, runN)
		a.reuseDist.addN(int64(uint32(a.rows)-runRow), runN)
	}
	hitTok := min(int64(m)*B, L)
	for _, b := range idx {
		st := a.blocks.at(b)
		st.last = t
		st.lastRow = uint32(a.rows)
	}
	a.rowsIDs++
	a.totalBlocks += int64(k)
	a.hitBlocks += int64(m)
	a.hitTokens += hitTok
	a.idTokens += L
	a.maxDepth = max(a.maxDepth, int64(k))
	if w, bit := idx[0]/64, uint64(1)<<(idx[0]%64); a.roots[w]&bit == 0 {
		a.roots[w] |= bit
		a.nRoots++
	}

	// LRU caches: lookup before touching, then touch every block in order.
	// Cache i (ascending size) holds b iff b's recency rank is below
	// slots[i], so its leading run ends at the first block of rank ≥
	// slots[i]; only the infinite cache's leading run can hit at all.
	if len(a.lru.slots) > 0 {
		l := a.lru
		runs := a.runs
		l.leadingRuns(idx[:m], runs)
		for i := range a.lrus {
			c := &a.lrus[i]
			if c.cache >= 0 {
				ml := runs[c.cache]
				c.hitBlocks += int64(ml)
				c.hitTokens += min(int64(ml)*B, L)
			}
		}
		l.touchAll(idx)
		if invariants && a.rowsIDs&(a.rowsIDs-1) == 0 { // at rows 1, 2, 4, 8, ...
			l.verify()
		}
	}
	return hitTok
}

func (a *Analyzer) initCache(r *trace.Row) {
	a.blockSize = a.cfg.BlockSize
	if a.blockSize <= 0 {
		a.blockSize = r.BlockSize
	}
	if a.blockSize <= 0 {
		// Rows with ids always carry a block size from the reader; a
		// hand-made row without one gets Mooncake's.
		a.blockSize = 512
	}
	var slots []int
	for _, c := range a.cfg.CacheSizes {
		slots = append(slots, int(max(c, 0)/int64(a.blockSize)))
	}
	a.lru = newLRUStack(sortedSlots(slots))
	a.runs = make([]int, len(a.lru.slots))
	for i, c := range a.cfg.CacheSizes {
		ci, _ := slices.BinarySearch(a.lru.slots, slots[i])
		if slots[i] == 0 {
			ci = -1
		}
		a.lrus = append(a.lrus, lruAcc{capTokens: c, slots: slots[i], cache: ci})
	}
}

// Report computes the statistics of the rows added so far. It does not
// change the Analyzer; more rows may be added afterwards. The AIPerf and
// Source sections are left nil (see [AIPerf] and [File]).
func (a *Analyzer) Report() *Report {
	rep := &Report{Schema: Schema, Rows: a.rows}
	if a.rows == 0 {
		return rep
	}
	span := a.prev - a.first
	rep.SpanSeconds = float64(span) / 1e9
	gs := a.gaps.sorted()
	rep.Arrivals = Arrivals{
		Peak1s:             a.peakS,
		Peak1min:           a.peakM,
		Peak1minRate:       float64(a.peakM) / 60,
		Gaps:               gs.stats(1e9),
		ZeroGapShare:       ratio(a.zeroGaps, a.rows-1),
		DistinctTimestamps: a.distinctTS,
		TimedByDelay:       a.timedByDelay,
	}
	if span > 0 {
		rep.Arrivals.MeanRate = float64(a.rows) / rep.SpanSeconds
	}
	if g := rep.Arrivals.Gaps; g.Mean > 0 {
		rep.Arrivals.GapCV = g.Std / g.Mean
	}
	rep.ISL = a.isl.sorted().stats(1)
	rep.OSL = a.osl.sorted().stats(1)
	rep.Lengths = Lengths{
		InputTokens: a.inTok, OutputTokens: a.outTok,
		ISLOver8k: a.over8k, ISLOver32k: a.over32k, ISLOver128k: a.over128k,
		OSLAtMost3: a.oslLE3, OSLUnknown: a.oslUnknown,
	}
	if len(a.sessions) > 0 {
		h := newHist(1, 1<<16)
		for _, s := range a.sessions {
			h.add(s.turns)
		}
		rep.Session = &Sessions{
			Sessions:        int64(len(a.sessions)),
			RowsInSessions:  a.rowsInSessions,
			TurnsPerSession: h.sorted().stats(1),
		}
	}
	if a.sawBlocks {
		rep.Cache = a.cacheReport()
	}
	rep.Media = a.media.report()
	return rep
}

// SkewFractions are the top-block fractions of the skew statistic.
var skewFractions = []float64{0.01, 0.05, 0.10, 0.20}

func (a *Analyzer) cacheReport() *Cache {
	c := &Cache{
		BlockSize:      a.blockSize,
		RowsWithIDs:    a.rowsIDs,
		DistinctBlocks: int64(a.blocks.len()),
		TotalBlocks:    a.totalBlocks,
		InputTokens:    a.idTokens,
		HitTokens:      a.hitTokens,
		HitBlocks:      a.hitBlocks,
		TokenHitRatio:  ratio(a.hitTokens, a.idTokens),
		BlockHitRatio:  ratio(a.hitBlocks, a.totalBlocks),
		PrefixRoots:    a.nRoots,
		MaxDepth:       a.maxDepth,
		MeanDepth:      ratio(a.totalBlocks, a.rowsIDs),
	}
	c.IdealSpeedup = speedup(c.TokenHitRatio)
	c.LRU = make([]LRUPoint, 0, len(a.lrus))
	for _, l := range a.lrus {
		p := LRUPoint{
			CapacityTokens: l.capTokens,
			CapacityBlocks: int64(l.slots),
			TokenHitRatio:  ratio(l.hitTokens, a.idTokens),
			BlockHitRatio:  ratio(l.hitBlocks, a.totalBlocks),
		}
		if c.TokenHitRatio > 0 {
			p.FractionOfCeiling = p.TokenHitRatio / c.TokenHitRatio
		}
		p.IdealSpeedup = speedup(p.TokenHitRatio)
		c.LRU = append(c.LRU, p)
	}

	// Skew: rank every distinct block by its reuse hits, descending (the
	// top n are the last n of the ascending order, which sorts faster).
	hits := make([]uint32, 0, a.blocks.len())
	for pg := range a.blocks.chunks {
		for i := range pg {
			hits = append(hits, pg[i].hits)
		}
	}
	slices.Sort(hits)
	var total int64
	for _, h := range hits {
		total += int64(h)
		if h > 0 {
			c.BlocksReused++
		}
	}
	for _, f := range skewFractions {
		n := int64(math.RoundToEven(f * float64(len(hits))))
		var s int64
		for _, h := range hits[int64(len(hits))-n:] {
			s += int64(h)
		}
		c.Skew = append(c.Skew, SkewPoint{Fraction: f, Blocks: n, Share: ratio(s, total)})
	}

	rt := a.reuseTime.sorted()
	c.ReuseTime = ReuseTime{Stats: rt.stats(1e9)}
	if rt.n > 0 {
		n := float64(rt.n)
		c.ReuseTime.Within10s = float64(rt.countLE(float64(10*time.Second))) / n
		c.ReuseTime.Within60s = float64(rt.countLE(float64(60*time.Second))) / n
		c.ReuseTime.Within600s = float64(rt.countLE(float64(600*time.Second))) / n
	}
	c.ReuseDistance = a.reuseDist.sorted().stats(1)

	if a.sawKind {
		c.ByKind = groups(a.kinds, a.hitTokens, func(x, y string) int { return cmp.Compare(x, y) })
	}
	if a.sawTurn {
		c.ByTurn = groups(a.turns, a.hitTokens, cmpTurn)
	}
	return c
}

// cmpTurn orders turn names numerically, "10+" last.
func cmpTurn(x, y string) int {
	n := func(s string) int {
		if v, err := strconv.Atoi(s); err == nil {
			return v
		}
		return math.MaxInt
	}
	return cmp.Compare(n(x), n(y))
}

func groups(m map[string]*groupAcc, allHit int64, order func(x, y string) int) []Group {
	names := make([]string, 0, len(m))
	for k := range m {
		names = append(names, k)
	}
	slices.SortFunc(names, order)
	out := make([]Group, 0, len(names))
	for _, k := range names {
		g := m[k]
		out = append(out, Group{
			Name: k, Rows: g.rows, InputTokens: g.inTok, HitTokens: g.hitTok,
			TokenHitRatio: ratio(g.hitTok, g.inTok), HitShare: ratio(g.hitTok, allHit),
		})
	}
	return out
}
