package compare

import (
	"context"
	"fmt"
	"io"
	"strings"
)

// LoadSides loads the run directories of each side, in order.
func LoadSides(ctx context.Context, dirs [][]string) ([][]*Run, error) {
	var sides [][]*Run
	for _, ds := range dirs {
		var side []*Run
		for _, d := range ds {
			r, err := Load(ctx, d)
			if err != nil {
				return nil, err
			}
			side = append(side, r)
		}
		sides = append(sides, side)
	}
	return sides, nil
}

// CompareSides compares every side after the first with the first.
func CompareSides(sides [][]*Run, cfg Config) ([]*Result, error) {
	var results []*Result
	for _, b := range sides[1:] {
		res, err := CompareGroups(sides[0], b, cfg)
		if err != nil {
			return nil, err
		}
		results = append(results, res)
	}
	return results, nil
}

// Write writes results to w as JSON (with the thresholds' verdicts) or as
// the table.
func Write(w io.Writer, results []*Result, ts []Threshold, asJSON bool) error {
	if asJSON {
		return WriteJSON(w, results, ts)
	}
	return WriteTable(w, results)
}

// Regressions returns an error listing every breach of ts, one a line
// ("B-label: breach"); nil when there is none.
func Regressions(results []*Result, ts []Threshold) error {
	var failed []string
	for _, r := range results {
		for _, br := range r.Breaches(ts) {
			failed = append(failed, r.B.Label+": "+br.String())
		}
	}
	if len(failed) == 0 {
		return nil
	}
	return fmt.Errorf("--fail-on: %d regression(s):\n  %s", len(failed), strings.Join(failed, "\n  "))
}
