package sweep

import (
	"context"
	"errors"
	"fmt"
	"slices"
	"strings"

	isearch "github.com/reprise-bench/reprise/internal/search"
)

// recipe runs cfg.Recipe.
func (s *sweeper) recipe(ctx context.Context) error {
	r := s.cfg.Recipe
	res := &SearchResult{Kind: r.Name}
	s.res.Search = res
	var err error
	if r.boundary() {
		err = s.boundaryRecipe(ctx, r, res)
	} else {
		err = s.lineRecipe(ctx, r, res)
	}
	if errors.Is(err, errInterrupted) {
		err = nil
	}
	for _, p := range res.Probes {
		if p.Valid {
			res.Valid++
		} else {
			res.Invalid++
		}
	}
	if w := s.cfg.Table; w != nil && res.Text != "" {
		fmt.Fprintln(w, res.Text)
	}
	return err
}

func (s *sweeper) boundaryRecipe(ctx context.Context, r *RecipeConfig, res *SearchResult) error {
	slas := r.slas()
	var keys []string
	for k := range slas {
		keys = append(keys, k)
	}
	slices.Sort(keys)
	lat := r.key("request_latency")
	keys = append(keys, lat)
	baseline := 0.0
	level := func(ctx context.Context, x float64) (isearch.Level, error) {
		pr, err := s.probe(ctx, []string{Concurrency}, []float64{x}, "", keys)
		if err != nil {
			return isearch.Level{}, err
		}
		ratio := 0.0
		for k, lim := range slas {
			ratio = max(ratio, pr.Metrics[k]/lim)
		}
		switch r.Name {
		case RecipeMaxGoodput:
			ratio = max(ratio, r.SLOAttainment/max(pr.Metrics["good_request_fraction"], 1e-9))
		case RecipeConcurrencyRamp:
			// The baseline is the first valid probe's: an invalid one
			// (the client fell behind its schedule) measured the client.
			if baseline == 0 && pr.Valid {
				baseline = pr.Metrics[lat]
			}
			if baseline > 0 {
				ratio = max(ratio, pr.Metrics[lat]/((1+r.Degradation)*baseline))
			}
		}
		pr.Level, pr.Pass = ratio, pr.Valid && ratio <= 1
		res.Probes = append(res.Probes, *pr)
		return isearch.Level{Ratio: ratio, Valid: pr.Valid, Note: strings.Join(pr.Reasons, "; ")}, nil
	}
	bc := isearch.NewBoundaryConfig(r.ConcurrencyMin, r.ConcurrencyMax, true)
	bc.Precision, bc.MaxProbes = r.Precision, r.MaxProbes
	b, err := isearch.SearchBoundaryModel(ctx, bc, level)
	if b == nil {
		return err
	}
	// The boundary search names why it probed; copy that to the probes.
	for i := range res.Probes {
		if i < len(b.Probes) {
			res.Probes[i].Why = b.Probes[i].Why
		}
	}
	res.Setting, res.Value, res.Above, res.Converged, res.Violations = Concurrency, b.Value, b.Above, b.Converged, b.Violations
	res.Stopped = b.Stopped
	// The answer's metrics: the last valid passing probe at Value.
	for _, p := range res.Probes {
		if p.Settings[Concurrency] == b.Value && p.Pass {
			res.Metrics = p.Metrics
		}
	}
	res.Text = s.boundaryText(r, res, b)
	return err
}

func (s *sweeper) boundaryText(r *RecipeConfig, res *SearchResult, b *isearch.Boundary) string {
	var slas []string
	for k, v := range r.slas() {
		slas = append(slas, fmt.Sprintf("%s ≤ %v", k, v))
	}
	slices.Sort(slas)
	under := ""
	if len(slas) > 0 {
		under = " under " + strings.Join(slas, ", ")
	}
	t := r.Name + ": "
	if b.Unmeasurable > 0 {
		res.Unmeasurable = b.Unmeasurable
		n, why := invalidAt(res.Probes, b.Unmeasurable)
		res.CannotTell = fmt.Sprintf("concurrency %s could not be measured on this machine: the client did not drive it faithfully in %d tries (%s)",
			formatValue(b.Unmeasurable), n, why)
	}
	switch {
	case res.Value == 0 && res.CannotTell != "":
		res.Converged = false
		return t + "cannot tell: no tested load met the SLAs" + under + "; " + res.CannotTell + fmt.Sprintf("; %d probes", len(b.Probes))
	case res.Value == 0:
		return t + fmt.Sprintf("no tested load met the SLAs%s: concurrency %s, the lowest, failed; %d probes", under, formatValue(r.ConcurrencyMin), len(b.Probes))
	}
	t += s.answerText(r, res) + under
	switch {
	case res.Above > 0:
		t += fmt.Sprintf("; the boundary lies in [%s, %s)", formatValue(res.Value), formatValue(res.Above))
	case res.CannotTell != "":
		res.Converged = false
		t += fmt.Sprintf("; cannot tell above it: %s", res.CannotTell)
	default:
		t += fmt.Sprintf("; every concurrency up to --concurrency-max %s met it", formatValue(r.ConcurrencyMax))
	}
	if res.Above > 0 && res.CannotTell != "" {
		t += "; cannot tell it closer: " + res.CannotTell
	}
	t += fmt.Sprintf("; %d probes", len(b.Probes))
	if b.Stopped != "" {
		t += "; cannot tell the boundary closer: " + b.Stopped
	}
	if len(b.Violations) > 0 {
		t += "; monotonicity violated: " + strings.Join(b.Violations, "; ")
	}
	return t
}

// answerText says a boundary recipe's answer at res.Value.
func (s *sweeper) answerText(r *RecipeConfig, res *SearchResult) string {
	switch r.Name {
	case RecipeMaxThroughputTTFT, RecipeMaxThroughputITL:
		return fmt.Sprintf("max output throughput %.4g tokens/s at concurrency %s", res.Metrics["output_token_throughput"], formatValue(res.Value))
	case RecipeMaxGoodput:
		return fmt.Sprintf("max goodput %.4g requests/s at concurrency %s (≥ %v of requests met %q)", res.Metrics["goodput"], formatValue(res.Value), r.SLOAttainment, s.cfg.Base.Goodput)
	case RecipeConcurrencyRamp:
		return fmt.Sprintf("degradation knee at concurrency %s (request latency %s within %v× of concurrency %s's)", formatValue(res.Value), r.Stat, 1+r.Degradation, formatValue(r.ConcurrencyMin))
	}
	return fmt.Sprintf("max concurrency %s", formatValue(res.Value))
}

// invalidAt counts the invalid probes at concurrency x and gives the
// last one's reasons.
func invalidAt(probes []SearchProbe, x float64) (n int, why string) {
	why = "no reason recorded"
	for _, p := range probes {
		if p.Settings[Concurrency] == x && !p.Valid {
			n++
			if len(p.Reasons) > 0 {
				why = strings.Join(p.Reasons, "; ")
			}
		}
	}
	return n, why
}

func (s *sweeper) lineRecipe(ctx context.Context, r *RecipeConfig, res *SearchResult) error {
	ttft, itl := r.key("time_to_first_token"), r.key("inter_token_latency")
	keys := []string{ttft, itl, r.key("request_latency")}
	if r.Name == RecipePrefillTTFT || r.Name == RecipeDecodeITL {
		keys = append(keys, "time_to_first_token.std", "inter_token_latency.std")
	}
	run := func(names []string, values []float64, why string) (*SearchProbe, error) {
		pr, err := s.probe(ctx, names, values, why, keys)
		if err != nil {
			return nil, err
		}
		pr.Pass = pr.Valid
		res.Probes = append(res.Probes, *pr)
		return pr, nil
	}
	switch r.Name {
	case RecipePrefillTTFT, RecipeDecodeITL:
		return s.curve(r, res, run, ttft, itl)
	case RecipeParetoSweep:
		for _, pair := range r.Pairs {
			for _, c := range geomspace(r.ConcurrencyMin, r.ConcurrencyMax, r.ConcurrencySteps) {
				if _, err := run([]string{ISL, OSL, Concurrency}, []float64{pair[0], pair[1], c}, "step"); err != nil {
					return err
				}
			}
		}
		var rows []Row
		var names []string
		for _, st := range s.res.Points {
			if st.Row != nil {
				rows, names = append(rows, *st.Row), append(names, st.Name)
			}
		}
		for _, i := range Pareto(rows) {
			res.Pareto = append(res.Pareto, names[i])
		}
		res.Converged = true
		res.Text = fmt.Sprintf("%s: %d points over %d ISL/OSL pairs; Pareto front (output tokens/s against p99 request latency): %s",
			r.Name, len(res.Probes), len(r.Pairs), strings.Join(res.Pareto, ", "))
	}
	return nil
}

// optimize runs cfg.Search.
func (s *sweeper) optimize(ctx context.Context) error {
	c := s.cfg.Search
	if len(c.Tiers) > 0 {
		return s.searchTiers(ctx)
	}
	res := &SearchResult{Kind: "model-based"}
	s.res.Search = res
	names := make([]string, len(c.Space))
	for i, d := range c.Space {
		names[i] = d.Name
	}
	// The search package names metrics TAG:STAT; summary TAG.STAT.
	var keys []string
	conv := func(m string) string { k, _ := metricKey(m); return k }
	p := isearch.NewProblem(c.Space, nil)
	for _, o := range c.Objectives {
		keys = append(keys, conv(o.Metric))
		p.Objectives = append(p.Objectives, isearch.Objective{Metric: conv(o.Metric), Maximize: o.Maximize})
	}
	for _, k := range c.Constraints {
		keys = append(keys, conv(k.Metric))
		p.Constraints = append(p.Constraints, isearch.Constraint{Metric: conv(k.Metric), Op: k.Op, Threshold: k.Threshold})
	}
	p.MaxIterations, p.InitialPoints, p.Seed = c.MaxIterations, c.InitialPoints, c.Seed
	p.Monotone = c.monotone()
	out, err := isearch.Optimize(ctx, p, func(ctx context.Context, x []float64) (isearch.Measurement, error) {
		pr, err := s.probe(ctx, names, x, "", keys)
		if err != nil {
			return isearch.Measurement{}, err
		}
		res.Probes = append(res.Probes, *pr)
		return isearch.Measurement{Metrics: pr.Metrics, Valid: pr.Valid, Note: strings.Join(pr.Reasons, "; ")}, nil
	})
	if out != nil {
		for i, t := range out.Trials {
			if i < len(res.Probes) {
				res.Probes[i].Why, res.Probes[i].Pass = t.Why, t.Feasible
			}
		}
		res.Stopped, res.Violations = out.Stopped, out.Violations
		if out.Best >= 0 && out.Best < len(res.Probes) {
			b := res.Probes[out.Best]
			res.Metrics, res.Converged = b.Metrics, true
			if len(names) == 1 {
				res.Setting, res.Value = names[0], b.Settings[names[0]]
			}
		}
		for _, i := range out.Pareto {
			if i < len(res.Probes) {
				res.Pareto = append(res.Pareto, res.Probes[i].Point)
			}
		}
		for _, pr := range res.Probes {
			if pr.Valid {
				res.Valid++
			} else {
				res.Invalid++
			}
		}
		res.Text = fmt.Sprintf("search: %d probes (%d valid); stopped: %s", len(res.Probes), res.Valid, out.Stopped)
		if res.Invalid > 0 {
			res.Text += fmt.Sprintf("; %d probes not used: the client did not drive them faithfully (their reasons in sweep.json)", res.Invalid)
		}
		if out.Best >= 0 && out.Best < len(res.Probes) {
			b := res.Probes[out.Best]
			res.Text += fmt.Sprintf("; best %s: %s = %.4g", b.Point, keys[0], b.Metrics[keys[0]])
		} else {
			res.Text += "; no probe met every --search-sla"
		}
		if len(res.Pareto) > 1 {
			res.Text += "; Pareto front: " + strings.Join(res.Pareto, ", ")
		}
		if len(res.Violations) > 0 {
			res.Text += "; monotonicity violated: " + strings.Join(res.Violations, "; ")
		}
		if w := s.cfg.Table; w != nil {
			fmt.Fprintln(w, res.Text)
		}
	}
	if errors.Is(err, errInterrupted) {
		err = nil
	}
	return err
}
