package search

import (
	"context"
	"errors"
	"fmt"
	"math"
	"math/rand/v2"
	"slices"
	"strconv"
	"strings"
)

// Measurement is what one probe measured.
type Measurement struct {
	// Metrics by name ("time_to_first_token:p99", "output_token_throughput:avg").
	Metrics map[string]float64 `json:"metrics"`
	// Valid reports that the probe measured the server (the client kept
	// its schedule); an invalid probe is not modelled.
	Valid bool `json:"valid"`
	// Note says why a probe was invalid.
	Note string `json:"note,omitempty"`
}

// ProbeFunc measures the server at one setting of a search's dimensions.
type ProbeFunc func(ctx context.Context, x []float64) (Measurement, error)

// Objective is a metric a search optimizes.
type Objective struct {
	Metric   string `json:"metric"`
	Maximize bool   `json:"maximize"`
}

// Constraint is an SLA: Metric Op Threshold must hold (Op "<=", "<",
// ">=" or ">"; strict and loose are the same to a model).
type Constraint struct {
	Metric    string  `json:"metric"`
	Op        string  `json:"op"`
	Threshold float64 `json:"threshold"`
}

// ParseConstraint reads AIPerf's --search-sla "METRIC:STAT:OP:THRESHOLD"
// (e.g. time_to_first_token:p99:<=:500); the constraint's Metric is
// "METRIC:STAT".
func ParseConstraint(s string) (Constraint, error) {
	parts := strings.Split(s, ":")
	if len(parts) != 4 {
		return Constraint{}, fmt.Errorf("%q: want METRIC:STAT:OP:THRESHOLD, e.g. time_to_first_token:p99:<=:500", s)
	}
	c := Constraint{Metric: strings.TrimSpace(parts[0]) + ":" + strings.TrimSpace(parts[1]), Op: strings.TrimSpace(parts[2])}
	switch c.Op {
	case "<=", "<", ">=", ">":
	case "le", "lt", "ge", "gt":
		c.Op = map[string]string{"le": "<=", "lt": "<", "ge": ">=", "gt": ">"}[c.Op]
	default:
		return c, fmt.Errorf("%q: operator %q: want <=, <, >= or >", s, c.Op)
	}
	v, err := strconv.ParseFloat(strings.TrimSpace(parts[3]), 64)
	if err != nil || math.IsNaN(v) || math.IsInf(v, 0) {
		return c, fmt.Errorf("%q: threshold %q is not a number", s, parts[3])
	}
	c.Threshold = v
	return c, nil
}

// Holds reports whether value meets the constraint.
func (c Constraint) Holds(v float64) bool {
	switch c.Op {
	case "<":
		return v < c.Threshold
	case "<=":
		return v <= c.Threshold
	case ">":
		return v > c.Threshold
	}
	return v >= c.Threshold
}

func (c Constraint) upper() bool { return c.Op == "<" || c.Op == "<=" }

// Defaults of [Problem].
const (
	// DefaultMaxIterations bounds the probes of a model-based search.
	DefaultMaxIterations = 20
	// DefaultInitialPoints is the size of the Sobol design a search
	// starts from.
	DefaultInitialPoints = 4
	// DefaultMinImprovement stops a search once no candidate is
	// expected to improve the best objective by 1 % of its spread.
	DefaultMinImprovement = 0.01
	// candidates is how many settings the acquisition is evaluated at.
	candidates = 1024
)

// Problem is a model-based search over a box of settings.
type Problem struct {
	Space       []Dimension  `json:"space"`
	Objectives  []Objective  `json:"objectives"`
	Constraints []Constraint `json:"constraints,omitempty"`
	// MaxIterations bounds the probes (invalid ones included).
	MaxIterations int `json:"max_iterations"`
	// InitialPoints are probed from a Sobol design before the model
	// chooses.
	InitialPoints int `json:"initial_points"`
	// Seed draws the design, the candidates and (several objectives) the
	// scalarizing weights.
	Seed uint64 `json:"seed"`
	// MinImprovement stops the search when the largest constrained
	// expected improvement is below it, on the standardized scale of
	// the objective (see [DefaultMinImprovement]).
	MinImprovement float64 `json:"min_improvement"`
	// Monotone declares that every constraint's metric moves one way as
	// the settings rise (latency does not fall as load rises), so that
	// with one setting the feasible settings are an interval from the
	// range's low end. A one-setting monotone problem is searched for the
	// top of that interval ([Optimize]); the objective is then taken to
	// rise with the setting.
	Monotone bool `json:"monotone,omitempty"`
	// Tolerance ends a monotone search once the answer's interval is
	// within it, relatively (see [DefaultTolerance]).
	Tolerance float64 `json:"tolerance,omitempty"`
}

// NewProblem returns a problem over space with the documented defaults.
func NewProblem(space []Dimension, objectives []Objective) Problem {
	return Problem{Space: space, Objectives: objectives, MaxIterations: DefaultMaxIterations,
		InitialPoints: DefaultInitialPoints, MinImprovement: DefaultMinImprovement, Tolerance: DefaultTolerance}
}

// Trial is one probe of a search.
type Trial struct {
	X           []float64 `json:"x"`
	Measurement           // what it measured
	Feasible    bool      `json:"feasible"`
	// Why is "initial" (the Sobol design) or "model" (the acquisition's
	// choice); Acquisition is the constrained expected improvement it
	// was chosen with.
	Why         string  `json:"why"`
	Acquisition float64 `json:"acquisition,omitempty"`
}

// Result is a search's outcome.
type Result struct {
	Trials []Trial `json:"trials"`
	// Best is the index of the best feasible trial of the first
	// objective (−1: none feasible); Pareto the feasible trials no other
	// feasible trial beats in every objective, by the first objective.
	Best   int   `json:"best"`
	Pareto []int `json:"pareto"`
	// Stopped says why the search ended.
	Stopped string `json:"stopped"`
	// Violations say where the measurements of a monotone search broke
	// the order, and what was probed again.
	Violations []string `json:"violations,omitempty"`
}

func (p *Problem) validate() error {
	var errs []error
	if len(p.Space) == 0 {
		errs = append(errs, errors.New("no dimensions to search"))
	}
	for _, d := range p.Space {
		if !(d.Lo < d.Hi) {
			errs = append(errs, fmt.Errorf("dimension %s: want lo < hi", d.Name))
		}
	}
	if len(p.Objectives) == 0 {
		errs = append(errs, errors.New("no objective metric"))
	}
	if p.MaxIterations < 1 {
		errs = append(errs, fmt.Errorf("max iterations %d: want ≥ 1", p.MaxIterations))
	}
	if p.InitialPoints < 1 {
		errs = append(errs, fmt.Errorf("initial points %d: want ≥ 1", p.InitialPoints))
	}
	return errors.Join(errs...)
}

// value is trial t's value of metric m, and whether it has one.
func value(t *Trial, m string) (float64, bool) {
	v, ok := t.Metrics[m]
	return v, ok && !math.IsNaN(v) && !math.IsInf(v, 0)
}

func (p *Problem) feasible(t *Trial) bool {
	if !t.Valid {
		return false
	}
	for _, c := range p.Constraints {
		v, ok := value(t, c.Metric)
		if !ok || !c.Holds(v) {
			return false
		}
	}
	for _, o := range p.Objectives {
		if _, ok := value(t, o.Metric); !ok {
			return false
		}
	}
	return true
}

// Optimize runs the search: the initial Sobol design, then, while probes
// remain, the candidate of largest constrained expected improvement
// (EI of the objective times the probability that every constraint holds,
// each metric its own process; the log of a metric that is always
// positive). Several objectives are scalarized per iteration with random
// weights (ParEGO's augmented Chebyshev), so the probes spread along the
// Pareto front. The search stops at MaxIterations, or when the largest
// acquisition is below MinImprovement (once a feasible trial exists), or
// when every candidate was probed.
//
// A one-setting [Problem.Monotone] problem is searched for the top of its
// feasible interval instead (optimizeMonotone): the range's ends, then
// the probes a Gaussian process of the SLA level chooses around the
// crossing, until the answer's interval is within Tolerance; it
// re-probes measurements that break the order and says so in
// Violations, and stops early on a level that does not change.
func Optimize(ctx context.Context, p Problem, probe ProbeFunc) (*Result, error) {
	if err := p.validate(); err != nil {
		return nil, fmt.Errorf("search: %w", err)
	}
	if p.monotone1D() {
		return optimizeMonotone(ctx, &p, probe)
	}
	d := len(p.Space)
	res := &Result{Best: -1}
	rng := rand.New(rand.NewPCG(p.Seed, 0xb0))
	init, err := Sobol(min(p.InitialPoints, p.MaxIterations), min(d, maxSobolDims), p.Seed)
	if err != nil {
		return nil, err
	}
	seen := map[string]bool{}
	run := func(u []float64, why string, acq float64) error {
		x := make([]float64, d)
		for j, dim := range p.Space {
			x[j] = fromUnit(dim, u[j])
		}
		seen[key(x)] = true
		m, err := probe(ctx, x)
		if err != nil {
			return err
		}
		t := Trial{X: x, Measurement: m, Why: why, Acquisition: acq}
		t.Feasible = p.feasible(&t)
		res.Trials = append(res.Trials, t)
		return nil
	}
	for _, u := range init {
		if len(u) < d { // more dimensions than Sobol has: the rest random
			for len(u) < d {
				u = append(u, rng.Float64())
			}
		}
		if err := run(u, "initial", 0); err != nil {
			return res, err
		}
	}
	res.Stopped = fmt.Sprintf("max iterations (%d)", p.MaxIterations)
	for len(res.Trials) < p.MaxIterations {
		u, acq, ok := p.next(res, rng, seen)
		if !ok {
			res.Stopped = "every candidate setting was probed"
			break
		}
		if acq < p.MinImprovement && anyFeasible(res) {
			res.Stopped = fmt.Sprintf("no setting is expected to improve the best by more than %g of its spread (largest expected improvement %.3g)", p.MinImprovement, acq)
			break
		}
		if err := run(u, "model", acq); err != nil {
			return res, err
		}
	}
	p.conclude(res)
	return res, nil
}

func anyFeasible(r *Result) bool {
	for i := range r.Trials {
		if r.Trials[i].Feasible {
			return true
		}
	}
	return false
}

func key(x []float64) string { return fmt.Sprint(x) }

// model fits one process to metric over the valid trials that have it:
// log(metric) when every value is positive. ok is false with fewer than
// two points.
type fitted struct {
	g   *gp
	log bool
}

func (p *Problem) fit(r *Result, metric func(*Trial) (float64, bool)) (fitted, bool) {
	var xs [][]float64
	var ys []float64
	pos := true
	for i := range r.Trials {
		t := &r.Trials[i]
		if !t.Valid {
			continue
		}
		v, ok := metric(t)
		if !ok {
			continue
		}
		u := make([]float64, len(p.Space))
		for j, dim := range p.Space {
			u[j] = toUnit(dim, t.X[j])
		}
		xs, ys = append(xs, u), append(ys, v)
		pos = pos && v > 0
	}
	if len(ys) < 2 {
		return fitted{}, false
	}
	if pos {
		for i := range ys {
			ys[i] = math.Log(ys[i])
		}
	}
	g, err := fitGP(xs, ys)
	if err != nil {
		return fitted{}, false
	}
	return fitted{g: g, log: pos}, true
}

// next chooses the candidate of largest constrained expected
// improvement.
func (p *Problem) next(r *Result, rng *rand.Rand, seen map[string]bool) (u []float64, acq float64, ok bool) {
	d := len(p.Space)
	// The scalar objective to minimize: the first objective, or with
	// several a random augmented-Chebyshev scalarization of the
	// objectives normalized over the trials.
	obj := p.scalarizer(r, rng)
	fo, okObj := p.fit(r, obj)
	cons := make([]fitted, len(p.Constraints))
	consOK := make([]bool, len(p.Constraints))
	for i, c := range p.Constraints {
		cons[i], consOK[i] = p.fit(r, func(t *Trial) (float64, bool) { return value(t, c.Metric) })
	}
	best, haveBest := math.Inf(1), false
	for i := range r.Trials {
		t := &r.Trials[i]
		if !t.Feasible {
			continue
		}
		if v, ok := obj(t); ok {
			if fo.log && v > 0 {
				v = math.Log(v)
			}
			best, haveBest = min(best, v), true
		}
	}
	cands, _ := Sobol(candidates, min(d, maxSobolDims), rng.Uint64()|1)
	// Local candidates around the feasible trials.
	for i := range r.Trials {
		t := &r.Trials[i]
		if !t.Feasible {
			continue
		}
		for range 32 {
			c := make([]float64, d)
			for j, dim := range p.Space {
				c[j] = min(max(toUnit(dim, t.X[j])+0.05*rng.NormFloat64(), 0), 1)
			}
			cands = append(cands, c)
		}
	}
	acq = -1
	for _, c := range cands {
		for len(c) < d {
			c = append(c, rng.Float64())
		}
		x := make([]float64, d)
		for j, dim := range p.Space {
			x[j] = fromUnit(dim, c[j])
		}
		if seen[key(x)] {
			continue
		}
		pf := 1.0
		for i, con := range p.Constraints {
			if !consOK[i] {
				continue
			}
			mu, sd := cons[i].g.predict(c)
			t := con.Threshold
			if cons[i].log {
				if t <= 0 {
					pf *= map[bool]float64{true: 0, false: 1}[con.upper()]
					continue
				}
				t = math.Log(t)
			}
			z := (t - mu) / sd
			if con.upper() {
				pf *= normCDF(z)
			} else {
				pf *= 1 - normCDF(z)
			}
		}
		a := pf // no feasible trial yet: the probability of feasibility
		if okObj && haveBest {
			mu, sd := fo.g.predict(c)
			a = pf * expectedImprovement(mu, sd, best) / fo.g.std
		}
		if a > acq {
			u, acq, ok = c, a, true
		}
	}
	return u, acq, ok
}

// scalarizer returns the scalar to minimize of a trial.
func (p *Problem) scalarizer(r *Result, rng *rand.Rand) func(*Trial) (float64, bool) {
	sign := func(o Objective) float64 {
		if o.Maximize {
			return -1
		}
		return 1
	}
	if len(p.Objectives) == 1 {
		o := p.Objectives[0]
		if o.Maximize {
			// Maximizing v is minimizing 1/v for a positive metric (so
			// the log model applies), else −v.
			return func(t *Trial) (float64, bool) {
				v, ok := value(t, o.Metric)
				if ok && v > 0 {
					return 1 / v, true
				}
				return -v, ok
			}
		}
		return func(t *Trial) (float64, bool) { return value(t, o.Metric) }
	}
	lo := make([]float64, len(p.Objectives))
	hi := make([]float64, len(p.Objectives))
	for i, o := range p.Objectives {
		lo[i], hi[i] = math.Inf(1), math.Inf(-1)
		for k := range r.Trials {
			if v, ok := value(&r.Trials[k], o.Metric); ok && r.Trials[k].Valid {
				v *= sign(o)
				lo[i], hi[i] = min(lo[i], v), max(hi[i], v)
			}
		}
	}
	w := make([]float64, len(p.Objectives))
	sum := 0.0
	for i := range w {
		w[i] = -math.Log(1 - rng.Float64()) // a uniform point of the simplex
		sum += w[i]
	}
	for i := range w {
		w[i] /= sum
	}
	return func(t *Trial) (float64, bool) {
		mx, s := math.Inf(-1), 0.0
		for i, o := range p.Objectives {
			v, ok := value(t, o.Metric)
			if !ok {
				return 0, false
			}
			n := 0.0
			if hi[i] > lo[i] {
				n = (v*sign(o) - lo[i]) / (hi[i] - lo[i])
			}
			mx, s = max(mx, w[i]*n), s+w[i]*n
		}
		return mx + 0.05*s, true
	}
}

// conclude sets the best trial and the Pareto front.
func (p *Problem) conclude(r *Result) {
	o := p.Objectives[0]
	better := func(a, b float64, o Objective) bool {
		if o.Maximize {
			return a > b
		}
		return a < b
	}
	for i := range r.Trials {
		t := &r.Trials[i]
		if !t.Feasible {
			continue
		}
		v, _ := value(t, o.Metric)
		if r.Best < 0 {
			r.Best = i
		} else if b, _ := value(&r.Trials[r.Best], o.Metric); better(v, b, o) {
			r.Best = i
		}
	}
	for i := range r.Trials {
		if !r.Trials[i].Feasible {
			continue
		}
		dominated := false
		for j := range r.Trials {
			if i == j || !r.Trials[j].Feasible {
				continue
			}
			all, strict := true, false
			for _, o := range p.Objectives {
				a, _ := value(&r.Trials[j], o.Metric)
				b, _ := value(&r.Trials[i], o.Metric)
				if better(b, a, o) {
					all = false
				}
				if better(a, b, o) {
					strict = true
				}
			}
			if all && strict {
				dominated = true
				break
			}
		}
		if !dominated {
			r.Pareto = append(r.Pareto, i)
		}
	}
	slices.SortStableFunc(r.Pareto, func(a, b int) int {
		va, _ := value(&r.Trials[a], o.Metric)
		vb, _ := value(&r.Trials[b], o.Metric)
		switch {
		case va < vb:
			return -1
		case va > vb:
			return 1
		}
		return 0
	})
}

// levelOf is the boundary level of a measurement: the worst ratio of a
// constraint's metric to its threshold, oriented so the constraint
// holds at ≤ 1 (metric/threshold for an upper limit, threshold/metric
// for a lower one). A missing metric, or a lower limit met by a metric
// ≤ 0, counts as failing (+Inf).
func (p *Problem) levelOf(m Measurement) float64 {
	worst := 0.0
	for _, c := range p.Constraints {
		v, ok := m.Metrics[c.Metric]
		if !ok || math.IsNaN(v) || math.IsInf(v, 0) {
			return math.Inf(1)
		}
		r := v / c.Threshold
		if !c.upper() {
			r = c.Threshold / v
			if v <= 0 {
				r = math.Inf(1)
			}
		}
		if c.Threshold <= 0 {
			// A limit at or below zero has no ratio: pass or fail.
			r = map[bool]float64{true: 0, false: math.Inf(1)}[c.Holds(v)]
		}
		worst = max(worst, r)
	}
	return worst
}

// monotone1D reports whether the problem is the one-setting monotone
// search: Monotone set, one dimension, one objective, and constraints
// whose boundary is the answer.
func (p *Problem) monotone1D() bool {
	return p.Monotone && len(p.Space) == 1 && len(p.Objectives) == 1 && len(p.Constraints) > 0
}

// optimizeMonotone is [Optimize] of a one-setting monotone problem:
// every constraint's metric moves one way as the setting rises (latency
// does not fall as load rises), so the feasible settings are an
// interval starting at the range's low end and the answer is its top.
// The search is [searchBoundary]'s loop with a Gaussian process
// choosing the probes ([bstate.posterior]); its initial design is the
// range's two ends, which alone decide a problem whose whole range
// passes or fails.
func optimizeMonotone(ctx context.Context, p *Problem, probe ProbeFunc) (*Result, error) {
	dim := p.Space[0]
	res := &Result{Best: -1}
	c := BoundaryConfig{Lo: dim.Lo, Hi: dim.Hi, Int: dim.Kind == KindInt, Precision: p.Tolerance,
		MaxProbes: p.MaxIterations, ViolationTolerance: DefaultViolationTolerance, MaxInvalid: 2}
	if c.Precision <= 0 {
		c.Precision = DefaultTolerance
	}
	if err := c.validate(); err != nil {
		return nil, fmt.Errorf("search: %w", err)
	}
	level := func(ctx context.Context, x float64) (Level, error) {
		m, err := probe(ctx, []float64{x})
		if err != nil {
			return Level{}, err
		}
		t := Trial{X: []float64{x}, Measurement: m}
		t.Feasible = p.feasible(&t)
		res.Trials = append(res.Trials, t)
		return Level{Ratio: p.levelOf(m), Valid: m.Valid, Note: m.Note}, nil
	}
	b, err := searchBoundaryWith(ctx, &c, level, (*bstate).posterior, (*bstate).flat)
	if b == nil {
		return res, err
	}
	for i := range res.Trials {
		if i < len(b.Probes) {
			res.Trials[i].Why = b.Probes[i].Why
		}
	}
	res.Violations = b.Violations
	res.Stopped = boundaryStopped(b, &c)
	p.conclude(res)
	return res, err
}

// boundaryStopped says why a monotone search ended.
func boundaryStopped(b *Boundary, c *BoundaryConfig) string {
	switch {
	case b.Stopped != "":
		return b.Stopped
	case b.Unmeasurable > 0:
		return fmt.Sprintf("the setting %s could not be measured (%d invalid probes in a row)", fmtX(b.Unmeasurable), c.MaxInvalid+1)
	case b.Value == 0 && b.Above == c.Lo:
		return fmt.Sprintf("the lowest setting %s fails the constraints; the metric does not fall as the setting rises, so no setting meets them", fmtX(c.Lo))
	case b.Value == c.Hi:
		return fmt.Sprintf("the highest setting %s meets the constraints, so every setting does", fmtX(c.Hi))
	case b.Converged:
		return fmt.Sprintf("the answer lies in [%s, %s), within the tolerance %g", fmtX(b.Value), fmtX(b.Above), c.Precision)
	case len(b.Probes) >= c.MaxProbes:
		return fmt.Sprintf("max iterations (%d)", c.MaxProbes)
	}
	return "no setting is left between the bracket's ends"
}
