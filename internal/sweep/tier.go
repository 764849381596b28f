package sweep

import (
	"context"
	"errors"
	"fmt"
	"strings"

	isearch "github.com/reprise-bench/reprise/internal/search"
)

// searchTiers runs one monotone boundary search per tier, in order,
// over one cache of measurements: a tier's n-th probe at a load that an
// earlier tier probed n times or more reads that measurement instead of
// running the load again (the range's ends always, and the loads the
// tiers share), so the tiers cost fewer probes than separate searches.
func (s *sweeper) searchTiers(ctx context.Context) error {
	c := s.cfg.Search
	res := &SearchResult{Kind: "multi-tier"}
	s.res.Search = res
	name := c.Space[0].Name
	conv := func(m string) string { k, _ := metricKey(m); return k }
	keys := []string{conv(c.Objectives[0].Metric)}
	for _, t := range c.Tiers {
		for _, k := range append(t.Constraints, c.Constraints...) {
			keys = append(keys, conv(k.Metric))
		}
	}
	measured := map[float64][]int{} // indices into res.Probes by load
	var texts []string
	var err error
	for _, t := range c.Tiers {
		var tr TierResult
		tr, err = s.searchTier(ctx, t, name, keys, measured)
		res.Tiers = append(res.Tiers, tr)
		texts = append(texts, tr.Text)
		if err != nil {
			break
		}
	}
	for i, t := range c.Tiers {
		if i < len(res.Tiers) {
			contradict(&res.Tiers[i], s.tierConstraints(t), res.Probes, name)
			texts[i] = res.Tiers[i].Text
		}
	}
	for _, pr := range res.Probes {
		if pr.Valid {
			res.Valid++
		} else {
			res.Invalid++
		}
	}
	if len(res.Tiers) > 0 {
		res.Setting, res.Value, res.Above, res.Converged = name, res.Tiers[0].Value, res.Tiers[0].Above, res.Tiers[0].Converged
	}
	res.Text = fmt.Sprintf("multi-tier search: %d probes over %d tiers: %s", len(res.Probes), len(res.Tiers), strings.Join(texts, "; "))
	if w := s.cfg.Table; w != nil {
		fmt.Fprintln(w, res.Text)
	}
	if errors.Is(err, errInterrupted) {
		err = nil
	}
	return err
}

// tierConstraints are t's filters with the ones every tier shares, as
// the search compares them (metric keys converted).
func (s *sweeper) tierConstraints(t Tier) []isearch.Constraint {
	var out []isearch.Constraint
	for _, k := range append(t.Constraints, s.cfg.Search.Constraints...) {
		m, _ := metricKey(k.Metric)
		out = append(out, isearch.Constraint{Metric: m, Op: k.Op, Threshold: k.Threshold})
	}
	return out
}

// contradict checks a tier's answer against every valid probe of the run,
// the other tiers' included: a load at or below the answer that failed
// the tier's filters, or one above the failing load that met them, means
// the server did not answer monotonically across probes (noise, or a
// server that changed), so the answer is not known and the tier says so
// instead of trusting either measurement.
func contradict(tr *TierResult, cs []isearch.Constraint, probes []SearchProbe, name string) {
	for _, pr := range probes {
		x := pr.Settings[name]
		if !pr.Valid {
			continue
		}
		failed := ""
		for _, k := range cs {
			if v, ok := pr.Metrics[k.Metric]; ok && !k.Holds(v) {
				failed = fmt.Sprintf("%s = %.4g, beyond this tier's %s %g", k.Metric, v, k.Op, k.Threshold)
				break
			}
		}
		var why string
		switch {
		case failed != "" && tr.Value > 0 && x <= tr.Value:
			why = fmt.Sprintf("%s %s (%s) measured %s, at or below the answer", name, formatValue(x), pr.Point, failed)
		case failed == "" && tr.Above > 0 && x > tr.Above:
			why = fmt.Sprintf("%s %s (%s) met the tier's filters, above the failing %s", name, formatValue(x), pr.Point, formatValue(tr.Above))
		default:
			continue
		}
		tr.Converged = false
		tr.CannotTell = why + ": the measurements are not monotone in load; rerun the search on a quieter client or server"
		tr.Text += "; cannot tell: " + tr.CannotTell
		return
	}
}

// searchTier is one tier's search of [sweeper.searchTiers].
func (s *sweeper) searchTier(ctx context.Context, t Tier, name string, keys []string, measured map[float64][]int) (TierResult, error) {
	c := s.cfg.Search
	res := s.res.Search
	conv := func(m string) string { k, _ := metricKey(m); return k }
	p := isearch.NewProblem(c.Space, []isearch.Objective{{Metric: keys[0], Maximize: true}})
	for _, k := range append(t.Constraints, c.Constraints...) {
		p.Constraints = append(p.Constraints, isearch.Constraint{Metric: conv(k.Metric), Op: k.Op, Threshold: k.Threshold})
	}
	p.MaxIterations, p.InitialPoints, p.Seed, p.Monotone = c.MaxIterations, c.InitialPoints, c.Seed, true
	tr := TierResult{Label: t.Label}
	uses := map[float64]int{}
	var fresh []int // this tier's new probes, by trial
	out, err := isearch.Optimize(ctx, p, func(ctx context.Context, x []float64) (isearch.Measurement, error) {
		n := uses[x[0]]
		uses[x[0]]++
		tr.Probes++
		if n < len(measured[x[0]]) {
			tr.Reused++
			fresh = append(fresh, -1)
			pr := res.Probes[measured[x[0]][n]]
			return isearch.Measurement{Metrics: pr.Metrics, Valid: pr.Valid, Note: strings.Join(pr.Reasons, "; ")}, nil
		}
		pr, err := s.probe(ctx, []string{name}, x, "", keys)
		if err != nil {
			return isearch.Measurement{}, err
		}
		measured[x[0]] = append(measured[x[0]], len(res.Probes))
		fresh = append(fresh, len(res.Probes))
		res.Probes = append(res.Probes, *pr)
		return isearch.Measurement{Metrics: pr.Metrics, Valid: pr.Valid, Note: strings.Join(pr.Reasons, "; ")}, nil
	})
	if out == nil {
		return tr, err
	}
	for i, tl := range out.Trials {
		if i < len(fresh) && fresh[i] >= 0 {
			res.Probes[fresh[i]].Why, res.Probes[fresh[i]].Pass = t.Label+": "+tl.Why, tl.Feasible
		}
	}
	tr.Stopped = out.Stopped
	tr.Value, tr.Above = tierBracket(out.Trials)
	d := c.Space[0]
	tr.Converged = tr.Above == 0 && tr.Value == d.Hi || tr.Above == d.Lo ||
		tr.Value > 0 && tr.Above > 0 && (tr.Above/tr.Value-1 <= isearch.DefaultTolerance || d.Kind == isearch.KindInt && tr.Above-tr.Value <= 1)
	tr.Text = fmt.Sprintf("%s: %s %s", t.Label, name, formatValue(tr.Value))
	if tr.Above > 0 {
		tr.Text += fmt.Sprintf(" (fails at %s)", formatValue(tr.Above))
	}
	tr.Text += fmt.Sprintf(", %d probes (%d reused)", tr.Probes, tr.Reused)
	if !tr.Converged && tr.Stopped != "" {
		tr.Text += "; not converged: " + tr.Stopped
	}
	return tr, err
}

// tierBracket is a tier's answer from its trials: the lowest valid load
// that failed (above; 0: none) and the largest that met the tier below
// it (value; 0: none).
func tierBracket(trials []isearch.Trial) (value, above float64) {
	for _, t := range trials {
		if t.Valid && !t.Feasible && (above == 0 || t.X[0] < above) {
			above = t.X[0]
		}
	}
	for _, t := range trials {
		if t.Feasible && (above == 0 || t.X[0] < above) {
			value = max(value, t.X[0])
		}
	}
	return value, above
}
