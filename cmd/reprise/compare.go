package main

import (
	"context"
	"fmt"

	"github.com/urfave/cli/v3"

	"github.com/reprise-bench/reprise/internal/compare"
	"github.com/reprise-bench/reprise/internal/flagmap"
)

// compareCommand is `reprise compare A B…`: a thin flag mapper over
// internal/compare.
func compareCommand(a *app) *cli.Command {
	return &cli.Command{
		Name:      "compare",
		Usage:     "compare runs: every headline metric's difference with a bootstrap interval and a verdict",
		ArgsUsage: "A B [C…] | A1 A2… vs B1 B2… [vs C1…]",
		Description: "Compares each side after the first (B, C…) against the first (A): TTFT, TTFO, ITL and E2E at p50, p90\n" +
			"and p99, the throughputs, goodput, the error rate and the prefix-cache hit ratio, each with B−A, its\n" +
			"relative change, a seeded bootstrap confidence interval of B−A and a verdict (better, worse, no\n" +
			"significant difference, equivalent, inconclusive). A side is a run directory, a directory of\n" +
			"repeated runs (--runs), or several run directories before a \"vs\": replicates, whose run-to-run\n" +
			"variation goes into the interval. The intervals hold together across the metrics (one false alarm\n" +
			"in any metric at most 5 % of the time at --level 0.95), and a change must pass a noise floor:\n" +
			"--min-effect, a calibration's timing error and, with a single run a side, the runs' own read lag and\n" +
			"lateness, and show in 4 of 5 consecutive parts of the runs. A degraded measurement makes a change\n" +
			"it could account for inconclusive. Single runs of one trace are paired by trace row. Warnings say\n" +
			"why runs may not be comparable. --fail-on gates CI: a metric significantly worse beyond its\n" +
			"threshold exits 3.\n\n" +
			"Examples:\n" +
			"  reprise compare runs/old runs/new --fail-on 'ttft.p99:+5%,output_token_throughput:-3%'\n" +
			"  reprise compare runs/old-1 runs/old-2 runs/old-3 vs runs/new-1 runs/new-2 runs/new-3\n" +
			"  reprise compare runs/old runs/new --equivalent-within 2%",
		Flags: []cli.Flag{
			&cli.BoolFlag{Name: "json", Sources: envVars("json"), Usage: "print the comparison as JSON (docs/format/compare-json.md)"},
			&cli.StringSliceFlag{Name: "fail-on", Sources: envVars("fail-on"),
				Usage: "`METRIC:CHANGE` such as ttft.p99:+5% or e2e.p50:+20ms: exit 3 when B is significantly worse beyond it (repeatable, or comma-separated)"},
			&cli.FloatFlag{Name: "level", Value: compare.DefaultLevel, Sources: envVars("level"),
				Usage: "confidence `LEVEL` of the intervals"},
			&cli.IntFlag{Name: "resamples", Value: compare.DefaultResamples, Sources: envVars("resamples"),
				Usage: "`N` bootstrap resamples"},
			&cli.StringFlag{Name: "min-effect", Value: fmt.Sprintf("%g%%", compare.DefaultMinEffect*100), Sources: envVars("min-effect"),
				Usage: "`PCT`: the smallest relative change (of A) called a change, however narrow its interval"},
			&cli.StringFlag{Name: "equivalent-within", Sources: envVars("equivalent-within"),
				Usage: "`PCT`: call a metric equivalent when its relative change's interval lies within ±PCT (no change larger than that)"},
			&cli.Uint64Flag{Name: "seed", Value: compare.DefaultSeed, Sources: cli.EnvVars("REPRISE_COMPARE_SEED"),
				Usage: "`SEED` of the bootstrap draws: equal seeds give equal intervals"},
			&cli.BoolFlag{Name: "unpaired", Sources: envVars("unpaired"),
				Usage: "resample each run on its own even when they replayed the same trace"},
			&cli.StringFlag{Name: "targets", Sources: envVars("targets"),
				Usage: "`I,J[,…]`: compare targets J… of one run with several --url against target I (a fan-out run pairs them by request)"},
		},
		Action: func(ctx context.Context, cmd *cli.Command) error {
			c := compare.Command{Args: cmd.Args().Slice(), JSON: cmd.Bool("json"), FailOn: flagmap.CommaList(cmd.StringSlice("fail-on")),
				Level: cmd.Float("level"), Resamples: cmd.Int("resamples"), Seed: cmd.Uint64("seed"), Unpaired: cmd.Bool("unpaired"),
				MinEffect: cmd.String("min-effect"), EquivalentWithin: setString(cmd, "equivalent-within"), Targets: setString(cmd, "targets")}
			return c.Run(ctx, a.stdout)
		},
	}
}

// setString is the value of the string flag name, or nil when it was not
// given.
func setString(cmd *cli.Command, name string) *string {
	if !cmd.IsSet(name) {
		return nil
	}
	v := cmd.String(name)
	return &v
}
