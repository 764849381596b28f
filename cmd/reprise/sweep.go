package main

import (
	"context"
	"errors"
	"fmt"
	"math"
	"path/filepath"
	"slices"
	"strconv"
	"strings"
	"time"

	"github.com/urfave/cli/v3"

	"github.com/reprise-bench/reprise"
	"github.com/reprise-bench/reprise/engine/summary"
	"github.com/reprise-bench/reprise/internal/exitcode"
	"github.com/reprise-bench/reprise/internal/flagmap"
	"github.com/reprise-bench/reprise/internal/runout"
	"github.com/reprise-bench/reprise/internal/sweep"
	"github.com/reprise-bench/reprise/replay"
)

const (
	catSweep = "Sweep"
	catRuns  = "Repeated runs"
)

// sweptFlags are the replay flags that take a list or range in reprise
// sweep.
var sweptFlags = []string{sweep.Concurrency, sweep.RequestRate, sweep.Speedup, sweep.ISL, sweep.OSL}

// runsFlags are the repeat flags of replay and sweep.
func runsFlags() []cli.Flag {
	return []cli.Flag{
		&cli.IntFlag{Name: "runs", Value: 1, Category: catRuns, Sources: envVars("runs"),
			Usage: "run the load `N` times (run-1 … run-N under --out) and write runs.json: a t-interval across runs for every headline metric"},
		&cli.StringFlag{Name: "until-ci", Category: catRuns, Sources: envVars("until-ci"),
			Usage: "with --runs N, stop once the confidence intervals of throughput and p50 TTFT, ITL and latency are within ±`BOUND` of their means (5% or 0.05; at least 3 runs)"},
		&cli.StringFlag{Name: "convergence-metric", Category: catRuns, Sources: envVars("convergence-metric"),
			Usage: "with --runs N, stop once the across-run interval of `METRIC` (an AIPerf tag: time_to_first_token, request_latency, output_token_throughput, …) at --convergence-stat is within ±--convergence-threshold of its mean (at least 3 runs)"},
		&cli.StringFlag{Name: "convergence-stat", Value: "avg", Category: catRuns, Sources: envVars("convergence-stat"),
			Usage: "`STAT` of --convergence-metric in each run: avg, min, max, std, p1, p5, p10, p25, p50, p75, p90, p95 or p99 (a run-level metric such as output_token_throughput has only avg)"},
		&cli.StringFlag{Name: "convergence-threshold", Category: catRuns, Sources: envVars("convergence-threshold"),
			Usage: "`BOUND` on the relative half-width of --convergence-metric's interval (5% or 0.05; between 0 and 1); the CV's bound with --convergence-mode cv, the p-value to exceed with distribution"},
		&cli.StringFlag{Name: "convergence-mode", Value: summary.ModeCIWidth, Category: catRuns, Sources: envVars("convergence-mode"),
			Usage: "how --convergence-metric converges: ci_width (its interval's half-width), cv (the runs' coefficient of variation below the threshold) or distribution (a Kolmogorov–Smirnov test of the last run's per-request values against the earlier runs' gives p above the threshold)"},
		&cli.DurationFlag{Name: "run-cooldown", Category: catRuns, Sources: envVars("run-cooldown"),
			Usage: "with --runs, pause `D` between two runs"},
		&cli.BoolFlag{Name: "warmup-once", Category: catRuns, Sources: envVars("warmup-once"),
			Usage: "with --runs, apply --warmup-requests/--warmup-duration to the first run only"},
		&cli.FloatFlag{Name: "confidence-level", Value: summary.DefaultConfidenceLevel, Category: catRuns, Sources: envVars("confidence-level"),
			Usage: "`LEVEL` of the across-run intervals and of the sweep's Wilson intervals (0 < LEVEL < 1)"},
	}
}

// runsConfigFrom reads runsFlags.
func runsConfigFrom(cmd *cli.Command) (sweep.RunsConfig, error) {
	rc := sweep.RunsConfig{Runs: cmd.Int("runs"), WarmupOnce: cmd.Bool("warmup-once"), Level: cmd.Float("confidence-level"),
		FreshPromptSeed: true, Cooldown: cmd.Duration("run-cooldown")}
	var errs []error
	if rc.Runs < 1 {
		errs = append(errs, fmt.Errorf("--runs %d: want ≥ 1", rc.Runs))
	}
	if !(rc.Level > 0 && rc.Level < 1) {
		errs = append(errs, fmt.Errorf("--confidence-level %v: want a level between 0 and 1, e.g. 0.95", rc.Level))
	}
	if s := cmd.String("until-ci"); s != "" {
		v, err := parseFraction(s)
		if err != nil || !(v > 0) || math.IsInf(v, 0) {
			errs = append(errs, fmt.Errorf("--until-ci %q: want a bound such as 5%% or 0.05", s))
		}
		if rc.Runs < sweep.DefaultMinRunsForCI {
			errs = append(errs, fmt.Errorf("--until-ci needs --runs N with N ≥ %d, the most runs to make", sweep.DefaultMinRunsForCI))
		}
		rc.UntilCI = v
	}
	metric, stat, thr := cmd.String("convergence-metric"), cmd.String("convergence-stat"), cmd.String("convergence-threshold")
	switch {
	case metric == "" && thr == "":
	case metric == "" || thr == "":
		errs = append(errs, errors.New("--convergence-metric and --convergence-threshold go together: give both, e.g. --convergence-metric time_to_first_token --convergence-stat p50 --convergence-threshold 5%"))
	default:
		key, err := summary.RunMetricKey(metric, stat)
		if err != nil {
			errs = append(errs, fmt.Errorf("--convergence-metric %s --convergence-stat %s: %w", metric, stat, err))
		}
		v, err := parseFraction(thr)
		if err != nil || v <= 0 || v >= 1 {
			errs = append(errs, fmt.Errorf("--convergence-threshold %q: want a relative half-width between 0 and 1, such as 5%% or 0.05", thr))
		}
		if rc.Runs < sweep.DefaultMinRunsForCI {
			errs = append(errs, fmt.Errorf("--convergence-metric needs --runs N with N ≥ %d, the most runs to make", sweep.DefaultMinRunsForCI))
		}
		if rc.UntilCI > 0 {
			errs = append(errs, errors.New("--until-ci and --convergence-metric are two stop rules: give one"))
		}
		rc.ConvergenceMetric, rc.ConvergenceThreshold = key, v
	}
	rc.ConvergenceMode, errs = convergenceMode(cmd.String("convergence-mode"), metric, errs)
	return rc, errors.Join(errs...)
}

// convergenceMode checks --convergence-mode (with --convergence-metric
// metric) and returns RunsConfig's mode ("" for ci_width).
func convergenceMode(mode, metric string, errs []error) (string, []error) {
	switch {
	case !slices.Contains(summary.ConvergenceModes, mode):
		return "", append(errs, fmt.Errorf("--convergence-mode %q: want %s", mode, strings.Join(summary.ConvergenceModes, ", ")))
	case mode == summary.ModeCIWidth:
		return "", errs
	case metric == "":
		return "", append(errs, fmt.Errorf("--convergence-mode %s needs --convergence-metric and --convergence-threshold", mode))
	}
	if _, err := summary.RequestValues(metric, &summary.Options{}); err != nil && mode == summary.ModeDistribution {
		errs = append(errs, fmt.Errorf("--convergence-mode distribution --convergence-metric %s: %w", metric, err))
	}
	return mode, errs
}

// parseFraction reads "5%" as 0.05 and "0.05" as 0.05.
func parseFraction(s string) (float64, error) {
	s = strings.TrimSpace(s)
	if p, ok := strings.CutSuffix(s, "%"); ok {
		v, err := strconv.ParseFloat(strings.TrimSpace(p), 64)
		return v / 100, err
	}
	return strconv.ParseFloat(s, 64)
}

// sweepFlags are the sweep command's own flags.
func sweepFlags() []cli.Flag {
	return []cli.Flag{
		&cli.StringFlag{Name: "concurrency", Category: catSweep, Sources: envVars("concurrency"),
			Usage: "closed-loop `VALUES`: a list 1,2,4,8, a geometric range 1:64:x2 or a linear range 4:32:+4 (one value: every point's)"},
		&cli.StringFlag{Name: "request-rate", Category: catSweep, Sources: envVars("request-rate"),
			Usage: "open-loop request rates `VALUES` per second, as for --concurrency"},
		&cli.StringFlag{Name: "speedup", Category: catSweep, Sources: envVars("speedup"), DefaultText: "1",
			Usage: "trace speedups `VALUES`, e.g. 0.5,1,2,4 (a trace replayed ever faster)"},
		&cli.StringFlag{Name: "isl", Aliases: []string{"synthetic-input-tokens-mean"}, Category: catSweep, Sources: envVars("isl"),
			Usage: "synthetic input lengths `VALUES` in tokens"},
		&cli.StringFlag{Name: "osl", Aliases: []string{"output-tokens-mean"}, Category: catSweep, Sources: envVars("osl"),
			Usage: "synthetic output lengths `VALUES` in tokens"},
		&cli.StringFlag{Name: "sweep-type", Value: sweep.SweepGrid, Category: catSweep, Sources: envVars("sweep-type"),
			Usage: "`TYPE` of a sweep of several lists: grid (every combination) or zip (the i-th values together; lists of equal length)"},
		&cli.StringSliceFlag{Name: "variant", Aliases: []string{"sweep-variant"}, Category: catSweep, Sources: envVars("variant"),
			Usage: "a scenario `'[NAME:] KEY=VALUE, …'` (keys: the swept settings); repeat it, at least twice; points/NAME/"},
		&cli.StringFlag{Name: "sweep-sampling", Category: catSweep, Sources: envVars("sweep-sampling"),
			Usage: "`METHOD` sobol or latin_hypercube: a sampled sweep over the --sweep-dimension ranges (seeded by --seed; design in sampling_design.json)"},
		&cli.IntFlag{Name: "sweep-samples", Category: catSweep, Sources: envVars("sweep-samples"), Usage: "`N` points of --sweep-sampling"},
		&cli.StringSliceFlag{Name: "sweep-dimension", Category: catSweep, Sources: envVars("sweep-dimension"),
			Usage: "a range of --sweep-sampling, `'SETTING:LO,HI[:int|float]'`; repeatable"},
		&cli.StringFlag{Name: "find", Category: catSweep, Sources: envVars("find"),
			Usage: "`GOAL`: max-rate, max-concurrency or max-speedup: bracket then bisect the largest load meeting --goodput at --min-good-fraction"},
		&cli.FloatFlag{Name: "find-start", Category: catSweep, Sources: envVars("find-start"),
			DefaultText: "1, or the single value given for the searched setting", Usage: "first load `X` of --find"},
		&cli.FloatFlag{Name: "find-precision", Value: sweep.DefaultFindPrecision, Category: catSweep, Sources: envVars("find-precision"),
			Usage: "stop bisecting when the bracket is within `F` of its lower end (0.02 = 2 %)"},
		&cli.IntFlag{Name: "find-max-probes", Value: sweep.DefaultFindMaxProbes, Category: catSweep, Sources: envVars("find-max-probes"),
			Usage: "probe at most `N` loads in --find"},
		&cli.FloatFlag{Name: "find-floor", Category: catSweep, Sources: envVars("find-floor"), DefaultText: "start/16, at least 1 for concurrency",
			Usage: "lowest load `X` --find probes: when every probe down to it fails the SLOs, no load met them (exit 3)"},
		&cli.IntFlag{Name: "find-min-rounds", Value: sweep.DefaultFindMinRounds, Category: catSweep, Sources: envVars("find-min-rounds"),
			Usage: "a passing --find probe has at least `N` requests per request in flight (0 and --find-min-probe-time 0: probes are --request-count long)"},
		&cli.DurationFlag{Name: "find-min-probe-time", Value: sweep.DefaultFindMinProbeTime, Category: catSweep, Sources: envVars("find-min-probe-time"),
			Usage: "a --find probe sends for at least `D` (rate × D + 1 requests)"},
		&cli.DurationFlag{Name: "find-max-lateness", Category: catSweep, Sources: envVars("find-max-lateness"), DefaultText: "half the mean gap between sends",
			Usage: "a --find probe whose p99 schedule lateness is over `D` is invalid and re-run (twice; then the search stops, exit 4)"},
		&cli.BoolWithInverseFlag{Name: "fresh-prompt-seed", Value: true, Category: catSweep, Sources: envVars("fresh-prompt-seed"),
			Usage: "give every point (and run) its own prompt seed, derived from --prompt-seed, so it does not hit the prefix cache the previous one filled"},
		&cli.StringFlag{Name: "before-point", Category: catSweep, Sources: envVars("before-point"),
			Usage: "run `CMD` (sh -c) before each point, e.g. a cache reset; REPRISE_POINT and REPRISE_POINT_DIR are set; output kept in the point's before-point.log"},
		&cli.BoolWithInverseFlag{Name: "stop-on-saturation", Value: true, Category: catSweep, Sources: envVars("stop-on-saturation"),
			Usage: "stop after the first saturated point (completions behind arrivals, a growing backlog with rising TTFT)"},
		&cli.FloatFlag{Name: "saturation-tolerance", Value: sweep.DefaultSaturationTolerance, Category: catSweep, Sources: envVars("saturation-tolerance"),
			Usage: "a point whose completion rate is below (1 − `F`) × its intended rate, or whose backlog grows by over F × that rate, is saturated (0 = no checks)"},
		&cli.IntFlag{Name: "stop-slo-failures", Value: sweep.DefaultSLOFailures, Category: catSweep, Sources: envVars("stop-slo-failures"),
			Usage: "stop after `N` consecutive points that failed --goodput (0 = never)"},
		&cli.FloatFlag{Name: "stop-error-rate", Value: sweep.DefaultStopErrorRate, Category: catSweep, Sources: envVars("stop-error-rate"),
			Usage: "stop after a point in which more than `R` of the requests failed (1 = never)"},
	}
}

// sweepCommand is `reprise sweep [TRACE] --request-rate 1:64:x2 …`.
func sweepCommand(a *app) *cli.Command {
	var flags []cli.Flag
	skip := append(slices.Clone(sweptFlags), "overwrite", "shard", "start-at", "ui")
	for _, f := range slices.Concat(replayFlags(), responseCapFlags(), contextFlags(), timingFlags(), telemetryFlags()) {
		if !slices.Contains(skip, f.Names()[0]) {
			flags = append(flags, f)
		}
	}
	flags = slices.Concat(sweepFlags(), runsFlags(), flags, []cli.Flag{configFlag("sweep's flag names as keys, trace: the TRACE")})
	return &cli.Command{
		Name:      "sweep",
		Usage:     "replay at many loads: a grid of settings, or a search for the largest load that meets SLOs",
		ArgsUsage: "[TRACE]",
		Description: "Runs the replay once per point of a grid over any of the settings (--concurrency, --request-rate,\n" +
			"--speedup, --isl, --osl as lists or ranges), each point a run directory under --out/points/, and\n" +
			"prints one table row per point: load asked and achieved, goodput, TTFT/ITL/latency p50/p99,\n" +
			"throughput, per-user tokens/s, errors and lateness; then the Pareto front and its knee.\n" +
			"It stops early at the first saturated point, after --stop-slo-failures points failing --goodput,\n" +
			"or above --stop-error-rate. --find searches the largest load meeting --goodput instead.\n" +
			"Every other flag is reprise replay's and applies to every point. Running the same command again\n" +
			"resumes an interrupted sweep; Ctrl-C ends the current point cleanly.\n\n" +
			"Exit codes: 0 done, 1 run error, interrupted or a server that does not answer, 2 bad command line,\n" +
			"3 --find found no load meeting the SLOs down to --find-floor, 4 --find cannot measure a load on this\n" +
			"machine (the client did not keep its schedule in three tries of it).\n\n" +
			"Examples:\n" +
			"  reprise sweep -m M --isl 512 --osl 128 --request-count 500 --request-rate 1:64:x2 --goodput \"ttft:250 itl:10\"\n" +
			"  reprise sweep traces/mooncake-sample.jsonl -m M --speedup 0.5,1,2,4 --out sweeps/mooncake\n\n" +
			"A search (--find max-rate --goodput \"ttft:250\" --min-good-fraction 0.99) is in README.md: against a\n" +
			"server of unbounded capacity (the bundled mock) it ends \"cannot measure\" (exit 4) where the client\n" +
			"no longer keeps its schedule.",
		Flags: flags,
		Action: func(ctx context.Context, cmd *cli.Command) error {
			return runSweep(ctx, a, cmd)
		},
	}
}

// runSweep is reprise sweep's action: the sweep's Config from the flags,
// sweep.Run, and the exit code of its outcome.
func runSweep(ctx context.Context, a *app, cmd *cli.Command) error {
	usage := func(err error) error { return exitcode.UsageError(err, "see 'reprise sweep --help'") }
	cfg, err := sweepConfig(a, cmd)
	if err != nil {
		return usage(err)
	}
	quiet := cmd.Bool("quiet")
	if !quiet {
		cfg.Table = a.stderr
		d := cfg.Base.Replay.Duration
		cfg.Base.OnStart = func(s reprise.Start) {
			fmt.Fprintf(a.stderr, "reprise: sweep point %s (%s mode, %s)\n", s.Dir, s.Mode, runout.PlannedText(s.Planned, d))
		}
	}
	res, err := sweep.Run(ctx, cfg)
	if err != nil {
		if errors.Is(err, sweep.ErrInvalidConfig) {
			return usage(err)
		}
		if errors.Is(err, sweep.ErrPlanChanged) {
			return exitcode.UsageError(err, "give the flags of the sweep in --out to resume it, or a new --out")
		}
		return runError(err, &cfg.Base)
	}
	if quiet {
		fmt.Fprintln(a.stdout, cfg.Dir) // where the results are, one line on stdout
	} else {
		fmt.Fprintf(a.stderr, "sweep: %s\n", cfg.Dir)
	}
	if res.Interrupted {
		return &exitcode.Error{Code: exitcode.RunError,
			Err: fmt.Errorf("interrupted; run the same command again to resume the sweep in %s", cfg.Dir)}
	}
	if f := res.Found; f != nil && f.Unmeasurable {
		return &exitcode.Error{Code: exitcode.Lateness, Err: errors.New(f.Text)}
	}
	if f := res.Found; f != nil && f.Value == 0 {
		return &exitcode.Error{Code: exitcode.SLOBreach, Err: errors.New(f.Text)}
	}
	return nil
}

// sweepConfig maps reprise sweep's flags and TRACE to the sweep's
// Config (its directory defaults to runs/<UTC time>-<model>-sweep/); an
// error is the command line's.
func sweepConfig(a *app, cmd *cli.Command) (sweep.Config, error) {
	rc, err := flagmap.Timing(cmd)
	tc, terr := flagmap.Telemetry(cmd)
	runs, rerr := runsConfigFrom(cmd)
	if err := errors.Join(err, terr, rerr); err != nil {
		return sweep.Config{}, err
	}
	args := cmd.Args().Slice()
	if len(args) > 1 {
		return sweep.Config{}, fmt.Errorf("want at most one TRACE, got %d: %s", len(args), strings.Join(args, " "))
	}
	o := replayOptions(cmd)
	rc.Speedup = replay.DefaultSpeedup
	o.Replay, o.Telemetry = rc, tc
	flagmap.Warmup(cmd, &o)
	flagmap.WarmupPhase(&o)
	o.Synthetic.ISL, o.Synthetic.OSL = 0, 0
	if len(args) == 1 {
		if args[0] == "-" {
			return sweep.Config{}, errors.New("a sweep replays its trace once per point: give a file, not - (standard input)")
		}
		o.Trace.Path = args[0]
	}
	o.Log = a.log
	o.Abort = a.abort.Done() // a second Ctrl-C cancels the current point's in-flight requests at once
	cfg := sweep.NewConfig()
	cfg.Base = o
	cfg.Runs = runs
	cfg.Runs.FreshPromptSeed = cmd.Bool("fresh-prompt-seed")
	cfg.FreshPromptSeed = cmd.Bool("fresh-prompt-seed")
	cfg.BeforePoint = cmd.String("before-point")
	cfg.Stop = sweep.StopConfig{SaturationTolerance: cmd.Float("saturation-tolerance"), OnSaturation: cmd.Bool("stop-on-saturation"),
		SLOFailures: cmd.Int("stop-slo-failures"), MaxErrorRate: cmd.Float("stop-error-rate")}
	if err := cfg.Configure(sweepSpec(cmd)); err != nil {
		return sweep.Config{}, err
	}
	cfg.Dir = o.Output.Dir
	if cfg.Dir == "" {
		cfg.Dir = filepath.Join("runs", fmt.Sprintf("%s-%s-sweep", time.Now().UTC().Format("20060102T150405Z"), safeFileName(o.Model)))
	}
	return cfg, nil
}

// sweepSpec maps the flags of what reprise sweep varies.
func sweepSpec(cmd *cli.Command) sweep.Spec {
	s := sweep.Spec{Settings: map[string]string{},
		Find: sweep.FindSpec{Goal: cmd.String("find"), Precision: cmd.Float("find-precision"), MaxProbes: cmd.Int("find-max-probes"),
			MinRounds: cmd.Int("find-min-rounds"), MinProbeTime: cmd.Duration("find-min-probe-time"), MaxLateness: cmd.Duration("find-max-lateness")},
		Profile: sweep.ProfileSweep{Type: cmd.String("sweep-type"), Variants: cmd.StringSlice("variant"),
			Sampling: cmd.String("sweep-sampling"), Samples: cmd.Int("sweep-samples"), Dimensions: cmd.StringSlice("sweep-dimension")}}
	for _, name := range sweep.Settings {
		s.Settings[name] = cmd.String(name)
	}
	if cmd.IsSet("find-start") {
		v := cmd.Float("find-start")
		s.Find.Start = &v
	}
	if cmd.IsSet("find-floor") {
		v := cmd.Float("find-floor")
		s.Find.Floor = &v
	}
	return s
}

// safeFileName keeps letters, digits, '.', '-' and '_' of s ("model"
// when nothing is left).
func safeFileName(s string) string {
	b := []byte(s)
	out := b[:0]
	for _, c := range b {
		if c >= 'a' && c <= 'z' || c >= 'A' && c <= 'Z' || c >= '0' && c <= '9' || c == '.' || c == '-' || c == '_' {
			out = append(out, c)
		} else {
			out = append(out, '_')
		}
	}
	if len(out) == 0 {
		return "model"
	}
	return string(out)
}

// runRepeated is replay --runs N: N run directories under --out and
// runs.json, with the across-run table on stderr.
func runRepeated(ctx context.Context, a *app, o reprise.Options, rc sweep.RunsConfig, quiet bool) error {
	dir := o.Output.Dir
	if dir == "" {
		dir = filepath.Join("runs", fmt.Sprintf("%s-%s-x%d", time.Now().UTC().Format("20060102T150405Z"), safeFileName(o.Model), rc.Runs))
	}
	if !quiet {
		o.OnStart = func(s reprise.Start) {
			fmt.Fprintf(a.stderr, "reprise: run %s against %s (%s mode, %s)\n", s.Dir, runout.EndpointURL(s.URL, s.EndpointPath), s.Mode,
				runout.PlannedText(s.Planned, o.Replay.Duration))
		}
	}
	rep, err := sweep.Repeat(ctx, o, dir, rc)
	if err != nil {
		return runError(err, &o)
	}
	if rep.Interrupted {
		return &exitcode.Error{Code: exitcode.RunError,
			Err: fmt.Errorf("interrupted; run the same command again to resume the runs in %s", dir)}
	}
	if !quiet {
		if err := rep.Across.WriteTable(a.stderr); err != nil {
			return err
		}
		fmt.Fprintf(a.stderr, "results: %s (%s)\n", dir, sweep.RunsFile)
	} else {
		fmt.Fprintln(a.stdout, dir) // where the results are, one line on stdout
	}
	for _, res := range rep.Results {
		if err := verdictError(res); err != nil {
			return err
		}
	}
	return nil
}
