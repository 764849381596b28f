package synth

import (
	"cmp"
	"fmt"
	"math"
	"slices"
	"strconv"
	"time"

	"github.com/reprise-bench/reprise/trace"
)

// DeriveStats says what [Derive] did.
type DeriveStats struct {
	RowsIn, SessionsIn int
	// WindowSessionsDropped counts sessions whose first turn lies outside
	// the window. Sessions are kept or dropped whole: WindowRowsBeyond
	// counts kept rows that arrive at or after the window's end (later
	// turns of sessions that began inside it), WindowRowsBefore counts
	// dropped rows that arrive inside the window (later turns of sessions
	// that began before it). No session is ever split.
	WindowSessionsDropped int
	WindowRowsBeyond      int
	WindowRowsBefore      int
	// SampleSessionsDropped counts sessions --sample left out.
	SampleSessionsDropped int
	// MaxISLRowsDropped counts rows over --max-isl and the later turns
	// dropped with them; MaxISLSessionsCut the sessions that lost rows.
	MaxISLRowsDropped int
	MaxISLSessionsCut int
	// OSLCapped counts output lengths cut to --max-osl.
	OSLCapped int
	// NewIDs counts hash ids allocated (all above the largest input id).
	NewIDs int64
	// CeilingBefore is the infinite-cache token hit ratio of the rows
	// before the root multiplier, ExpectedCeiling its expected value after
	// it ([RootMultiplierCeiling]); both 0 for rows without hash ids.
	CeilingBefore, ExpectedCeiling float64
	RowsOut, SessionsOut           int
}

// Result is a synthesized trace: Rows in output (arrival) order, ready for
// [Write], with the block size of their hash ids.
type Result struct {
	Rows      []trace.Row
	BlockSize int
	Format    trace.Format
	// Derive is set by Derive, Generate by Generate.
	Derive   *DeriveStats
	Generate *GenerateStats
}

// Derive transforms the rows of a trace (as [trace.ReadAll] returns them:
// sorted by arrival, re-based to 0) into a new trace. It does not modify
// in. The steps, in order:
//
//  1. Window: keep the sessions whose first turn arrives in
//     [Start, End), whole; subtract Start from every offset.
//  2. Sample: keep exactly round(Sample·n) of the n sessions left.
//  3. Lengths (only when a prefix or prompt multiplier is not 1):
//     shared prefixes are stretched or squeezed node by node in the tree
//     of shared prefixes, unique tails scaled (see the package
//     documentation, "Derive: lengths").
//  4. MaxISL: rows over it are dropped with the rest of their session.
//  5. Output lengths scaled and capped; times divided by Speedup.
//  6. Rows shaped for the output format (Bailian: estimated timestamps on
//     delay-only turns, chat ids, re-sorted by time).
//  7. Root multiplier: every session's ids are mapped into one of K
//     disjoint copies (copy 0 keeps the original ids).
//
// Hash ids stay chained (an id always at the same position after the
// same predecessor) and new ids never collide with input ids.
func Derive(in []trace.Row, cfg DeriveConfig) (*Result, error) {
	if err := cfg.Validate(); err != nil {
		return nil, settings(err)
	}
	st := &DeriveStats{RowsIn: len(in)}
	sessOf, nSess := sessions(in)
	st.SessionsIn = nSess

	keep := make([]bool, len(in))
	for i := range keep {
		keep[i] = true
	}
	if !cfg.Window.IsZero() {
		if err := applyWindow(in, sessOf, nSess, cfg.Window, keep, st); err != nil {
			return nil, settings(err)
		}
	}
	if cfg.Sample < 1 {
		applySample(in, sessOf, nSess, cfg, keep, st)
	}

	rows := make([]trace.Row, 0, len(in))
	rowSess := make([]int32, 0, len(in))
	for i := range in {
		if keep[i] {
			r := in[i].Clone()
			if !cfg.Window.IsZero() && r.HasOffset {
				r.Offset -= cfg.Window.Start
			}
			rows = append(rows, r)
			rowSess = append(rowSess, sessOf[i])
		}
	}

	maxID, anyID := maxHashID(in)
	alloc := newIDAlloc(maxID, anyID, func() map[uint64]struct{} { return idSet(in) })

	if cfg.PrefixLenMultiplier != 1 || cfg.PromptLenMultiplier != 1 {
		if err := scaleLengths(rows, cfg, alloc); err != nil {
			return nil, err
		}
	}
	if cfg.MaxISL > 0 {
		rows, rowSess = applyMaxISL(rows, rowSess, cfg.MaxISL, st)
	}
	for i := range rows {
		cfg.scaleRow(&rows[i], st)
	}
	var err error
	if cfg.Format == trace.FormatBailian {
		rows, rowSess, err = shapeBailian(rows, rowSess)
		if err != nil {
			return nil, settings(err)
		}
	}
	bs := blockSizeOf(rows)
	if hasIDs(rows) {
		st.CeilingBefore = RootMultiplierCeiling(rows, 1)
		st.ExpectedCeiling = st.CeilingBefore
	}
	if cfg.PrefixRootMultiplier > 1 {
		if hasIDs(rows) {
			st.ExpectedCeiling = RootMultiplierCeiling(rows, cfg.PrefixRootMultiplier)
		}
		if err := replicateTrees(rows, rowSess, cfg, alloc); err != nil {
			return nil, err
		}
	}
	st.NewIDs = alloc.n
	st.RowsOut = len(rows)
	seen := map[int32]struct{}{}
	for _, s := range rowSess {
		seen[s] = struct{}{}
	}
	st.SessionsOut = len(seen)
	if cfg.Format == trace.FormatMooncake {
		// Cumulative sessions (Bailian input) become AIPerf-style turns,
		// the only meaning a Mooncake session line has.
		if rows, err = Incremental(rows); err != nil {
			return nil, settings(err)
		}
	}
	return &Result{Rows: rows, BlockSize: bs, Format: cfg.Format, Derive: st}, nil
}

// scaleRow applies the per-row options to a kept row: the output-length
// multiplier and cap, then the speed-up of its arrival time and delay.
func (c *DeriveConfig) scaleRow(r *trace.Row, st *DeriveStats) {
	if r.OutputTokens > 0 {
		if c.OutputLenMultiplier != 1 {
			r.OutputTokens = max(1, int(math.Round(float64(r.OutputTokens)*c.OutputLenMultiplier)))
		}
		if c.MaxOSL > 0 && r.OutputTokens > c.MaxOSL {
			r.OutputTokens = c.MaxOSL
			st.OSLCapped++
		}
	}
	if c.Speedup != 1 {
		r.Offset = divDuration(r.Offset, c.Speedup)
		r.Delay = divDuration(r.Delay, c.Speedup)
	}
}

// divDuration returns d/x rounded to the nearest nanosecond.
func divDuration(d time.Duration, x float64) time.Duration {
	return time.Duration(math.Round(float64(d) / x))
}

// sessions numbers the sessions of rows in order of first appearance: rows
// with the same non-empty SessionID share one, every other row is its own.
func sessions(rows []trace.Row) (sessOf []int32, n int) {
	sessOf = make([]int32, len(rows))
	ids := map[string]int32{}
	for i := range rows {
		id := rows[i].SessionID
		if id == "" {
			sessOf[i] = int32(n)
			n++
			continue
		}
		s, ok := ids[id]
		if !ok {
			s = int32(n)
			ids[id] = s
			n++
		}
		sessOf[i] = s
	}
	return sessOf, n
}

func applyWindow(rows []trace.Row, sessOf []int32, nSess int, w Window, keep []bool, st *DeriveStats) error {
	ref := make([]time.Duration, nSess)
	has := make([]bool, nSess)
	for i := range rows {
		s := sessOf[i]
		if !has[s] && rows[i].HasOffset {
			ref[s], has[s] = rows[i].Offset, true
		}
	}
	in := make([]bool, nSess)
	for s := range nSess {
		if !has[s] {
			return fmt.Errorf("--window needs arrival times, but a session (first row %s) has none: its rows only carry delays",
				firstRowName(rows, sessOf, int32(s)))
		}
		in[s] = w.Contains(ref[s])
		if !in[s] {
			st.WindowSessionsDropped++
		}
	}
	for i := range rows {
		s := sessOf[i]
		keep[i] = in[s]
		if !rows[i].HasOffset {
			continue
		}
		if in[s] && !w.Contains(rows[i].Offset) {
			st.WindowRowsBeyond++
		}
		if !in[s] && w.Contains(rows[i].Offset) {
			st.WindowRowsBefore++
		}
	}
	return nil
}

func firstRowName(rows []trace.Row, sessOf []int32, s int32) string {
	for i := range rows {
		if sessOf[i] == s {
			return fmt.Sprintf("line %d, session %q", rows[i].Line, rows[i].SessionID)
		}
	}
	return "?"
}

// applySample keeps exactly round(Sample·n) of the n sessions still kept,
// by a seeded partial Fisher–Yates shuffle.
func applySample(rows []trace.Row, sessOf []int32, nSess int, cfg DeriveConfig, keep []bool, st *DeriveStats) {
	alive := make([]bool, nSess)
	for i := range rows {
		if keep[i] {
			alive[sessOf[i]] = true
		}
	}
	var cand []int32
	for s := range nSess {
		if alive[s] {
			cand = append(cand, int32(s))
		}
	}
	k := int(math.Round(cfg.Sample * float64(len(cand))))
	r := newRNG(cfg.Seed, streamSample)
	for i := 0; i < k; i++ {
		j := i + r.intN(len(cand)-i)
		cand[i], cand[j] = cand[j], cand[i]
	}
	chosen := make([]bool, nSess)
	for _, s := range cand[:k] {
		chosen[s] = true
	}
	st.SampleSessionsDropped = len(cand) - k
	for i := range rows {
		if keep[i] && !chosen[sessOf[i]] {
			keep[i] = false
		}
	}
}

func maxHashID(rows []trace.Row) (uint64, bool) {
	var m uint64
	any := false
	for i := range rows {
		for _, id := range rows[i].HashIDs {
			m = max(m, id)
			any = true
		}
	}
	return m, any
}

func idSet(rows []trace.Row) map[uint64]struct{} {
	s := map[uint64]struct{}{}
	for i := range rows {
		for _, id := range rows[i].HashIDs {
			s[id] = struct{}{}
		}
	}
	return s
}

func hasIDs(rows []trace.Row) bool {
	for i := range rows {
		if len(rows[i].HashIDs) > 0 {
			return true
		}
	}
	return false
}

// blockSizeOf returns the block size of the first row with hash ids, or of
// the first row at all, or 0.
func blockSizeOf(rows []trace.Row) int {
	for i := range rows {
		if len(rows[i].HashIDs) > 0 && rows[i].BlockSize > 0 {
			return rows[i].BlockSize
		}
	}
	if len(rows) > 0 {
		return rows[0].BlockSize
	}
	return 0
}

// applyMaxISL drops every row over max and the later rows of its session.
func applyMaxISL(rows []trace.Row, rowSess []int32, limit int, st *DeriveStats) ([]trace.Row, []int32) {
	cut := map[int32]bool{}
	out, outSess := rows[:0], rowSess[:0]
	for i := range rows {
		s := rowSess[i]
		if cut[s] || rows[i].InputTokens > limit {
			if !cut[s] {
				cut[s] = true
				st.MaxISLSessionsCut++
			}
			st.MaxISLRowsDropped++
			continue
		}
		out = append(out, rows[i])
		outSess = append(outSess, s)
	}
	return out, outSess
}

// shapeBailian gives every row what a Bailian line needs: a timestamp (a
// delay-only turn arrives at its predecessor's estimated arrival plus its
// delay, the analyzer's convention), a chat id and its parent's, and sorts
// the rows by time (stable, so a parent stays before its child).
func shapeBailian(rows []trace.Row, rowSess []int32) ([]trace.Row, []int32, error) {
	multi := map[int32]int{}
	for _, s := range rowSess {
		multi[s]++
	}
	last := map[int32]int{} // session → index of its previous row
	for i := range rows {
		r := &rows[i]
		if len(r.Raw) > 0 {
			return nil, nil, fmt.Errorf("line %d carries its own request content (text_input, messages or payload), which Bailian lines cannot hold; use --output-format mooncake", r.Line)
		}
		s := rowSess[i]
		if r.SessionID != "" && !r.Cumulative && multi[s] > 1 {
			return nil, nil, fmt.Errorf("line %d: session %q is an AIPerf-style Mooncake session (each row holds only the new tokens of its turn), but Bailian rows hold the whole context; use --output-format mooncake", r.Line, r.SessionID)
		}
		if !r.HasOffset {
			p, ok := last[s]
			if !ok {
				return nil, nil, fmt.Errorf("line %d has no timestamp and no earlier turn to count its delay from; Bailian lines need a timestamp", r.Line)
			}
			r.Offset, r.HasOffset = rows[p].Offset+r.Delay, true
		}
		last[s] = i
	}
	perm := make([]int, len(rows))
	for i := range perm {
		perm[i] = i
	}
	slices.SortStableFunc(perm, func(a, b int) int { return cmp.Compare(rows[a].Offset, rows[b].Offset) })
	out := make([]trace.Row, len(rows))
	outSess := make([]int32, len(rows))
	for i, p := range perm {
		out[i], outSess[i] = rows[p], rowSess[p]
	}
	ownIDs := false
	for i := range out {
		if out[i].RequestID < 0 {
			ownIDs = true
			break
		}
	}
	prev := map[int32]int64{}
	root := map[int32]int64{}
	for i := range out {
		r := &out[i]
		s := outSess[i]
		if ownIDs {
			r.RequestID = int64(i)
			r.ParentID = -1
			if p, ok := prev[s]; ok {
				r.ParentID = p
			}
		}
		if _, ok := root[s]; !ok {
			root[s] = r.RequestID
		}
		prev[s] = r.RequestID
		// As the Bailian reader gives it back: every row is in the
		// session of its root chat id.
		r.SessionID = strconv.FormatInt(root[s], 10)
		r.Cumulative = true
	}
	return out, outSess, nil
}

// replicateTrees maps each session's ids into one of K disjoint copies.
func replicateTrees(rows []trace.Row, rowSess []int32, cfg DeriveConfig, alloc *idAlloc) error {
	k := cfg.PrefixRootMultiplier
	r := newRNG(cfg.Seed, streamTrees)
	tree := map[int32]int{}
	copies := make([]map[uint64]uint64, k)
	for i := range rows {
		s := rowSess[i]
		t, ok := tree[s]
		if !ok {
			t = r.intN(k)
			tree[s] = t
		}
		if t == 0 {
			continue
		}
		if copies[t] == nil {
			copies[t] = map[uint64]uint64{}
		}
		ids := rows[i].HashIDs
		for j, id := range ids {
			v, ok := copies[t][id]
			if !ok {
				var err error
				if v, err = alloc.id(); err != nil {
					return err
				}
				copies[t][id] = v
			}
			ids[j] = v
		}
	}
	return nil
}
