package main

import (
	"context"
	"errors"
	"fmt"
	"io"
	"time"

	"github.com/urfave/cli/v3"

	"github.com/reprise-bench/reprise"
	"github.com/reprise-bench/reprise/arrowio"
	"github.com/reprise-bench/reprise/internal/exitcode"
	"github.com/reprise-bench/reprise/internal/printable"
	"github.com/reprise-bench/reprise/trace"
)

// mergeCommand is `reprise merge DIR... -o MERGED`: a thin flag mapper
// over reprise.Merge.
func mergeCommand(a *app) *cli.Command {
	return &cli.Command{
		Name:      "merge",
		Usage:     "merge the run directories of a sharded replay (--shard I/N) into one run",
		ArgsUsage: "DIR...",
		Description: "Reads the run directories of the shards of one replay and writes one run directory, --out, with\n" +
			"every shard's records and events, and a summary computed from all of them, exactly as one run's\n" +
			"(percentiles over every request, not averages of the shards'); summary.json's \"merge\" holds each\n" +
			"shard's counts, errors and schedule lateness. summarize, report and compare read the merged\n" +
			"directory like any run's.\n\n" +
			"It checks that the run is whole: shards 0..N-1 each there once, each completed with a record for\n" +
			"every planned request, no trace row sent twice, one trace. When not, the merged run is still\n" +
			"written, every problem is printed, and the exit code is 1.\n\n" +
			"Example:\n" +
			"  reprise merge -o runs/merged runs/shard-0 runs/shard-1 runs/shard-2 runs/shard-3",
		Flags: []cli.Flag{
			&cli.StringFlag{Name: "out", Aliases: []string{"o"}, Sources: envVars("merge-out"),
				Usage: "merged run `DIR` (new or empty, unless --overwrite)"},
			&cli.BoolFlag{Name: "overwrite", Sources: envVars("merge-overwrite"),
				Usage: "reuse a non-empty --out that holds an earlier run (its files are removed first)"},
			&cli.StringFlag{Name: "format", Value: "parquet", Sources: envVars("merge-format"),
				Usage: "record file `FORMAT` of the merged run: parquet, arrow or jsonl"},
			&cli.DurationFlag{Name: "wait", Sources: envVars("merge-wait"),
				Usage: "wait up to `D` for every DIR to hold a complete run (its summary.json), as a merge started beside its shards must"},
		},
		Action: func(ctx context.Context, cmd *cli.Command) error {
			o, err := mergeOptions(cmd)
			if err != nil {
				return exitcode.UsageError(err, "see 'reprise merge --help'")
			}
			res, err := reprise.Merge(ctx, o)
			if res == nil {
				if errors.Is(err, arrowio.ErrRunDirInUse) {
					return exitcode.UsageError(err, "give a new --out, or --overwrite to replace the run in it")
				}
				return err
			}
			if perr := printMerge(a.stdout, res); perr != nil {
				return perr
			}
			if err != nil {
				for _, p := range res.Report.Problems {
					fmt.Fprintf(a.stderr, "ERROR: %s\n", printable.Line(p))
				}
				return fmt.Errorf("%w: %d problems (summary.json merge.problems in %s)", reprise.ErrMergeIncomplete,
					len(res.Report.Problems), res.Dir)
			}
			return nil
		},
	}
}

// printMerge prints the merged run's summary table and one line per
// shard.
func printMerge(w io.Writer, res *reprise.MergeResult) error {
	fmt.Fprintf(w, "merged %d run directories into %s\n", len(res.Report.Shards), res.Dir)
	for _, s := range res.Report.Shards {
		name := "part"
		if s.Count > 0 {
			name = fmt.Sprintf("shard %d/%d", s.Index, s.Count)
		}
		late := "-"
		if s.Lateness != nil {
			late = fmt.Sprintf("p50 %v p99 %v max %v", msDur(s.Lateness.P50), msDur(s.Lateness.P99), msDur(s.Lateness.Max))
		}
		fmt.Fprintf(w, "  %-11s %6d records (%d ok, %d failed, %d warmup), %d late; lateness %s  %s\n",
			name, s.Requests, s.OK, s.Errors, s.Warmup, s.LateCount, late, s.Dir)
	}
	return res.Summary.WriteTable(w)
}

// msDur turns milliseconds into a duration rounded to the microsecond.
func msDur(ms float64) time.Duration {
	return time.Duration(ms * float64(time.Millisecond)).Round(time.Microsecond)
}

// mergeOptions copies the merge flags into reprise.MergeOptions and checks
// them, reporting every problem at once.
func mergeOptions(cmd *cli.Command) (reprise.MergeOptions, error) {
	o := reprise.MergeOptions{Dirs: cmd.Args().Slice(), Out: cmd.String("out"), Overwrite: cmd.Bool("overwrite"),
		Format: cmd.String("format"), Wait: cmd.Duration("wait")}
	var errs []error
	if len(o.Dirs) == 0 {
		errs = append(errs, errors.New("missing DIR: give the run directories of the shards"))
	}
	if o.Out == "" {
		errs = append(errs, errors.New("missing --out: give the merged run directory"))
	}
	for _, d := range o.Dirs {
		if o.Out != "" && trace.SameFile(d, o.Out) {
			errs = append(errs, fmt.Errorf("--out %s is one of the shards: write the merged run to a new directory", o.Out))
		}
	}
	if o.Wait < 0 {
		errs = append(errs, fmt.Errorf("--wait %v: want a duration ≥ 0", o.Wait))
	}
	switch o.Format {
	case "parquet", "arrow", "jsonl":
	default:
		errs = append(errs, fmt.Errorf("--format %q: want parquet, arrow or jsonl", o.Format))
	}
	return o, errors.Join(errs...)
}
