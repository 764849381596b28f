package main

import (
	"context"

	"github.com/urfave/cli/v3"

	"github.com/reprise-bench/reprise/internal/exitcode"
	"github.com/reprise-bench/reprise/internal/summarize"
)

// summarizeCommand is `reprise summarize`: its flags, then [summarize.Run].
func summarizeCommand(a *app) *cli.Command {
	return &cli.Command{
		Name:      "summarize",
		Usage:     "recompute a run's summary from its record files",
		ArgsUsage: "RUN_DIR",
		Description: "Reads RUN_DIR/records (Parquet, Arrow or JSON Lines; parts or one file) and prints the summary the run\n" +
			"printed, computed from the files alone; manifest.json and summary.json supply the run's options\n" +
			"(goodput SLOs, streaming, token counting) when present.\n\n" +
			"--format benchfmt prints Go benchmark lines; to compare two server builds, replay each a few times\n" +
			"and run benchstat on the concatenated lines:\n" +
			"  for d in runs/old-*; do reprise summarize --format benchfmt $d; done > old.txt\n" +
			"  for d in runs/new-*; do reprise summarize --format benchfmt $d; done > new.txt\n" +
			"  benchstat old.txt new.txt",
		Flags: []cli.Flag{
			&cli.BoolFlag{Name: "json", Sources: envVars("json"), Usage: "print summary.json instead of the table (--format json)"},
			&cli.StringFlag{Name: "format", Value: "table", Sources: envVars("summary-format"),
				Usage: "`FORMAT`: table, json (summary.json) or benchfmt (Go benchmark lines: compare runs with benchstat)"},
			&cli.StringFlag{Name: "goodput", Sources: envVars("goodput"),
				Usage: "`SLOS` such as \"ttft:250 itl:10\" instead of the run's own"},
			&cli.StringFlag{Name: "export", Sources: envVars("export"),
				Usage: "`KIND`: aiperf also writes profile_export.jsonl and profile_export_aiperf.json to RUN_DIR"},
		},
		Action: func(ctx context.Context, cmd *cli.Command) error {
			c := summarize.Config{Args: cmd.Args().Slice(), JSON: cmd.Bool("json"), Format: cmd.String("format"),
				Goodput: cmd.String("goodput"), Export: cmd.String("export")}
			if err := c.Validate(); err != nil {
				return exitcode.UsageError(err, "see 'reprise summarize --help'")
			}
			return summarize.Run(ctx, a.stdout, c)
		},
	}
}
