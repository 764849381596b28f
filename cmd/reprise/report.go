package main

import (
	"context"
	"fmt"
	"io"

	"github.com/urfave/cli/v3"

	"github.com/reprise-bench/reprise/internal/report"
	"github.com/reprise-bench/reprise/internal/report/assemble"
)

// reportCommand is `reprise report RUN...`: a thin flag mapper over
// internal/report/assemble.
func reportCommand(a *app) *cli.Command {
	return &cli.Command{
		Name:      "report",
		Usage:     "write one self-contained HTML file of plots and tables from one or several runs",
		ArgsUsage: "RUN_DIR... | SWEEP_DIR",
		Description: "Reads each RUN_DIR (its records, telemetry, manifest.json and summary.json) and writes one HTML\n" +
			"file that opens offline: the verdicts, the summary, latency CDFs and percentiles, TTFT against send\n" +
			"time by error kind, load, lateness and read lag over time, cached tokens, server and GPU telemetry,\n" +
			"errors and the manifest. Several runs are overlaid, one colour each. Large runs are binned and\n" +
			"sampled (docs/format/report.md), so the file stays small. Each chart saves as PNG or SVG.\n" +
			"A SWEEP_DIR (reprise sweep --out) reports its measured points, labelled by their settings, with the\n" +
			"sweep's table, throughput against p99 latency (Pareto front, knee), latency and goodput against load.\n\n" +
			"Examples:\n" +
			"  reprise report runs/2026-11-25T120000                # writes runs/2026-11-25T120000/report.html\n" +
			"  reprise report -o ab.html --label before --label after runs/old runs/new\n" +
			"  reprise report -o sweep.html sweeps/mooncake",
		Flags: []cli.Flag{
			&cli.StringFlag{Name: "output", Aliases: []string{"o"}, Sources: envVars("output"),
				Usage: "write the report to `FILE` (default: report.html in the RUN_DIR or SWEEP_DIR, or in the current directory for several runs)"},
			&cli.StringFlag{Name: "title", Sources: envVars("title"),
				Usage: "the page's `TITLE` (default: \"reprise report: \" and the runs' names)"},
			&cli.StringSliceFlag{Name: "label", Sources: envVars("label"),
				Usage: "`NAME` of a run in legends and tables, once per RUN_DIR in order (default: the directory's name)"},
			&cli.IntFlag{Name: "max-points", Sources: envVars("max-points"),
				Usage: fmt.Sprintf("at most `N` successful and N failed requests per run in each scatter (0: %d)", report.DefaultMaxPoints)},
		},
		Action: func(ctx context.Context, cmd *cli.Command) error {
			c := assemble.Config{Runs: cmd.Args().Slice(), Output: cmd.String("output"), Title: cmd.String("title"),
				Labels: cmd.StringSlice("label"), MaxPoints: int(cmd.Int("max-points"))}
			return assemble.Run(ctx, c, reportEnv(a.stdout))
		},
	}
}

// reportEnv is the assemble.Env that writes a report (writeOutput) and
// names it on stdout.
func reportEnv(stdout io.Writer) assemble.Env {
	return assemble.Env{Stdout: stdout, Write: func(path string, fill func(io.Writer) error) error {
		return writeOutput(stdout, path, fill)
	}}
}
