package main

import (
	"context"
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"reflect"
	"strings"

	"github.com/urfave/cli/v3"

	"github.com/reprise-bench/reprise"
	"github.com/reprise-bench/reprise/internal/exitcode"
	"github.com/reprise-bench/reprise/internal/flagmap"
	"github.com/reprise-bench/reprise/internal/runout"
	isearch "github.com/reprise-bench/reprise/internal/search"
	"github.com/reprise-bench/reprise/internal/sweep"
)

const catProfileSweep = "AIPerf sweeps and searches"

// asListFlag returns a string flag with f's names, category, sources and
// usage, so that profile reads a comma list where replay reads a number.
func asListFlag(f cli.Flag) cli.Flag {
	v := reflect.ValueOf(f).Elem()
	str := func(field string) string { return v.FieldByName(field).String() }
	sf := &cli.StringFlag{Name: f.Names()[0], Aliases: f.Names()[1:], Category: str("Category"),
		Usage: str("Usage") + "; a comma list (10,50,100) sweeps it, one run per value"}
	if src, ok := v.FieldByName("Sources").Interface().(cli.ValueSourceChain); ok {
		sf.Sources = src
	}
	return sf
}

// profileSweepFlags are AIPerf's sweep and search flags.
func profileSweepFlags() []cli.Flag {
	const cat = catProfileSweep
	return []cli.Flag{
		&cli.StringFlag{Name: "sweep-type", Value: sweep.SweepGrid, Category: cat, Sources: envVars("sweep-type"),
			Usage: "`TYPE` of a sweep of several comma lists: grid (every combination, the last list fastest) or zip (the i-th values together; lists of equal length); or GenAI-Perf's setting swept by --sweep-list/--sweep-range: concurrency, request_rate or input_sequence_length"},
		&cli.BoolFlag{Name: "enable-checkpointing", Category: cat, Sources: envVars("enable-checkpointing"),
			Usage: "GenAI-Perf's: always on here, the same command again resumes a sweep from its artifact directory (every complete point read back)"},
		&cli.StringFlag{Name: "sweep-list", Category: cat, Sources: envVars("sweep-list"),
			Usage: "GenAI-Perf's sweep: the `VALUES` (1,2,4) of --sweep-type's setting (concurrency by default), as its comma list (--concurrency 1,2,4)"},
		&cli.StringFlag{Name: "sweep-range", Category: cat, Sources: envVars("sweep-range"),
			Usage: "GenAI-Perf's sweep: `MIN:MAX[:STEP]` of --sweep-type's setting, MIN, MIN+STEP, … ≤ MAX; concurrency without STEP doubles from MIN to MAX (powers of 2)"},
		&cli.StringSliceFlag{Name: "variant", Aliases: []string{"sweep-variant"}, Category: cat, Sources: envVars("variant"),
			Usage: "a scenario `'[NAME:] KEY=VALUE, …'` (keys: concurrency, request-rate, isl, osl, isl-stddev, osl-stddev, conversation-turn-mean); repeat it, at least twice; one run each, in NAME/ (variant_N/ unnamed)"},
		&cli.StringFlag{Name: "parameter-sweep-mode", Value: "repeated", Category: cat, Sources: envVars("parameter-sweep-mode"),
			Usage: "`MODE` of a sweep with --num-profile-runs N: repeated (the whole sweep N times, profile_runs/trial_000K/…) or independent (N runs of each value before the next)"},
		&cli.BoolFlag{Name: "parameter-sweep-same-seed", Category: cat, Sources: envVars("parameter-sweep-same-seed"),
			Usage: "every sweep value sends the same prompts (by default each value gets its own prompt seed, so it misses the prefix cache the one before filled)"},
		&cli.FloatFlag{Name: "parameter-sweep-cooldown-seconds", Category: cat, Sources: envVars("parameter-sweep-cooldown-seconds"),
			Usage: "pause `S` seconds between sweep values"},
		&cli.BoolFlag{Name: "no-sweep-table", Category: cat, Sources: envVars("no-sweep-table"),
			Usage: "do not print the sweep table (it is still written: sweep.json, sweep.parquet)"},
		&cli.StringFlag{Name: "sweep-sampling", Category: cat, Sources: envVars("sweep-sampling"),
			Usage: "`METHOD` of a sampled sweep: sobol or latin_hypercube over the --sweep-dimension ranges (seeded by --random-seed; the design is written to sampling_design.json)"},
		&cli.IntFlag{Name: "sweep-samples", Category: cat, Sources: envVars("sweep-samples"),
			Usage: "`N` points of --sweep-sampling"},
		&cli.StringSliceFlag{Name: "sweep-dimension", Category: cat, Sources: envVars("sweep-dimension"),
			Usage: "a range of --sweep-sampling, `'FLAG:LO,HI[:int|float]'` (e.g. concurrency:1,128:int); repeatable"},
		&cli.StringFlag{Name: "search-recipe", Category: cat, Sources: envVars("search-recipe"),
			Usage: "`RECIPE`: " + strings.Join(sweep.Recipes, ", ") + " (docs/format/cli.md, \"Sweeps and searches\")"},
		&cli.FloatFlag{Name: "ttft-sla-ms", Category: cat, Sources: envVars("ttft-sla-ms"), Usage: "recipes: TTFT at --search-stat at most `MS`"},
		&cli.FloatFlag{Name: "itl-sla-ms", Aliases: []string{"tpot-sla-ms"}, Category: cat, Sources: envVars("itl-sla-ms"), Usage: "recipes: ITL at --search-stat at most `MS` (TPOT and ITL are one metric, as in AIPerf)"},
		&cli.StringFlag{Name: "search-style", Category: cat, Sources: envVars("search-style"), DefaultText: "monotonic",
			Usage: "`STYLE` of max-concurrency-under-sla: monotonic, smooth_isotonic, bo or optuna all name its monotone boundary search (a Gaussian process of the SLA level chooses each probe); grid is refused"},
		&cli.FloatFlag{Name: "e2e-sla-ms", Category: cat, Sources: envVars("e2e-sla-ms"), Usage: "recipes: request latency at --search-stat at most `MS`"},
		&cli.FloatFlag{Name: "error-rate-sla", Category: cat, Sources: envVars("error-rate-sla"), Usage: "recipes: error rate at most `R` (a fraction)"},
		&cli.FloatFlag{Name: "slo-attainment-fraction", Value: sweep.DefaultSLOAttainmentFraction, Category: cat, Sources: envVars("slo-attainment-fraction"),
			Usage: "max-goodput-under-slo: at least `F` of the requests meet --goodput"},
		&cli.FloatFlag{Name: "degradation-threshold", Value: sweep.DefaultDegradationThreshold, Category: cat, Sources: envVars("degradation-threshold"),
			Usage: "concurrency-ramp: the knee is the largest concurrency whose latency is at most (1 + `F`) × that at --concurrency-min"},
		&cli.FloatFlag{Name: "concurrency-min", Value: sweep.DefaultConcurrencyMin, Category: cat, Sources: envVars("concurrency-min"), Usage: "recipes: lowest concurrency `N`"},
		&cli.FloatFlag{Name: "concurrency-max", Value: sweep.DefaultConcurrencyMax, Category: cat, Sources: envVars("concurrency-max"), Usage: "recipes: highest concurrency `N`"},
		&cli.IntFlag{Name: "concurrency-steps", Value: sweep.DefaultConcurrencySteps, Category: cat, Sources: envVars("concurrency-steps"),
			Usage: "pareto-sweep: `N` concurrencies per pair, geometric from --concurrency-min to --concurrency-max"},
		&cli.FloatFlag{Name: "isl-min", Category: cat, Sources: envVars("isl-min"), Usage: "prefill-ttft-curve: shortest prompt, `TOKENS`"},
		&cli.FloatFlag{Name: "isl-max", Category: cat, Sources: envVars("isl-max"), Usage: "prefill-ttft-curve: longest prompt, `TOKENS`"},
		&cli.IntFlag{Name: "isl-steps", Value: sweep.DefaultCurveSteps, Category: cat, Sources: envVars("isl-steps"), Usage: "prefill-ttft-curve: `N` prompt lengths, linear"},
		&cli.FloatFlag{Name: "osl-min", Category: cat, Sources: envVars("osl-min"), Usage: "decode-itl-curve: shortest output, `TOKENS` (≥ 2)"},
		&cli.FloatFlag{Name: "osl-max", Category: cat, Sources: envVars("osl-max"), Usage: "decode-itl-curve: longest output, `TOKENS`"},
		&cli.IntFlag{Name: "osl-steps", Value: sweep.DefaultCurveSteps, Category: cat, Sources: envVars("osl-steps"), Usage: "decode-itl-curve: `N` output lengths, linear"},
		&cli.StringFlag{Name: "isl-osl-pairs", Category: cat, Sources: envVars("isl-osl-pairs"), Usage: "pareto-sweep: `PAIRS` ISL:OSL,ISL:OSL (e.g. 512:128,2048:256)"},
		&cli.StringSliceFlag{Name: "search-space", Category: cat, Sources: envVars("search-space"),
			Usage: "model-based search: a range `'PATH:LO,HI[:int|float]'` of a setting (concurrency, request-rate, isl, osl, …, or a dotted path ending in one); repeatable"},
		&cli.StringSliceFlag{Name: "search-metric", Category: cat, Sources: envVars("search-metric"),
			Usage: "model-based search: the `METRIC` to optimize (output_token_throughput, time_to_first_token, …); several give a Pareto front"},
		&cli.StringFlag{Name: "search-stat", Category: cat, Sources: envVars("search-stat"), DefaultText: "avg for --search-metric, p99 for recipes",
			Usage: "`STAT` of --search-metric and of the recipes' SLAs: avg, min, max, std, p1 … p99"},
		&cli.StringSliceFlag{Name: "search-direction", Category: cat, Sources: envVars("search-direction"),
			Usage: "maximize or minimize each --search-metric, in order (default maximize)"},
		&cli.StringSliceFlag{Name: "search-sla", Category: cat, Sources: envVars("search-sla"),
			Usage: "model-based search: a constraint `'METRIC:STAT:OP:THRESHOLD'` (time_to_first_token:p99:<=:500); repeatable"},
		&cli.StringSliceFlag{Name: "search-sla-tier", Category: cat, Sources: envVars("search-sla-tier"),
			Usage: "multi-tier search: a tier `'[LABEL:]METRIC:STAT:OP:THRESHOLD[,…]'` of upper-limit SLAs (gold:request_latency:p99:<=:300); 2 to 10, one boundary search of the one --search-space load each, sharing probes"},
		&cli.IntFlag{Name: "search-max-iterations", Value: isearch.DefaultMaxIterations, Category: cat, Sources: envVars("search-max-iterations"),
			Usage: "model-based search: at most `N` probes"},
		&cli.IntFlag{Name: "search-initial-points", Value: isearch.DefaultInitialPoints, Category: cat, Sources: envVars("search-initial-points"),
			Usage: "model-based search: `N` probes of a Sobol design before the model chooses"},
		&cli.Uint64Flag{Name: "search-random-seed", Category: cat, Sources: envVars("search-random-seed"), DefaultText: "--random-seed",
			Usage: "`SEED` of the model-based search (its design and candidates)"},
		&cli.StringFlag{Name: "bo-constraint-mode", Value: "probability", Category: cat, Sources: envVars("bo-constraint-mode"),
			Usage: "`MODE` of --search-sla in the model-based search: any value reads as probability (expected improvement × the probability that every SLA holds; AIPerf ignores the flag too)"},
		&cli.StringFlag{Name: "search-planner", Category: cat, Sources: envVars("search-planner"), DefaultText: "bayesian",
			Usage: "`PLANNER` of the model-based search: bayesian or optuna (a Gaussian process, constrained expected improvement), monotonic_sla or smooth_isotonic (the monotone boundary search, which a one-load SLA problem gets anyway)"},
		&cli.StringFlag{Name: "optuna-sampler", Category: cat, Sources: envVars("optuna-sampler"), DefaultText: "botorch",
			Usage: "`SAMPLER`: gp or botorch (reprise's Gaussian process); tpe is refused"},
		&cli.StringFlag{Name: "optuna-acquisition", Category: cat, Sources: envVars("optuna-acquisition"), DefaultText: "logei, or qlognehvi with several --search-metric",
			Usage: "`ACQ`: logei, qlogei, qnei, qlognei (expected improvement over the best measured value) with one --search-metric; qehvi, qnehvi, qlognehvi (a random Chebyshev scalarization per probe) with several"},
		&cli.StringFlag{Name: "optuna-terminator", Category: cat, Sources: envVars("optuna-terminator"), DefaultText: "none",
			Usage: "`RULE`: none, regret or emmr: the search stops once no setting is expected to improve the best by more than 1 % of its spread, whichever is given"},
		&cli.StringFlag{Name: "search-percentile-pooling", Category: cat, Sources: envVars("search-percentile-pooling"), DefaultText: "mean",
			Usage: "`MODE` of a probe's percentile over its --num-profile-runs: mean (of the runs'); pooled only with one run per probe, where it is the same"},
	}
}

// runProfileSweep is a profile command that sweeps or searches: one run
// directory per value (AIPerf's layout: ARTIFACT_DIR/concurrency_10/),
// sweep.json and sweep.parquet, the sweep table on stderr.
func runProfileSweep(ctx context.Context, a *app, cmd *cli.Command, o reprise.Options, runs sweep.RunsConfig, quiet bool) error {
	usage := func(err error) error {
		return exitcode.UsageError(err, "see 'reprise profile --help' and docs/format/cli.md")
	}
	cfg, err := profileSweepConfig(a, cmd, o, runs)
	if err != nil {
		return usage(err)
	}
	if !quiet && !cmd.Bool("no-sweep-table") {
		cfg.Table = a.stderr
	}
	if !quiet {
		cfg.Base.OnStart = func(s reprise.Start) {
			fmt.Fprintf(a.stderr, "reprise: sweep point %s (%s mode, %s)\n", s.Dir, s.Mode, runout.PlannedText(s.Planned, o.Replay.Duration))
		}
	}
	res, err := sweep.Run(ctx, cfg)
	if errors.Is(err, sweep.ErrPlanChanged) && !cmd.IsSet("overwrite") {
		// AIPerf writes over its artifact directory: a sweep of another
		// plan there is replaced, not resumed.
		if rmErr := os.Remove(filepath.Join(cfg.Dir, sweep.ManifestFile)); rmErr == nil {
			res, err = sweep.Run(ctx, cfg)
		}
	}
	if err != nil {
		if errors.Is(err, sweep.ErrInvalidConfig) {
			return usage(err)
		}
		if errors.Is(err, sweep.ErrPlanChanged) {
			return exitcode.UsageError(err, "give the flags of the sweep in --artifact-dir to resume it, or a new --artifact-dir")
		}
		return runError(err, &cfg.Base)
	}
	if quiet {
		fmt.Fprintln(a.stdout, cfg.Dir)
	} else {
		fmt.Fprintf(a.stderr, "sweep: %s (reprise report %s shows it)\n", cfg.Dir, cfg.Dir)
	}
	if res.Interrupted {
		return &exitcode.Error{Code: exitcode.RunError, Err: fmt.Errorf("interrupted; run the same command again to resume the sweep in %s", cfg.Dir)}
	}
	return res.Search.Verdict()
}

// profileSweepConfig maps a sweeping or searching profile command's
// flags, on top of its options o and runs, to the sweep's Config (in
// AIPerf's artifact directory, …-concurrency_sweep, unless --out); an
// error is the command line's.
func profileSweepConfig(a *app, cmd *cli.Command, o reprise.Options, runs sweep.RunsConfig) (sweep.Config, error) {
	ps, _, err := flagmap.ProfileSweep(cmd)
	if err != nil {
		return sweep.Config{}, err
	}
	recipe, rerr := flagmap.Recipe(cmd)
	search, serr := flagmap.Search(cmd)
	if err := errors.Join(rerr, serr); err != nil {
		return sweep.Config{}, err
	}
	if err := profileSweepAllowed(&o, ps.Active(), recipe != nil, search != nil); err != nil {
		return sweep.Config{}, err
	}
	cfg := sweep.NewConfig()
	cfg.Base = o
	cfg.Base.Log = a.log
	cfg.Base.Abort = a.abort.Done()
	cfg.PointsDir = "."
	cfg.Stop = sweep.StopConfig{SaturationTolerance: sweep.DefaultSaturationTolerance, MaxErrorRate: 1} // AIPerf runs every value
	cfg.FreshPromptSeed = !cmd.Bool("parameter-sweep-same-seed")
	cfg.Runs = runs
	if cmd.IsSet("parameter-sweep-cooldown-seconds") {
		var errs []error
		cfg.Cooldown = flagmap.Seconds(&errs, "parameter-sweep-cooldown-seconds", cmd.Float("parameter-sweep-cooldown-seconds"))
		if err := errors.Join(errs...); err != nil || cfg.Cooldown < 0 {
			return sweep.Config{}, fmt.Errorf("--parameter-sweep-cooldown-seconds %v: want seconds ≥ 0", cmd.Float("parameter-sweep-cooldown-seconds"))
		}
	}
	stim, err := cfg.ConfigureProfile(sweep.ProfilePlan{Sweep: ps, Recipe: recipe, Search: search, SweepMode: cmd.String("parameter-sweep-mode")})
	if err != nil {
		return sweep.Config{}, err
	}
	cfg.Dir = o.Output.Dir
	if !cmd.IsSet("out") {
		// AIPerf's artifact directory of a sweep: …-concurrency_sweep.
		name := flagmap.ArtifactName(&o)
		if i := strings.LastIndex(name, "-"); i >= 0 {
			name = name[:i]
		}
		cfg.Dir = filepath.Join("artifacts", name+"-"+stim)
	}
	return cfg, nil
}

// profileSweepAllowed checks that a profile command gives one kind of
// run (a sweep, a search recipe or a search space), not with the
// dashboard (as in AIPerf) nor over standard input.
func profileSweepAllowed(o *reprise.Options, kinds ...bool) error {
	n := 0
	for _, on := range kinds {
		if on {
			n++
		}
	}
	if n > 1 {
		return errors.New("a sweep (comma lists, --variant, --sweep-sampling), --search-recipe and --search-space are three kinds of run: give one")
	}
	if o.UI == reprise.UIDashboard {
		return errors.New("--ui-type dashboard is not supported with parameter sweeps and searches (as in AIPerf): use --ui-type simple or none")
	}
	if o.Trace.Path == "-" {
		return errors.New("a sweep replays its input once per value: give a file, not - (standard input)")
	}
	return nil
}
