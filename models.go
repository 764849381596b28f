package reprise

import (
	"errors"
	"fmt"
	"math/bits"
)

// The model selection strategies of [WithModels], AIPerf's
// --model-selection-strategy.
const (
	// ModelRoundRobin sends row i to model i mod n.
	ModelRoundRobin = "round_robin"
	// ModelRandom draws each row's model, seeded (URLPolicyRandom).
	ModelRandom = "random"
)

// WithModels returns o sending to several models of one server (AIPerf's
// several --model names): the first is Model, each further one a
// [Target] at the same URL with that model, spread by strategy
// (ModelRoundRobin or ModelRandom). Every turn of a session goes to one
// model. Records say which: records.target is the model's index in
// models, and summary.json's targets name each model. One model returns
// o with Model set. Several models with Targets already set are refused
// (give one URL). o is not changed.
func WithModels(o Options, models []string, strategy string) (Options, error) {
	if len(models) == 0 {
		return o, errors.New("no model given")
	}
	o.Model = models[0]
	if len(models) == 1 {
		return o, nil
	}
	if len(o.Targets) > 0 {
		return o, errors.New("several models and several URLs: give one URL with several models, or one model per URL (--target-model)")
	}
	switch strategy {
	case "", ModelRoundRobin, "round-robin":
		o.URLPolicy = URLPolicyRoundRobin
	case ModelRandom:
		o.URLPolicy = URLPolicyRandom
	default:
		return o, fmt.Errorf("model selection strategy %q: want %s or %s", strategy, ModelRoundRobin, ModelRandom)
	}
	o.Targets = nil
	for _, m := range models[1:] {
		o.Targets = append(o.Targets, Target{URL: o.URL, Model: m})
	}
	return o, nil
}

// randomTarget is URLPolicyRandom's target of item among n: a
// SplitMix64 hash of the seed and the item, reduced to [0, n) by
// multiply-shift (uniform up to n/2⁶⁴).
func randomTarget(item, n int, seed uint64) int {
	x := seed ^ (uint64(item)+1)*0x9e3779b97f4a7c15
	x = (x ^ (x >> 30)) * 0xbf58476d1ce4e5b9
	x = (x ^ (x >> 27)) * 0x94d049bb133111eb
	x ^= x >> 31
	hi, _ := mulHi(x, uint64(n))
	return int(hi)
}

// mulHi returns the high and low words of a·b.
func mulHi(a, b uint64) (hi, lo uint64) { return bits.Mul64(a, b) }
