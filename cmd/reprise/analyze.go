package main

import (
	"context"
	"errors"
	"fmt"
	"io"
	"io/fs"
	"os"
	"path/filepath"
	"strings"

	"github.com/urfave/cli/v3"

	"github.com/reprise-bench/reprise/arrowio"
	"github.com/reprise-bench/reprise/internal/exitcode"
	"github.com/reprise-bench/reprise/internal/spool"
	"github.com/reprise-bench/reprise/trace"
	"github.com/reprise-bench/reprise/trace/analyze"
)

// analyzeTraceConfig is the analyze-trace command line, validated before any
// reading starts.
type analyzeTraceConfig struct {
	Args        []string
	Format      string
	BlockSize   int
	MaxInput    int
	StdinSpool  int
	CacheSizes  string
	JSON        bool
	Output      string
	SkipInvalid bool
	Strict      bool
	DropFailed  bool
	ModelFilter string
}

// Validate reports every problem at once and returns the parsed settings.
func (c analyzeTraceConfig) Validate() (analyze.FileConfig, error) {
	var errs []error
	switch len(c.Args) {
	case 0:
		errs = append(errs, errors.New("missing TRACE: give a trace file, or - for standard input"))
	case 1:
		if sameFile(c.Args[0], c.Output) {
			errs = append(errs, fmt.Errorf("--output %s is the trace itself: the report would overwrite it; write it to another file (or unset REPRISE_OUTPUT)", c.Output))
		}
	default:
		errs = append(errs, fmt.Errorf("want one TRACE, got %d: %s", len(c.Args), strings.Join(c.Args, " ")))
	}
	f, err := trace.ParseFormat(c.Format)
	if err != nil {
		errs = append(errs, fmt.Errorf("--format: %w", err))
	}
	if c.BlockSize < 0 {
		errs = append(errs, fmt.Errorf("--block-size %d: want a positive number of tokens (0 = the format's default)", c.BlockSize))
	}
	if c.MaxInput < 1 {
		errs = append(errs, fmt.Errorf("--max-input-tokens %d: want a positive number of tokens", c.MaxInput))
	}
	if c.StdinSpool < 1 {
		errs = append(errs, fmt.Errorf("--stdin-spool-mib %d: want a positive number of MiB", c.StdinSpool))
	}
	sizes, err := analyze.ParseCacheSizes(c.CacheSizes)
	if err != nil {
		errs = append(errs, fmt.Errorf("--cache-sizes: %w", err))
	}
	cfg := analyze.FileConfig{
		StdinSpool: int64(c.StdinSpool) << 20,
		Analyzer:   analyze.Config{BlockSize: c.BlockSize, CacheSizes: sizes},
		Trace: trace.Options{
			Format: f, BlockSize: c.BlockSize, MaxInputTokens: c.MaxInput, Strict: c.Strict, SkipInvalid: c.SkipInvalid,
			DropFailed: c.DropFailed, ModelFilter: c.ModelFilter,
		},
	}
	return cfg, errors.Join(errs...)
}

// sameFile reports whether the paths a and b name one existing file; "-"
// (a standard stream) and "" never do.
func sameFile(a, b string) bool {
	if a == "" || a == "-" || b == "" || b == "-" {
		return false
	}
	fa, err := os.Stat(a)
	if err != nil {
		return false
	}
	fb, err := os.Stat(b)
	return err == nil && os.SameFile(fa, fb)
}

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
			c := analyzeTraceConfig{
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
			fc, err := c.Validate()
			if err != nil {
				return exitcode.UsageError(err, "see 'reprise analyze-trace --help'")
			}
			fc.Stdin = a.stdin
			fc.Trace.Log = a.log
			rep, err := analyze.File(ctx, c.Args[0], fc)
			if err != nil {
				return traceError(err, "--format", true)
			}
			return writeReport(a.stdout, c.Output, func(w io.Writer) error {
				if c.JSON {
					return analyze.WriteJSON(w, rep)
				}
				return analyze.WriteText(w, rep)
			})
		},
	}
}

// traceError maps a trace-reading error to its exit code: problems with the
// input itself (missing, unreadable format, bad row) are usage errors (2),
// with a hint (traceHint); anything else is a run error.
func traceError(err error, formatFlag string, canSkip bool) error {
	if h, ok := traceHint(err, formatFlag, canSkip); ok {
		return exitcode.UsageError(err, h)
	}
	return err
}

// traceHint says what to do about a problem with a trace file, naming the
// command's own flags: formatFlag names the trace format ("" when the
// command has none), canSkip tells whether it has --skip-invalid. ok is
// false when err is not about the trace file.
func traceHint(err error, formatFlag string, canSkip bool) (hint string, ok bool) {
	switch {
	case errors.Is(err, context.Canceled) || errors.Is(err, context.DeadlineExceeded):
		return "", false // interrupted: nothing is wrong with the trace
	case errors.Is(err, spool.ErrFull):
		return "", true // the message says what to do
	case errors.Is(err, fs.ErrNotExist):
		return "check the path; use - to read standard input", true
	case errors.Is(err, trace.ErrLFSPointer):
		return "fetch the data with 'git lfs pull' or download the real file", true
	case errors.Is(err, trace.ErrEmpty):
		if pe, ok := errors.AsType[*trace.ParseError](err); ok && pe.Path == "-" {
			return "nothing came on standard input: check the command that feeds the pipe", true
		}
		return "check the path, and that the file was written or downloaded in full", true
	case errors.Is(err, trace.ErrHeader):
		if formatFlag == "" {
			return "give the header the columns the error names (any order and case)", true
		}
		return "give the header the columns the error names (any order and case), or, if the file is in another format, name it with " + formatFlag, true
	case errors.Is(err, trace.ErrIsDir):
		return dirHint(err), true
	case errors.Is(err, trace.ErrRead):
		return "the file could not be read to its end (a compressed file may be cut short or corrupt): check it, or fetch it again", true
	case errors.Is(err, trace.ErrUnknownFormat):
		if formatFlag == "" {
			return "give a trace in a supported format (docs/format/traces.md)", true
		}
		return "name the format with " + formatFlag, true
	}
	if pe, isParse := errors.AsType[*trace.ParseError](err); isParse {
		if pe.Line == 0 {
			return "", true // about the whole file: the message says what to do
		}
		if canSkip {
			return "fix the row, or pass --skip-invalid to skip and count invalid rows", true
		}
		return "fix the row", true
	}
	return "", false
}

// dirHint says what to give instead of the directory a trace error names:
// one of its files (the first few are listed), or, for a run directory,
// what reads one.
func dirHint(err error) string {
	pe, ok := errors.AsType[*trace.ParseError](err)
	if !ok {
		return "give a trace file, not a directory"
	}
	ents, _ := os.ReadDir(pe.Path)
	var files []string
	for _, e := range ents {
		if e.Type().IsRegular() && !strings.HasPrefix(e.Name(), ".") {
			if e.Name() == arrowio.ManifestFile {
				return "it is a run directory: give a trace file (reprise summarize, report and compare read run directories)"
			}
			files = append(files, e.Name())
		}
	}
	switch {
	case len(files) == 0:
		return "give a trace file (this directory holds none)"
	case len(files) > 3:
		files = append(files[:3], "…")
	}
	return fmt.Sprintf("give a trace file, e.g. %s (the directory holds %s)", filepath.Join(pe.Path, files[0]), strings.Join(files, ", "))
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

// writeReport writes through fn to stdout, or to path when it is set and
// not "-".
func writeReport(stdout io.Writer, path string, fn func(io.Writer) error) error {
	if path == "" || path == "-" {
		return fn(stdout)
	}
	f, err := os.Create(path)
	if err != nil {
		return exitcode.UsageError(fmt.Errorf("--output: %w", err), "")
	}
	if err := fn(f); err != nil {
		f.Close()
		return fmt.Errorf("write %s: %w", path, err)
	}
	if err := f.Close(); err != nil {
		return fmt.Errorf("write %s: %w", path, err)
	}
	return nil
}
