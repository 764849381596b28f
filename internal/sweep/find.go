package sweep

import (
	"context"
	"errors"
	"fmt"
	"math"
	"strconv"

	"github.com/reprise-bench/reprise"
)

// Defaults of a boundary search.
const (
	// DefaultFindFactor is the bracketing step: each probe doubles (or
	// halves) the load until the SLOs flip.
	DefaultFindFactor = 2.0
	// DefaultFindPrecision ends the bisection when the bracket is no
	// wider than 2 % of its lower end.
	DefaultFindPrecision = 0.02
	// DefaultFindMaxProbes bounds the probes of one search.
	DefaultFindMaxProbes = 16
	// DefaultFindFloorDivisor puts the floor of a search (the lowest
	// load probed) at its start divided by 16: four halvings. With a
	// fixed request count each halving doubles a probe's duration, so
	// the probes down to the floor take 31 times the first one.
	DefaultFindFloorDivisor = 16
)

// FindConfig configures a search for the largest load that meets the
// goodput SLOs (Options.Goodput at Options.MinGoodFraction).
type FindConfig struct {
	// Setting is the load searched: request-rate, concurrency or speedup.
	Setting string `json:"setting"`
	// Start is the first probe's load (> 0).
	Start float64 `json:"start"`
	// Factor is the bracketing step (> 1).
	Factor float64 `json:"factor"`
	// Precision ends the bisection once hi/lo − 1 ≤ Precision (for
	// concurrency also once hi − lo ≤ 1).
	Precision float64 `json:"precision"`
	// MaxProbes bounds the probes.
	MaxProbes int `json:"max_probes"`
	// Floor is the lowest load probed (> 0, ≤ Start; a whole number for
	// concurrency): when every probe down to it fails, the search ends
	// there, with no load found.
	Floor float64 `json:"floor"`
}

// NewFindConfig returns a search of setting from start with the default
// factor, precision, probe bound and floor ([DefaultFloor]).
func NewFindConfig(setting string, start float64) *FindConfig {
	return &FindConfig{Setting: setting, Start: start, Factor: DefaultFindFactor, Precision: DefaultFindPrecision,
		MaxProbes: DefaultFindMaxProbes, Floor: DefaultFloor(setting, start)}
}

// DefaultFloor is the default floor of a search of setting from start:
// start / [DefaultFindFloorDivisor], rounded to 4 significant digits,
// and for concurrency at least 1 and a whole number.
func DefaultFloor(setting string, start float64) float64 {
	if setting == Concurrency {
		return max(1, math.Floor(start/DefaultFindFloorDivisor))
	}
	return roundSig(start/DefaultFindFloorDivisor, 4)
}

func (f *FindConfig) validate(o *reprise.Options) error {
	var errs []error
	switch f.Setting {
	case RequestRate, Concurrency, Speedup:
	default:
		errs = append(errs, fmt.Errorf("find %q: want max-request-rate (max-rate), max-concurrency or max-speedup", f.Setting))
	}
	if f.Start <= 0 || (f.Setting == Concurrency && f.Start != math.Trunc(f.Start)) {
		errs = append(errs, fmt.Errorf("find start %v: want a load > 0 (a whole number for concurrency)", f.Start))
	}
	if f.Factor <= 1 {
		errs = append(errs, fmt.Errorf("find factor %v: want > 1", f.Factor))
	}
	if f.Precision <= 0 {
		errs = append(errs, fmt.Errorf("find precision %v: want > 0", f.Precision))
	}
	if f.MaxProbes < 2 {
		errs = append(errs, fmt.Errorf("find max probes %d: want ≥ 2", f.MaxProbes))
	}
	if f.Floor <= 0 || f.Floor > f.Start || (f.Setting == Concurrency && f.Floor != math.Trunc(f.Floor)) {
		errs = append(errs, fmt.Errorf("find floor %v: want a load > 0 and ≤ the start %v (a whole number for concurrency)", f.Floor, f.Start))
	}
	if o.Goodput == "" {
		errs = append(errs, errors.New("find: Goodput is empty; a search needs SLOs to meet, e.g. \"ttft:250 itl:10\""))
	}
	return errors.Join(errs...)
}

// Probe is one load a search measured.
type Probe struct {
	Point string  `json:"point"`
	Value float64 `json:"value"`
	// Good of Total measured requests met every SLO: Fraction, with its
	// Wilson interval [Low, High] at the sweep's confidence level.
	Good     int     `json:"good"`
	Total    int     `json:"total"`
	Fraction float64 `json:"good_fraction"`
	Low      float64 `json:"good_low"`
	High     float64 `json:"good_high"`
	// Pass reports Fraction ≥ MinGoodFraction.
	Pass bool `json:"pass"`
}

// Found is the answer of a search.
type Found struct {
	Setting string `json:"setting"`
	// Value is the largest load probed that met the SLOs (0: none did);
	// Above the smallest that failed (0: none did). The boundary lies in
	// [Value, Above).
	Value float64 `json:"value"`
	Above float64 `json:"above"`
	// Indistinct reports that the good fractions at Value and Above
	// cannot be told apart: their Wilson intervals overlap, so the
	// bracket's ends differ by less than the probes can resolve.
	Indistinct bool `json:"indistinct"`
	// Probes are every probe, in the order they ran.
	Probes []Probe `json:"probes"`
	// Text says the answer with its uncertainty, as printed.
	Text string `json:"text"`
}

// find brackets, then bisects, the largest load of cfg.Find.Setting that
// meets the SLOs.
func (s *sweeper) find(ctx context.Context) error {
	f := s.cfg.Find
	found := &Found{Setting: f.Setting}
	s.res.Found = found
	var lo, hi *Probe
	probe := func(v float64) (*Probe, error) {
		p := Point{Names: []string{f.Setting}, Values: []float64{v}}
		s.res.Points = append(s.res.Points, s.status(p))
		st := &s.res.Points[len(s.res.Points)-1]
		row, err := s.point(ctx, p, st)
		if err != nil || s.res.Interrupted {
			return nil, err
		}
		n := row.Requests + row.Errors
		pr := Probe{Point: row.Point, Value: v, Good: row.Good, Total: n, Fraction: row.GoodFraction,
			Low: row.GoodLow, High: row.GoodHigh, Pass: row.SLOMet}
		found.Probes = append(found.Probes, pr)
		return &found.Probes[len(found.Probes)-1], s.save()
	}
	round := func(v float64) float64 {
		if f.Setting == Concurrency {
			return math.Floor(v)
		}
		return roundSig(v, 4)
	}
	v, floored := f.Start, false
	for len(found.Probes) < f.MaxProbes {
		if lo != nil && hi != nil {
			if hi.Value/lo.Value-1 <= f.Precision {
				break
			}
			v = round((lo.Value + hi.Value) / 2)
			if v <= lo.Value || v >= hi.Value {
				break
			}
		}
		p, err := probe(v)
		if err != nil || p == nil {
			return err
		}
		if p.Pass {
			lo = p
		} else {
			hi = p
		}
		switch {
		case hi == nil:
			v = round(v * f.Factor)
		case lo == nil:
			floored = v <= f.Floor // every probe down to the floor failed
			v = max(round(v/f.Factor), f.Floor)
		}
		if floored {
			break
		}
	}
	// The lo and hi pointers point into found.Probes, which grew; take
	// the final bracket from the probes.
	lo, hi = nil, nil
	for i := range found.Probes {
		p := &found.Probes[i]
		if p.Pass && (lo == nil || p.Value > lo.Value) {
			lo = p
		}
	}
	for i := range found.Probes {
		p := &found.Probes[i]
		if !p.Pass && (lo == nil || p.Value > lo.Value) && (hi == nil || p.Value < hi.Value) {
			hi = p
		}
	}
	found.Text = s.foundText(found, lo, hi)
	return nil
}

func (s *sweeper) foundText(found *Found, lo, hi *Probe) string {
	lvl := strconv.FormatFloat(100*s.cfg.Runs.Level, 'g', -1, 64) + "%"
	describe := func(p *Probe) string {
		return fmt.Sprintf("%s good %.1f%% [%.1f, %.1f] (%d/%d, %s Wilson)", formatValue(p.Value), 100*p.Fraction,
			100*p.Low, 100*p.High, p.Good, p.Total, lvl)
	}
	slo := fmt.Sprintf("%q with ≥ %v good", s.cfg.Base.Goodput, s.cfg.Base.MinGoodFraction)
	switch {
	case lo == nil && hi != nil && hi.Value <= s.cfg.Find.Floor:
		found.Above = hi.Value
		return fmt.Sprintf("find: no %s met %s down to %s (the floor): %s", found.Setting, slo, formatValue(s.cfg.Find.Floor), describe(hi))
	case lo == nil && hi != nil:
		found.Above = hi.Value
		return fmt.Sprintf("find: no %s met %s down to %s, the lowest probed within the %d-probe bound (the floor is %s): %s",
			found.Setting, slo, formatValue(hi.Value), s.cfg.Find.MaxProbes, formatValue(s.cfg.Find.Floor), describe(hi))
	case lo != nil && hi == nil:
		found.Value = lo.Value
		return fmt.Sprintf("find: max %s ≥ %s (%s): every probe met %s within the %d-probe bound; raise the start or the probe bound",
			found.Setting, formatValue(lo.Value), describe(lo), slo, s.cfg.Find.MaxProbes)
	case lo == nil:
		return "find: nothing was probed"
	}
	found.Value, found.Above = lo.Value, hi.Value
	found.Indistinct = lo.Low <= hi.High && hi.Low <= lo.High
	t := fmt.Sprintf("find: max %s = %s meeting %s; the boundary lies in [%s, %s) (±%.1f%%): passes %s; fails %s",
		found.Setting, formatValue(lo.Value), slo, formatValue(lo.Value), formatValue(hi.Value),
		50*(hi.Value-lo.Value)/lo.Value, describe(lo), describe(hi))
	if found.Indistinct {
		t += fmt.Sprintf("; at %s the good fractions of %s and %s cannot be told apart (their intervals overlap): more requests per probe would separate them",
			lvl, formatValue(lo.Value), formatValue(hi.Value))
	}
	return t
}

// roundSig rounds v to n significant digits.
func roundSig(v float64, n int) float64 {
	if v == 0 {
		return 0
	}
	p := math.Pow(10, float64(n)-math.Ceil(math.Log10(math.Abs(v))))
	return math.Round(v*p) / p
}

func fmtErr(format string, args ...any) error { return fmt.Errorf(format, args...) }
