package synth

import (
	"fmt"
	"slices"
	"testing"
	"time"

	gocmp "github.com/google/go-cmp/cmp"
	"github.com/google/go-cmp/cmp/cmpopts"

	"github.com/reprise-bench/reprise/trace"
)

// generateVia runs a generation through the stream or, with pool, through
// the pool every session is drawn into first (the path of the targets),
// and keeps every row.
func generateVia(c GenerateConfig, pool bool) ([]trace.Row, *GenerateStats, error) {
	if err := c.Validate(); err != nil {
		return nil, nil, err
	}
	g, err := newGen(c)
	if err != nil {
		return nil, nil, err
	}
	g.pool = pool
	var rows []trace.Row
	st, err := g.run(func(r *trace.Row) error {
		row := *r
		row.HashIDs = slices.Clone(r.HashIDs)
		rows = append(rows, row)
		return nil
	})
	return rows, st, err
}

// TestGenerateStreamMatchesPool is the oracle test of the stream: over
// random settings without a target (every count mode, multi-turn sessions
// with think times, prefix trees, MaxISL and MaxOSL cuts, both formats),
// streaming the sessions as they are drawn gives exactly the rows, the
// statistics and the errors of drawing them all first and sorting.
func TestGenerateStreamMatchesPool(t *testing.T) {
	r := newRNG(7, 1)
	pick := func(xs ...int) int { return xs[r.intN(len(xs))] }
	for i := range 40 {
		c := NewGenerateConfig()
		c.Seed = uint64(i)
		c.Rate = 0.5 + 20*r.float64()
		switch r.intN(3) {
		case 0:
			c.Sessions = 1 + r.intN(150)
		case 1:
			c.Requests = 1 + r.intN(400)
		default:
			c.Duration = time.Duration(1+r.intN(30)) * time.Second
		}
		randomShape(r, &c)
		if r.intN(3) > 0 {
			c.Turns = 1 + 4*r.float64()
			c.TurnsStddev = r.float64() * 2
			// Think times from 0 (turns tie with their predecessor) to
			// longer than the gaps between sessions (turns interleave).
			c.ThinkTime = time.Duration(r.intN(20_000)) * time.Millisecond
			if r.intN(2) == 0 {
				c.ThinkTimeStddev = c.ThinkTime / 2
			}
		}
		if r.intN(2) == 0 {
			// Whole gaps and think times: turns of different sessions
			// arrive at the same time, and the session number orders them.
			c.Arrival, c.Rate = ArrivalConstant, float64(pick(1, 2, 4))
			if c.multiTurn() {
				c.ThinkTime, c.ThinkTimeStddev = time.Duration(pick(0, 250, 500, 1000, 3000))*time.Millisecond, 0
			}
		}
		c.ISL = Dist{Kind: []DistKind{DistFixed, DistNormal, DistLognormal}[r.intN(3)], Mean: float64(1 + r.intN(3000))}
		if c.ISL.Kind != DistFixed {
			c.ISL.Stddev = c.ISL.Mean * r.float64()
		}
		c.OSL = Dist{Kind: DistLognormal, Mean: float64(1 + r.intN(500)), Stddev: 50}
		if r.intN(3) == 0 {
			c.MaxISL = 500 + r.intN(8000)
		}
		if r.intN(3) == 0 {
			c.MaxOSL = 1 + r.intN(300)
		}
		t.Run(fmt.Sprint(i), func(t *testing.T) {
			want, wantSt, wantErr := generateVia(c, true)
			got, gotSt, gotErr := generateVia(c, false)
			if fmt.Sprint(gotErr) != fmt.Sprint(wantErr) {
				t.Fatalf("stream error %v, pool error %v", gotErr, wantErr)
			}
			if d := gocmp.Diff(want, got, cmpopts.EquateEmpty()); d != "" {
				t.Fatalf("%+v\nrows differ (-pool +stream):\n%s", c, d[:min(len(d), 3000)])
			}
			if d := gocmp.Diff(wantSt, gotSt, cmpopts.EquateEmpty()); d != "" {
				t.Errorf("stats differ (-pool +stream):\n%s", d)
			}
			if wantErr == nil && len(got) == 0 {
				t.Error("no rows")
			}
		})
	}
}
