package replay

import (
	"math"
)

// part is shard s's share of x things dealt out one by one: ⌊x/N⌋, plus
// one for the first x mod N shards.
func (s Shard) part(x int) int {
	p := x / s.Count
	if s.Index < x%s.Count {
		p++
	}
	return p
}

// Share returns the configuration of c.Shard's process: c itself when it
// is not sharded, else c with its load divided among the shards.
//
//   - RequestRate is R/N. Poisson arrivals superpose exactly: N
//     independent Poisson processes of rate R/N sum to one of rate R.
//     Every shard draws its gaps from its own seeded stream (Seed mixed
//     with Index); shard 0 sends at time zero as the unsharded run does,
//     and the others start one gap in, so the sum is the unsharded
//     process (an arrival at zero, then Poisson R). Constant arrivals are
//     phase-shifted by Index/R: shard i sends at (k·N+i)/R, the unsharded
//     run's instants exactly (ramps included, on the count axis). Gamma
//     gaps of shape S ≠ 1 keep the rate R but not the shape: a sum of N
//     gamma renewal processes is not one; its gaps tend to exponential
//     (Poisson) as N grows, so the sum is smoother than asked for S < 1
//     and burstier for S > 1. Shard bursty gamma loads only when the
//     per-shard shape is what is meant.
//   - Concurrency, NumUsers, RequestCount and WarmupRequests are dealt
//     out: shard i gets ⌊x/N⌋, plus one when i < x mod N, so the shards'
//     shares sum to x. UserCentricRate goes with the users, R·u_i/U, so
//     every user's turn gap U/R is the unsharded one; shard i's users
//     start i/R later than shard 0's (one unsharded stagger).
//
// The rest (durations, Senders, MaxLateness, Seed) is per process.
func (c Config) Share() Config {
	s := c.Shard
	if !s.Sharded() {
		return c
	}
	c.RequestRate /= float64(s.Count)
	if len(c.RateSeries) > 0 {
		c.RateSeries = scaleSeries(c.RateSeries, s.Count)
	}
	if c.NumUsers > 0 {
		u := s.part(c.NumUsers)
		c.UserCentricRate = c.UserCentricRate * float64(u) / float64(c.NumUsers)
		c.NumUsers = u
	}
	c.Concurrency = s.part(c.Concurrency)
	c.RequestCount = s.part(c.RequestCount)
	c.WarmupRequests = s.part(c.WarmupRequests)
	return c
}

// arrivalSeed is the seed of shard s's arrival gaps: Seed for the whole
// workload and shard 0, mixed with the index for the others, so shards
// draw independent streams.
func arrivalSeed(seed uint64, s Shard) uint64 {
	if !s.Sharded() {
		return seed
	}
	return seed ^ uint64(s.Index)*0x9E3779B97F4A7C15
}

// keepShard keeps, of the sessions in p.sessFirst (in start order), those
// of shard p.cfg.Shard (see [Shard]) and counts their rows in p.kept.
func (p *Plan) keepShard() error {
	s := p.cfg.Shard
	if !s.Sharded() {
		return nil
	}
	load := make([]int64, s.Count)
	mine := p.sessFirst[:0:0]
	kept := 0
	for _, f := range p.sessFirst {
		w := int64(p.sessLen[p.sessOf[f]])
		best := 0
		for i, l := range load {
			if l < load[best] {
				best = i
			}
		}
		load[best] += w
		if best == s.Index {
			mine = append(mine, f)
			kept += int(w)
		}
	}
	if len(mine) == 0 {
		return fieldError("Shard", "{Shard} %s has no session: the trace has %d sessions for %d shards; use fewer shards",
			s, len(p.sessFirst), s.Count)
	}
	p.mine = make([]bool, len(p.rows))
	for _, f := range mine {
		for it := f; it >= 0; it = p.nextTurn(it) {
			p.mine[it] = true
		}
	}
	p.sessFirst, p.kept = mine, kept
	return nil
}

// nextTurn returns the session's next kept turn after item, or -1.
func (p *Plan) nextTurn(item int32) int32 {
	if p.next == nil {
		return -1
	}
	return p.next[item]
}

// Sends reports whether a run of the plan may send the trace row at
// index item: false for the rows of the other shards of a sharded plan
// over loaded rows ([Shard]), true otherwise. Builders that prepare
// requests ahead skip the rows it reports false for.
func (p *Plan) Sends(item int) bool {
	return p.mine == nil || (item >= 0 && item < len(p.mine) && p.mine[item])
}

// shardPhase returns the count-axis position of shard s's first rate
// tick: 0 for shard 0, Index/Count for constant arrivals (a phase shift
// of Index/R), one drawn gap for the others.
func shardPhase(s Shard, a Arrival, g *gapSampler) float64 {
	if !s.Sharded() || s.Index == 0 {
		return 0
	}
	if a == ArrivalConstant {
		return float64(s.Index) / float64(s.Count)
	}
	return g.next()
}

// userShift is how much later shard s's users start than shard 0's: Index
// unsharded staggers (1/rate each, rate the unsharded UserCentricRate).
func userShift(s Shard, rate float64) int64 {
	if !s.Sharded() || rate <= 0 {
		return 0
	}
	return int64(math.Round(float64(s.Index) * 1e9 / rate))
}
