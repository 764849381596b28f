package sweep

import (
	"bytes"
	"cmp"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"log/slog"
	"net/url"
	"os"
	"os/exec"
	"path/filepath"
	"slices"
	"time"

	"github.com/reprise-bench/reprise"
	"github.com/reprise-bench/reprise/engine/summary"
	isearch "github.com/reprise-bench/reprise/internal/search"
)

// Files of a sweep directory.
const (
	// ManifestFile is the sweep manifest: the plan, each point's status
	// and row, the stop, the Pareto front and knee, the search result.
	ManifestFile = "sweep.json"
	// TableFile is the sweep table as Parquet, one row per measured
	// point.
	TableFile = "sweep.parquet"
	// PointsDir holds one directory per point, named by its settings.
	PointsDir = "points"
	// BeforePointLog is the output of Config.BeforePoint in a point's
	// directory.
	BeforePointLog = "before-point.log"
)

// SchemaVersion is the version of sweep.json and sweep.parquet
// (docs/format/sweep.md).
const SchemaVersion = "3"

// Defaults of [NewConfig].
const (
	// DefaultSLOFailures stops a sweep after two consecutive points that
	// failed the goodput SLOs: one may be noise, two are a trend.
	DefaultSLOFailures = 2
	// DefaultStopErrorRate stops a sweep after a point in which more than
	// 5 % of the requests failed (as reprise.DefaultMaxErrorRate).
	DefaultStopErrorRate = reprise.DefaultMaxErrorRate
	// maxBeforePointOutput bounds the kept output of a before-point
	// command.
	maxBeforePointOutput = 1 << 20
)

// Point statuses in sweep.json.
const (
	StatusPending     = "pending"     // not run yet
	StatusDone        = "done"        // measured
	StatusInterrupted = "interrupted" // the sweep was interrupted during it
	StatusSkipped     = "skipped"     // not run: a stop condition ended its line of the sweep
	StatusFailed      = "failed"      // the before-point command or the run failed
)

// StopConfig says when a sweep stops before its last point. With two
// axes a stop ends the sweep of the second axis for the current value of
// the first, which then goes on with its next value.
type StopConfig struct {
	// SaturationTolerance is the tolerance of the rate and backlog
	// saturation checks (docs/format/sweep.md); 0 turns every saturation
	// check off.
	SaturationTolerance float64 `json:"saturation_tolerance"`
	// OnSaturation stops after the first saturated point.
	OnSaturation bool `json:"on_saturation"`
	// SLOFailures stops after this many consecutive points that failed
	// the goodput SLOs (0 = never).
	SLOFailures int `json:"slo_failures"`
	// MaxErrorRate stops after a point whose error rate is above it
	// (≥ 1 = never).
	MaxErrorRate float64 `json:"max_error_rate"`
}

// Config configures a sweep or a boundary search.
type Config struct {
	// Base is the replay every point starts from; each point sets its
	// axes' settings, its run directory and (with FreshPromptSeed) its
	// prompt seed. Base.Output.Dir and Base.Progress are ignored;
	// Base.OnStart is called at the start of every run.
	Base reprise.Options
	// Dir is the sweep directory (created; an earlier sweep of the same
	// plan in it is resumed).
	Dir string
	// Axes are the swept settings (any number) of a grid sweep; a
	// search has none and uses Find, Recipe or Search.
	Axes []Axis
	// Points, when not empty, are the points to run, in order, instead
	// of the grid of Axes (a zip, variant or sampled sweep, or a grid
	// with AIPerf's names: [ExpandProfile]). A stop condition then ends
	// the rest of the points.
	Points []Point
	// PointsDir is the directory of the points, relative to Dir:
	// [PointsDir] ("points") when empty; "." puts each point directly
	// in Dir (AIPerf's layout: artifacts/…-concurrency_sweep/concurrency_10/).
	PointsDir string
	// Cooldown is a pause before every point but the first (AIPerf's
	// --parameter-sweep-cooldown-seconds).
	Cooldown time.Duration
	// Recipe, when not nil, runs one of AIPerf's search recipes instead
	// of a grid ([RecipeConfig]).
	Recipe *RecipeConfig
	// Search, when not nil, runs a model-based search over a box of
	// settings instead of a grid ([SearchConfig]).
	Search *SearchConfig
	// Design, when not nil, is the sampling design Points were drawn
	// from, written to sampling_design.json ([DesignFile]).
	Design *isearch.Design
	// Find, when not nil, searches for the largest load that meets the
	// SLOs instead of sweeping a grid.
	Find *FindConfig
	// Runs says how often each point is run.
	Runs RunsConfig
	// FreshPromptSeed gives every point its own Prompts.Seed, derived
	// from Base.Prompts.Seed and the point's name ([DeriveSeed]), so a
	// point does not hit the prefix cache filled by the one before.
	FreshPromptSeed bool
	// BeforePoint, when not empty, is run with sh -c before each point
	// (REPRISE_POINT and REPRISE_POINT_DIR in its environment); its
	// output is kept in the point's directory. A failure stops the sweep.
	BeforePoint string
	// Stop says when the sweep stops early.
	Stop StopConfig
	// Table, when not nil, receives the sweep table as the points finish,
	// then the Pareto front and knee (or the search's answer).
	Table io.Writer
	// Log receives the sweep's log records; nil discards them.
	Log *slog.Logger
}

// NewConfig returns a Config with the documented defaults: one run per
// point, fresh prompt seeds, and stops on saturation (tolerance
// [DefaultSaturationTolerance]), after [DefaultSLOFailures] consecutive
// SLO failures and above [DefaultStopErrorRate] errors.
func NewConfig() Config {
	return Config{
		Base: reprise.NewOptions(), Runs: RunsConfig{Runs: 1, Level: summary.DefaultConfidenceLevel, FreshPromptSeed: true},
		FreshPromptSeed: true,
		Stop: StopConfig{SaturationTolerance: DefaultSaturationTolerance, OnSaturation: true,
			SLOFailures: DefaultSLOFailures, MaxErrorRate: DefaultStopErrorRate},
	}
}

// PointStatus is one point in sweep.json.
type PointStatus struct {
	Name string `json:"name"`
	// Dir is the point's directory, relative to the sweep directory: a
	// run directory, or with several runs the directory of run-1 … and
	// runs.json.
	Dir      string             `json:"dir"`
	Settings map[string]float64 `json:"settings"`
	// PromptSeed is the prompt seed the point's runs were built from.
	PromptSeed uint64 `json:"prompt_seed"`
	// RequestCount and DurationNS, when not 0, replace the base's
	// request count and duration (ns) for this point: the probe-length
	// rule of a search ([FindConfig]).
	RequestCount int   `json:"request_count,omitempty"`
	DurationNS   int64 `json:"duration_ns,omitempty"`
	// WarmupRequests, when not 0, replaces the base's warmup request
	// count (a recipe's first wave of a closed loop).
	WarmupRequests int    `json:"warmup_requests,omitempty"`
	Status         string `json:"status"`
	// Reason says why a point was skipped or failed, or which stop
	// condition it met.
	Reason string `json:"reason,omitempty"`
	// Row is the measured row (done points only).
	Row *Row `json:"row,omitempty"`
}

// Plan is what identifies a sweep: resuming requires the same plan.
type Plan struct {
	Kind string      `json:"kind"` // "grid", "find", "recipe" or "search"
	Axes []Axis      `json:"axes,omitempty"`
	Find *FindConfig `json:"find,omitempty"`
	// Planned are Config.Points; PointsDir Config.PointsDir;
	// CooldownNS Config.Cooldown in ns.
	Planned    []Point       `json:"planned,omitempty"`
	PointsDir  string        `json:"points_dir,omitempty"`
	CooldownNS int64         `json:"cooldown_ns,omitempty"`
	Recipe     *RecipeConfig `json:"recipe,omitempty"`
	Search     *SearchConfig `json:"search_plan,omitempty"`
	Base       BaseInfo      `json:"base"`
	Runs       int           `json:"runs"`
	UntilCI    float64       `json:"until_ci,omitempty"`
	// ConvergenceMetric, ConvergenceThreshold and ConvergenceMode are
	// RunsConfig's.
	ConvergenceMetric    string     `json:"convergence_metric,omitempty"`
	ConvergenceThreshold float64    `json:"convergence_threshold,omitempty"`
	ConvergenceMode      string     `json:"convergence_mode,omitempty"`
	WarmupOnce           bool       `json:"warmup_once,omitempty"`
	Level                float64    `json:"confidence_level"`
	FreshPromptSeed      bool       `json:"fresh_prompt_seed"`
	BeforePoint          string     `json:"before_point,omitempty"`
	Stop                 StopConfig `json:"stop"`
}

// BaseInfo is the base replay of a sweep as sweep.json records it: the
// options that shape the load and its judgement (no secrets: the URL's
// user info, headers and the API key are left out).
type BaseInfo struct {
	URL             string  `json:"url"`
	Model           string  `json:"model"`
	Endpoint        string  `json:"endpoint"`
	Trace           string  `json:"trace,omitempty"`
	Streaming       bool    `json:"streaming"`
	ISL             float64 `json:"isl,omitempty"`
	OSL             float64 `json:"osl,omitempty"`
	PromptSeed      uint64  `json:"prompt_seed"`
	Mode            string  `json:"mode,omitempty"`
	RequestRate     float64 `json:"request_rate,omitempty"`
	Arrival         string  `json:"arrival,omitempty"`
	Concurrency     int     `json:"concurrency,omitempty"`
	Speedup         float64 `json:"speedup"`
	RequestCount    int     `json:"request_count,omitempty"`
	Duration        string  `json:"duration,omitempty"`
	WarmupRequests  int     `json:"warmup_requests,omitempty"`
	Seed            uint64  `json:"seed"`
	Goodput         string  `json:"goodput,omitempty"`
	MinGoodFraction float64 `json:"min_good_fraction"`
	MaxErrorRate    float64 `json:"max_error_rate"`
	Format          string  `json:"format"`
}

func baseInfo(o *reprise.Options) BaseInfo {
	u := o.URL
	if pu, err := url.Parse(o.URL); err == nil && pu.User != nil {
		pu.User = nil
		u = pu.String()
	}
	b := BaseInfo{URL: u, Model: o.Model, Endpoint: o.Endpoint, Trace: o.Trace.Path, Streaming: o.Streaming,
		ISL: o.Synthetic.ISL, OSL: o.Synthetic.OSL, PromptSeed: o.Prompts.Seed, Mode: string(o.Replay.Mode),
		RequestRate: o.Replay.RequestRate, Arrival: string(o.Replay.Arrival), Concurrency: o.Replay.Concurrency,
		Speedup: o.Replay.Speedup, RequestCount: o.Replay.RequestCount, WarmupRequests: o.Replay.WarmupRequests,
		Seed: o.Replay.Seed, Goodput: o.Goodput, MinGoodFraction: o.MinGoodFraction, MaxErrorRate: o.MaxErrorRate,
		Format: o.Output.Format}
	if o.Replay.Duration > 0 {
		b.Duration = o.Replay.Duration.String()
	}
	return b
}

// Manifest is sweep.json.
type Manifest struct {
	SchemaVersion string `json:"schema_version"`
	Plan
	Points []PointStatus `json:"points"`
	// Stops lists the stop conditions met, "POINT: reason".
	Stops []string `json:"stops,omitempty"`
	// Interrupted reports that the sweep was interrupted; run it again
	// with the same plan to resume.
	Interrupted bool `json:"interrupted,omitempty"`
	// Pareto names the points on the Pareto front of output throughput
	// (higher is better) against p99 request latency (lower is better),
	// by increasing throughput; Knee the knee of that front (Kneedle).
	Pareto []string `json:"pareto,omitempty"`
	Knee   string   `json:"knee,omitempty"`
	// Found is the boundary search's answer (Kind "find").
	Found *Found `json:"found,omitempty"`
	// Search is a recipe's or a model-based search's answer, probes and
	// their validity (Kind "recipe" or "search").
	Search *SearchResult `json:"search,omitempty"`
	// Trials are a repeated sweep's points across their trials (the
	// mean and confidence interval of each headline metric), in sweep
	// order.
	Trials []TrialAggregate `json:"trials,omitempty"`
}

// measured reports whether any point of the sweep was measured, whole or
// in part (done or interrupted).
func (m *Manifest) measured() bool {
	for _, p := range m.Points {
		if p.Status == StatusDone || p.Status == StatusInterrupted {
			return true
		}
	}
	return false
}

// Result is what a sweep measured.
type Result struct {
	Manifest
	// Rows are the rows of the measured points, in sweep order.
	Rows []Row
}

// The errors exposed.
var (
	// ErrPlanChanged is returned when the sweep directory holds a sweep
	// of another plan.
	ErrPlanChanged = errors.New("the sweep directory holds a different sweep")
	// ErrInvalidConfig wraps every problem of a Config found before
	// anything runs.
	ErrInvalidConfig = errors.New("invalid sweep configuration")
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

type sweeper struct {
	cfg Config
	res *Result
	log *slog.Logger
	// headed reports that the table's header was printed (before the
	// first row: a sweep that measured nothing prints none).
	headed bool
	// lastRuns are the runs of the point measured last.
	lastRuns []*measured
	// trials collect a repeated sweep's trials per point.
	trials []*trialAcc
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

// planned are the points of a grid sweep: Points, else the grid of Axes.
func (c *Config) planned() []Point {
	if len(c.Points) > 0 {
		return c.Points
	}
	return Grid(c.Axes)
}

// pointsDir is the points' directory relative to Dir.
func (c *Config) pointsDir() string {
	if c.PointsDir == "" {
		return PointsDir
	}
	return c.PointsDir
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

func (s *sweeper) status(p Point) PointStatus {
	seed := s.cfg.Base.Prompts.Seed
	if s.cfg.FreshPromptSeed {
		seed = DeriveSeed(seed, p.Name())
	}
	st := PointStatus{Name: p.Name(), Dir: filepath.Join(s.cfg.pointsDir(), p.Name()), Settings: map[string]float64{},
		PromptSeed: seed, Status: StatusPending}
	for i, n := range p.Names {
		st.Settings[n] = p.Values[i]
	}
	return st
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

// point measures one point (or reads it back when its directory is
// complete) and records its status and row.
func (s *sweeper) point(ctx context.Context, p Point, st *PointStatus) (*Row, error) {
	dir := filepath.Join(s.cfg.Dir, st.Dir)
	var done bool
	if s.cfg.Runs.multi() {
		done = repeatComplete(dir)
	} else {
		done = runComplete(dir)
	}
	if !done {
		if ctx.Err() != nil {
			s.res.Interrupted = true
			return nil, s.save()
		}
		if err := s.runPoint(ctx, p, st, dir); err != nil || s.res.Interrupted {
			if err != nil {
				st.Status, st.Reason = StatusFailed, err.Error()
			}
			return nil, errors.Join(err, s.save())
		}
	}
	var runs []*measured
	if s.cfg.Runs.multi() {
		rep, err := repeat(ctx, s.options(p, st, dir), dir, s.cfg.Runs, s.cfg.Stop.SaturationTolerance)
		if err != nil {
			return nil, err
		}
		runs = rep.measured
	} else {
		m, err := readRun(dir, s.cfg.Stop.SaturationTolerance)
		if err != nil {
			return nil, err
		}
		runs = []*measured{m}
	}
	row := newRow(p, runs, s.cfg.Base.MinGoodFraction, s.cfg.Runs.Level)
	row.Point = st.Name
	st.Status, st.Row = StatusDone, &row
	s.res.Rows = append(s.res.Rows, row)
	s.lastRuns = runs
	if p.Trial > 0 {
		s.addTrial(p, st, runs)
	}
	if s.cfg.Find == nil && s.cfg.Recipe == nil && s.cfg.Search == nil {
		s.line(&row, "")
	}
	return &row, nil
}

// options are the base options with the point's settings, directory and
// prompt seed.
func (s *sweeper) options(p Point, st *PointStatus, dir string) reprise.Options {
	o := s.cfg.Base
	p.Apply(&o)
	o.Prompts.Seed = st.PromptSeed
	if st.RequestCount > 0 {
		o.Replay.RequestCount = st.RequestCount
	}
	if st.DurationNS > 0 {
		o.Replay.Duration = time.Duration(st.DurationNS)
	}
	if st.WarmupRequests > 0 {
		o.Replay.WarmupRequests, o.Replay.WarmupDuration = st.WarmupRequests, 0
	}
	o.Output.Dir, o.Output.Overwrite = dir, true
	o.Progress = nil
	return o
}

// runPoint runs the before-point command and the point's run(s).
func (s *sweeper) runPoint(ctx context.Context, p Point, st *PointStatus, dir string) error {
	if err := os.MkdirAll(dir, 0o755); err != nil {
		return err
	}
	// The log is the sweep's own file: remove it so that Overwrite
	// finds only a run's files, and write it again after the run.
	logPath := filepath.Join(dir, BeforePointLog)
	if err := removeIfExists(logPath); err != nil {
		return err
	}
	var out []byte
	if s.cfg.BeforePoint != "" {
		var err error
		out, err = s.beforePoint(ctx, st.Name, dir)
		if err != nil {
			return errors.Join(err, s.keepLog(dir, logPath, out))
		}
	}
	o := s.options(p, st, dir)
	s.log.Info("sweep point", slog.String("point", st.Name), slog.String("dir", dir))
	if s.cfg.Runs.multi() {
		// repeat is called again by point to read the runs; here it runs
		// them (resuming a point's runs that completed).
		rep, err := repeat(ctx, o, dir, s.cfg.Runs, s.cfg.Stop.SaturationTolerance)
		if rep != nil && rep.Interrupted {
			st.Status, s.res.Interrupted = StatusInterrupted, true
		}
		return errors.Join(err, s.keepLog(dir, logPath, out))
	}
	res, err := reprise.Run(ctx, o)
	if res != nil && res.Interrupted {
		st.Status, s.res.Interrupted = StatusInterrupted, true
	}
	return errors.Join(err, s.keepLog(dir, logPath, out))
}

// keepLog writes the before-point output into the point's directory
// (after the run: a run directory is created empty).
func (s *sweeper) keepLog(dir, path string, out []byte) error {
	if s.cfg.BeforePoint == "" {
		return nil
	}
	if err := os.MkdirAll(dir, 0o755); err != nil {
		return err
	}
	return os.WriteFile(path, out, 0o644)
}

// beforePoint runs Config.BeforePoint and returns its combined output
// (at most maxBeforePointOutput bytes).
func (s *sweeper) beforePoint(ctx context.Context, name, dir string) ([]byte, error) {
	cmd := exec.CommandContext(ctx, "sh", "-c", s.cfg.BeforePoint)
	cmd.Env = append(os.Environ(), "REPRISE_POINT="+name, "REPRISE_POINT_DIR="+dir)
	var buf limitedBuffer
	cmd.Stdout, cmd.Stderr = &buf, &buf
	cmd.WaitDelay = 5 * time.Second
	if err := cmd.Run(); err != nil {
		return buf.b, fmt.Errorf("before-point command for %s: %w (output in %s)", name, err, filepath.Join(dir, BeforePointLog))
	}
	return buf.b, nil
}

type limitedBuffer struct{ b []byte }

func (l *limitedBuffer) Write(p []byte) (int, error) {
	if room := maxBeforePointOutput - len(l.b); room > 0 {
		l.b = append(l.b, p[:min(len(p), room)]...)
	}
	return len(p), nil
}

// save writes sweep.json.
func (s *sweeper) save() error {
	return writeJSON(filepath.Join(s.cfg.Dir, ManifestFile), &s.res.Manifest)
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

func (p *Plan) axisNames() []string {
	if p.Find != nil {
		return []string{p.Find.Setting}
	}
	var names []string
	for _, a := range p.Axes {
		names = append(names, a.Name)
	}
	add := func(n string) {
		if !slices.Contains(names, n) {
			names = append(names, n)
		}
	}
	for _, pt := range p.Planned {
		for _, n := range pt.Names {
			add(n)
		}
	}
	if p.Recipe != nil {
		for _, n := range p.Recipe.settings() {
			add(n)
		}
	}
	if p.Search != nil {
		for _, d := range p.Search.Space {
			add(d.Name)
		}
	}
	return names
}
