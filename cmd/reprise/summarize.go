package main

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"io/fs"
	"math"
	"os"
	"path/filepath"
	"strconv"
	"strings"

	"github.com/urfave/cli/v3"

	"github.com/reprise-bench/reprise/arrowio"
	"github.com/reprise-bench/reprise/engine/summary"
	"github.com/reprise-bench/reprise/internal/exitcode"
	"github.com/reprise-bench/reprise/internal/runout"
)

// summarizeConfig is the summarize command line.
type summarizeConfig struct {
	Args    []string
	JSON    bool   // --json, short for --format json
	Format  string // table, json or benchfmt
	Goodput string // "" = the run's own --goodput (from manifest.json)
	Export  string
}

// Validate reports every problem at once.
func (c summarizeConfig) Validate() error {
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
			c := summarizeConfig{Args: cmd.Args().Slice(), JSON: cmd.Bool("json"), Format: cmd.String("format"),
				Goodput: cmd.String("goodput"), Export: cmd.String("export")}
			if err := c.Validate(); err != nil {
				return exitcode.UsageError(err, "see 'reprise summarize --help'")
			}
			dirs, repeated, err := arrowio.RepeatedRuns(c.Args[0])
			if err != nil {
				return err
			}
			if repeated {
				return summarizeRepeated(a, c, dirs)
			}
			s, set, err := summarizeRun(ctx, c, c.Args[0])
			if err != nil {
				return err
			}
			if c.Format == "benchfmt" {
				return writeBenchfmt(a.stdout, s)
			}
			if c.JSON || c.Format == "json" {
				b, err := arrowio.SummaryJSONMerged(s, set.RecordWriter, set.Merge)
				if err != nil {
					return err
				}
				_, err = a.stdout.Write(b)
				return err
			}
			if err := s.WriteTable(a.stdout); err != nil {
				return err
			}
			_, err = io.WriteString(a.stdout, runout.WriterNote(set.RecordWriter))
			return err
		},
	}
}

// summarizeRun recomputes the summary of the run directory dir with the
// options of c (and exports it with --export aiperf).
func summarizeRun(ctx context.Context, c summarizeConfig, dir string) (*summary.Summary, arrowio.Settings, error) {
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

// summarizeRepeated is summarize of a directory of repeated runs
// (replay --runs N, a sweep point with --runs): every run's summary,
// recomputed from its records, then the across-run intervals of those
// summaries (at the level and with the stop rule runs.json records).
func summarizeRepeated(a *app, c summarizeConfig, dirs []string) error {
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
			if err := writeBenchfmt(a.stdout, s); err != nil {
				return err
			}
		}
		return nil
	case c.JSON || c.Format == "json":
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
		_, err = a.stdout.Write(append(b, '\n'))
		return err
	}
	for i, s := range sums {
		fmt.Fprintf(a.stdout, "== %s (run %d of %d)\n", dirs[i], i+1, len(dirs))
		if err := s.WriteTable(a.stdout); err != nil {
			return err
		}
		if _, err := io.WriteString(a.stdout, runout.WriterNote(sets[i].RecordWriter)); err != nil {
			return err
		}
		fmt.Fprintln(a.stdout)
	}
	fmt.Fprintf(a.stdout, "== %s: across %d runs\n", c.Args[0], len(dirs))
	return across.WriteTable(a.stdout)
}

// benchMetrics are the per-request metrics written by --format benchfmt,
// with the short names of --goodput.
var benchMetrics = []struct{ tag, name string }{
	{"time_to_first_token", "ttft"},
	{"time_to_first_output_token", "ttfo"},
	{"inter_token_latency", "itl"},
	{"request_latency", "e2e"},
	{"latency_from_intended", "e2e-from-intended"},
	{"schedule_lateness", "lateness"},
}

// writeBenchfmt writes s in the Go benchmark format
// (golang.org/design/14313-benchmark-format), one result line per key
// value, so benchstat can compare runs (docs/format/summary.md):
//
//	model: M
//	BenchmarkReplay/ttft-p50 300 0.06008 sec/op
//
// Configuration lines name what must be equal for two runs to be
// comparable (benchstat puts other values in separate tables). The
// iteration count is the number of requests behind the value. Times are in
// sec/op, which benchstat shows with SI prefixes (60.08m).
func writeBenchfmt(w io.Writer, s *summary.Summary) error {
	var b strings.Builder
	config := func(k, v string) {
		if v = strings.Join(strings.Fields(v), " "); v != "" {
			fmt.Fprintf(&b, "%s: %s\n", k, v)
		}
	}
	config("model", s.Run.Model)
	config("endpoint", s.Run.Endpoint)
	config("mode", s.Run.Mode)
	if s.Run.Trace != "" {
		config("trace", filepath.Base(s.Run.Trace))
	}
	config("streaming", strconv.FormatBool(s.Options.Streaming))
	if len(s.Options.Goodput) > 0 {
		slo := make([]string, len(s.Options.Goodput))
		for i, g := range s.Options.Goodput {
			slo[i] = g.Tag + ":" + strconv.FormatFloat(g.Value, 'g', -1, 64)
		}
		config("goodput", strings.Join(slo, " "))
	}
	line := func(name string, n int, v float64, unit string) {
		if math.IsNaN(v) || math.IsInf(v, 0) {
			return
		}
		// Nine significant digits: more than any comparison needs, and
		// no float noise such as 8.999999999999999e-06 for 0.009 ms.
		fmt.Fprintf(&b, "BenchmarkReplay/%s %d %s %s\n", name, max(n, 1), strconv.FormatFloat(v, 'g', 9, 64), unit)
	}
	for _, m := range benchMetrics {
		st, ok := s.Metrics[m.tag]
		if !ok {
			continue
		}
		for _, q := range []struct {
			name string
			v    float64
		}{{"mean", st.Avg}, {"p50", st.P50}, {"p90", st.P90}, {"p99", st.P99}} {
			line(m.name+"-"+q.name, st.Count, q.v/1000, "sec/op") // ms → s
		}
	}
	n := s.RequestCount + s.ErrorRequestCount
	line("request-throughput", n, s.RequestThroughput, "req/s")
	line("output-token-throughput", n, s.OutputTokenThroughput, "tok/s")
	line("total-token-throughput", n, s.TotalTokenThroughput, "tok/s")
	line("error-rate", n, s.ErrorRate(), "errors/req")
	if len(s.Options.Goodput) > 0 {
		line("goodput", n, s.Goodput, "req/s")
		line("good-fraction", n, s.GoodRequestFraction, "good/req")
	}
	_, err := io.WriteString(w, b.String())
	return err
}
