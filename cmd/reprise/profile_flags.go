package main

import (
	"context"
	"fmt"
	"os"
	"path/filepath"

	"github.com/urfave/cli/v3"

	"github.com/reprise-bench/reprise/arrowio"
	"github.com/reprise-bench/reprise/internal/exitcode"
)

// profileRunFlags are AIPerf's flags that watch and report a run,
// mapped by flagmap.ProfileRunFlags (a profileHooks entry).
func profileRunFlags() []cli.Flag {
	const cat = "AIPerf"
	return []cli.Flag{
		&cli.FloatFlag{Name: "failed-request-threshold", Category: cat, HideDefault: true, Sources: envVars("failed-request-threshold"),
			Usage: "abort the run once more than `F` (a fraction, 0 to 1) of its measured requests failed, judged from the max(--concurrency, 10)-th to end (default: never): in-flight requests get the grace period, every file is written with run_info.stopped saying why, exit 3"},
		&cli.FloatFlag{Name: "stats-interval", Category: cat, HideDefault: true, Sources: envVars("stats-interval"),
			Usage: "print the progress line every `S` seconds (default 5, or 0.25 redrawn in place on a terminal)"},
		&cli.BoolFlag{Name: "extra-verbose", Aliases: []string{"vv"}, Category: cat, Sources: envVars("extra-verbose"),
			Usage: "log at debug level, reprise's most detailed (AIPerf's trace level)"},
		&cli.BoolFlag{Name: "output-tokens-mean-deterministic", Category: cat, Sources: envVars("output-tokens-mean-deterministic"),
			Usage: "send min_tokens equal to max_tokens with ignore_eos, so the server generates exactly the asked length (GenAI-Perf's flag; SGLang's generate endpoint gets min_new_tokens)"},
		&cli.BoolFlag{Name: "auto-plot", Aliases: []string{"generate-plots"}, Category: cat, Sources: envVars("auto-plot"),
			Usage: "after the run, write its HTML report as reprise plot ARTIFACT_DIR does (ARTIFACT_DIR/plots/report.html); --generate-plots is GenAI-Perf's name"},
		&cli.BoolFlag{Name: "plot-required", Category: cat, Sources: envVars("plot-required"),
			Usage: "with --auto-plot, a report that cannot be drawn fails the run (exit 1 with the reason) instead of a warning"},
		&cli.BoolFlag{Name: "no-auto-plot", Category: cat, Sources: envVars("no-auto-plot"),
			Usage: "draw no report after the run (the default)"},
		&cli.BoolFlag{Name: "adaptive-scale", Category: cat, Sources: envVars("adaptive-scale"),
			Usage: "during one run, raise the concurrency from 1 while every --adaptive-scale-sla holds, back off when one fails, and hold the highest that held (needs --benchmark-duration, --concurrency as the ceiling, --adaptive-sustain-duration); writes adaptive_scale_events.jsonl and adaptive_scale_summary.json"},
		&cli.FloatFlag{Name: "adaptive-sustain-duration", Category: cat, HideDefault: true, Sources: envVars("adaptive-sustain-duration"), Usage: "--adaptive-scale: hold the setting found for `S` seconds, then end the run"},
		&cli.FloatFlag{Name: "adaptive-assessment-period", Aliases: []string{"adaptive-scale-assessment-period"}, Category: cat, HideDefault: true,
			Sources: envVars("adaptive-assessment-period"), Usage: "--adaptive-scale: judge the SLAs over windows of `S` seconds (≥ 1; default 30)"},
		&cli.StringSliceFlag{Name: "adaptive-scale-sla", Category: cat, Sources: envVars("adaptive-scale-sla"),
			Usage: "--adaptive-scale: an SLA `'METRIC:STAT:OP:THRESHOLD'` every window must meet (request_latency:p95:le:30000, error_rate:avg:le:0.01; ms for latencies); repeatable"},
		&cli.StringFlag{Name: "adaptive-scale-control", Category: cat, Sources: envVars("adaptive-scale-control"),
			Usage: "--adaptive-scale: `'concurrency:MIN,MAX:int'`, the range of the setting (default 1 up to --concurrency)"},
	}
}

// profileAutoPlot runs reprise plot on the artifact directory dir after
// the run when --auto-plot asks for it (autoPlot); the run's own outcome,
// runErr, is returned, or with --plot-required the plot's failure.
func profileAutoPlot(ctx context.Context, a *app, cmd *cli.Command, dir string, runErr error) error {
	if !cmd.Bool("auto-plot") || cmd.Bool("no-auto-plot") {
		return runErr
	}
	return autoPlot(ctx, a, dir, cmd.Bool("plot-required"), runErr)
}

// autoPlot draws the report of the run directory dir when the run wrote a
// summary. A report that cannot be drawn is logged, or, when required and
// the run itself succeeded, returned as a run error (exit 1); a run that
// failed keeps its own error and exit code.
func autoPlot(ctx context.Context, a *app, dir string, required bool, runErr error) error {
	if _, err := os.Stat(filepath.Join(dir, arrowio.SummaryFile)); err != nil {
		if _, err := os.Stat(filepath.Join(dir, arrowio.RunsFile)); err != nil {
			return runErr // nothing was measured (or a sweep, which has its own report)
		}
	}
	err := runPlot(ctx, a, plotConfig{Paths: []string{dir}, Theme: "light"})
	if err == nil {
		return runErr
	}
	if required && runErr == nil {
		return &exitcode.Error{Code: exitcode.RunError, Err: fmt.Errorf("--plot-required: the report of %s was not written: %w", dir, err),
			Hint: "the run's files are written; draw the report again with reprise plot " + dir}
	}
	a.log.Warn("--auto-plot: the report was not written", "err", err)
	return runErr
}

// profileStabilityFlags are GenAI-Perf's (perf_analyzer's) stability
// profileStabilityFlags are GenAI-Perf's (perf_analyzer's) stability
// stop, mapped by flagmap.ProfileStability.
func profileStabilityFlags() []cli.Flag {
	const cat = "GenAI-Perf"
	return []cli.Flag{
		&cli.IntFlag{Name: "measurement-interval", Aliases: []string{"p"}, Category: cat, HideDefault: true, Sources: envVars("measurement-interval"),
			Usage: "measure in windows of `MS` milliseconds and stop when the last 3 agree within --stability-percentage (default 10000 with -s)"},
		&cli.FloatFlag{Name: "stability-percentage", Aliases: []string{"s"}, Category: cat, HideDefault: true, Sources: envVars("stability-percentage"),
			Usage: "the last 3 windows agree when, for throughput and mean latency each, max / min ≤ 1 + `PCT`/100 (default 999: any 3 windows)"},
		&cli.IntFlag{Name: "max-trials", Category: cat, HideDefault: true, Sources: envVars("max-trials"),
			Usage: "with -p or -s, stop after `N` windows when they never agree (perf_analyzer's; default 10, at least 3)"},
	}
}
