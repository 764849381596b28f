package synth

import (
	"github.com/reprise-bench/reprise/trace"
)

// Reshape applies to rows, in place, the steps of [Derive] that change a
// row's content but neither its place nor its format: the prefix and
// prompt multipliers (step 3), MaxISL (4, which drops rows with the rest
// of their session, so the rows kept are returned), output lengths (5)
// and the root multiplier (7). It is how a replay applies AIPerf's
// --synthesis-* options to the trace it reads, as AIPerf does in memory,
// where Derive writes a new file: cfg's window, sample, speed-up and
// output format are ignored (the replay has its own), and cumulative
// (Bailian) sessions stay cumulative.
//
// rows are as [trace.ReadAll] returns them (sorted by arrival); hash ids
// are rewritten in place, new ones allocated above the largest input id.
// A row that carries its own text (trace.Row.Raw: text_input, messages,
// payload or media) keeps its input length, as AIPerf leaves text rows'
// lengths alone; its output length is scaled like any other. The stats
// count what Derive's count (RowsIn, SessionsIn, MaxISL, OSLCapped,
// NewIDs, the ceilings, RowsOut, SessionsOut).
func Reshape(rows []trace.Row, cfg DeriveConfig) ([]trace.Row, *DeriveStats, error) {
	if err := cfg.Validate(); err != nil {
		return nil, nil, settings(err)
	}
	st := &DeriveStats{RowsIn: len(rows)}
	rowSess, nSess := sessions(rows)
	st.SessionsIn = nSess
	maxID, anyID := maxHashID(rows)
	alloc := newIDAlloc(maxID, anyID, func() map[uint64]struct{} { return idSet(rows) })
	if cfg.PrefixLenMultiplier != 1 || cfg.PromptLenMultiplier != 1 {
		// Rows with their own content keep their length: hide it from
		// scaleLengths (which leaves rows without a length alone).
		kept := map[int]int{}
		for i := range rows {
			if len(rows[i].Raw) > 0 && rows[i].InputTokens > 0 {
				kept[i] = rows[i].InputTokens
				rows[i].InputTokens = 0
			}
		}
		err := scaleLengths(rows, cfg, alloc)
		for i, n := range kept {
			rows[i].InputTokens = n
		}
		if err != nil {
			return nil, nil, err
		}
	}
	if cfg.MaxISL > 0 {
		rows, rowSess = applyMaxISL(rows, rowSess, cfg.MaxISL, st)
	}
	noSpeedup := cfg
	noSpeedup.Speedup = 1 // the replay's
	for i := range rows {
		noSpeedup.scaleRow(&rows[i], st)
	}
	if hasIDs(rows) {
		st.CeilingBefore = RootMultiplierCeiling(rows, 1)
		st.ExpectedCeiling = st.CeilingBefore
	}
	if cfg.PrefixRootMultiplier > 1 {
		if hasIDs(rows) {
			st.ExpectedCeiling = RootMultiplierCeiling(rows, cfg.PrefixRootMultiplier)
		}
		if err := replicateTrees(rows, rowSess, cfg, alloc); err != nil {
			return nil, nil, err
		}
	}
	st.NewIDs = alloc.n
	st.RowsOut = len(rows)
	seen := map[int32]struct{}{}
	for _, s := range rowSess {
		seen[s] = struct{}{}
	}
	st.SessionsOut = len(seen)
	return rows, st, nil
}

// Identity reports whether Reshape with c changes nothing: every
// multiplier 1 and no limit.
func (c DeriveConfig) Identity() bool {
	return c.PrefixLenMultiplier == 1 && c.PromptLenMultiplier == 1 && c.PrefixRootMultiplier == 1 &&
		c.OutputLenMultiplier == 1 && c.MaxISL == 0 && c.MaxOSL == 0
}
