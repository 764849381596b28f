package reprise

import (
	"encoding/json"
	"fmt"
	"math"
	"math/rand/v2"
	"strconv"
	"strings"
)

// SeqDistPair is one component of AIPerf's sequence-length mixture
// (--seq-dist): requests of ISL ± ISLStdDev input and OSL ± OSLStdDev
// output tokens (normal draws, at least 1), with probability Weight
// (percent; the pairs of a mixture sum to 100).
type SeqDistPair struct {
	ISL, ISLStdDev float64
	OSL, OSLStdDev float64
	Weight         float64
}

// ParseSeqDist parses AIPerf's --seq-dist (--sequence-distribution) in
// any of its three forms:
//
//	256,128:60;512|20,256|15:40          semicolons; ISL|SD and OSL|SD optional
//	[(256,128):60,(512|20,256|15):40]    brackets
//	{"pairs":[{"isl":256,"osl":128,"prob":60}, …]}   JSON (isl_stddev, osl_stddev optional)
//
// Weights are percentages and must sum to 100 (±0.01, as AIPerf checks);
// lengths must be ≥ 1 and standard deviations ≥ 0.
func ParseSeqDist(s string) ([]SeqDistPair, error) {
	s = strings.TrimSpace(s)
	var pairs []SeqDistPair
	switch {
	case s == "":
		return nil, fmt.Errorf("empty: want ISL,OSL:PCT;… (e.g. 256,128:60;512,256:40)")
	case strings.HasPrefix(s, "{"):
		var doc struct {
			Pairs []struct {
				ISL       float64 `json:"isl"`
				ISLStdDev float64 `json:"isl_stddev"`
				OSL       float64 `json:"osl"`
				OSLStdDev float64 `json:"osl_stddev"`
				Prob      float64 `json:"prob"`
			} `json:"pairs"`
		}
		if err := json.Unmarshal([]byte(s), &doc); err != nil {
			return nil, fmt.Errorf("JSON form: %v; want {\"pairs\":[{\"isl\":N,\"osl\":N,\"prob\":PCT},…]}", err)
		}
		for _, p := range doc.Pairs {
			pairs = append(pairs, SeqDistPair{ISL: p.ISL, ISLStdDev: p.ISLStdDev, OSL: p.OSL, OSLStdDev: p.OSLStdDev, Weight: p.Prob})
		}
	case strings.HasPrefix(s, "["):
		if !strings.HasSuffix(s, "]") {
			return nil, fmt.Errorf("%q: the bracket form ends with ]", s)
		}
		body := strings.TrimSpace(s[1 : len(s)-1])
		for body != "" {
			if !strings.HasPrefix(body, "(") {
				return nil, fmt.Errorf("%q: want (ISL,OSL):PCT items separated by commas", s)
			}
			end := strings.IndexByte(body, ')')
			if end < 0 {
				return nil, fmt.Errorf("%q: an item's ( has no )", s)
			}
			lens := body[1:end]
			rest := strings.TrimSpace(body[end+1:])
			w, after, _ := strings.Cut(strings.TrimPrefix(rest, ":"), ",")
			if !strings.HasPrefix(rest, ":") {
				return nil, fmt.Errorf("%q: after (%s) want :PCT", s, lens)
			}
			p, err := seqDistItem(lens, w)
			if err != nil {
				return nil, err
			}
			pairs = append(pairs, p)
			body = strings.TrimSpace(after)
		}
	default:
		for item := range strings.SplitSeq(s, ";") {
			if item = strings.TrimSpace(item); item == "" {
				continue
			}
			lens, w, ok := strings.Cut(item, ":")
			if !ok {
				return nil, fmt.Errorf("%q: want ISL,OSL:PCT", item)
			}
			p, err := seqDistItem(lens, w)
			if err != nil {
				return nil, err
			}
			pairs = append(pairs, p)
		}
	}
	return pairs, checkSeqDist(pairs)
}

// seqDistItem parses "ISL[|SD],OSL[|SD]" and the weight "PCT".
func seqDistItem(lens, weight string) (SeqDistPair, error) {
	var p SeqDistPair
	in, out, ok := strings.Cut(lens, ",")
	if !ok {
		return p, fmt.Errorf("%q: want ISL,OSL (each optionally |STDDEV)", lens)
	}
	var err error
	if p.ISL, p.ISLStdDev, err = meanSD(in); err != nil {
		return p, fmt.Errorf("%q: input length: %w", lens, err)
	}
	if p.OSL, p.OSLStdDev, err = meanSD(out); err != nil {
		return p, fmt.Errorf("%q: output length: %w", lens, err)
	}
	if p.Weight, err = strconv.ParseFloat(strings.TrimSpace(weight), 64); err != nil {
		return p, fmt.Errorf("%q: probability %q: want a percentage", lens, weight)
	}
	return p, nil
}

// meanSD parses "MEAN" or "MEAN|STDDEV".
func meanSD(s string) (float64, float64, error) {
	m, sd, hasSD := strings.Cut(strings.TrimSpace(s), "|")
	mean, err := strconv.ParseFloat(strings.TrimSpace(m), 64)
	if err != nil {
		return 0, 0, fmt.Errorf("%q: want a number of tokens", m)
	}
	if !hasSD {
		return mean, 0, nil
	}
	std, err := strconv.ParseFloat(strings.TrimSpace(sd), 64)
	if err != nil {
		return 0, 0, fmt.Errorf("%q: want a standard deviation in tokens", sd)
	}
	return mean, std, nil
}

// checkSeqDist checks the lengths and that the weights sum to 100.
func checkSeqDist(pairs []SeqDistPair) error {
	if len(pairs) == 0 {
		return fmt.Errorf("no pairs: want ISL,OSL:PCT;…")
	}
	sum := 0.0
	for _, p := range pairs {
		if !(p.ISL >= 1 && p.OSL >= 1 && p.ISL <= math.MaxInt32 && p.OSL <= math.MaxInt32) {
			return fmt.Errorf("pair %v,%v: want lengths of at least 1 token", p.ISL, p.OSL)
		}
		if !(p.ISLStdDev >= 0 && p.OSLStdDev >= 0) {
			return fmt.Errorf("pair %v,%v: standard deviations must not be negative", p.ISL, p.OSL)
		}
		if !(p.Weight > 0 && p.Weight <= 100) {
			return fmt.Errorf("pair %v,%v: probability %v: want a percentage in (0, 100]", p.ISL, p.OSL, p.Weight)
		}
		sum += p.Weight
	}
	if math.Abs(sum-100) > 0.01 {
		return fmt.Errorf("probabilities sum to %v: want 100", sum)
	}
	return nil
}

// SeqDistMeans returns the mixture's mean input and output lengths
// (weighted by the pairs' probabilities).
func SeqDistMeans(pairs []SeqDistPair) (isl, osl float64) {
	for _, p := range pairs {
		isl += p.ISL * p.Weight / 100
		osl += p.OSL * p.Weight / 100
	}
	return isl, osl
}

// pick returns the mixture's pair for the uniform draw u in [0, 1).
func seqDistPick(pairs []SeqDistPair, u float64) *SeqDistPair {
	acc := 0.0
	for i := range pairs {
		acc += pairs[i].Weight / 100
		if u < acc {
			return &pairs[i]
		}
	}
	return &pairs[len(pairs)-1]
}

// seqDistLengths draws one request's input and output lengths from the
// mixture: a pair by its probability, then normal draws around its
// means (at least 1 token; the input at most limit).
func seqDistLengths(pairs []SeqDistPair, rng *rand.Rand, limit int) (int, int) {
	p := seqDistPick(pairs, rng.Float64())
	isl, osl := p.ISL, p.OSL
	if p.ISLStdDev > 0 {
		isl += p.ISLStdDev * rng.NormFloat64()
	}
	if p.OSLStdDev > 0 {
		osl += p.OSLStdDev * rng.NormFloat64()
	}
	return clampLength(isl, limit), clampLength(osl, math.MaxInt32)
}

// clampLength is a drawn length in whole tokens, at least 1 and at most
// limit (as synthLength; kept here so this file depends on no other).
func clampLength(v float64, limit int) int {
	if !(v < float64(limit)) {
		return limit
	}
	return max(1, int(math.Round(v)))
}
