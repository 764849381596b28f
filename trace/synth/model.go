package synth

import (
	"cmp"
	"container/heap"
	"errors"
	"fmt"
	"math"
	"slices"
	"strconv"
	"time"

	"github.com/reprise-bench/reprise/trace"
	"github.com/reprise-bench/reprise/trace/analyze"
)

// Tolerances of the targets, as the issue states them: the hit ratio
// within ±2 points, the working set within ±5 %.
const (
	hitRatioTolerance   = 0.02
	workingSetTolerance = 0.05
)

// Generate makes a trace from cfg. Sessions are drawn per session and per
// concern from seeded streams (see the package documentation). With a
// target, every session is drawn first; the prefix sizes, the share of
// sessions that walk the prefix trees and the number of sessions are then
// chosen to meet the targets with an exact model of the analyzer's
// ceiling and working set, and a model that misses a target fails before
// a row is built. Without one, sessions are drawn as their rows are built,
// giving the same rows. The analyzer measures the trace ([Measure]) as it
// is built (unless SkipAnalysis), and if it disagrees with the model (a
// bug) Generate fails after the last row. Generate keeps every row;
// [GenerateTo] streams them.
func Generate(cfg GenerateConfig) (*Result, error) {
	var rows []trace.Row
	st, err := GenerateTo(cfg, func(r *trace.Row) error {
		row := *r
		row.HashIDs = slices.Clone(r.HashIDs)
		rows = append(rows, row)
		return nil
	})
	if err != nil {
		return nil, err
	}
	return &Result{Rows: rows, BlockSize: cfg.blockSize(), Format: cfg.Format, Generate: st}, nil
}

// GenerateTo is [Generate] handing each row to write as it is built, in
// output order, instead of keeping them. Memory:
//
//   - Without a target (no TargetHitRatio, no WorkingSet), sessions are
//     drawn as the rows are written: memory holds the sessions still open
//     (their drawn turns and context ids) and the prefix trees, whatever
//     the number of rows.
//   - With a target, every session is drawn first (the solver needs the
//     whole trace): about 50 bytes a request.
//   - Unless SkipAnalysis, the analyzer's measure of the rows adds its
//     state, about 20 bytes per distinct block (twice that for Mooncake
//     multi-turn output, measured both as contexts and as written).
//
// The row and its slices are valid only during the call; an error from
// write stops the generation and is returned. Rows are numbered (Index,
// Line) in output order.
func GenerateTo(cfg GenerateConfig, write func(*trace.Row) error) (*GenerateStats, error) {
	if err := cfg.Validate(); err != nil {
		return nil, settings(err)
	}
	g, err := newGen(cfg)
	if err != nil {
		return nil, settings(err)
	}
	werr := errors.New("write")
	var wrote error
	st, err := g.run(func(r *trace.Row) error {
		if err := write(r); err != nil {
			wrote = err
			return werr
		}
		return nil
	})
	switch {
	case errors.Is(err, werr):
		return nil, wrote
	case err != nil && !errors.Is(err, errBug):
		return nil, settings(err)
	}
	return st, err
}

// gen is one generation: the drawn pool of sessions, in start order, and
// the streams to draw more.
type gen struct {
	cfg   GenerateConfig
	B     int64
	roots int
	depth int

	curve     *RateCurve
	constRate float64 // > 0 when the rate never changes

	rArr, rTurns, rThink, rISL, rOSL, rPaths, rShare *rng
	u                                                float64 // operational time of the next arrival
	tPrev                                            float64 // previous arrival, s
	exhausted                                        bool

	// Per session.
	start  []int64
	nTurns []int32
	first  []int32 // index of its first turn in the per-turn arrays
	share  []float64
	path   []int32 // depth node numbers per session when roots > 0
	// Per turn, session-major.
	isl, osl []int32
	capped   []bool
	at       []int64 // estimated arrival: start + Σ think times
	delay    []int64
	tsess    []int32
	tj       []int32
	order    []int32 // turns by (at, session, turn)

	nodeIdx   map[uint64]int32
	nodeLevel []int32

	scratch sessionDraw
	// pool draws every session first even without a target (the oracle
	// of the stream, for tests).
	pool bool

	// Scratch of eval, reused.
	stamp     int32
	nodeStamp []int32
	kept      []int32
	curL      []int64
	fp        []int64
}

func newGen(cfg GenerateConfig) (*gen, error) {
	g := &gen{cfg: cfg, B: int64(cfg.blockSize()), roots: cfg.roots(), depth: cfg.PrefixDepth, nodeIdx: map[uint64]int32{}}
	if g.depth < 1 {
		g.depth = 1
	}
	knots := []Knot{{0, cfg.Rate}}
	if cfg.RateRamp > 0 {
		knots = []Knot{{0, 0}, {cfg.RateRamp, cfg.Rate}}
	}
	if cfg.RateEnd >= 0 {
		knots = append(knots, Knot{cfg.Duration, cfg.RateEnd})
	}
	curve, err := NewRateCurve(knots, cfg.DiurnalAmplitude, cfg.DiurnalPeriod)
	if err != nil {
		return nil, err
	}
	g.curve = curve
	if r, ok := curve.constant(); ok {
		g.constRate = r
	}
	s := cfg.Seed
	g.rArr, g.rTurns, g.rThink = newRNG(s, streamArrivals), newRNG(s, streamTurns), newRNG(s, streamThink)
	g.rISL, g.rOSL = newRNG(s, streamISL), newRNG(s, streamOSL)
	g.rPaths, g.rShare = newRNG(s, streamPaths), newRNG(s, streamShare)
	return g, nil
}

// maxArrival bounds generated arrival times (about 31 years), far inside
// int64 nanoseconds.
const maxArrival = 1e9

// nextArrival returns the next session's start in ns, rounded to the
// microsecond, or false when no session starts any more (Duration reached,
// or a rate that fell to 0).
func (g *gen) nextArrival() (int64, bool, error) {
	if g.exhausted {
		return 0, false, nil
	}
	u := g.u
	switch g.cfg.Arrival {
	case ArrivalConstant:
		g.u++
	case ArrivalGamma:
		s := g.cfg.Smoothness
		g.u += g.rArr.gamma(s) / s
	default:
		g.u += g.rArr.exp()
	}
	var t float64
	if g.constRate > 0 {
		t = u / g.constRate
	} else {
		t = g.curve.inverse(u, g.tPrev)
	}
	if math.IsInf(t, 1) {
		g.exhausted = true
		return 0, false, nil
	}
	if t > maxArrival {
		return 0, false, fmt.Errorf("arrivals run past %g s at --rate %g; raise the rate or generate fewer sessions", float64(maxArrival), g.cfg.Rate)
	}
	g.tPrev = t
	ns := int64(math.Round(t*1e6)) * 1000
	if g.cfg.Duration > 0 && ns >= int64(g.cfg.Duration) {
		g.exhausted = true
		return 0, false, nil
	}
	return ns, true, nil
}

// node returns the number of the prefix-tree node at level l (0-based)
// with index idx among that level's nodes.
func (g *gen) node(l int, idx uint64) int32 {
	key := uint64(l)<<58 | idx
	n, ok := g.nodeIdx[key]
	if !ok {
		n = int32(len(g.nodeLevel))
		g.nodeIdx[key] = n
		g.nodeLevel = append(g.nodeLevel, int32(l))
	}
	return n
}

// lognormal returns a lognormal value of this mean and standard deviation
// (mean itself when sd is 0).
func lognormal(r *rng, mean, sd float64) float64 {
	if sd == 0 || mean == 0 {
		return mean
	}
	s2 := math.Log1p(sd * sd / (mean * mean))
	return math.Exp(math.Log(mean) - s2/2 + math.Sqrt(s2)*r.normal())
}

// turnDraw is one drawn turn: its new prompt and output tokens (output
// capped by MaxOSL, capped saying so), estimated arrival (the session's
// start plus its think times) and delay after the turn before.
type turnDraw struct {
	isl, osl  int32
	capped    bool
	at, delay int64
}

// sessionDraw is one drawn session: its start, its prefix path (depth
// node numbers when there are prefix trees), its share draw and its turns.
// draw reuses its slices.
type sessionDraw struct {
	start int64
	path  []int32
	share float64
	turns []turnDraw
}

// draw draws the next session into d, every concern from its own stream
// in session order; false when none starts any more. The pool ([gen.fill])
// and the stream ([gen.stream]) both draw through it, so they draw the
// same sessions.
func (g *gen) draw(d *sessionDraw) (bool, error) {
	t, ok, err := g.nextArrival()
	if err != nil || !ok {
		return false, err
	}
	c := &g.cfg
	d.start = t
	nt := int(min(math.Round(lognormal(g.rTurns, c.Turns, c.TurnsStddev)), 1e4))
	nt = max(nt, 1)
	d.path = d.path[:0]
	if g.roots > 0 {
		idx := uint64(g.rPaths.intN(g.roots))
		d.path = append(d.path, g.node(0, idx))
		for l := 1; l < g.depth; l++ {
			f := c.fanout(l)
			idx = idx*uint64(f) + uint64(g.rPaths.intN(f))
			d.path = append(d.path, g.node(l, idx))
		}
	}
	d.share = g.rShare.float64()
	d.turns = d.turns[:0]
	at := t
	for j := range nt {
		var in, out int
		if c.Lengths != nil {
			p := c.Lengths[g.rISL.intN(len(c.Lengths))]
			in, out = p[0], p[1]
		} else {
			in, out = c.ISL.draw(g.rISL), c.OSL.draw(g.rOSL)
		}
		capped := c.MaxOSL > 0 && out > c.MaxOSL
		if capped {
			out = c.MaxOSL
		}
		var dl int64
		if j > 0 {
			v := lognormal(g.rThink, float64(c.ThinkTime), float64(c.ThinkTimeStddev))
			dl = int64(math.Round(v/1e3)) * 1000
			at += dl
		}
		d.turns = append(d.turns, turnDraw{isl: int32(in), osl: int32(out), capped: capped, at: at, delay: dl})
	}
	return true, nil
}

// drawSession draws the next session into the pool; false when none
// starts any more.
func (g *gen) drawSession() (bool, error) {
	d := &g.scratch
	if ok, err := g.draw(d); err != nil || !ok {
		return false, err
	}
	s := int32(len(g.start))
	g.start = append(g.start, d.start)
	g.nTurns = append(g.nTurns, int32(len(d.turns)))
	g.first = append(g.first, int32(len(g.isl)))
	g.path = append(g.path, d.path...)
	g.share = append(g.share, d.share)
	for j, td := range d.turns {
		g.isl = append(g.isl, td.isl)
		g.osl = append(g.osl, td.osl)
		g.capped = append(g.capped, td.capped)
		g.at = append(g.at, td.at)
		g.delay = append(g.delay, td.delay)
		g.tsess = append(g.tsess, s)
		g.tj = append(g.tj, int32(j))
	}
	return true, nil
}

// fill draws the pool the count mode asks for; with WorkingSet, an initial
// pool of want sessions.
func (g *gen) fill(want int) error {
	c := &g.cfg
	switch {
	case c.Sessions > 0:
		want = c.Sessions
	case c.Requests > 0:
		total := 0
		for total < c.Requests {
			ok, err := g.drawSession()
			if err != nil {
				return err
			}
			if !ok {
				return fmt.Errorf("only %d requests start before the rate falls to 0", total)
			}
			total += int(g.nTurns[len(g.nTurns)-1])
		}
		g.nTurns[len(g.nTurns)-1] -= int32(total - c.Requests)
		g.sortOrder()
		return nil
	case c.Duration > 0:
		for {
			ok, err := g.drawSession()
			if err != nil {
				return err
			}
			if !ok {
				break
			}
			if len(g.start) > maxSessions {
				return fmt.Errorf("more than %d sessions start within --duration %v at --rate %g; lower the rate or the duration", maxSessions, c.Duration, c.Rate)
			}
		}
		if len(g.start) == 0 {
			return fmt.Errorf("no session starts within --duration %v at --rate %g", c.Duration, c.Rate)
		}
		g.sortOrder()
		return nil
	}
	for len(g.start) < want {
		ok, err := g.drawSession()
		if err != nil {
			return err
		}
		if !ok {
			return fmt.Errorf("only %d sessions start before the rate falls to 0 (want %d)", len(g.start), want)
		}
	}
	g.sortOrder()
	return nil
}

// sortOrder orders every drawn turn by estimated arrival; ties by session,
// then turn, so a turn never precedes its predecessor.
func (g *gen) sortOrder() {
	g.order = g.order[:0]
	for s := range g.start {
		for j := range g.nTurns[s] {
			g.order = append(g.order, g.first[s]+j)
		}
	}
	slices.SortFunc(g.order, func(a, b int32) int {
		if c := cmp.Compare(g.at[a], g.at[b]); c != 0 {
			return c
		}
		if c := cmp.Compare(g.tsess[a], g.tsess[b]); c != 0 {
			return c
		}
		return cmp.Compare(g.tj[a], g.tj[b])
	})
}

// params are the knobs the solver turns: the tokens of each prefix level
// and the share of sessions that walk the trees.
type params struct {
	tokens []int
	share  float64
}

// layout is params in blocks: ends[l] = tokens of levels 0..l; a session
// that has seen level l's node shares ⌊ends[l]/B⌋ blocks.
type layout struct {
	ends   []int64
	owned  []int64 // blocks owned by each level's node
	prefix int64
}

func (g *gen) layout(p params) layout {
	var lo layout
	var e int64
	for _, t := range p.tokens {
		prev := e / g.B
		e += int64(t)
		lo.ends = append(lo.ends, e)
		lo.owned = append(lo.owned, e/g.B-prev)
	}
	lo.prefix = e
	return lo
}

func (g *gen) walker(s int, p params) bool { return g.roots > 0 && g.share[s] < p.share }

func (g *gen) sessPath(s int) []int32 { return g.path[s*g.depth : (s+1)*g.depth] }

// result is what eval computes, exactly as the analyzer would on the
// built rows: the infinite-cache hit and input tokens, distinct blocks.
type result struct {
	n           int // sessions used
	rows        int
	hitTok      int64
	inTok       int64
	blocks      int64
	walkers     int
	sessionsCut int
	rowsCut     int
	oslCapped   int
	empty       int // sessions without a row (streamed; the pool counts kept)
}

func (r result) hitRatio() float64 {
	if r.inTok == 0 {
		return 0
	}
	return float64(r.hitTok) / float64(r.inTok)
}

func ceilDiv(a, b int64) int64 { return (a + b - 1) / b }

// eval computes the trace's statistics for p without building it. With
// WorkingSet it also picks the number of sessions, growing the pool when
// it is too small.
func (g *gen) eval(p params) (result, error) {
	lo := g.layout(p)
	for {
		n := g.footprints(p, lo)
		if g.cfg.WorkingSet == 0 {
			return g.hits(p, lo, len(g.start)), nil
		}
		W := g.cfg.WorkingSet
		pool := len(g.start)
		if g.fp[pool]*g.B >= W || g.exhausted {
			n = sort0(pool, func(i int) bool { return g.fp[i]*g.B >= W })
			if n > pool {
				n = pool
			}
			if n > 1 && W-g.fp[n-1]*g.B < g.fp[n]*g.B-W {
				n--
			}
			return g.hits(p, lo, max(n, 1)), nil
		}
		if pool >= maxSessions {
			return result{}, fmt.Errorf("--working-set %d tokens: %d sessions reach only %d tokens; lower it or raise --isl", W, pool, g.fp[pool]*g.B)
		}
		if err := g.fill(min(maxSessions, max(2*pool, 64))); err != nil {
			return result{}, err
		}
		_ = n
	}
}

// sort0 returns the smallest i in [0, n] with f(i) true (f monotone), or
// n+1 when none is.
func sort0(n int, f func(int) bool) int {
	i, j := 0, n+1
	for i < j {
		h := int(uint(i+j) >> 1)
		if h <= n && !f(h) {
			i = h + 1
		} else {
			j = h
		}
	}
	return i
}

// footprints fills g.kept (turns kept per session under MaxISL) and g.fp,
// the distinct blocks of the first n sessions for every n. It returns the
// pool size.
func (g *gen) footprints(p params, lo layout) int {
	pool := len(g.start)
	g.kept = growInt32(g.kept, pool)
	g.fp = growInt64(g.fp, pool+1)
	g.nodeStamp = growInt32(g.nodeStamp, len(g.nodeLevel))
	g.stamp++
	maxISL := int64(g.cfg.MaxISL)
	g.fp[0] = 0
	for s := range pool {
		walk := g.walker(s, p)
		var P int64
		if walk {
			P = lo.prefix
		}
		var blocks, L int64
		kept := int32(0)
		f := g.first[s]
		for j := range g.nTurns[s] {
			t := f + j
			var nl, shared int64
			if j == 0 {
				nl = P + int64(g.isl[t])
				shared = P / g.B
			} else {
				nl = L + int64(g.osl[t-1]) + int64(g.isl[t])
				shared = L / g.B
			}
			if maxISL > 0 && nl > maxISL {
				break
			}
			blocks += ceilDiv(nl, g.B) - shared
			L = nl
			kept++
		}
		if kept > 0 && walk {
			for l, nd := range g.sessPath(s) {
				if g.nodeStamp[nd] != g.stamp {
					g.nodeStamp[nd] = g.stamp
					blocks += lo.owned[l]
				}
			}
		}
		g.kept[s] = kept
		g.fp[s+1] = g.fp[s] + blocks
	}
	return pool
}

// hits walks the turns of the first n sessions in arrival order and counts
// the infinite-cache hits, exactly as the analyzer does on the built rows:
// a first turn hits the blocks of the deepest node of its path an earlier
// row visited; a later turn hits every full block of the turn before.
func (g *gen) hits(p params, lo layout, n int) result {
	r := result{n: n, blocks: g.fp[n]}
	g.curL = growInt64(g.curL, n)
	g.stamp++
	for _, t := range g.order {
		s := g.tsess[t]
		j := g.tj[t]
		if int(s) >= n || j >= g.kept[s] {
			continue
		}
		var L, hit int64
		if j == 0 {
			L = int64(g.isl[t])
			if g.walker(int(s), p) {
				r.walkers++
				L += lo.prefix
				deepest := -1
				path := g.sessPath(int(s))
				for l, nd := range path {
					if g.nodeStamp[nd] != g.stamp {
						break
					}
					deepest = l
				}
				if deepest >= 0 {
					hit = lo.ends[deepest] / g.B * g.B
				}
				for _, nd := range path {
					g.nodeStamp[nd] = g.stamp
				}
			}
		} else {
			prev := g.curL[s]
			L = prev + int64(g.osl[t-1]) + int64(g.isl[t])
			hit = prev / g.B * g.B
		}
		g.curL[s] = L
		r.hitTok += hit
		r.inTok += L
		r.rows++
		if g.capped[t] {
			r.oslCapped++
		}
	}
	for s := range n {
		if g.kept[s] < g.nTurns[s] {
			r.sessionsCut++
			r.rowsCut += int(g.nTurns[s] - g.kept[s])
		}
	}
	return r
}

func growInt32(s []int32, n int) []int32 {
	if cap(s) < n {
		return make([]int32, n, n+n/4)
	}
	return s[:n]
}

func growInt64(s []int64, n int) []int64 {
	if cap(s) < n {
		return make([]int64, n, n+n/4)
	}
	return s[:n]
}

// rowMaker builds the rows, in output order, from drawn turns, with their
// whole context (the analyzer's view; see [gen.run] for the Mooncake
// dialect). Hash ids are dense, allocated in order of first appearance: a
// node's blocks when a row first walks it, then each row's own blocks. A
// session's ids live in one buffer that its next turn extends in place and
// that returns to a free list after its last turn, so memory holds the
// open sessions' contexts, not the rows. It counts the infinite-cache hits
// as it goes, exactly as the analyzer does on the rows: a first turn hits
// the blocks of the deepest node of its path an earlier row walked; a
// later turn hits every full block of the turn before.
type rowMaker struct {
	g              *gen
	lo             layout
	bailian, multi bool
	nodeFirst      []int64 // first id of a node's blocks; -1 = not walked yet
	next           uint64  // the next new id = the distinct blocks so far
	free           [][]uint64
	pos            int64
	sid            []byte

	rows, walkers, oslCapped int
	hitTok, inTok            int64
}

// openSession is a session with turns still to come: its context's ids
// and length, its first and previous row.
type openSession struct {
	ids             []uint64
	L, root, parent int64
}

func (g *gen) newRowMaker(p params) *rowMaker {
	m := &rowMaker{g: g, lo: g.layout(p), bailian: g.cfg.Format == trace.FormatBailian, multi: g.cfg.multiTurn(),
		nodeFirst: make([]int64, len(g.nodeLevel))}
	for i := range m.nodeFirst {
		m.nodeFirst[i] = -1
	}
	return m
}

// row builds turn j of session s (drawn as td; prevOSL is the output of
// turn j−1) and hands it to out with the turn's own new tokens; sess is
// the session's state, updated for its next turn unless last. The row and
// its ids are valid only during the call.
func (m *rowMaker) row(s, j int32, td turnDraw, prevOSL int32, walker bool, path []int32, sess *openSession, last bool, out func(*trace.Row, int32) error) error {
	g := m.g
	var L, hit int64
	var ids []uint64
	if j == 0 {
		if k := len(m.free); k > 0 {
			ids, m.free = m.free[k-1][:0], m.free[:k-1]
		}
		L = int64(td.isl)
		if walker {
			m.walkers++
			L += m.lo.prefix
			for len(m.nodeFirst) < len(g.nodeLevel) { // the stream draws nodes as it goes
				m.nodeFirst = append(m.nodeFirst, -1)
			}
			deepest := -1
			for l, nd := range path {
				if m.nodeFirst[nd] < 0 {
					break
				}
				deepest = l
			}
			if deepest >= 0 {
				hit = m.lo.ends[deepest] / g.B * g.B
			}
			for l, nd := range path {
				if m.nodeFirst[nd] < 0 {
					m.nodeFirst[nd] = int64(m.next)
					m.next += uint64(m.lo.owned[l])
				}
				for id := range m.lo.owned[l] {
					ids = append(ids, uint64(m.nodeFirst[nd]+id))
				}
			}
		}
	} else {
		L = sess.L + int64(prevOSL) + int64(td.isl)
		ids = sess.ids[:sess.L/g.B]
		hit = sess.L / g.B * g.B
	}
	for n := ceilDiv(L, g.B); int64(len(ids)) < n; m.next++ {
		ids = append(ids, m.next)
	}
	m.rows++
	m.hitTok += hit
	m.inTok += L
	if td.capped {
		m.oslCapped++
	}
	pos := m.pos
	row := trace.Row{
		Index: pos, Line: pos + 1,
		InputTokens: int(L), OutputTokens: int(td.osl),
		BlockSize: int(g.B), HashIDs: ids,
		Turn: int(j), ParentID: -1, RequestID: -1,
	}
	if m.multi {
		// Every row holds its whole context here (the analyzer's
		// view); Mooncake output makes later turns incremental.
		m.sid = strconv.AppendInt(append(m.sid[:0], 's'), int64(s), 10)
		row.SessionID = string(m.sid)
		row.Cumulative = true
	}
	switch {
	case m.bailian:
		// As the Bailian reader gives it back: every row is in the
		// session of its root chat id.
		row.RequestID = pos
		row.Offset, row.HasOffset = time.Duration(td.at), true
		row.Cumulative = true
		if j == 0 {
			sess.root = pos
		}
		row.SessionID = strconv.FormatInt(sess.root, 10)
		if j > 0 {
			row.ParentID = sess.parent
			row.Delay, row.HasDelay = time.Duration(td.delay), true
		}
	case j == 0:
		row.Offset, row.HasOffset = time.Duration(td.at), true
	default:
		row.Delay, row.HasDelay = time.Duration(td.delay), true
	}
	if err := out(&row, td.isl); err != nil {
		return err
	}
	if last {
		m.free = append(m.free, ids)
	} else {
		sess.ids, sess.L, sess.parent = ids, L, pos
	}
	m.pos++
	return nil
}

// emit builds the rows of the first n sessions of the pool for p (after
// eval(p) set kept) in arrival order and hands each to out with its
// turn's own new tokens (see [rowMaker]).
func (g *gen) emit(p params, n int, out func(r *trace.Row, isl int32) error) error {
	m := g.newRowMaker(p)
	open := map[int32]*openSession{}
	for _, t := range g.order {
		s := g.tsess[t]
		j := g.tj[t]
		if int(s) >= n || j >= g.kept[s] {
			continue
		}
		sess := open[s]
		if j == 0 {
			sess = &openSession{}
			open[s] = sess
		}
		var prevOSL int32
		if j > 0 {
			prevOSL = g.osl[t-1]
		}
		td := turnDraw{isl: g.isl[t], osl: g.osl[t], capped: g.capped[t], at: g.at[t], delay: g.delay[t]}
		var path []int32
		if g.roots > 0 {
			path = g.sessPath(int(s))
		}
		last := j+1 >= g.kept[s]
		if err := m.row(s, j, td, prevOSL, g.walker(int(s), p), path, sess, last, out); err != nil {
			return err
		}
		if last {
			delete(open, s)
		}
	}
	return nil
}

// liveSession is a session of the stream: drawn, with turns still to
// write (next is the next one).
type liveSession struct {
	sessionDraw
	n, kept, next int32
	walker        bool
	open          openSession
}

// at is the estimated arrival of the session's next turn.
func (l *liveSession) at() int64 { return l.turns[l.next].at }

// turnQueue orders live sessions by their next turn's (arrival, session,
// turn), the output order.
type turnQueue []*liveSession

func (q turnQueue) Len() int { return len(q) }
func (q turnQueue) Less(i, j int) bool {
	a, b := q[i], q[j]
	if x, y := a.at(), b.at(); x != y {
		return x < y
	}
	return a.n < b.n // one entry per session: the turns never tie
}
func (q turnQueue) Swap(i, j int) { q[i], q[j] = q[j], q[i] }
func (q *turnQueue) Push(x any)   { *q = append(*q, x.(*liveSession)) }
func (q *turnQueue) Pop() any {
	old := *q
	l := old[len(old)-1]
	old[len(old)-1] = nil
	*q = old[:len(old)-1]
	return l
}

// stream draws sessions and writes their rows as it goes, for settings
// without a target (p is fixed): the same rows, in the same order, as
// fill, eval and emit give, holding only the sessions still open. Sessions
// start in time order and a session's first turn arrives at its start, so
// once session k is drawn every turn at or before its start precedes
// every turn of a later session (ties go to the lower session number):
// those are written, and the queue holds one entry per open session.
func (g *gen) stream(p params, out func(r *trace.Row, isl int32) error) (result, error) {
	c := &g.cfg
	lo := g.layout(p)
	m := g.newRowMaker(p)
	var q turnQueue
	var spare []*liveSession
	var r result
	total, empty := 0, 0
	maxISL := int64(c.MaxISL)
	pop := func(until int64) error {
		for len(q) > 0 && q[0].at() <= until {
			l := q[0]
			j := l.next
			var prevOSL int32
			if j > 0 {
				prevOSL = l.turns[j-1].osl
			}
			last := j+1 >= l.kept
			if err := m.row(l.n, j, l.turns[j], prevOSL, l.walker, l.path, &l.open, last, out); err != nil {
				return err
			}
			if last {
				heap.Pop(&q)
				spare = append(spare, l)
				continue
			}
			l.next++
			heap.Fix(&q, 0)
		}
		return nil
	}
	for {
		if c.Sessions > 0 && r.n == c.Sessions || c.Requests > 0 && total >= c.Requests {
			break
		}
		var l *liveSession
		if k := len(spare); k > 0 {
			l, spare = spare[k-1], spare[:k-1]
		} else {
			l = &liveSession{}
		}
		ok, err := g.draw(&l.sessionDraw)
		if err != nil {
			return r, err
		}
		if !ok {
			switch {
			case c.Sessions > 0:
				return r, fmt.Errorf("only %d sessions start before the rate falls to 0 (want %d)", r.n, c.Sessions)
			case c.Requests > 0:
				return r, fmt.Errorf("only %d requests start before the rate falls to 0", total)
			case r.n == 0:
				return r, fmt.Errorf("no session starts within --duration %v at --rate %g", c.Duration, c.Rate)
			}
			break
		}
		if c.Requests > 0 && total+len(l.turns) > c.Requests {
			l.turns = l.turns[:c.Requests-total]
		}
		total += len(l.turns)
		l.n, l.next = int32(r.n), 0
		r.n++
		if c.Duration > 0 && r.n > maxSessions {
			return r, fmt.Errorf("more than %d sessions start within --duration %v at --rate %g; lower the rate or the duration", maxSessions, c.Duration, c.Rate)
		}
		// The turns kept under MaxISL, as footprints counts them.
		l.walker = g.roots > 0 && l.share < p.share
		var P, L int64
		if l.walker {
			P = lo.prefix
		}
		l.kept = 0
		for j, td := range l.turns {
			nl := P + int64(td.isl)
			if j > 0 {
				nl = L + int64(l.turns[j-1].osl) + int64(td.isl)
			}
			if maxISL > 0 && nl > maxISL {
				break
			}
			L = nl
			l.kept++
		}
		if int(l.kept) < len(l.turns) {
			r.sessionsCut++
			r.rowsCut += len(l.turns) - int(l.kept)
		}
		if l.kept == 0 {
			empty++
			spare = append(spare, l)
		} else {
			l.open = openSession{}
			heap.Push(&q, l)
		}
		if err := pop(l.start); err != nil {
			return r, err
		}
	}
	if err := pop(math.MaxInt64); err != nil {
		return r, err
	}
	r.rows, r.hitTok, r.inTok, r.blocks = m.rows, m.hitTok, m.inTok, int64(m.next)
	r.walkers, r.oslCapped = m.walkers, m.oslCapped
	r.empty = empty
	return r, nil
}

// run solves for the targets, checks them on the model, then emits the
// rows to write in output form while the analyzer measures them in their
// analyzer form: a model that disagrees with the analyzer is a bug
// (errBug), reported after the last row. Settings without a target are
// streamed ([gen.stream]): nothing is drawn ahead of the rows.
func (g *gen) run(write func(*trace.Row) error) (*GenerateStats, error) {
	c := &g.cfg
	p := params{tokens: c.levelTokens(), share: c.PrefixShare}
	if g.roots == 0 {
		p = params{}
	}
	streaming := c.TargetHitRatio == 0 && c.WorkingSet == 0 && !g.pool
	var res result
	if !streaming {
		if err := g.fill(64); err != nil {
			return nil, err
		}
		var err error
		if c.TargetHitRatio > 0 {
			p, res, err = g.solve(p)
		} else {
			res, err = g.eval(p)
		}
		if err != nil {
			return nil, err
		}
		if err := g.checkResult(p, res); err != nil {
			return nil, err
		}
	}
	// AIPerf's Mooncake dialect: a later turn of a session of two or more
	// rows holds its new tokens only (see [Incremental]); the replay
	// (reprise's --context-mode auto, or AIPerf) sends it after the
	// history, which is the context the analyzer measures here.
	incremental := c.Format == trace.FormatMooncake && c.multiTurn()
	cfg := analyze.Config{BlockSize: int(g.B), CacheSizes: []int64{}}
	var a, written *analyze.Analyzer
	if !c.SkipAnalysis {
		a = analyze.New(cfg)
		if incremental {
			written = analyze.New(cfg)
		}
	}
	emitRow := func(r *trace.Row, isl int32) error {
		if a != nil {
			a.Add(r)
		}
		if !incremental {
			return write(r)
		}
		r.Cumulative = false
		if r.Turn > 0 {
			nt := int(isl)
			r.InputTokens = nt
			r.HashIDs = r.HashIDs[len(r.HashIDs)-(nt+int(g.B)-1)/int(g.B):]
		}
		if written != nil {
			written.Add(r)
		}
		return write(r)
	}
	if streaming {
		var err error
		if res, err = g.stream(p, emitRow); err != nil {
			return nil, err
		}
		if err := g.checkResult(p, res); err != nil {
			return nil, err
		}
	} else if err := g.emit(p, res.n, emitRow); err != nil {
		return nil, err
	}
	st := g.stats(p, res)
	if a == nil {
		return st, nil
	}
	rep := a.Report()
	st.Written = rep
	if written != nil {
		st.Written = written.Report()
	}
	if rep.Cache != nil {
		if rep.Cache.HitTokens != res.hitTok || rep.Cache.InputTokens != res.inTok || rep.Cache.DistinctBlocks != res.blocks || rep.Rows != int64(res.rows) {
			return nil, fmt.Errorf("%w: synth model (rows %d, hit %d, input %d, blocks %d) disagrees with the analyzer (rows %d, hit %d, input %d, blocks %d)",
				errBug, res.rows, res.hitTok, res.inTok, res.blocks, rep.Rows, rep.Cache.HitTokens, rep.Cache.InputTokens, rep.Cache.DistinctBlocks)
		}
	}
	return st, nil
}

// stats is what res says of the generation with p.
func (g *gen) stats(p params, res result) *GenerateStats {
	empty := res.empty
	if g.kept != nil {
		empty = countEmpty(g.kept[:res.n])
	}
	return &GenerateStats{
		Sessions: res.n - empty, Rows: res.rows,
		SessionsCut: res.sessionsCut, RowsCut: res.rowsCut, OSLCapped: res.oslCapped,
		PrefixTokens: p.tokens, PrefixShare: p.share, Walkers: res.walkers,
		HitRatio: res.hitRatio(), WorkingSetTokens: res.blocks * g.B,
	}
}

// checkResult fails a generation that made no row or misses a target.
func (g *gen) checkResult(p params, res result) error {
	c := &g.cfg
	if res.rows == 0 {
		return fmt.Errorf("no request is left: every session's first turn is over --max-isl %d", c.MaxISL)
	}
	st := g.stats(p, res)
	if c.TargetHitRatio > 0 && math.Abs(st.HitRatio-c.TargetHitRatio) > hitRatioTolerance {
		return fmt.Errorf("--target-hit-ratio %g: the closest trace these settings allow measures %.4f (more sessions, or fewer prefix paths, give finer steps)", c.TargetHitRatio, st.HitRatio)
	}
	if W := c.WorkingSet; W > 0 {
		if dev := math.Abs(float64(st.WorkingSetTokens-W)) / float64(W); dev > workingSetTolerance {
			return fmt.Errorf("--working-set %d: the closest trace measures %d tokens (%.1f %% off): one session adds too much; lower --isl or --turns, or raise the working set", W, st.WorkingSetTokens, 100*dev)
		}
	}
	return nil
}

func countEmpty(kept []int32) int {
	n := 0
	for _, k := range kept {
		if k == 0 {
			n++
		}
	}
	return n
}

// solve meets TargetHitRatio. When the prefix tokens were not given it
// first sizes every level to the smallest whole number of blocks at which
// all sessions walking the trees reach the target; then it bisects the
// share of sessions that walk them (a session walks when its own uniform
// draw is below the share, so raising the share only adds walkers).
func (g *gen) solve(p params) (params, result, error) {
	c := &g.cfg
	target := c.TargetHitRatio
	if len(c.PrefixTokens) == 0 {
		k, err := g.solveBlocks(target)
		if err != nil {
			return p, result{}, err
		}
		p.tokens = make([]int, g.depth)
		for l := range p.tokens {
			p.tokens[l] = k * int(g.B)
		}
	}
	p.share = 1
	hi, err := g.eval(p)
	if err != nil {
		return p, result{}, err
	}
	if hi.hitRatio() < target {
		return p, hi, fmt.Errorf("--target-hit-ratio %g is out of reach: with every session walking the prefix trees (--prefix-tokens %v) the ceiling is %.4f; give longer --prefix-tokens (or none, to let synthesize size them), fewer --prefix-roots or a smaller --prefix-fanout",
			target, p.tokens, hi.hitRatio())
	}
	p.share = 0
	lo, err := g.eval(p)
	if err != nil {
		return p, result{}, err
	}
	if lo.hitRatio() > target+hitRatioTolerance {
		return p, lo, fmt.Errorf("--target-hit-ratio %g is below the %.4f that the sessions' own history already gives (later turns reuse the earlier context); use fewer --turns or longer --isl", target, lo.hitRatio())
	}
	best, bestP := lo, params{tokens: p.tokens, share: 0}
	if math.Abs(hi.hitRatio()-target) < math.Abs(best.hitRatio()-target) {
		best, bestP = hi, params{tokens: p.tokens, share: 1}
	}
	a, b := 0.0, 1.0
	for range 64 {
		if math.Abs(best.hitRatio()-target) < 1e-5 || b-a < 1e-12 {
			break
		}
		mid := a + (b-a)/2
		p.share = mid
		r, err := g.eval(p)
		if err != nil {
			return p, result{}, err
		}
		if math.Abs(r.hitRatio()-target) < math.Abs(best.hitRatio()-target) {
			best, bestP = r, params{tokens: p.tokens, share: mid}
		}
		if r.hitRatio() < target {
			a = mid
		} else {
			b = mid
		}
	}
	// eval leaves kept and fp for the last params: recompute for the best.
	best, err = g.eval(bestP)
	return bestP, best, err
}

// solveBlocks returns the smallest k such that prefix levels of k blocks
// each, walked by every session, reach target.
func (g *gen) solveBlocks(target float64) (int, error) {
	at := func(k int) (float64, error) {
		tok := make([]int, g.depth)
		for l := range tok {
			tok[l] = k * int(g.B)
		}
		r, err := g.eval(params{tokens: tok, share: 1})
		if err == nil && r.rows == 0 {
			err = fmt.Errorf("--target-hit-ratio %g: with a prefix of %d tokens no first turn fits under --max-isl %d", target, k*int(g.B)*g.depth, g.cfg.MaxISL)
		}
		return r.hitRatio(), err
	}
	maxK := max(1, maxPrefixTokens/(int(g.B)*g.depth))
	if m := g.cfg.MaxISL; m > 0 {
		// Leave every first turn room for at least one token of its own.
		maxK = min(maxK, (m-1)/(int(g.B)*g.depth))
		if maxK < 1 {
			return 0, fmt.Errorf("--target-hit-ratio %g: --max-isl %d leaves no room for a prefix of one %d-token block per level", target, m, g.B)
		}
	}
	k := 1
	for {
		h, err := at(k)
		if err != nil {
			return 0, err
		}
		if h >= target {
			break
		}
		if k >= maxK {
			return 0, fmt.Errorf("--target-hit-ratio %g is out of reach: even a prefix of %d tokens gives %.4f (too few sessions per prefix path: fewer --prefix-roots or a smaller --prefix-fanout, or more sessions)",
				target, k*int(g.B)*g.depth, h)
		}
		k = min(2*k, maxK)
	}
	lo, hi := k/2, k // at(lo) < target ≤ at(hi), or lo = 0
	for hi-lo > 1 {
		mid := lo + (hi-lo)/2
		h, err := at(mid)
		if err != nil {
			return 0, err
		}
		if h >= target {
			hi = mid
		} else {
			lo = mid
		}
	}
	return hi, nil
}
