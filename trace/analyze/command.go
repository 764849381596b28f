package analyze

import (
	"context"
	"errors"
	"fmt"
	"io"
	"log/slog"
	"strings"

	"github.com/reprise-bench/reprise/internal/exitcode"
	"github.com/reprise-bench/reprise/trace"
)

// Command is the `reprise analyze-trace` command line, its flags as given
// (Validate parses and checks them before any reading starts).
type Command struct {
	Args        []string // TRACE: one path, "-" for standard input
	Format      string   // --format; "" detects it from the content
	BlockSize   int      // --block-size; 0 is the format's
	MaxInput    int      // --max-input-tokens
	StdinSpool  int      // --stdin-spool-mib, in MiB
	CacheSizes  string   // --cache-sizes, as [ParseCacheSizes] reads it
	JSON        bool     // --json
	Output      string   // --output; "" or "-" is standard output
	SkipInvalid bool     // --skip-invalid
	Strict      bool     // --strict
	DropFailed  bool     // --drop-failed
	ModelFilter string   // --model-filter
}

// Env is what [Run] reads and writes through.
type Env struct {
	// Stdin is read when the trace is "-".
	Stdin io.Reader
	// Log receives the reader's notes.
	Log *slog.Logger
	// Write opens the output (Command.Output), calls fill with it and
	// closes it, returning fill's error.
	Write func(fill func(io.Writer) error) error
}

// Validate reports every problem of c at once, its messages naming the
// flags, and returns the settings [File] takes.
func (c Command) Validate() (FileConfig, error) {
	var errs []error
	switch len(c.Args) {
	case 0:
		errs = append(errs, errors.New("missing TRACE: give a trace file, or - for standard input"))
	case 1:
		if trace.SameFile(c.Args[0], c.Output) {
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
	sizes, err := ParseCacheSizes(c.CacheSizes)
	if err != nil {
		errs = append(errs, fmt.Errorf("--cache-sizes: %w", err))
	}
	cfg := FileConfig{
		StdinSpool: int64(c.StdinSpool) << 20,
		Analyzer:   Config{BlockSize: c.BlockSize, CacheSizes: sizes},
		Trace: trace.Options{
			Format: f, BlockSize: c.BlockSize, MaxInputTokens: c.MaxInput, Strict: c.Strict, SkipInvalid: c.SkipInvalid,
			DropFailed: c.DropFailed, ModelFilter: c.ModelFilter,
		},
	}
	return cfg, errors.Join(errs...)
}

// Run is `reprise analyze-trace`: it validates c (a usage error, exit
// code 2, names every problem), analyses the trace ([File]; a problem
// with the trace is a usage error with [trace.Hint]'s hint) and writes
// the report, as JSON with c.JSON ([WriteJSON]) or as tables
// ([WriteText]), through env.Write.
func Run(ctx context.Context, c Command, env Env) error {
	fc, err := c.Validate()
	if err != nil {
		return exitcode.UsageError(err, "see 'reprise analyze-trace --help'")
	}
	fc.Stdin = env.Stdin
	fc.Trace.Log = env.Log
	rep, err := File(ctx, c.Args[0], fc)
	if err != nil {
		return trace.UsageError(err, "--format", true)
	}
	return env.Write(func(w io.Writer) error {
		if c.JSON {
			return WriteJSON(w, rep)
		}
		return WriteText(w, rep)
	})
}
