package analyze

import (
	"cmp"
	"slices"

	"github.com/reprise-bench/reprise/trace"
)

// Rows analyses a trace held in memory: rows in file order feed the AIPerf
// section, and a stable sort by arrival time (ties keep file order) feeds the
// time-order sections. rows is not modified. blockSize is AIPerf's block
// size; 0 takes the first row with ids (or cfg.BlockSize when set).
//
// Rows without a timestamp (delay-only multi-turn traces) cannot be placed
// on the time axis before a replay, so a trace with any such row is analysed
// in file order.
func Rows(rows []trace.Row, cfg Config) *Report {
	a := New(cfg)
	p := NewAIPerf(aiperfBlockSize(rows, cfg))
	order := timeOrder(rows)
	if slices.IsSorted(order) {
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
			a.Add(&rows[i])
		}
	}
	rep := a.Report()
	rep.AIPerf = p.Report()
	return rep
}

// timeOrder returns the indices of rows in stable arrival order.
func timeOrder(rows []trace.Row) []int {
	order := make([]int, len(rows))
	sorted := true
	for i := range rows {
		order[i] = i
		if !rows[i].HasOffset {
			return order
		}
		if i > 0 && rows[i].Offset < rows[i-1].Offset {
			sorted = false
		}
	}
	if !sorted {
		slices.SortStableFunc(order, func(x, y int) int { return cmp.Compare(rows[x].Offset, rows[y].Offset) })
	}
	return order
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
