package sweep

import (
	"context"
	"fmt"
	"hash/fnv"
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"time"

	"github.com/reprise-bench/reprise"
	"github.com/reprise-bench/reprise/arrowio"
	"github.com/reprise-bench/reprise/engine/summary"
)

// RunsFile is the across-run summary of repeated runs, beside their run
// directories run-1, run-2, … (arrowio writes and reads it).
const RunsFile = arrowio.RunsFile

// DefaultMinRunsForCI is the fewest runs --until-ci stops after: two
// runs give a t-interval, but its width (t = 12.7 at 95 %) says little.
const DefaultMinRunsForCI = 3

// UntilCIMetrics are the headline metrics whose relative half-width
// --until-ci compares; the runs stop when every one that exists is
// within the bound.
var UntilCIMetrics = summary.UntilCIMetrics

// RunsConfig says how often one load is run.
type RunsConfig struct {
	// Runs is the number of runs (the most, with UntilCI); 0 or 1 runs
	// once, in the directory itself.
	Runs int
	// UntilCI, when > 0, stops once every metric of [UntilCIMetrics]
	// has a confidence interval no wider than ±UntilCI of its mean
	// (0.05 = ±5 %), after at least DefaultMinRunsForCI runs.
	UntilCI float64
	// ConvergenceMetric, when set, is the key ([summary.RunMetricKey]:
	// an AIPerf tag and a statistic, "time_to_first_token.p50") of the one
	// metric whose interval must be within ±ConvergenceThreshold of its
	// mean to stop, after at least DefaultMinRunsForCI runs: AIPerf's
	// --convergence-metric, --convergence-stat and
	// --convergence-threshold (ci_width mode). It is not used with
	// UntilCI.
	ConvergenceMetric    string
	ConvergenceThreshold float64
	// ConvergenceMode is how ConvergenceMetric converges (AIPerf's
	// --convergence-mode): "" for the interval's half-width (ci_width),
	// [summary.ModeCV] for the runs' coefficient of variation below the
	// threshold, [summary.ModeDistribution] for a Kolmogorov–Smirnov
	// p-value above it, of the last run's per-request values against the
	// earlier runs' (the metric's statistic is then not used).
	ConvergenceMode string
	// WarmupOnce keeps Replay.WarmupRequests and WarmupDuration for the
	// first run only: the later runs measure from their first request.
	WarmupOnce bool
	// Level is the confidence level of the intervals (0 =
	// summary.DefaultConfidenceLevel).
	Level float64
	// FreshPromptSeed gives each run its own Prompts.Seed, derived from
	// the options' seed and the run number, so that a run does not hit
	// the prefix cache its predecessor filled.
	FreshPromptSeed bool
	// SameSeed keeps Replay.Seed in every run (AIPerf's
	// --set-consistent-seed): the runs draw the same arrivals and
	// synthesize the same prompts. Without it run k uses Replay.Seed + k − 1.
	SameSeed bool
	// Cooldown is a pause before every run but the first (AIPerf's
	// --profile-run-cooldown-seconds): the server drains what the run
	// before left queued or cached in memory. A run read back from an
	// earlier, interrupted Repeat takes none.
	Cooldown time.Duration
}

// VarySeed seeds the runs as AIPerf's --vary-seed-per-trial says: vary
// gives run k its own prompt seed and Replay.Seed + k − 1; else every run
// keeps the options' seeds, AIPerf's --set-consistent-seed (SameSeed).
func (c *RunsConfig) VarySeed(vary bool) { c.FreshPromptSeed, c.SameSeed = vary, !vary }

// multi reports whether the runs go in run-k subdirectories.
func (c RunsConfig) multi() bool { return c.Runs > 1 }

// rule is the convergence rule of c, nil without one.
func (c RunsConfig) rule() *summary.Convergence {
	switch {
	case c.ConvergenceMetric != "" && c.ConvergenceThreshold > 0:
		return &summary.Convergence{Rule: "metric", Metrics: []string{c.ConvergenceMetric}, Threshold: c.ConvergenceThreshold,
			MinRuns: DefaultMinRunsForCI, Mode: c.ConvergenceMode}
	case c.UntilCI > 0:
		return &summary.Convergence{Rule: "until_ci", Metrics: UntilCIMetrics, Threshold: c.UntilCI, MinRuns: DefaultMinRunsForCI}
	}
	return nil
}

// extra are the metric keys to summarize beyond the headline ones.
func (c RunsConfig) extra() []string {
	if c.ConvergenceMetric != "" {
		return []string{c.ConvergenceMetric}
	}
	return nil
}

// Repeated is what [Repeat] measured.
type Repeated struct {
	// Dirs are the run directories, in run order; Results the results of
	// the runs made by this call (nil for runs found complete).
	Dirs    []string
	Results []*reprise.Result
	// Across is runs.json: the across-run intervals.
	Across *summary.AcrossRuns
	// Converged reports that the convergence rule (UntilCI or
	// ConvergenceMetric) stopped the runs before Runs; Across.Convergence
	// says whether it was reached, on which metric, with what half-width.
	Converged bool
	// Interrupted reports that the context was cancelled during a run;
	// runs.json is then not written.
	Interrupted bool

	measured []*measured
	// values are each run's per-request values of the convergence
	// metric (a distribution rule's only).
	values [][]float64
}

// RunDir is the directory of run k (from 1) of repeated runs in dir.
func RunDir(dir string, k int) string { return arrowio.RepeatedRunDir(dir, k) }

// DeriveSeed derives a seed from a base seed and a label (a point's name,
// a run number): FNV-1a of the label mixed into the base with
// SplitMix64's finalizer, so that nearby labels give unrelated seeds and
// equal inputs equal seeds.
func DeriveSeed(base uint64, label string) uint64 {
	h := fnv.New64a()
	h.Write([]byte(label))
	z := base ^ h.Sum64()
	z += 0x9e3779b97f4a7c15
	z = (z ^ (z >> 30)) * 0xbf58476d1ce4e5b9
	z = (z ^ (z >> 27)) * 0x94d049bb133111eb
	return z ^ (z >> 31)
}

// Repeat runs o rc.Runs times into dir/run-1 … dir/run-N (stopping early
// when the convergence rule, rc.UntilCI or rc.ConvergenceMetric, is met) and writes dir/runs.json, the across-run
// intervals of every headline metric. Runs found complete in dir (an
// earlier, interrupted Repeat) are read, not run again; an incomplete
// one is replaced. Run k uses Replay.Seed + k − 1 (unless rc.SameSeed), so
// the runs draw different arrivals, and, with FreshPromptSeed, its own
// prompt seed.
// The error is Run's; a run that completed with verdicts is not an
// error.
func Repeat(ctx context.Context, o reprise.Options, dir string, rc RunsConfig) (*Repeated, error) {
	return repeat(ctx, o, dir, rc, DefaultSaturationTolerance)
}

func repeat(ctx context.Context, o reprise.Options, dir string, rc RunsConfig, tol float64) (*Repeated, error) {
	n := max(rc.Runs, 1)
	rep := &Repeated{}
	if err := removeIfExists(filepath.Join(dir, RunsFile)); err != nil {
		return nil, err
	}
	baseSeed, baseReplaySeed := o.Prompts.Seed, o.Replay.Seed
	for k := 1; k <= n; k++ {
		rd := RunDir(dir, k)
		if !rc.multi() {
			rd = dir
		}
		if !runComplete(rd) {
			if rc.Cooldown > 0 && k > 1 {
				select {
				case <-ctx.Done():
					return rep, ctx.Err()
				case <-time.After(rc.Cooldown):
				}
			}
			ro := o
			ro.Output.Dir, ro.Output.Overwrite = rd, true
			if rc.multi() {
				if !rc.SameSeed {
					ro.Replay.Seed = baseReplaySeed + uint64(k-1)
				}
				if rc.FreshPromptSeed {
					ro.Prompts.Seed = DeriveSeed(baseSeed, "run-"+strconv.Itoa(k))
				}
				if rc.WarmupOnce && k > 1 {
					ro.Replay.WarmupRequests, ro.Replay.WarmupDuration = 0, 0
					ro.Warmup = reprise.WarmupLoad{}
				}
			}
			res, err := reprise.Run(ctx, ro)
			if res != nil {
				rep.Results = append(rep.Results, res)
			}
			if err != nil {
				return rep, err
			}
			if res.Interrupted {
				rep.Interrupted = true
				rep.Dirs = append(rep.Dirs, rd)
				return rep, nil
			}
		}
		m, err := readRun(rd, tol)
		if err != nil {
			return rep, err
		}
		rep.Dirs = append(rep.Dirs, rd)
		rep.measured = append(rep.measured, m)
		r := rc.rule()
		if r != nil && r.Mode == summary.ModeDistribution {
			vals, err := requestValues(rd, rc.ConvergenceMetric)
			if err != nil {
				return rep, err
			}
			rep.values = append(rep.values, vals)
		}
		if r != nil && k < n && rep.check(r, rc).Reached {
			rep.Converged = true
			break
		}
	}
	rep.Across = summary.SummarizeRuns(rep.summaries(), rc.Level, rc.extra()...)
	rep.Across.UntilCI, rep.Across.Converged = rc.UntilCI, rep.Converged
	if r := rc.rule(); r != nil {
		c := rep.check(r, rc)
		rep.Across.Convergence = &c
	}
	if rc.multi() {
		rep.Across.RunDirs = relDirs(dir, rep.Dirs)
		if err := arrowio.WriteRuns(dir, rep.Across); err != nil {
			return rep, err
		}
	}
	return rep, nil
}

// check evaluates the rule r on the runs so far: a distribution rule on
// their per-request values (the last run's against the earlier ones',
// pooled), the others on their across-run intervals.
func (r *Repeated) check(rule *summary.Convergence, rc RunsConfig) summary.Convergence {
	if rule.Mode != summary.ModeDistribution {
		return rule.Check(summary.SummarizeRuns(r.summaries(), rc.Level, rc.extra()...))
	}
	k := len(r.values)
	if k == 0 {
		return rule.CheckDistribution(0, nil, nil)
	}
	var earlier []float64
	for _, v := range r.values[:k-1] {
		earlier = append(earlier, v...)
	}
	return rule.CheckDistribution(k, earlier, r.values[k-1])
}

// requestValues reads the per-request values of the metric of key (its
// tag; summary.RunMetricKey) from the run directory dir.
func requestValues(dir, key string) ([]float64, error) {
	tag, _, _ := strings.Cut(key, ".")
	rr, err := arrowio.Open(dir)
	if err != nil {
		return nil, err
	}
	set, err := rr.Settings()
	if err != nil {
		return nil, err
	}
	get, err := summary.RequestValues(tag, &set.Options)
	if err != nil {
		return nil, err
	}
	var out []float64
	for r, err := range rr.Requests() {
		if err != nil {
			return nil, fmt.Errorf("read %s: %w", dir, err)
		}
		if v, ok := get(&r); ok {
			out = append(out, v)
		}
	}
	return out, nil
}

func relDirs(base string, dirs []string) []string {
	out := make([]string, len(dirs))
	for i, d := range dirs {
		if r, err := filepath.Rel(base, d); err == nil {
			out[i] = r
		} else {
			out[i] = d
		}
	}
	return out
}

func (r *Repeated) summaries() []*summary.Summary {
	s := make([]*summary.Summary, len(r.measured))
	for i, m := range r.measured {
		s[i] = m.sum
	}
	return s
}

// repeatComplete reports whether dir holds finished repeated runs: a
// runs.json whose run directories are all complete.
func repeatComplete(dir string) bool {
	if _, err := os.Stat(filepath.Join(dir, RunsFile)); err != nil {
		return false
	}
	dirs, ok, err := arrowio.RepeatedRuns(dir)
	if err != nil || !ok {
		return false
	}
	for _, d := range dirs {
		if !runComplete(d) {
			return false
		}
	}
	return true
}

// ReadRuns reads runs.json of repeated runs in dir.
func ReadRuns(dir string) (*summary.AcrossRuns, error) { return arrowio.ReadRuns(dir) }
