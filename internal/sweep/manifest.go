package sweep

import (
	"errors"
	"fmt"
	"net/url"
	"slices"
	"strings"

	"github.com/reprise-bench/reprise"
	"github.com/reprise-bench/reprise/engine/summary"
	"github.com/reprise-bench/reprise/internal/exitcode"
)

// SchemaVersion is the version of sweep.json and sweep.parquet
// (docs/format/sweep.md).
const SchemaVersion = "3"

// Point statuses in sweep.json.
const (
	StatusPending     = "pending"     // not run yet
	StatusDone        = "done"        // measured
	StatusInterrupted = "interrupted" // the sweep was interrupted during it
	StatusSkipped     = "skipped"     // not run: a stop condition ended its line of the sweep
	StatusFailed      = "failed"      // the before-point command or the run failed
)

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

// Probe is one run of a search at one load.
type Probe struct {
	Point string  `json:"point"`
	Value float64 `json:"value"`
	// Try counts the runs at this load, from 1; Why says why this one
	// ran (WhySearch, WhyRerun, …).
	Try int    `json:"try"`
	Why string `json:"why"`
	// Good of Total measured requests met every SLO: Fraction, with its
	// Wilson interval [Low, High] at the sweep's confidence level; SLOMet
	// reports Fraction ≥ MinGoodFraction.
	Good     int     `json:"good"`
	Total    int     `json:"total"`
	Fraction float64 `json:"good_fraction"`
	Low      float64 `json:"good_low"`
	High     float64 `json:"good_high"`
	SLOMet   bool    `json:"slo_met"`
	// Saturated reports that the saturation checks found a growing
	// queue (Saturation lists which).
	Saturated  bool     `json:"saturated"`
	Saturation []string `json:"saturation,omitempty"`
	// Validity says whether the client kept its schedule.
	Validity
	// Streams is the requests in flight by Little's law (summary.json's
	// load.streams).
	Streams float64 `json:"streams"`
	// Pass reports a valid probe that met the SLOs unsaturated.
	Pass bool `json:"pass"`
}

// probeVerdict says a probe's verdict and why, in a few words.
func probeVerdict(p *Probe) string {
	switch {
	case !p.Valid:
		return "invalid: " + strings.Join(p.Reasons, "; ")
	case p.Saturated && len(p.Waived) > 0:
		return fmt.Sprintf("fail, saturated (%s), good %.1f%%; counted although %s: the queue grew faster than the client's delays can explain",
			strings.Join(p.Saturation, ","), 100*p.Fraction, strings.Join(p.Waived, "; "))
	case p.Saturated:
		return fmt.Sprintf("fail, saturated (%s), good %.1f%%", strings.Join(p.Saturation, ","), 100*p.Fraction)
	case !p.SLOMet:
		return fmt.Sprintf("fail, good %.1f%%", 100*p.Fraction)
	}
	return fmt.Sprintf("pass, good %.1f%%", 100*p.Fraction)
}

// Found is the answer of a search.
type Found struct {
	Setting string `json:"setting"`
	// Value is the largest load whose outcome passed below the lowest
	// that failed (0: none passed); Above the lowest that failed (0: none
	// did). The boundary lies in [Value, Above).
	Value float64 `json:"value"`
	Above float64 `json:"above"`
	// Indistinct reports that the good fractions at Value and Above
	// cannot be told apart: their Wilson intervals overlap, so the
	// bracket's ends differ by less than the probes can resolve.
	Indistinct bool `json:"indistinct"`
	// Unmeasurable reports that the search stopped at a load the client
	// could not keep the schedule of, MaxReruns + 1 times in a row
	// (Unmeasured): the machine running reprise cannot measure that
	// load. Value is then the largest pass below it, if any.
	Unmeasurable bool    `json:"unmeasurable,omitempty"`
	Unmeasured   float64 `json:"unmeasured,omitempty"`
	// OutOfOrder lists the loads that still passed above a failing one
	// after their re-probes ("X above Y").
	OutOfOrder []string `json:"out_of_order,omitempty"`
	// Counts of the probes: Valid ones, Invalid ones (each re-run, or
	// the last of an unmeasurable load), Saturated (valid and
	// saturated), Lengthened (runs again of a pass too short), Reprobed
	// (confirmations, deciders and re-probes of out-of-order outcomes).
	Valid      int `json:"valid"`
	Invalid    int `json:"invalid"`
	Saturated  int `json:"saturated"`
	Lengthened int `json:"lengthened"`
	Reprobed   int `json:"reprobed"`
	// Probes are every probe, in the order they ran.
	Probes []Probe `json:"probes"`
	// Text says the answer with its uncertainty, as printed.
	Text string `json:"text"`
}

// SearchProbe is one probe of a recipe or a model-based search in
// sweep.json.
type SearchProbe struct {
	Point    string             `json:"point"`
	Settings map[string]float64 `json:"settings"`
	// Why the probe ran: a boundary search's (end, model, bisect,
	// reprobe, rerun), "step" (a line or ladder point) or a model-based
	// search's (initial, model).
	Why string `json:"why"`
	// Validity is the verdicts issue's rule (docs/design/0015): a probe
	// counts only when the client kept its schedule.
	Validity
	// Level is a boundary probe's worst metric-to-SLA ratio (pass when
	// ≤ 1); Pass its outcome.
	Level float64 `json:"level,omitempty"`
	Pass  bool    `json:"pass"`
	// Metrics are the probe's values of the metrics the recipe uses
	// ("time_to_first_token.p99", …).
	Metrics map[string]float64 `json:"metrics"`
}

// SearchResult is a recipe's or a search's outcome in sweep.json.
type SearchResult struct {
	// Kind is the recipe's name, or "model-based".
	Kind string `json:"kind"`
	// Setting is what the answer is a value of (concurrency for the
	// boundary recipes); Value the answer and Above the lowest value
	// that failed (the boundary lies in [Value, Above)); Converged
	// whether that bracket is within the precision.
	Setting   string  `json:"setting,omitempty"`
	Value     float64 `json:"value"`
	Above     float64 `json:"above,omitempty"`
	Converged bool    `json:"converged"`
	// Metrics are the answer's metrics (at Value, or the best trial).
	Metrics map[string]float64 `json:"metrics,omitempty"`
	// Slope and Intercept are a curve recipe's weighted least-squares
	// line (ms per token, ms) and SlopeSE the slope's standard error,
	// from the probes' own spreads ([fitCurve]).
	Slope     float64 `json:"slope,omitempty"`
	SlopeSE   float64 `json:"slope_se,omitempty"`
	Intercept float64 `json:"intercept,omitempty"`
	// Pareto names the probes on the Pareto front (pareto-sweep; a
	// model-based search with several objectives).
	Pareto []string `json:"pareto,omitempty"`
	// Violations say where the measurements broke monotonicity, and
	// what was re-probed.
	Violations []string `json:"violations,omitempty"`
	// CannotTell, when set, says why the answer is not known, or known
	// only below a load that could not be measured (the client did not
	// drive it faithfully): a reader must not take Value as the
	// boundary. Unmeasurable is that load.
	CannotTell   string  `json:"cannot_tell,omitempty"`
	Unmeasurable float64 `json:"unmeasurable,omitempty"`
	// Valid and Invalid count the probes by validity.
	Valid   int `json:"valid"`
	Invalid int `json:"invalid"`
	// Stopped says why a model-based search ended, or why a boundary
	// recipe ended before its bracket was within the precision (a level
	// that does not change with the load: the boundary is noise).
	Stopped string        `json:"stopped,omitempty"`
	Probes  []SearchProbe `json:"probes"`
	// Tiers are a multi-tier search's answers, one per tier, in order
	// (Value and Above are then the first tier's).
	Tiers []TierResult `json:"tiers,omitempty"`
	// Text says the answer, as printed.
	Text string `json:"text"`
}

// Verdict is a boundary recipe's verdict (nil for anything else, or
// with an answer): exit code 3 when no tested load met its SLAs, 4 when
// it cannot tell (its lowest load could not be measured: the client's
// failure, not the server's), each with the answer's text. A curve
// recipe that cannot tell (its probes were disturbed) exits 4 too.
func (r *SearchResult) Verdict() error {
	if r != nil && (r.Kind == RecipePrefillTTFT || r.Kind == RecipeDecodeITL) && r.CannotTell != "" {
		return &exitcode.Error{Code: exitcode.Lateness, Err: errors.New(r.Text)}
	}
	if r == nil || !(&RecipeConfig{Name: r.Kind}).boundary() || r.Value > 0 || len(r.Probes) == 0 {
		return nil
	}
	code := exitcode.SLOBreach
	if r.CannotTell != "" {
		code = exitcode.Lateness
	}
	return &exitcode.Error{Code: code, Err: errors.New(r.Text)}
}

// TierResult is one tier's answer in sweep.json: the largest load that
// met the tier (Value; 0: none), the lowest that failed above it
// (Above; 0: none), and how many of its probes were measurements of
// earlier tiers (Reused) rather than new runs.
type TierResult struct {
	Label     string  `json:"label"`
	Value     float64 `json:"value"`
	Above     float64 `json:"above,omitempty"`
	Converged bool    `json:"converged"`
	Probes    int     `json:"probes"`
	Reused    int     `json:"reused"`
	Stopped   string  `json:"stopped,omitempty"`
	// CannotTell, when set, says why the tier's answer is not known: a
	// probe at or below it (another tier's included) failed its filters.
	CannotTell string `json:"cannot_tell,omitempty"`
	Text       string `json:"text"`
}

// TrialMetrics are the headline metrics a repeated sweep aggregates
// across its trials for the table and the report (sweep.json has every
// headline metric), by [summary.SummarizeRuns] key.
var TrialMetrics = []string{"request_throughput", "output_token_throughput", "goodput",
	"time_to_first_token.p99", "inter_token_latency.p99", "request_latency.p99"}

// TrialAggregate is one point of a repeated sweep across its trials: the
// mean of each headline metric over the trials and its confidence
// interval (Student t of the per-trial values, on the metric's scale,
// as runs.json computes it: [summary.Interval]).
type TrialAggregate struct {
	// Point is the point's name without the trial directory
	// (concurrency_10); Points its trials' point names, in trial order.
	Point    string             `json:"point"`
	Settings map[string]float64 `json:"settings"`
	Trials   int                `json:"trials"`
	Points   []string           `json:"points"`
	// Level is the confidence level; Metrics are keyed as runs.json's.
	Level   float64                     `json:"confidence_level"`
	Metrics map[string]summary.Interval `json:"metrics"`
}

// trialLabels are the table's and the report's names of TrialMetrics.
var trialLabels = []string{"done/s", "tok/s", "goodput/s", "ttft99 ms", "itl99 ms", "e2e99 ms"}

// Text is the aggregate's line of the sweep table: each of
// TrialMetrics as mean [low, high].
func (a *TrialAggregate) Text() string {
	parts := []string{fmt.Sprintf("%s over %d trials (%.0f%% CI):", a.Point, a.Trials, 100*a.Level)}
	for i, k := range TrialMetrics {
		if iv, ok := a.Metrics[k]; ok && iv.N > 0 {
			parts = append(parts, fmt.Sprintf("%s %s [%s, %s]", trialLabels[i], Num(iv.Mean, 4), Num(iv.Low, 4), Num(iv.High, 4)))
		}
	}
	return strings.Join(parts, " ")
}
