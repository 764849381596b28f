package summarize

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"io/fs"
	"os"
	"strings"

	"github.com/reprise-bench/reprise/arrowio"
	"github.com/reprise-bench/reprise/engine/summary"
	"github.com/reprise-bench/reprise/internal/exitcode"
	"github.com/reprise-bench/reprise/internal/runout"
)

// Config is the summarize command line. The zero value is invalid: it
// needs one argument and a Format.
type Config struct {
	Args    []string // the arguments: one run directory, RUN_DIR
	JSON    bool     // --json, short for --format json
	Format  string   // table, json or benchfmt
	Goodput string   // "" = the run's own --goodput (from manifest.json)
	Export  string   // "" or aiperf
}

// Validate reports every problem at once. It reads nothing but RUN_DIR's
// file status.
func (c Config) Validate() error {
	var errs []error
	switch len(c.Args) {
	case 0:
		errs = append(errs, errors.New("missing RUN_DIR: give a run directory written by reprise replay"))
	case 1:
		switch st, err := os.Stat(c.Args[0]); {
		case errors.Is(err, fs.ErrNotExist):
			errs = append(errs, fmt.Errorf("RUN_DIR %s does not exist: give a run directory written by reprise replay (its --out, or one under runs/)", c.Args[0]))
		case err != nil:
			errs = append(errs, fmt.Errorf("RUN_DIR: %w", err))
		case !st.IsDir():
			errs = append(errs, fmt.Errorf("RUN_DIR %s is a file, not a directory: give the run directory that holds the record files", c.Args[0]))
		}
	default:
		errs = append(errs, fmt.Errorf("want one RUN_DIR, got %d: %s", len(c.Args), strings.Join(c.Args, " ")))
	}
	if c.Goodput != "" {
		if _, err := summary.ParseGoodput(c.Goodput); err != nil {
			errs = append(errs, fmt.Errorf("--goodput: %w", err))
		}
	}
	switch c.Export {
	case "", "aiperf":
	default:
		errs = append(errs, fmt.Errorf("--export %q: want aiperf", c.Export))
	}
	switch c.Format {
	case "table", "json":
	case "benchfmt":
		if c.JSON {
			errs = append(errs, errors.New("--json and --format benchfmt: pick one"))
		}
	default:
		errs = append(errs, fmt.Errorf("--format %q: want table, json or benchfmt", c.Format))
	}
	return errors.Join(errs...)
}

// Run recomputes the summary of the run directory c.Args[0] from its
// record files, with the run's own options (manifest.json, summary.json)
// and c's --goodput, and writes it to w in c's format: the table and the
// record writer's note, summary.json, or Go benchmark lines
// ([summary.Summary.WriteBenchfmt]). A directory of repeated runs
// (replay --runs N) gives every run's summary and then their across-run
// intervals. With c.Export aiperf it also writes the AIPerf export files
// into each run directory. c must be valid (see [Config.Validate]); a run
// directory without records is a usage error (exit code 2) with a hint.
func Run(ctx context.Context, w io.Writer, c Config) error {
	dirs, repeated, err := arrowio.RepeatedRuns(c.Args[0])
	if err != nil {
		return err
	}
	if repeated {
		return runRepeated(w, c, dirs)
	}
	s, set, err := summarizeRun(ctx, c, c.Args[0])
	if err != nil {
		return err
	}
	if c.Format == "benchfmt" {
		return s.WriteBenchfmt(w)
	}
	if c.JSON || c.Format == "json" {
		b, err := arrowio.SummaryJSONMerged(s, set.RecordWriter, set.Merge)
		if err != nil {
			return err
		}
		_, err = w.Write(b)
		return err
	}
	if err := s.WriteTable(w); err != nil {
		return err
	}
	_, err = io.WriteString(w, runout.WriterNote(set.RecordWriter))
	return err
}

// summarizeRun recomputes the summary of the run directory dir with the
// options of c (and exports it with --export aiperf).
func summarizeRun(ctx context.Context, c Config, dir string) (*summary.Summary, arrowio.Settings, error) {
	run, err := arrowio.OpenContext(ctx, dir)
	if err != nil {
		return nil, arrowio.Settings{}, err
	}
	set, err := run.Settings()
	if err != nil {
		return nil, set, err
	}
	if c.Goodput != "" {
		set.Options.Goodput, _ = summary.ParseGoodput(c.Goodput)
	}
	s, err := run.Summarize(set.Info, set.Options)
	if err != nil {
		if errors.Is(err, arrowio.ErrNoTable) {
			return nil, set, exitcode.UsageError(err, "RUN_DIR must hold records.parquet or records/part-*.parquet (reprise replay --out), or be a directory of repeated runs (reprise replay --runs N)")
		}
		return nil, set, err
	}
	if c.Export == "aiperf" {
		if err := arrowio.ExportAIPerf(run.Dir(), s); err != nil {
			return nil, set, fmt.Errorf("--export aiperf: %w", err)
		}
	}
	return s, set, nil
}

// runRepeated is Run on a directory of repeated runs (replay --runs N, a
// sweep point with --runs): every run's summary, recomputed from its
// records, then the across-run intervals of those summaries (at the level
// and with the stop rule runs.json records).
func runRepeated(w io.Writer, c Config, dirs []string) error {
	var goodput []summary.SLO
	if c.Goodput != "" {
		goodput, _ = summary.ParseGoodput(c.Goodput)
	}
	sums, sets, across, err := arrowio.SummarizeRepeated(c.Args[0], dirs, goodput)
	if err != nil {
		if errors.Is(err, arrowio.ErrNoTable) {
			return exitcode.UsageError(err, "each run of a --runs directory must hold records.parquet or records/part-*.parquet")
		}
		return err
	}
	if c.Export == "aiperf" {
		for i, d := range dirs {
			if err := arrowio.ExportAIPerf(d, sums[i]); err != nil {
				return fmt.Errorf("--export aiperf: %w", err)
			}
		}
	}
	switch {
	case c.Format == "benchfmt":
		// One block per run: benchstat reads the runs as samples.
		for _, s := range sums {
			if err := s.WriteBenchfmt(w); err != nil {
				return err
			}
		}
		return nil
	case c.JSON || c.Format == "json":
		return writeRepeatedJSON(w, sums, sets, across)
	}
	for i, s := range sums {
		fmt.Fprintf(w, "== %s (run %d of %d)\n", dirs[i], i+1, len(dirs))
		if err := s.WriteTable(w); err != nil {
			return err
		}
		if _, err := io.WriteString(w, runout.WriterNote(sets[i].RecordWriter)); err != nil {
			return err
		}
		fmt.Fprintln(w)
	}
	fmt.Fprintf(w, "== %s: across %d runs\n", c.Args[0], len(dirs))
	return across.WriteTable(w)
}

// writeRepeatedJSON writes the JSON of a directory of repeated runs: the
// run directories, every run's summary.json and the across-run intervals.
func writeRepeatedJSON(w io.Writer, sums []*summary.Summary, sets []arrowio.Settings, across *summary.AcrossRuns) error {
	out := struct {
		RunDirs   []string            `json:"run_dirs"`
		Summaries []json.RawMessage   `json:"summaries"`
		Across    *summary.AcrossRuns `json:"across_runs"`
	}{RunDirs: across.RunDirs, Across: across}
	for i, s := range sums {
		b, err := arrowio.SummaryJSONMerged(s, sets[i].RecordWriter, sets[i].Merge)
		if err != nil {
			return err
		}
		out.Summaries = append(out.Summaries, b)
	}
	b, err := json.MarshalIndent(out, "", "  ")
	if err != nil {
		return err
	}
	_, err = w.Write(append(b, '\n'))
	return err
}
