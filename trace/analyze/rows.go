package analyze

import (
	"cmp"
	"slices"

	"github.com/reprise-bench/reprise/trace"
)

// Rows analyses a trace held in memory: rows in file order feed the AIPerf
// section, and a stable sort by effective arrival time (ties keep file
// order) feeds the time-order sections. rows is not modified. blockSize is
// AIPerf's block size; 0 takes the first row with ids (or cfg.BlockSize
// when set).
//
// A row without a timestamp (a delay-only turn) arrives at its effective
// arrival, computed in file order as [Analyzer.Add] does: its session's
// previous arrival (or, outside a session, the previous row's) plus its
// delay.
func Rows(rows []trace.Row, cfg Config) *Report {
	a := New(cfg)
	p := NewAIPerf(aiperfBlockSize(rows, cfg))
	order, at := timeOrder(rows)
	if order == nil {
		// File order is time order: feed both at once, interning once.
		for i := range rows {
			a.Add(&rows[i])
			p.addInterned(&rows[i], a)
		}
	} else {
		for i := range rows {
			p.Add(&rows[i])
		}
		for _, i := range order {
			a.addAt(&rows[i], at[i])
		}
	}
	rep := a.Report()
	rep.AIPerf = p.Report()
	rep.Dependencies = dependencies(rows)
	return rep
}

// arrivals returns the effective arrival (ns) of each row, in the order
// given: its offset, or for a row without one the previous arrival of its
// session, or outside a session of the row before it, plus its delay (the
// rule of Analyzer.arrival).
func arrivals(rows []trace.Row) []int64 {
	at := make([]int64, len(rows))
	last := map[string]int64{}
	var prev int64
	for i := range rows {
		r := &rows[i]
		t := int64(r.Delay)
		switch l, ok := last[r.SessionID]; {
		case r.HasOffset:
			t = int64(r.Offset)
		case ok && r.SessionID != "":
			t += l
		case i > 0:
			t += prev
		}
		if r.SessionID != "" {
			last[r.SessionID] = t
		}
		at[i], prev = t, t
	}
	return at
}

// timeOrder returns the indices of rows stably sorted by effective arrival
// and the arrivals (see [arrivals]); nil, nil when the rows are in time
// order already.
func timeOrder(rows []trace.Row) (order []int, at []int64) {
	at = arrivals(rows)
	if slices.IsSorted(at) {
		return nil, nil
	}
	order = make([]int, len(rows))
	for i := range order {
		order[i] = i
	}
	slices.SortStableFunc(order, func(x, y int) int { return cmp.Compare(at[x], at[y]) })
	return order, at
}

func aiperfBlockSize(rows []trace.Row, cfg Config) int {
	if cfg.BlockSize > 0 {
		return cfg.BlockSize
	}
	for i := range rows {
		if len(rows[i].HashIDs) > 0 && rows[i].BlockSize > 0 {
			return rows[i].BlockSize
		}
	}
	return 512
}
