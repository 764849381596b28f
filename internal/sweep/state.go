package sweep

import (
	"log/slog"

	"github.com/reprise-bench/reprise/engine/summary"
)

// sweeper is the state of one running sweep: its configuration, its
// result so far, and what the table and the trials have collected.
type sweeper struct {
	cfg Config
	res *Result
	log *slog.Logger
	// headed reports that the table's header was printed (before the
	// first row: a sweep that measured nothing prints none).
	headed bool
	// lastRuns are the runs of the point measured last.
	lastRuns []*measured
	// trials collect a repeated sweep's trials per point.
	trials []*trialAcc
}

// trialAcc collects the measured trials of one point.
type trialAcc struct {
	name     string
	settings map[string]float64
	points   []string
	sums     []*summary.Summary
}
