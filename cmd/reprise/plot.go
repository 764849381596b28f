package main

import (
	"bytes"
	"context"
	"errors"
	"fmt"
	"os"
	"path/filepath"

	"github.com/urfave/cli/v3"

	"github.com/reprise-bench/reprise/arrowio"
	"github.com/reprise-bench/reprise/internal/exitcode"
	"github.com/reprise-bench/reprise/internal/report"
	"github.com/reprise-bench/reprise/internal/report/assemble"
)

// plotConfig is the plot command line: `aiperf plot`'s flags.
type plotConfig struct {
	Paths     []string
	Output    string
	Dashboard bool
	Addr      string
	Theme     string
}

// Validate reports every problem at once.
func (c plotConfig) Validate() error {
	var errs []error
	if c.Theme != "light" {
		errs = append(errs, fmt.Errorf("--theme %s: the report has one theme, light; drop the flag", c.Theme))
	}
	if c.Output == "-" {
		errs = append(errs, errors.New("--output: give a directory (the report is DIR/report.html)"))
	}
	return errors.Join(errs...)
}

// plotCommand is `reprise plot`: aiperf plot's command line over reprise
// report, in profile's family. PATHs are run directories, sets of
// repeated runs, sweeps, or directories holding runs (aiperf's
// artifacts/); runs that differ in load are ordered by it with the
// Pareto front drawn.
func plotCommand(a *app) *cli.Command {
	return &cli.Command{
		Name:      "plot",
		Usage:     "run an `aiperf plot` command line: the HTML report of the runs under PATHs (default artifacts)",
		ArgsUsage: "[PATH...]",
		Description: "Takes aiperf plot's flags and writes reprise report's one-file HTML report of every run under\n" +
			"the PATHs (a run directory, a --runs directory, a sweep, or a directory of runs such as aiperf's\n" +
			"artifacts/) into --output/report.html. Runs that differ only in load (one profile per --concurrency,\n" +
			"AIPerf's Methodology B) are ordered by load and get the Pareto front and per-user tokens/s against\n" +
			"throughput. --dashboard serves the report at --host:--port instead, until interrupted\n" +
			"(reprise plot artifacts --dashboard --port 8050). Without PATH: artifacts.\n\n" +
			"Examples:\n" +
			"  reprise plot runs/old runs/new --output plots    # → plots/report.html\n" +
			"  reprise plot --paths runs/old --paths runs/new   # → runs/old/plots/report.html",
		Flags: []cli.Flag{
			&cli.StringSliceFlag{Name: "paths", Sources: envVars("paths"),
				Usage: "a `PATH` to plot (repeatable; with the arguments; default artifacts)"},
			&cli.StringFlag{Name: "output", Aliases: []string{"o"}, Sources: envVars("plot-output"),
				Usage: "write report.html into `DIR` (default: plots/ in the first PATH)"},
			&cli.BoolFlag{Name: "dashboard", Sources: envVars("dashboard"),
				Usage: "serve the report over HTTP at --host:--port until interrupted, instead of writing it"},
			&cli.StringFlag{Name: "host", Value: "127.0.0.1", Sources: envVars("plot-host"),
				Usage: "the dashboard's `HOST` (0.0.0.0: every interface; the report needs no authentication, so only on trusted networks)"},
			&cli.IntFlag{Name: "port", Value: 8050, Sources: envVars("plot-port"),
				Usage: "the dashboard's `PORT`"},
			&cli.StringFlag{Name: "theme", Value: "light", Sources: envVars("theme"),
				Usage: "aiperf's `THEME`: light (the report's one theme)"},
		},
		Action: func(ctx context.Context, cmd *cli.Command) error {
			c := plotConfig{Paths: append(cmd.Args().Slice(), cmd.StringSlice("paths")...), Output: cmd.String("output"),
				Dashboard: cmd.Bool("dashboard"), Addr: fmt.Sprintf("%s:%d", cmd.String("host"), cmd.Int("port")), Theme: cmd.String("theme")}
			if len(c.Paths) == 0 {
				c.Paths = []string{"artifacts"}
			}
			if err := c.Validate(); err != nil {
				return exitcode.UsageError(err, "see 'reprise plot --help'")
			}
			return runPlot(ctx, a, c)
		},
	}
}

// runPlot finds the runs under c.Paths and writes or serves their report.
func runPlot(ctx context.Context, a *app, c plotConfig) error {
	var runs []string
	for _, p := range c.Paths {
		found, err := report.FindRuns(p)
		if err != nil {
			return exitcode.UsageError(err, "give run directories written by reprise profile or replay, or a directory that holds them")
		}
		runs = append(runs, found...)
	}
	out := c.Output
	if out == "" {
		out = filepath.Join(c.Paths[0], "plots")
	}
	rc := assemble.Config{Runs: runs, Output: filepath.Join(out, arrowio.ReportFile)}
	if len(runs) == 1 && c.Output == "" && runs[0] == c.Paths[0] {
		rc.Output = filepath.Join(runs[0], "plots", arrowio.ReportFile)
	}
	if err := rc.Validate(); err != nil {
		return exitcode.UsageError(err, "see 'reprise plot --help'")
	}
	if !c.Dashboard {
		if err := os.MkdirAll(filepath.Dir(rc.Output), 0o755); err != nil {
			return err
		}
		return assemble.Write(ctx, rc, reportEnv(a.stdout))
	}
	var page bytes.Buffer
	rc.Output = "-"
	if err := assemble.Write(ctx, rc, reportEnv(&page)); err != nil {
		return err
	}
	return report.Serve(ctx, c.Addr, page.Bytes(), func(url string) {
		fmt.Fprintf(a.stdout, "plot: serving the report of %d runs at %s (Ctrl-C stops)\n", len(runs), url)
	})
}
