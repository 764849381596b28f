package trace

import (
	"fmt"
	"math/rand/v2"
	"strconv"
)

// Sampling is the order in which a dataset's rows are sent by the load
// modes (rate, concurrency, user-centric), as AIPerf's
// --dataset-sampling-strategy.
type Sampling string

// The sampling strategies.
const (
	// SampleSequential sends the rows in file order (and again from the
	// start when a count or duration asks for more).
	SampleSequential Sampling = "sequential"
	// SampleShuffle sends a random permutation of the rows, a new one for
	// every pass over them.
	SampleShuffle Sampling = "shuffle"
	// SampleRandom draws rows at random with replacement.
	SampleRandom Sampling = "random"
)

// ParseSampling returns the strategy named s; "" is sequential.
func ParseSampling(s string) (Sampling, error) {
	switch v := Sampling(s); v {
	case "":
		return SampleSequential, nil
	case SampleSequential, SampleShuffle, SampleRandom:
		return v, nil
	}
	return "", fmt.Errorf("unknown sampling %q; want sequential, shuffle or random", s)
}

// Sample returns rows in the order strategy s sends them, drawn with a
// generator seeded by seed (equal seeds, equal orders). Sessions stay
// whole and in turn order: the units drawn are the sessions (rows that
// share a SessionID) and the rows without one. n is how many rows the run
// asks for (0 = as many as rows has): shuffle makes enough passes, random
// enough draws to reach it. A session drawn again gets a new id (its id,
// "#", the draw's number) so that its turns stay one conversation per
// draw. rows is not changed; the result shares HashIDs and Raw with it.
func Sample(rows []Row, s Sampling, seed uint64, n int) []Row {
	if s == SampleSequential || s == "" || len(rows) == 0 {
		return rows
	}
	if n <= 0 {
		n = len(rows)
	}
	// Units: each session's rows (in file order), each lone row.
	var units [][]int32
	bySession := map[string]int{}
	for i := range rows {
		id := rows[i].SessionID
		if id == "" {
			units = append(units, []int32{int32(i)})
			continue
		}
		u, ok := bySession[id]
		if !ok {
			u = len(units)
			bySession[id] = u
			units = append(units, nil)
		}
		units[u] = append(units[u], int32(i))
	}
	rng := rand.New(rand.NewPCG(seed, 0x73616d706c65)) // "sample"
	drawn := make([]int, len(units))
	out := make([]Row, 0, n)
	add := func(u int) {
		k := drawn[u]
		drawn[u]++
		for _, i := range units[u] {
			r := rows[i]
			if k > 0 && r.SessionID != "" {
				r.SessionID += "#" + strconv.Itoa(k)
			}
			out = append(out, r)
		}
	}
	switch s {
	case SampleShuffle:
		for len(out) < n {
			for _, u := range rng.Perm(len(units)) {
				add(u)
			}
		}
	case SampleRandom:
		for len(out) < n {
			add(rng.IntN(len(units)))
		}
	}
	return out
}
