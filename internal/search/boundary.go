package search

import (
	"context"
	"errors"
	"fmt"
	"math"
	"slices"
)

// Defaults of [BoundaryConfig].
const (
	// DefaultPrecision ends a boundary search once the bracket
	// [pass, fail) is no wider than 5 % of its lower end.
	DefaultPrecision = 0.05
	// DefaultBoundaryMaxProbes bounds the probes of a boundary search.
	DefaultBoundaryMaxProbes = 30
	// DefaultViolationTolerance: a level that falls by more than 25 %
	// while the load rises is reported as a violation of monotonicity.
	DefaultViolationTolerance = 0.25
	// maxProbesPerSetting bounds the probes of one load (the first and
	// two re-probes of a violation).
	maxProbesPerSetting = 3
)

// Level is what a boundary probe measured: Ratio is the worst ratio of
// a measured metric to its SLA limit, oriented so that the SLA holds when
// Ratio ≤ 1 and Ratio does not fall as the load rises (latency over its
// limit; the SLO attainment target over the attained fraction).
type Level struct {
	Ratio float64 `json:"ratio"`
	Valid bool    `json:"valid"`
	Note  string  `json:"note,omitempty"`
}

// LevelFunc measures the server at load x.
type LevelFunc func(ctx context.Context, x float64) (Level, error)

// BoundaryConfig is a search for the largest load in [Lo, Hi] whose
// level meets its SLA.
type BoundaryConfig struct {
	Lo, Hi float64
	// Int restricts the load to whole numbers (concurrency).
	Int bool
	// Precision ends the search once hi/lo − 1 ≤ Precision (for Int also
	// once hi − lo ≤ 1).
	Precision float64
	// MaxProbes bounds the probes (invalid ones included).
	MaxProbes int
	// ViolationTolerance is the relative fall of the level between two
	// loads, in load order, reported as a violation of monotonicity.
	ViolationTolerance float64
	// MaxInvalid is how often in a row one load may be invalid before
	// the search stops at it.
	MaxInvalid int
}

// NewBoundaryConfig returns a search over [lo, hi] with the defaults.
func NewBoundaryConfig(lo, hi float64, integer bool) BoundaryConfig {
	return BoundaryConfig{Lo: lo, Hi: hi, Int: integer, Precision: DefaultPrecision, MaxProbes: DefaultBoundaryMaxProbes,
		ViolationTolerance: DefaultViolationTolerance, MaxInvalid: 2}
}

// BoundaryProbe is one probe of a boundary search.
type BoundaryProbe struct {
	X float64 `json:"x"`
	Level
	// Why is "end" (a bound of the range), "model" (the interpolated
	// crossing, either side of it), "bisect" (a safeguarding halving),
	// "reprobe" (a load whose measurements broke the order) or "rerun"
	// (the previous probe there was invalid).
	Why string `json:"why"`
}

// Boundary is a boundary search's answer.
type Boundary struct {
	// Value is the largest load that met the SLA below the lowest that
	// failed (0: none met it); Above that lowest failing load (0: none
	// failed). The boundary lies in [Value, Above).
	Value float64 `json:"value"`
	Above float64 `json:"above"`
	// Converged reports that the bracket is within the precision.
	Converged bool `json:"converged"`
	// Unmeasurable is the load the search stopped at because it was
	// invalid MaxInvalid + 1 times in a row (0: none).
	Unmeasurable float64 `json:"unmeasurable,omitempty"`
	// Violations say where the measurements broke monotonicity ("level
	// 1.3 at 40 above 0.9 at 48").
	Violations []string `json:"violations,omitempty"`
	// Reprobed lists the loads probed again because their measurements
	// broke the order (each time).
	Reprobed []float64       `json:"reprobed,omitempty"`
	Probes   []BoundaryProbe `json:"probes"`
	// Stopped says why a search ended before its bracket was within the
	// precision (empty otherwise).
	Stopped string `json:"stopped,omitempty"`
}

func (c *BoundaryConfig) validate() error {
	var errs []error
	if !(c.Lo > 0 && c.Lo < c.Hi) {
		errs = append(errs, fmt.Errorf("range [%v, %v]: want 0 < lo < hi", c.Lo, c.Hi))
	}
	if c.Int && (c.Lo != math.Trunc(c.Lo) || c.Hi != math.Trunc(c.Hi)) {
		errs = append(errs, fmt.Errorf("range [%v, %v]: whole numbers for an integer load", c.Lo, c.Hi))
	}
	if !(c.Precision > 0) {
		errs = append(errs, fmt.Errorf("precision %v: want > 0", c.Precision))
	}
	if c.MaxProbes < 2 {
		errs = append(errs, fmt.Errorf("max probes %d: want ≥ 2", c.MaxProbes))
	}
	return errors.Join(errs...)
}

// bstate is the state of a boundary search or a bisection.
type bstate struct {
	c      *BoundaryConfig
	b      *Boundary
	levels map[float64][]float64 // valid ratios per load
	f      LevelFunc
	// reprobed are the loads re-probed for a violation; passes and
	// fails count the consecutive outcomes of the model's probes (the
	// Illinois weights).
	reprobed      []float64
	passes, fails int
	last          float64 // the load probed last
	// stopEarly, when set, may end the search before the bracket is
	// within the precision, saying why.
	stopEarly func(s *bstate, lo, hi float64) (string, bool)
}

func (s *bstate) probe(ctx context.Context, x float64, why string) (stop bool, err error) {
	for invalid := 0; ; invalid++ {
		if len(s.b.Probes) >= s.c.MaxProbes {
			return true, nil
		}
		l, err := s.f(ctx, x)
		if err != nil {
			return true, err
		}
		s.b.Probes = append(s.b.Probes, BoundaryProbe{X: x, Level: l, Why: why})
		s.last = x
		if l.Valid && !math.IsNaN(l.Ratio) {
			s.levels[x] = append(s.levels[x], l.Ratio)
			return false, nil
		}
		if invalid >= s.c.MaxInvalid {
			s.b.Unmeasurable = x
			return true, nil
		}
		why = "rerun"
	}
}

// ratio is the level at x: the median of its probes (with an even
// count, the geometric mean of the middle two), so one stalled probe
// among three does not decide.
func (s *bstate) ratio(x float64) float64 {
	ls := slices.Clone(s.levels[x])
	slices.Sort(ls)
	n := len(ls)
	if n%2 == 1 {
		return ls[n/2]
	}
	return math.Sqrt(max(ls[n/2-1], 1e-12) * max(ls[n/2], 1e-12))
}

func (s *bstate) loads() []float64 {
	var xs []float64
	for x := range s.levels {
		xs = append(xs, x)
	}
	slices.Sort(xs)
	return xs
}

// bracket is the lowest failing load (hi) and the largest passing load
// below it (lo); 0 where there is none.
func (s *bstate) bracket() (lo, hi float64) {
	xs := s.loads()
	for _, x := range xs {
		if s.ratio(x) > 1 {
			hi = x
			break
		}
	}
	for _, x := range xs {
		if s.ratio(x) <= 1 && (hi == 0 || x < hi) {
			lo = x
		}
	}
	return lo, hi
}

func (s *bstate) done(lo, hi float64) bool {
	return hi/lo-1 <= s.c.Precision || (s.c.Int && hi-lo <= 1)
}

func (s *bstate) round(x float64) float64 {
	if s.c.Int {
		return math.Round(x)
	}
	return x
}

// violation returns two loads whose measurements break the order, one of
// which may still be re-probed: a pass above a fail, or a level that
// falls by more than the tolerance as the load rises.
func (s *bstate) violation() (a, b float64, ok bool) {
	xs := s.loads()
	for i := range xs {
		for j := i + 1; j < len(xs); j++ {
			if s.broken(xs[i], xs[j]) && (len(s.levels[xs[i]]) < maxProbesPerSetting || len(s.levels[xs[j]]) < maxProbesPerSetting) {
				return xs[i], xs[j], true
			}
		}
	}
	return 0, 0, false
}

// broken reports whether loads a < b are measured out of order.
func (s *bstate) broken(a, b float64) bool {
	ra, rb := s.ratio(a), s.ratio(b)
	return (ra > 1 && rb <= 1) || (s.c.ViolationTolerance > 0 && rb < ra*(1-s.c.ViolationTolerance))
}

func (s *bstate) notes() {
	xs := s.loads()
	for i := range xs {
		for j := i + 1; j < len(xs); j++ {
			if s.broken(xs[i], xs[j]) {
				s.b.Violations = append(s.b.Violations, fmt.Sprintf("level %.3g at %s above %.3g at %s after %d and %d probes (the load rose, the level fell): unresolved",
					s.ratio(xs[i]), fmtX(xs[i]), s.ratio(xs[j]), fmtX(xs[j]), len(s.levels[xs[i]]), len(s.levels[xs[j]])))
			}
		}
	}
	s.b.Reprobed = s.reprobed
}

func fmtX(x float64) string { return fmt.Sprintf("%.4g", x) }

// ends probes the range's ends; stop reports that the answer is known.
func (s *bstate) ends(ctx context.Context) (stop bool, err error) {
	if stop, err := s.probe(ctx, s.c.Lo, "end"); stop || err != nil {
		return true, err
	}
	if s.ratio(s.c.Lo) > 1 {
		return true, nil // nothing in the range meets the SLA
	}
	if stop, err := s.probe(ctx, s.c.Hi, "end"); stop || err != nil {
		return true, err
	}
	return s.ratio(s.c.Hi) <= 1, nil
}

func (s *bstate) finish() *Boundary {
	lo, hi := s.bracket()
	s.b.Value, s.b.Above = lo, hi
	s.b.Converged = lo > 0 && hi > 0 && s.done(lo, hi) || lo == s.c.Hi || (hi == s.c.Lo && lo == 0)
	s.notes()
	return s.b
}

// SearchBoundary finds the largest load in [Lo, Hi] meeting the SLA using
// the monotone structure of the level in the load: it probes the range's
// ends, then estimates the load x* where the level crosses 1 ([estimate]:
// the line through the two lowest failing loads, else the bracket's chord
// with Illinois weights) and probes x*·(1 − δ) when the bracket's passing
// end is the farther from x*, else x*·(1 + δ), δ = 0.45 × Precision: when
// the estimate is right, the two probes either side of x* close the
// bracket to 0.9 × Precision. A candidate that would not shrink the
// bracket, or a bracket that did not halve (in log load) over two
// probes, gets a bisection step instead. Loads whose measurements are out
// of order (a failure below a pass, or a level falling by more than
// ViolationTolerance as the load rises) are probed again, up to three
// times each, before anything else, and reported in Violations; a load's
// level is the median of its probes.
func SearchBoundary(ctx context.Context, c BoundaryConfig, f LevelFunc) (*Boundary, error) {
	if err := c.validate(); err != nil {
		return nil, fmt.Errorf("boundary search: %w", err)
	}
	return searchBoundaryWith(ctx, &c, f, (*bstate).interpolate, nil)
}

// chooser picks the next load inside the bracket (lo, hi) of a boundary
// search and says why ("model" or "bisect"); ok false when it has none.
type chooser func(s *bstate, lo, hi float64) (x float64, why string, ok bool)

// searchBoundaryWith is the loop of every monotone search: the range's
// ends, then violations re-probed before anything else, then the
// chooser's load until the bracket is within the precision. A bracket
// that did not halve (in log load) over two probes gets a bisection
// step, which bounds the worst case whatever the chooser does.
// stopEarly, when not nil, may end the search before the bracket is
// within the precision.
func searchBoundaryWith(ctx context.Context, c *BoundaryConfig, f LevelFunc, choose chooser,
	stopEarly func(s *bstate, lo, hi float64) (string, bool)) (*Boundary, error) {
	s := &bstate{c: c, b: &Boundary{}, levels: map[float64][]float64{}, f: f, stopEarly: stopEarly}
	if stop, err := s.ends(ctx); stop || err != nil {
		return s.finish(), err
	}
	var widths []float64
	for {
		if a, b, ok := s.violation(); ok {
			if stop, err := s.reprobe(ctx, a, b); stop || err != nil {
				return s.finish(), err
			}
			continue
		}
		lo, hi := s.bracket()
		if lo == 0 || hi == 0 || s.done(lo, hi) {
			return s.finish(), nil
		}
		if s.stopEarly != nil {
			if why, ok := s.stopEarly(s, lo, hi); ok {
				s.b.Stopped = why
				return s.finish(), nil
			}
		}
		widths = append(widths, math.Log(hi/lo))
		x, why := math.Sqrt(lo*hi), "bisect"
		stalled := len(widths) >= 3 && widths[len(widths)-1] > 0.5*widths[len(widths)-3]
		if xc, whyc, ok := choose(s, lo, hi); ok && !stalled {
			if xc = s.round(xc); xc > lo && xc < hi {
				x, why = xc, whyc
			}
		}
		x = s.round(x)
		if x <= lo || x >= hi {
			x = s.round(lo + (hi-lo)/2)
			if x <= lo || x >= hi {
				return s.finish(), nil
			}
		}
		if stop, err := s.probe(ctx, x, why); stop || err != nil {
			return s.finish(), err
		}
		if s.ratio(x) <= 1 {
			s.passes, s.fails = s.passes+1, 0
		} else {
			s.passes, s.fails = 0, s.fails+1
		}
	}
}

// reprobe probes again the one of two loads measured out of order with
// fewer measurements (on a tie the newer): either may be the one that
// is off.
func (s *bstate) reprobe(ctx context.Context, a, b float64) (stop bool, err error) {
	x := a
	switch la, lb := len(s.levels[a]), len(s.levels[b]); {
	case lb < la, lb == la && s.last == b:
		x = b
	}
	if la, lb := len(s.levels[a]), len(s.levels[b]); la+lb == 2 {
		s.b.Violations = append(s.b.Violations, fmt.Sprintf("level %.3g at %s above %.3g at %s (the load rose, the level fell): re-probed",
			s.ratio(a), fmtX(a), s.ratio(b), fmtX(b)))
	}
	s.reprobed = append(s.reprobed, x)
	return s.probe(ctx, x, "reprobe")
}

// interpolate is SearchBoundary's chooser: the estimated crossing x*
// ([bstate.estimate]), moved to x*·(1 − δ) when the bracket's passing
// end is the farther (relatively) from it, else to x*·(1 + δ), δ = 0.45
// × Precision, so that two probes straddle the crossing.
func (s *bstate) interpolate(lo, hi float64) (float64, string, bool) {
	xs, ok := s.estimate(lo, hi)
	if !ok {
		return 0, "", false
	}
	delta := 0.45 * s.c.Precision
	if xs/lo > hi/xs {
		xs *= 1 - delta
	} else {
		xs *= 1 + delta
	}
	return xs, "model", true
}

// estimate is the load where the level crosses 1 inside (lo, hi): the
// line through the two lowest failing loads, extrapolated down (the
// rising branch of the curve is what locates the crossing; a flat branch
// below it says nothing), else the chord between the bracket's ends with
// Illinois weights (an end kept k times in a row has its distance from 1
// halved k times, so a convex curve does not pin the estimate to one
// side).
func (s *bstate) estimate(lo, hi float64) (float64, bool) {
	var fails []float64
	for _, x := range s.loads() {
		if x >= hi && s.ratio(x) > 1 {
			fails = append(fails, x)
		}
	}
	if len(fails) >= 2 {
		f1, f2 := fails[0], fails[1]
		r1, r2 := s.ratio(f1), s.ratio(f2)
		if r2 > r1 {
			x := f1 - (r1-1)*(f2-f1)/(r2-r1)
			if x > lo && x < hi {
				return x, true
			}
		}
	}
	rl, rh := s.ratio(lo)-1, s.ratio(hi)-1
	rh *= math.Pow(0.5, float64(s.passes))
	rl *= math.Pow(0.5, float64(s.fails))
	if rh-rl <= 0 {
		return 0, false
	}
	return lo + (0-rl)*(hi-lo)/(rh-rl), true
}

// Bisect is the plain search SearchBoundary is measured against: the
// range's ends, then the bracket's geometric midpoint (outcomes only)
// until it is within the precision. It re-probes nothing.
func Bisect(ctx context.Context, c BoundaryConfig, f LevelFunc) (*Boundary, error) {
	if err := c.validate(); err != nil {
		return nil, fmt.Errorf("bisect: %w", err)
	}
	s := &bstate{c: &c, b: &Boundary{}, levels: map[float64][]float64{}, f: f}
	if stop, err := s.ends(ctx); stop || err != nil {
		return s.finish(), err
	}
	for {
		lo, hi := s.bracket()
		if lo == 0 || hi == 0 || s.done(lo, hi) {
			return s.finish(), nil
		}
		x := s.round(math.Sqrt(lo * hi))
		if x <= lo || x >= hi {
			x = s.round(lo + (hi-lo)/2)
			if x <= lo || x >= hi {
				return s.finish(), nil
			}
		}
		if stop, err := s.probe(ctx, x, "bisect"); stop || err != nil {
			return s.finish(), err
		}
	}
}
