package assemble

import (
	"context"
	"errors"
	"fmt"
	"io"
	"io/fs"
	"os"
	"path/filepath"

	"github.com/reprise-bench/reprise/arrowio"
	"github.com/reprise-bench/reprise/internal/compare"
	"github.com/reprise-bench/reprise/internal/exitcode"
	"github.com/reprise-bench/reprise/internal/report"
	"github.com/reprise-bench/reprise/internal/sweep"
)

// Config is a report's command line: the directories given and the
// report's settings, as `reprise report` takes them.
type Config struct {
	// Runs are the RUN_DIRs, or one SWEEP_DIR.
	Runs []string
	// Output is the report's file; "-" writes it to Env.Stdout. [Run]
	// sets an empty Output to [OutputPath]'s.
	Output    string
	Title     string   // --title; "" names the runs
	Labels    []string // --label, one per run in order
	MaxPoints int      // --max-points; 0 is report.DefaultMaxPoints
	// Sections are added after the summary table (a sweep's).
	Sections []report.Section
	// Repeated are the sets of repeated runs among Runs.
	Repeated []report.Repeated
}

// Env is what [Write] writes through.
type Env struct {
	// Stdout receives the line naming the report written (and the report
	// itself when Config.Output is "-", through Write).
	Stdout io.Writer
	// Write opens path, calls fill with it and closes it, returning fill's
	// error; a failed fill should leave no file.
	Write func(path string, fill func(io.Writer) error) error
}

// OutputPath is where a report is written without --output: into the run
// (or sweep) directory when it reports one, else report.html in the
// current directory.
func OutputPath(output string, runs []string) string {
	switch {
	case output != "":
		return output
	case len(runs) == 1:
		return filepath.Join(runs[0], arrowio.ReportFile)
	}
	return arrowio.ReportFile
}

// Validate reports every problem of c at once, its messages naming the
// command's arguments and flags.
func (c Config) Validate() error {
	var errs []error
	if len(c.Runs) == 0 {
		errs = append(errs, errors.New("missing RUN_DIR: give one or more run directories written by reprise replay"))
	}
	for _, r := range c.Runs {
		switch st, err := os.Stat(r); {
		case errors.Is(err, fs.ErrNotExist):
			errs = append(errs, fmt.Errorf("RUN_DIR %s does not exist: give a run directory written by reprise replay (its --out, or one under runs/)", r))
		case err != nil:
			errs = append(errs, fmt.Errorf("RUN_DIR: %w", err))
		case !st.IsDir():
			errs = append(errs, fmt.Errorf("RUN_DIR %s is a file, not a directory: give the run directory that holds the record files", r))
		}
	}
	if len(c.Labels) > len(c.Runs) && len(c.Runs) > 0 {
		errs = append(errs, fmt.Errorf("--label given %d times for %d runs: give at most one per RUN_DIR, in order", len(c.Labels), len(c.Runs)))
	}
	if c.MaxPoints < 0 {
		errs = append(errs, fmt.Errorf("--max-points %d: want 0 (the default, %d) or more", c.MaxPoints, report.DefaultMaxPoints))
	}
	if c.Output == "-" {
		errs = append(errs, errors.New("--output: give a file name (the report is one HTML file)"))
	}
	return errors.Join(errs...)
}

// Run is `reprise report`: it sets an empty c.Output to [OutputPath]'s,
// validates c (a usage error, exit code 2, names every problem) and
// writes the report ([Write]).
func Run(ctx context.Context, c Config, env Env) error {
	c.Output = OutputPath(c.Output, c.Runs)
	if err := c.Validate(); err != nil {
		return exitcode.UsageError(err, "see 'reprise report --help'")
	}
	return Write(ctx, c, env)
}

// Write expands c's directories (a sweep, repeated runs, a series of
// loads), adds the comparison of several runs, and writes the report to
// c.Output through env. c is not validated ([Config.Validate]); its
// Output may be "-". A problem with a directory is a usage error.
func Write(ctx context.Context, c Config, env Env) error {
	if err := sweepReport(&c); err != nil {
		return err
	}
	if err := repeatedReport(&c); err != nil {
		return err
	}
	if err := loadSeriesReport(&c); err != nil {
		return err
	}
	if err := compareReport(ctx, &c); err != nil {
		return err
	}
	return writeHTML(ctx, c, env)
}

// loadSeriesReport turns a report of plain runs that differ in load
// (AIPerf's Methodology B loop: one profile per --concurrency) into the
// report of a sweep over them: the runs in load order, not in the order
// given (a shell glob puts c100 before c50), with the sweep's sections
// (table, Pareto front and knee, per-user tokens/s against throughput,
// latency and goodput against load).
func loadSeriesReport(c *Config) error {
	if len(c.Sections) > 0 || len(c.Repeated) > 0 {
		return nil // a sweep's or repeated runs: already ordered
	}
	s, ok, err := sweep.ReadLoadSeries(c.Runs)
	if err != nil {
		return exitcode.UsageError(err, "")
	}
	if !ok {
		return nil
	}
	labels := make([]string, len(s.Order))
	for k, i := range s.Order {
		if i < len(c.Labels) {
			labels[k] = c.Labels[i]
		}
	}
	c.Runs, c.Labels = s.Dirs, labels
	c.Sections = append(s.Sections, c.Sections...)
	return nil
}

// writeHTML builds the report into c.Output through env.Write (a failed
// report leaves no file) and, unless it went to standard output, names
// it and its size on env.Stdout.
func writeHTML(ctx context.Context, c Config, env Env) error {
	runs := make([]*arrowio.RunReader, len(c.Runs))
	for i, d := range c.Runs {
		r, err := arrowio.OpenContext(ctx, d)
		if err != nil {
			return exitcode.UsageError(err, "")
		}
		runs[i] = r
	}
	err := env.Write(c.Output, func(w io.Writer) error {
		return report.Build(w, runs, report.Options{Title: c.Title, Labels: c.Labels, MaxPoints: c.MaxPoints, Sections: c.Sections,
			Repeated: c.Repeated})
	})
	if errors.Is(err, arrowio.ErrNoTable) {
		return exitcode.UsageError(err, "each RUN_DIR must hold records.parquet or records/part-*.parquet (reprise replay --out)")
	}
	if err != nil || c.Output == "-" {
		return err // "-": plot --dashboard's page in memory
	}
	st, err := os.Stat(c.Output)
	if err != nil {
		return err
	}
	_, err = fmt.Fprintf(env.Stdout, "report: %s (%.1f MB)\n", c.Output, float64(st.Size())/1e6)
	return err
}

// sweepReport turns a report of a sweep directory (one with sweep.json)
// into the report of its measured points, labelled by their settings,
// with the sweep's sections (table, Pareto front, latency and goodput
// against load).
func sweepReport(c *Config) error {
	var sweepDir string
	for _, r := range c.Runs {
		if _, err := os.Stat(filepath.Join(r, sweep.ManifestFile)); err == nil {
			sweepDir = r
		}
	}
	if sweepDir == "" {
		return nil
	}
	if len(c.Runs) > 1 {
		return exitcode.UsageError(fmt.Errorf("%s is a sweep: give it alone, not with other directories", sweepDir), "see 'reprise report --help'")
	}
	m, err := sweep.Read(sweepDir)
	if err != nil {
		return exitcode.UsageError(err, "")
	}
	dirs, names := m.RunDirs(sweepDir)
	if len(dirs) == 0 {
		return exitcode.UsageError(fmt.Errorf("sweep %s has no measured point yet", sweepDir), "run the sweep (again, to resume it) first")
	}
	c.Runs = dirs
	if len(c.Labels) == 0 {
		c.Labels = names
	}
	if c.Title == "" {
		c.Title = "reprise report: sweep " + filepath.Base(sweepDir)
	}
	c.Sections = append(sweep.ReportSections(m), c.Sections...)
	return nil
}

// repeatedReport expands each directory of repeated runs (replay --runs
// N, a sweep point with --runs) into its runs, each its own series
// labelled NAME/run-K (NAME: its --label, or the directory's name), and
// adds for each the across-run section: every metric's interval with
// each run's value. Such a report does not compare its runs with the
// first: the across-run section says how much they differ.
func repeatedReport(c *Config) error {
	var runs, labels []string
	var secs []report.Section
	for i, d := range c.Runs {
		label := ""
		if i < len(c.Labels) {
			label = c.Labels[i]
		}
		dirs, ok, err := arrowio.RepeatedRuns(d)
		if err != nil {
			return exitcode.UsageError(err, "")
		}
		if !ok {
			runs, labels = append(runs, d), append(labels, label)
			continue
		}
		if label == "" {
			label = filepath.Base(filepath.Clean(d))
		}
		_, _, across, err := arrowio.SummarizeRepeated(d, dirs, nil)
		if errors.Is(err, arrowio.ErrNoTable) {
			return exitcode.UsageError(err, "each run of a --runs directory must hold records.parquet or records/part-*.parquet")
		}
		if err != nil {
			return err
		}
		var runLabels []string
		for _, r := range dirs {
			runLabels = append(runLabels, label+"/"+filepath.Base(r))
		}
		c.Repeated = append(c.Repeated, report.Repeated{Label: label, First: len(runs), Count: len(dirs), Across: across})
		runs, labels = append(runs, dirs...), append(labels, runLabels...)
		secs = append(secs, report.AcrossRunsSection(label, across, runLabels))
	}
	if secs == nil {
		return nil
	}
	if c.Title == "" && len(c.Runs) == 1 {
		c.Title = "reprise report: repeated runs " + filepath.Base(filepath.Clean(c.Runs[0]))
	}
	c.Runs, c.Labels = runs, labels
	c.Sections = append(c.Sections, secs...)
	return nil
}

// compareReport adds to a report of several runs (not a sweep's) the
// comparison of each run after the first against the first, as `reprise
// compare` prints it with its defaults.
func compareReport(ctx context.Context, c *Config) error {
	if len(c.Runs) < 2 || len(c.Sections) > 0 {
		return nil
	}
	runs := make([]*compare.Run, len(c.Runs))
	for i, d := range c.Runs {
		r, err := compare.Load(ctx, d)
		if err != nil {
			return exitcode.UsageError(err, "")
		}
		if i < len(c.Labels) && c.Labels[i] != "" {
			r.Label = c.Labels[i]
		}
		runs[i] = r
	}
	var results []*compare.Result
	for _, b := range runs[1:] {
		res, err := compare.Compare(runs[0], b, compare.NewConfig())
		if err != nil {
			// A run with no measured request has nothing to compare;
			// the report still shows it.
			continue
		}
		results = append(results, res)
	}
	c.Sections = append(c.Sections, compare.ReportSections(results)...)
	return nil
}
