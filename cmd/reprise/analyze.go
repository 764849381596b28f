package main

import (
	"context"
	"io"
	"strings"

	"github.com/urfave/cli/v3"

	"github.com/reprise-bench/reprise/internal/spool"
	"github.com/reprise-bench/reprise/trace"
	"github.com/reprise-bench/reprise/trace/analyze"
)

// analyzeTraceCommand is `reprise analyze-trace TRACE`.
func analyzeTraceCommand(a *app) *cli.Command {
	return &cli.Command{
		Name:      "analyze-trace",
		Usage:     "print a trace's arrival pattern, lengths and prefix-cache hit ratios",
		ArgsUsage: "TRACE",
		Description: "Reads TRACE (any supported format, .gz/.zst too; - = stdin) and prints, in time order:\n" +
			"arrivals (rate, peaks, burstiness), input/output lengths, and for traces with hash ids the\n" +
			"prefix-cache ceiling (token-weighted leading-run hits of an infinite cache), the LRU hit ratio\n" +
			"at each --cache-sizes capacity, block popularity skew and reuse times; then the statistics of\n" +
			"AIPerf's analyze-trace under the same names (unweighted, file order).\n" +
			"Definitions: docs/format/analyze-json.md. --json writes the versioned JSON document instead.\n\n" +
			"Examples:\n" +
			"  reprise analyze-trace traces/mooncake-sample.jsonl\n" +
			"  reprise analyze-trace --cache-sizes 500K,3M,50M --json -o stats.json conversation_trace.jsonl\n" +
			"  zstd -dc big.jsonl.zst | reprise analyze-trace --format bailian -",
		Flags: []cli.Flag{
			&cli.StringFlag{Name: "format", Usage: "trace `FORMAT`: " + strings.Join(trace.FormatNames(), ", ") + " (default: detect from the content)", Sources: envVars("trace-format")},
			&cli.IntFlag{Name: "block-size", HideDefault: true, Usage: "`TOKENS` per hash id (default: the format's, 512 Mooncake, 16 Bailian)", Sources: envVars("block-size")},
			&cli.IntFlag{Name: "max-input-tokens", Value: trace.DefaultMaxInputTokens, Usage: "refuse a row of more than `N` input tokens (the default, 2^24, is above any model's context window)", Sources: envVars("max-input-tokens")},
			stdinSpoolFlag("for a second pass when it is not in time order (a larger one in time order is analysed as it streams)"),
			&cli.StringFlag{Name: "cache-sizes", Value: "1M,3M,10M,50M", Usage: "LRU capacities in `TOKENS`, comma-separated, K/M/G = 10³/10⁶/10⁹ (empty = none)", Sources: envVars("cache-sizes")},
			&cli.BoolFlag{Name: "json", Usage: "write the JSON document (schema reprise.analyze/v1) instead of tables", Sources: envVars("json")},
			&cli.StringFlag{Name: "output", Aliases: []string{"o"}, Usage: "write the report to `FILE` instead of stdout", Sources: envVars("output")},
			&cli.BoolFlag{Name: "skip-invalid", Usage: "skip invalid rows, counting them, instead of stopping at the first", Sources: envVars("skip-invalid")},
			&cli.BoolFlag{Name: "strict", Usage: "reject a trace whose rows are not in time order instead of sorting it", Sources: envVars("strict")},
			&cli.BoolFlag{Name: "drop-failed", Usage: "drop rows the trace marks as failed (BurstGPT zero-token responses)", Sources: envVars("drop-failed")},
			&cli.StringFlag{Name: "model-filter", Usage: "keep only BurstGPT rows of `MODEL` (e.g. ChatGPT)", Sources: envVars("model-filter")},
		},
		Action: func(ctx context.Context, cmd *cli.Command) error {
			c := analyze.Command{
				Args:        cmd.Args().Slice(),
				Format:      cmd.String("format"),
				BlockSize:   cmd.Int("block-size"),
				MaxInput:    cmd.Int("max-input-tokens"),
				StdinSpool:  cmd.Int("stdin-spool-mib"),
				CacheSizes:  cmd.String("cache-sizes"),
				JSON:        cmd.Bool("json"),
				Output:      cmd.String("output"),
				SkipInvalid: cmd.Bool("skip-invalid"),
				Strict:      cmd.Bool("strict"),
				DropFailed:  cmd.Bool("drop-failed"),
				ModelFilter: cmd.String("model-filter"),
			}
			return analyze.Run(ctx, c, analyze.Env{Stdin: a.stdin, Log: a.log,
				Write: func(fill func(io.Writer) error) error { return writeReport(a.stdout, c.Output, fill) }})
		},
	}
}

// stdinSpoolFlag is --stdin-spool-mib of the commands that read a trace
// from standard input; why says what the copy is for.
func stdinSpoolFlag(why string) *cli.IntFlag {
	return &cli.IntFlag{Name: "stdin-spool-mib", Value: spool.DefaultMax >> 20, Sources: envVars("stdin-spool-mib"),
		Usage: "keep at most `MIB` of a trace read from standard input (-) in a temporary file, " + why +
			"; the file has no name, so nothing is left behind, and it is in $TMPDIR (memory on a tmpfs)"}
}

// withCategory sets f's help category.
func withCategory(f *cli.IntFlag, category string) *cli.IntFlag {
	f.Category = category
	return f
}
