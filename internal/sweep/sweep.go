package sweep

import (
	"bytes"
	"cmp"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"log/slog"
	"os"
	"path/filepath"
	"slices"

	"github.com/reprise-bench/reprise/engine/summary"
)

// Run sweeps cfg's grid (or searches, with cfg.Find) into cfg.Dir:
// every point a run directory under points/, sweep.json rewritten after
// each point, and at the end sweep.parquet. Points whose directory holds
// a complete run are read instead of run again, so running the same plan
// again resumes an interrupted sweep and gives the same table. A
// cancelled ctx ends the current point as an interrupted run
// ([reprise.Run]) and the sweep with Result.Interrupted; a failed
// before-point command or a run error ends it with the error.
func Run(ctx context.Context, cfg Config) (*Result, error) {
	s, err := newSweeper(cfg)
	if err != nil {
		return nil, err
	}
	switch {
	case cfg.Find != nil:
		err = s.find(ctx)
	case cfg.Recipe != nil:
		err = s.recipe(ctx)
	case cfg.Search != nil:
		err = s.optimize(ctx)
	default:
		err = s.grid(ctx)
	}
	if err2 := s.finish(); err == nil {
		err = err2
	}
	return s.res, err
}

func newSweeper(cfg Config) (*sweeper, error) {
	var errs []error
	if cfg.Dir == "" {
		errs = append(errs, errors.New("no directory (Dir)"))
	}
	searches := 0
	for _, on := range []bool{cfg.Find != nil, cfg.Recipe != nil, cfg.Search != nil} {
		if on {
			searches++
		}
	}
	if searches > 1 {
		errs = append(errs, errors.New("give one of Find, Recipe and Search"))
	}
	if searches == 0 && len(cfg.Axes) == 0 && len(cfg.Points) == 0 {
		errs = append(errs, errors.New("nothing to sweep: no swept settings (Axes) or Points"))
	}
	if len(cfg.Axes) > 0 && len(cfg.Points) > 0 {
		errs = append(errs, errors.New("give Axes or Points, not both"))
	}
	seenAxis := map[string]bool{}
	for _, a := range cfg.Axes {
		if seenAxis[a.Name] {
			errs = append(errs, fmt.Errorf("setting %s swept twice", a.Name))
		}
		seenAxis[a.Name] = true
	}
	seenPoint := map[string]bool{}
	for _, p := range cfg.Points {
		if seenPoint[p.Name()] {
			errs = append(errs, fmt.Errorf("point %s planned twice", p.Name()))
		}
		seenPoint[p.Name()] = true
		for _, n := range p.Names {
			if !known(n) {
				errs = append(errs, fmt.Errorf("point %s: %q is not a setting a sweep can vary", p.Name(), n))
			}
		}
	}
	if searches > 0 && (len(cfg.Axes) > 0 || len(cfg.Points) > 0) {
		errs = append(errs, errors.New("a search takes no Axes or Points"))
	}
	if cfg.Recipe != nil {
		errs = append(errs, cfg.Recipe.validate())
	}
	if cfg.Search != nil {
		errs = append(errs, cfg.Search.validate(), cfg.Search.Planner.validate(cfg.Search.monotone(), len(cfg.Search.Objectives), cfg.Runs.Runs))
	}
	if cfg.Find != nil {
		errs = append(errs, cfg.Find.validate(&cfg.Base))
	}
	if err := errors.Join(errs...); err != nil {
		return nil, fmt.Errorf("%w: %w", ErrInvalidConfig, err)
	}
	if cfg.Runs.Level <= 0 || cfg.Runs.Level >= 1 {
		cfg.Runs.Level = summary.DefaultConfidenceLevel
	}
	cfg.Runs.Runs = max(cfg.Runs.Runs, 1)
	plan := Plan{Kind: "grid", Axes: cfg.Axes, Find: cfg.Find, Base: baseInfo(&cfg.Base), Runs: cfg.Runs.Runs,
		UntilCI: cfg.Runs.UntilCI, ConvergenceMetric: cfg.Runs.ConvergenceMetric, ConvergenceThreshold: cfg.Runs.ConvergenceThreshold,
		ConvergenceMode: cfg.Runs.ConvergenceMode, WarmupOnce: cfg.Runs.WarmupOnce, Level: cfg.Runs.Level, FreshPromptSeed: cfg.FreshPromptSeed, BeforePoint: cfg.BeforePoint, Stop: cfg.Stop,
		Planned: cfg.Points, PointsDir: cfg.PointsDir, CooldownNS: int64(cfg.Cooldown), Recipe: cfg.Recipe, Search: cfg.Search}
	switch {
	case cfg.Find != nil:
		plan.Kind = "find"
	case cfg.Recipe != nil:
		plan.Kind = "recipe"
	case cfg.Search != nil:
		plan.Kind = "search"
	}
	if err := os.MkdirAll(filepath.Join(cfg.Dir, cfg.pointsDir()), 0o755); err != nil {
		return nil, fmt.Errorf("sweep directory: %w", err)
	}
	mpath := filepath.Join(cfg.Dir, ManifestFile)
	if b, err := os.ReadFile(mpath); err == nil {
		var old Manifest
		if err := json.Unmarshal(b, &old); err != nil {
			return nil, fmt.Errorf("read %s: %w", mpath, err)
		}
		ob, _ := json.Marshal(old.Plan)
		nb, _ := json.Marshal(plan)
		// A sweep that measured nothing (its first point failed: a
		// missing trace, a dead server) holds nothing to resume, so it does
		// not keep a corrected command out of its directory.
		if !bytes.Equal(ob, nb) && old.measured() {
			return nil, fmt.Errorf("%w (%s): %s; give the same settings to resume it, or a new directory", ErrPlanChanged, mpath, planDiff(old.Plan, plan))
		}
	} else if !errors.Is(err, os.ErrNotExist) {
		return nil, err
	}
	if cfg.Design != nil {
		if err := writeJSON(filepath.Join(cfg.Dir, DesignFile), cfg.Design); err != nil {
			return nil, err
		}
	}
	log := cfg.Log
	if log == nil {
		log = slog.New(slog.DiscardHandler)
	}
	s := &sweeper{cfg: cfg, log: log, res: &Result{Manifest: Manifest{SchemaVersion: SchemaVersion, Plan: plan}}}
	if searches == 0 {
		for _, p := range cfg.planned() {
			s.res.Points = append(s.res.Points, s.status(p))
		}
	}
	return s, nil
}

// planDiff names the first top-level field of sweep.json's plan that
// differs.
func planDiff(a, b Plan) string {
	var ma, mb map[string]json.RawMessage
	ab, _ := json.Marshal(a)
	bb, _ := json.Marshal(b)
	json.Unmarshal(ab, &ma)
	json.Unmarshal(bb, &mb)
	for _, k := range []string{"kind", "axes", "find", "planned", "points_dir", "cooldown_ns", "recipe", "search_plan", "base", "runs",
		"until_ci", "warmup_once", "confidence_level", "fresh_prompt_seed", "before_point", "stop"} {
		if !bytes.Equal(ma[k], mb[k]) {
			return fmt.Sprintf("%s was %s, is now %s", k, orNone(ma[k]), orNone(mb[k]))
		}
	}
	return "the plan differs"
}

func orNone(b json.RawMessage) string {
	if len(b) == 0 {
		return "(none)"
	}
	return string(b)
}

// grid runs the points in order, applying the stop conditions along the
// last axis.
func (s *sweeper) grid(ctx context.Context) error {
	points := s.cfg.planned()
	inner := len(points)
	if len(s.cfg.Points) == 0 {
		inner = len(s.cfg.Axes[len(s.cfg.Axes)-1].Values)
	}
	sloFails := 0
	stopped := ""
	for i, p := range points {
		if i%inner == 0 {
			sloFails, stopped = 0, ""
		}
		st := &s.res.Points[i]
		if stopped != "" {
			st.Status, st.Reason = StatusSkipped, "after "+stopped
			continue
		}
		if i > 0 && s.cfg.Cooldown > 0 && !s.pointDone(st) {
			if err := pause(ctx, s.cfg.Cooldown); err != nil {
				s.res.Interrupted = true
				s.markRest(i)
				return s.save()
			}
		}
		row, err := s.point(ctx, p, st)
		if err != nil || s.res.Interrupted {
			s.markRest(i + 1)
			return err
		}
		if reason := s.stopReason(row, &sloFails); reason != "" {
			st.Reason = reason
			stopped = st.Name + " (" + reason + ")"
			s.res.Stops = append(s.res.Stops, st.Name+": "+reason)
		}
		if err := s.save(); err != nil {
			return err
		}
	}
	return nil
}

// pointDone reports whether the point's directory holds its complete
// run(s).
func (s *sweeper) pointDone(st *PointStatus) bool {
	dir := filepath.Join(s.cfg.Dir, st.Dir)
	if s.cfg.Runs.multi() {
		return repeatComplete(dir)
	}
	return runComplete(dir)
}

// markRest leaves the points from i on pending (an interrupted sweep).
func (s *sweeper) markRest(i int) {
	for ; i < len(s.res.Points); i++ {
		if s.res.Points[i].Status != StatusDone {
			s.res.Points[i].Status = StatusPending
		}
	}
}

// stopReason applies the stop conditions to a measured row, counting
// consecutive SLO failures in sloFails; "" when the sweep goes on.
func (s *sweeper) stopReason(r *Row, sloFails *int) string {
	c := s.cfg.Stop
	if !r.SLOMet {
		*sloFails++
	} else {
		*sloFails = 0
	}
	switch {
	case c.MaxErrorRate < 1 && r.ErrorRate > c.MaxErrorRate:
		return fmt.Sprintf("error rate %.4f > %v", r.ErrorRate, c.MaxErrorRate)
	case c.OnSaturation && r.Saturated:
		return "saturated: " + satText(&r.Saturation)
	case c.SLOFailures > 0 && *sloFails >= c.SLOFailures:
		return fmt.Sprintf("SLO failed at %d consecutive points", *sloFails)
	}
	return ""
}

func satText(s *Saturation) string {
	out := ""
	for i, r := range s.Reasons {
		if i > 0 {
			out += ", "
		}
		switch r {
		case "rate":
			out += fmt.Sprintf("completions at %.0f%% of the intended rate", 100*s.RateRatio)
		case "backlog":
			out += fmt.Sprintf("backlog growing by %.3g requests/s", s.BacklogSlope)
		case "ttft_rising":
			out += fmt.Sprintf("TTFT rising from %.3g to %.3g ms", s.TTFTFirst, s.TTFTLast)
		}
	}
	return out
}

// finish computes the Pareto front and knee, writes sweep.json and
// sweep.parquet and prints the closing lines.
func (s *sweeper) finish() error {
	if f := s.cfg.Find; f != nil {
		// A search's probes ran in search order; its table is in load
		// order, the tries at one load in the order they ran.
		slices.SortStableFunc(s.res.Rows, func(a, b Row) int { return cmp.Compare(a.Settings[f.Setting], b.Settings[f.Setting]) })
		for i := range s.res.Rows {
			s.line(&s.res.Rows[i], s.findNote(s.res.Rows[i].Point))
		}
	}
	front := Pareto(s.res.Rows)
	for _, i := range front {
		s.res.Pareto = append(s.res.Pareto, s.res.Rows[i].Point)
	}
	if k := Knee(s.res.Rows, front); k >= 0 {
		s.res.Knee = s.res.Rows[k].Point
	}
	s.aggregateTrials()
	err := s.save()
	if perr := writeParquet(filepath.Join(s.cfg.Dir, TableFile), s.res.Plan.axisNames(), s.res.Rows); err == nil {
		err = perr
	}
	s.closing()
	return err
}
