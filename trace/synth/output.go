package synth

import (
	"cmp"
	"fmt"
	"io"
	"slices"

	"github.com/reprise-bench/reprise/trace"
	"github.com/reprise-bench/reprise/trace/analyze"
)

// Write writes res.Rows in res.Format (JSONL) to w and flushes. The lines
// read back, with [trace.Open], to the same rows.
func Write(w io.Writer, res *Result) error {
	tw, err := trace.NewWriter(w, res.Format)
	if err != nil {
		return err
	}
	for i := range res.Rows {
		if err := tw.Write(&res.Rows[i]); err != nil {
			return fmt.Errorf("write row %d: %w", i, err)
		}
	}
	return tw.Flush()
}

// Measure returns the analyzer's time-order statistics of rows as
// `reprise analyze-trace` computes them on a file holding the rows in this
// order: in file order, or, when some row arrives before the one above it
// and every row has a timestamp, stably sorted by arrival. blockSize 0
// takes the rows' own; cacheSizes are the LRU capacities (nil for the
// analyzer's defaults, empty for none).
func Measure(rows []trace.Row, blockSize int, cacheSizes []int64) *analyze.Report {
	cfg := analyze.Config{BlockSize: blockSize, CacheSizes: cacheSizes}
	a := analyze.New(cfg)
	for i := range rows {
		a.Add(&rows[i])
	}
	if a.OutOfOrder() == 0 {
		return a.Report()
	}
	order := make([]int, len(rows))
	for i := range order {
		order[i] = i
		if !rows[i].HasOffset {
			return a.Report()
		}
	}
	slices.SortStableFunc(order, func(x, y int) int { return cmp.Compare(rows[x].Offset, rows[y].Offset) })
	a = analyze.New(cfg)
	for _, i := range order {
		a.Add(&rows[i])
	}
	return a.Report()
}
