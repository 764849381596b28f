package main

import (
	"context"
	"errors"
	"fmt"
	"io/fs"
	"os"
	"strconv"
	"strings"

	"github.com/urfave/cli/v3"

	"github.com/reprise-bench/reprise/internal/compare"
	"github.com/reprise-bench/reprise/internal/exitcode"
)

// compareConfig is the compare command line.
type compareConfig struct {
	Args    []string
	Targets []int // --targets: sides are these targets of the one run
	JSON    bool
	FailOn  []string
	Config  compare.Config
}

// Validate reports every problem at once.
func (c compareConfig) Validate() error {
	var errs []error
	switch {
	case c.Targets != nil && len(c.Args) != 1:
		errs = append(errs, fmt.Errorf("--targets compares the targets of one run: want one run directory, got %d", len(c.Args)))
	case c.Targets != nil && len(c.Targets) < 2:
		errs = append(errs, errors.New("--targets: want two or more target indexes, such as 0,1"))
	case c.Targets == nil && len(c.Args) < 2:
		errs = append(errs, fmt.Errorf("want two or more run directories (A B [C…]), or one with --targets, got %d", len(c.Args)))
	}
	for _, d := range c.Args {
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
	r := strings.NewReplacer("Level ", "--level ", "Resamples ", "--resamples ")
	return errors.New(r.Replace(err.Error()))
}

func compareCommand(a *app) *cli.Command {
	return &cli.Command{
		Name:      "compare",
		Usage:     "compare runs: every headline metric's difference with a bootstrap interval and a verdict",
		ArgsUsage: "A B [C…]",
		Description: "Compares each run after the first (B, C…) against the first (A): TTFT, TTFO, ITL and E2E at p50, p90\n" +
			"and p99, the throughputs, goodput, the error rate and the prefix-cache hit ratio, each with B−A, its\n" +
			"relative change, a seeded bootstrap confidence interval of B−A and a verdict (better, worse or no\n" +
			"significant difference). Runs that replayed the same trace (equal trace_sha256) are paired by trace\n" +
			"row. Warnings say why runs may not be comparable. --fail-on gates CI: a metric significantly worse\n" +
			"beyond its threshold exits 3.\n\n" +
			"  reprise compare runs/old runs/new --fail-on 'ttft.p99:+5%,output_token_throughput:-3%'",
		Flags: []cli.Flag{
			&cli.BoolFlag{Name: "json", Sources: envVars("json"), Usage: "print the comparison as JSON (docs/format/compare-json.md)"},
			&cli.StringSliceFlag{Name: "fail-on", Sources: envVars("fail-on"),
				Usage: "`METRIC:CHANGE` such as ttft.p99:+5% or e2e.p50:+20ms: exit 3 when B is significantly worse beyond it (repeatable, or comma-separated)"},
			&cli.FloatFlag{Name: "level", Value: compare.DefaultLevel, Sources: envVars("level"),
				Usage: "confidence `LEVEL` of the intervals"},
			&cli.IntFlag{Name: "resamples", Value: compare.DefaultResamples, Sources: envVars("resamples"),
				Usage: "`N` bootstrap resamples"},
			&cli.Uint64Flag{Name: "seed", Value: compare.DefaultSeed, Sources: cli.EnvVars("REPRISE_COMPARE_SEED"),
				Usage: "`SEED` of the bootstrap draws: equal seeds give equal intervals"},
			&cli.BoolFlag{Name: "unpaired", Sources: envVars("unpaired"),
				Usage: "resample each run on its own even when they replayed the same trace"},
			&cli.StringFlag{Name: "targets", Sources: envVars("targets"),
				Usage: "`I,J[,…]`: compare targets J… of one run with several --url against target I (a fan-out run pairs them by request)"},
		},
		Action: func(ctx context.Context, cmd *cli.Command) error {
			cfg := compare.NewConfig()
			cfg.Level, cfg.Resamples, cfg.Seed, cfg.Unpaired = cmd.Float("level"), cmd.Int("resamples"), cmd.Uint64("seed"), cmd.Bool("unpaired")
			c := compareConfig{Args: cmd.Args().Slice(), JSON: cmd.Bool("json"), FailOn: commaList(cmd.StringSlice("fail-on")), Config: cfg}
			var terr error
			if cmd.IsSet("targets") {
				c.Targets, terr = parseTargets(cmd.String("targets"))
			}
			if err := errors.Join(terr, c.Validate()); err != nil {
				return exitcode.UsageError(err, "see 'reprise compare --help'")
			}
			gates, _ := compare.ParseThresholds(c.FailOn)
			var runs []*compare.Run
			for _, d := range c.Args {
				if c.Targets != nil {
					for _, t := range c.Targets {
						r, err := compare.LoadTarget(d, t)
						if err != nil {
							return exitcode.UsageError(err, "--targets names targets by index from 0, in the order of the run's --url")
						}
						runs = append(runs, r)
					}
					continue
				}
				r, err := compare.Load(d)
				if err != nil {
					return err
				}
				runs = append(runs, r)
			}
			var results []*compare.Result
			for _, b := range runs[1:] {
				res, err := compare.Compare(runs[0], b, c.Config)
				if err != nil {
					return err
				}
				results = append(results, res)
			}
			var err error
			if c.JSON {
				err = compare.WriteJSON(a.stdout, results, gates)
			} else {
				err = compare.WriteTable(a.stdout, results)
			}
			if err != nil {
				return err
			}
			var failed []string
			for _, r := range results {
				for _, br := range r.Breaches(gates) {
					failed = append(failed, r.B.Label+": "+br.String())
				}
			}
			if len(failed) > 0 {
				return &exitcode.Error{Code: exitcode.SLOBreach,
					Err: fmt.Errorf("--fail-on: %d regression(s):\n  %s", len(failed), strings.Join(failed, "\n  "))}
			}
			return nil
		},
	}
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
