package main

import (
	"context"
	"errors"
	"fmt"
	"io/fs"
	"math"
	"os"
	"slices"
	"strconv"
	"strings"

	"github.com/urfave/cli/v3"

	"github.com/reprise-bench/reprise/internal/compare"
	"github.com/reprise-bench/reprise/internal/exitcode"
	"github.com/reprise-bench/reprise/internal/flagmap"
)

// compareConfig is the compare command line.
type compareConfig struct {
	Args    []string
	Targets []int // --targets: sides are these targets of the one run
	JSON    bool
	FailOn  []string
	Config  compare.Config
}

// sides splits the arguments into sides: separated by "vs" when one is
// given (A1 A2 vs B1 B2), else one directory a side. A directory of
// repeated runs (--runs: run-1 … run-N) is its runs.
func (c compareConfig) sides() ([][]string, error) {
	var out [][]string
	cur := []string{}
	for _, a := range c.Args {
		if a == "vs" {
			out = append(out, cur)
			cur = []string{}
			continue
		}
		dirs, err := compare.Replicates(a)
		if err != nil {
			return nil, err
		}
		if !slices.Contains(c.Args, "vs") {
			out = append(out, dirs)
			continue
		}
		cur = append(cur, dirs...)
	}
	if slices.Contains(c.Args, "vs") {
		out = append(out, cur)
	}
	return out, nil
}

// Validate reports every problem at once.
func (c compareConfig) Validate() error {
	var errs []error
	switch {
	case c.Targets != nil && len(c.Args) != 1:
		errs = append(errs, fmt.Errorf("--targets compares the targets of one run: want one run directory, got %d", len(c.Args)))
	case c.Targets != nil && len(c.Targets) < 2:
		errs = append(errs, errors.New("--targets: want two or more target indexes, such as 0,1"))
	case c.Targets != nil && slices.Contains(c.Args, "vs"):
		errs = append(errs, errors.New("--targets compares the targets of one run: it takes no \"vs\""))
	case c.Targets == nil && slices.Contains(c.Args, "vs"):
		sides, _ := c.sides()
		for i, side := range sides {
			if len(side) == 0 {
				errs = append(errs, fmt.Errorf("side %d has no run directory: write A1 A2 vs B1 B2, each side one or more run directories", i+1))
			}
		}
	case c.Targets == nil && len(c.Args) < 2:
		errs = append(errs, fmt.Errorf("want two or more run directories (A B [C…], or A1 A2 vs B1 B2), or one with --targets, got %d", len(c.Args)))
	}
	for _, d := range c.Args {
		if d == "vs" {
			continue
		}
		switch st, err := os.Stat(d); {
		case errors.Is(err, fs.ErrNotExist):
			errs = append(errs, fmt.Errorf("run directory %s does not exist: give directories written by reprise replay (their --out, or ones under runs/)", d))
		case err != nil:
			errs = append(errs, fmt.Errorf("run directory: %w", err))
		case !st.IsDir():
			errs = append(errs, fmt.Errorf("%s is a file, not a run directory", d))
		}
	}
	if err := c.Config.Validate(); err != nil {
		errs = append(errs, spellCompare(err))
	}
	if _, err := compare.ParseThresholds(c.FailOn); err != nil {
		errs = append(errs, err)
	}
	return errors.Join(errs...)
}

// spellCompare names compare.Config fields as flags.
func spellCompare(err error) error {
	r := strings.NewReplacer("Level ", "--level ", "Resamples ", "--resamples ", "MinEffect ", "--min-effect ", "EquivalentWithin ", "--equivalent-within ")
	return errors.New(r.Replace(err.Error()))
}

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
			c, err := compareConfigFrom(cmd)
			if err != nil {
				return exitcode.UsageError(err, "see 'reprise compare --help'")
			}
			gates, _ := compare.ParseThresholds(c.FailOn)
			var sides [][]*compare.Run
			if c.Targets != nil {
				for _, t := range c.Targets {
					r, err := compare.LoadTarget(ctx, c.Args[0], t)
					if err != nil {
						return exitcode.UsageError(err, "--targets names targets by index from 0, in the order of the run's --url")
					}
					sides = append(sides, []*compare.Run{r})
				}
			} else {
				ss, err := c.sides()
				if err != nil {
					return err
				}
				if sides, err = compare.LoadSides(ctx, ss); err != nil {
					return err
				}
			}
			results, err := compare.CompareSides(sides, c.Config)
			if err != nil {
				return err
			}
			if err := compare.Write(a.stdout, results, gates, c.JSON); err != nil {
				return err
			}
			if err := compare.Regressions(results, gates); err != nil {
				return &exitcode.Error{Code: exitcode.SLOBreach, Err: err}
			}
			return nil
		},
	}
}

// parsePercent parses a percentage such as "2%" (or a fraction such as
// 0.02) into a fraction.
func parsePercent(flag, v string) (float64, error) {
	t := strings.TrimSpace(v)
	pct := strings.HasSuffix(t, "%")
	x, err := strconv.ParseFloat(strings.TrimSpace(strings.TrimSuffix(t, "%")), 64)
	if err != nil || math.IsNaN(x) || math.IsInf(x, 0) || x < 0 {
		return 0, fmt.Errorf("%s %q: want a percentage such as 2%%", flag, v)
	}
	if pct {
		x /= 100
	}
	return x, nil
}

// parseTargets parses --targets: comma-separated target indexes.
func parseTargets(v string) ([]int, error) {
	ts := []int{}
	for f := range strings.SplitSeq(v, ",") {
		i, err := strconv.Atoi(strings.TrimSpace(f))
		if err != nil || i < 0 {
			return nil, fmt.Errorf("--targets %q: want target indexes from 0, comma-separated, such as 0,1", v)
		}
		ts = append(ts, i)
	}
	return ts, nil
}

// compareConfigFrom copies the compare flags into a compareConfig and
// validates it, reporting every problem at once.
func compareConfigFrom(cmd *cli.Command) (compareConfig, error) {
	cfg := compare.NewConfig()
	cfg.Level, cfg.Resamples, cfg.Seed, cfg.Unpaired = cmd.Float("level"), cmd.Int("resamples"), cmd.Uint64("seed"), cmd.Bool("unpaired")
	var perr []error
	var err error
	if cfg.MinEffect, err = parsePercent("--min-effect", cmd.String("min-effect")); err != nil {
		perr = append(perr, err)
	}
	if cmd.IsSet("equivalent-within") {
		if cfg.EquivalentWithin, err = parsePercent("--equivalent-within", cmd.String("equivalent-within")); err != nil {
			perr = append(perr, err)
		}
	}
	c := compareConfig{Args: cmd.Args().Slice(), JSON: cmd.Bool("json"), FailOn: flagmap.CommaList(cmd.StringSlice("fail-on")), Config: cfg}
	if cmd.IsSet("targets") {
		ts, terr := parseTargets(cmd.String("targets"))
		c.Targets = ts
		perr = append(perr, terr)
	}
	return c, errors.Join(append(perr, c.Validate())...)
}
