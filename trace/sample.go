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
	units := entries(rows)
	rng := rand.New(rand.NewPCG(seed, 0x73616d706c65)) // "sample"
	out := make([]Row, 0, n)
	add := drawer(rows, units, &out)
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

// entries returns the units a dataset is drawn in: each session's rows
// (in file order, the session where it first appears), each row without
// a session.
func entries(rows []Row) [][]int32 {
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
	return units
}

// drawer returns a function that appends unit u's rows to *out; a session
// drawn again gets a new id (its id, "#", the draw's number), so that its
// turns stay one conversation per draw.
func drawer(rows []Row, units [][]int32, out *[]Row) func(u int) {
	drawn := make([]int, len(units))
	return func(u int) {
		k := drawn[u]
		drawn[u]++
		for _, i := range units[u] {
			r := rows[i]
			if k > 0 && r.SessionID != "" {
				r.SessionID += "#" + strconv.Itoa(k)
			}
			*out = append(*out, r)
		}
	}
}

// FirstEntries returns the rows of the first n entries of rows (a session
// with all its turns, placed where it first appears, or a row without a
// session), in their order in rows: AIPerf's --num-dataset-entries cap of
// a file. All of rows when it has n entries or fewer. The result shares
// HashIDs and Raw with rows.
func FirstEntries(rows []Row, n int) []Row {
	units := entries(rows)
	if n <= 0 || n >= len(units) {
		return rows
	}
	keep := make([]bool, len(rows))
	for _, u := range units[:n] {
		for _, i := range u {
			keep[i] = true
		}
	}
	out := make([]Row, 0, len(rows))
	for i := range rows {
		if keep[i] {
			out = append(out, rows[i])
		}
	}
	return out
}

// SampleEntries returns the rows of exactly n entries of rows (sessions
// whole, in turn order), drawn by strategy s with a generator seeded by
// seed: sequential cycles through the entries in order, shuffle takes a
// new permutation each pass (stopping within the last), random draws with
// replacement. It is AIPerf's --num-sessions with a file. An entry drawn
// again is a new conversation (as [Sample]). rows is not changed; the
// result shares HashIDs and Raw with it.
func SampleEntries(rows []Row, s Sampling, seed uint64, n int) []Row {
	units := entries(rows)
	if n <= 0 || len(units) == 0 {
		return nil
	}
	rng := rand.New(rand.NewPCG(seed, 0x73616d706c65)) // "sample", as Sample
	var out []Row
	add := drawer(rows, units, &out)
	switch s {
	case SampleShuffle:
		for k := 0; k < n; {
			for _, u := range rng.Perm(len(units)) {
				if k == n {
					break
				}
				add(u)
				k++
			}
		}
	case SampleRandom:
		for range n {
			add(rng.IntN(len(units)))
		}
	default:
		for k := range n {
			add(k % len(units))
		}
	}
	return out
}
