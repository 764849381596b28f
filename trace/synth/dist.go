package synth

import (
	"errors"
	"fmt"
	"io"
	"math"
	"strings"

	"github.com/reprise-bench/reprise/trace"
)

// DistKind names a length distribution.
type DistKind string

// The distributions of [Dist].
const (
	// DistFixed is always round(Mean).
	DistFixed DistKind = "fixed"
	// DistNormal is round(N(Mean, Stddev²)), redrawn while below 1.
	DistNormal DistKind = "normal"
	// DistLognormal is round(X), X lognormal with mean Mean and standard
	// deviation Stddev (σ² = ln(1 + Stddev²/Mean²), μ = ln Mean − σ²/2),
	// at least 1.
	DistLognormal DistKind = "lognormal"
	// DistEmpirical draws uniformly, with replacement, from Values.
	DistEmpirical DistKind = "empirical"
)

// ParseDistKind returns the DistKind named s (case-insensitive). "" is
// returned as "" (the caller's default).
func ParseDistKind(s string) (DistKind, error) {
	switch k := DistKind(strings.ToLower(strings.TrimSpace(s))); k {
	case "", DistFixed, DistNormal, DistLognormal:
		return k, nil
	}
	return "", fmt.Errorf("unknown distribution %q: use fixed, normal or lognormal (or --isl-from/--osl-from TRACE for a trace's own lengths)", s)
}

// Dist is a distribution of positive integers (token counts, turns).
// The zero value is invalid; an empty Kind means fixed when Stddev is 0
// and normal otherwise.
type Dist struct {
	Kind   DistKind
	Mean   float64
	Stddev float64
	// Values are the samples of DistEmpirical (each ≥ 1). The Dist does
	// not modify them.
	Values []int
}

// Fixed returns the distribution that is always n.
func Fixed(n int) Dist { return Dist{Kind: DistFixed, Mean: float64(n)} }

func (d Dist) kind() DistKind {
	if d.Kind != "" {
		return d.Kind
	}
	if d.Stddev > 0 {
		return DistNormal
	}
	return DistFixed
}

// validate reports what is wrong with d; name is the flag it came from.
func (d Dist) validate(name string) error {
	switch d.kind() {
	case DistEmpirical:
		if len(d.Values) == 0 {
			return fmt.Errorf("%s: the empirical distribution has no values", name)
		}
		return nil
	case DistFixed:
		if d.Stddev != 0 {
			return fmt.Errorf("%s: a fixed distribution has no standard deviation (got %g); use normal or lognormal", name, d.Stddev)
		}
	case DistNormal, DistLognormal:
	default:
		return fmt.Errorf("%s: unknown distribution %q", name, d.Kind)
	}
	var errs []error
	if !(d.Mean >= 1) || math.IsInf(d.Mean, 0) {
		errs = append(errs, fmt.Errorf("%s: mean %g: want at least 1", name, d.Mean))
	}
	if !(d.Stddev >= 0) || math.IsInf(d.Stddev, 0) {
		errs = append(errs, fmt.Errorf("%s: standard deviation %g: want ≥ 0", name, d.Stddev))
	}
	return errors.Join(errs...)
}

// maxRedraws bounds the redraws of a normal value below 1.
const maxRedraws = 64

// draw returns one value ≥ 1.
func (d Dist) draw(r *rng) int {
	switch d.kind() {
	case DistEmpirical:
		return d.Values[r.intN(len(d.Values))]
	case DistNormal:
		for range maxRedraws {
			if v := math.Round(d.Mean + d.Stddev*r.normal()); v >= 1 {
				return clampInt(v)
			}
		}
		return 1
	case DistLognormal:
		if d.Stddev == 0 {
			return max(1, clampInt(math.Round(d.Mean)))
		}
		s2 := math.Log1p(d.Stddev * d.Stddev / (d.Mean * d.Mean))
		mu := math.Log(d.Mean) - s2/2
		return max(1, clampInt(math.Round(math.Exp(mu+math.Sqrt(s2)*r.normal()))))
	}
	return max(1, clampInt(math.Round(d.Mean)))
}

// maxTokens caps any drawn token count (the trace readers reject counts
// above 2³⁰).
const maxTokens = 1 << 30

func clampInt(v float64) int {
	if v > maxTokens {
		return maxTokens
	}
	return int(v)
}

// LoadLengths reads the trace at path and returns the input and output
// lengths of its rows, in file order, for [DistEmpirical] and
// [GenerateConfig.Lengths]: only rows with both lengths ≥ 1 are kept, as
// pairs. It fails when no row qualifies.
func LoadLengths(path string, opts trace.Options) ([][2]int, error) {
	rd, err := trace.Open(path, opts)
	if err != nil {
		return nil, err
	}
	defer rd.Close()
	return readLengths(rd, path)
}

// LoadLengthsFrom is LoadLengths over an already open stream.
func LoadLengthsFrom(name string, r io.Reader, opts trace.Options) ([][2]int, error) {
	rd, err := trace.NewReader(name, r, opts)
	if err != nil {
		return nil, err
	}
	defer rd.Close()
	return readLengths(rd, name)
}

func readLengths(rd *trace.Reader, name string) ([][2]int, error) {
	var out [][2]int
	var row trace.Row
	for {
		err := rd.Next(&row)
		if errors.Is(err, io.EOF) {
			break
		}
		if err != nil {
			return nil, err
		}
		if row.InputTokens >= 1 && row.OutputTokens >= 1 {
			out = append(out, [2]int{row.InputTokens, row.OutputTokens})
		}
	}
	if len(out) == 0 {
		return nil, fmt.Errorf("lengths from %s: no row has both an input and an output length", name)
	}
	return out, nil
}
