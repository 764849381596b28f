package sweep

import (
	"math"
	"sort"
)

// Pareto returns the indexes of the rows on the Pareto front of output
// throughput (higher is better) against p99 request latency (lower is
// better), by increasing throughput: a row is on the front when no other
// row has at least its throughput and at most its latency, one of them
// strictly. Rows without a latency (nothing succeeded) are left out.
func Pareto(rows []Row) []int {
	var idx []int
	for i := range rows {
		if rows[i].E2EP99 > 0 && rows[i].Requests > 0 {
			idx = append(idx, i)
		}
	}
	var front []int
	for _, i := range idx {
		a := &rows[i]
		dominated := false
		for _, j := range idx {
			b := &rows[j]
			if j != i && b.OutputThroughput >= a.OutputThroughput && b.E2EP99 <= a.E2EP99 &&
				(b.OutputThroughput > a.OutputThroughput || b.E2EP99 < a.E2EP99) {
				dominated = true
				break
			}
		}
		if !dominated {
			front = append(front, i)
		}
	}
	sort.SliceStable(front, func(a, b int) bool { return rows[front[a]].OutputThroughput < rows[front[b]].OutputThroughput })
	return front
}

// Knee returns the index (into rows) of the knee of the Pareto front
// (indexes into rows by increasing throughput), -1 when the front has
// fewer than three points. The method is Kneedle (Satopää et al., 2011)
// for a convex increasing curve: throughput x and p99 latency y are
// normalized to [0, 1] over the front, and the knee is the point with
// the largest difference x − y, the point farthest below the chord from
// the least-loaded to the most-loaded point: past it, each further unit
// of throughput costs more latency than the front's average.
func Knee(rows []Row, front []int) int {
	if len(front) < 3 {
		return -1
	}
	x0, x1 := rows[front[0]].OutputThroughput, rows[front[len(front)-1]].OutputThroughput
	y0, y1 := math.Inf(1), math.Inf(-1)
	for _, i := range front {
		y0, y1 = min(y0, rows[i].E2EP99), max(y1, rows[i].E2EP99)
	}
	if x1 <= x0 || y1 <= y0 {
		return -1
	}
	best, bestD := -1, math.Inf(-1)
	for _, i := range front {
		d := (rows[i].OutputThroughput-x0)/(x1-x0) - (rows[i].E2EP99-y0)/(y1-y0)
		if d > bestD {
			best, bestD = i, d
		}
	}
	return best
}
