package mockserver

import (
	"context"
	"fmt"
	"hash/fnv"
	"slices"
	"strconv"
	"strings"

	"github.com/reprise-bench/reprise/internal/accuracy"
	"github.com/reprise-bench/reprise/internal/jsonx"
)

// Accuracy makes the server answer graded prompts (docs/design/0021-accuracy.md):
// a chat or completions request whose prompt holds an item of Key is
// answered right with probability P, or with a step's P once more than
// its N requests are in flight (the request itself included). Whether an
// item is answered right is a pure function of Seed, the item and the
// probability in force: item x is right iff u(Seed, x) < p, so at a
// lower p the right answers are a subset of those at a higher one.
type Accuracy struct {
	Key *accuracy.Key
	P   float64
	// UnderLoad are the lower probabilities past a number of requests in
	// flight; the step with the largest N below the count applies.
	UnderLoad []LoadStep
}

// LoadStep is one --accuracy-under-load P@N.
type LoadStep struct {
	P float64
	N int
}

// NewAccuracy loads the items of lo (n-shots are irrelevant to the key)
// and returns the accuracy model: right with probability p, and
// underLoad's steps ("P@N,…", "" for none).
func NewAccuracy(ctx context.Context, lo accuracy.LoadOptions, p float64, underLoad string) (*Accuracy, error) {
	steps, err := ParseUnderLoad(underLoad)
	if err != nil {
		return nil, err
	}
	lo.Shots = 0
	set, err := accuracy.Load(ctx, lo)
	if err != nil {
		return nil, err
	}
	a := &Accuracy{Key: accuracy.NewKey(set), P: p, UnderLoad: steps}
	return a, a.validate()
}

// ParseUnderLoad parses "P@N[,P@N…]" (e.g. "0.3@8").
func ParseUnderLoad(s string) ([]LoadStep, error) {
	var out []LoadStep
	for _, f := range strings.Split(s, ",") {
		f = strings.TrimSpace(f)
		if f == "" {
			continue
		}
		ps, ns, ok := strings.Cut(f, "@")
		p, err1 := strconv.ParseFloat(ps, 64)
		n, err2 := strconv.Atoi(ns)
		if !ok || err1 != nil || err2 != nil || p < 0 || p > 1 || n < 1 {
			return nil, fmt.Errorf("accuracy-under-load %q: want P@N, a probability from 0 to 1 and a count of requests in flight ≥ 1 (e.g. 0.3@8)", f)
		}
		out = append(out, LoadStep{P: p, N: n})
	}
	slices.SortFunc(out, func(a, b LoadStep) int { return a.N - b.N })
	return out, nil
}

func (a *Accuracy) validate() error {
	if a.Key == nil {
		return fmt.Errorf("accuracy: no items to answer (give the benchmark's data)")
	}
	if a.P < 0 || a.P > 1 || a.P != a.P {
		return fmt.Errorf("accuracy %v: want a probability from 0 to 1", a.P)
	}
	return nil
}

// p is the probability of a right answer with inflight requests in flight.
func (a *Accuracy) p(inflight int) float64 {
	p := a.P
	for _, s := range a.UnderLoad {
		if inflight > s.N {
			p = s.P
		}
	}
	return p
}

// uniform is u(seed, id) in [0, 1).
func uniform(seed uint64, id string) float64 {
	h := fnv.New64a()
	h.Write([]byte(id))
	x := h.Sum64() ^ seed*0x9E3779B97F4A7C15
	x ^= x >> 30
	x *= 0xbf58476d1ce4e5b9
	x ^= x >> 27
	x *= 0x94d049bb133111eb
	x ^= x >> 31
	return float64(x>>11) / (1 << 53)
}

// splitPieces splits text into tokens for the stream: each word with its
// leading space, JSON-escaped.
func splitPieces(text string) []string {
	var out []string
	start := 0
	for k := 1; k <= len(text); k++ {
		if k == len(text) || text[k] == ' ' {
			out = append(out, string(jsonx.AppendContents(nil, text[start:k])))
			start = k
		}
	}
	return out
}

// word is token k of choice c: the answer's piece where there is one,
// else a filler.
func (r *renderer) word(k, c int) string {
	if c == 0 && k >= r.ansFrom && k-r.ansFrom < len(r.answer) {
		return r.answer[k-r.ansFrom]
	}
	return filler(k, c)
}

// fill appends tokens from..to-1 of choice c.
func (r *renderer) fill(b []byte, c, from, to int) []byte {
	if len(r.answer) == 0 {
		return appendFiller(b, c, from, to)
	}
	for k := from; k < to; k++ {
		b = append(b, r.word(k, c)...)
	}
	return b
}
