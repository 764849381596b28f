package report

import (
	"errors"
	"fmt"
	"io"
	"path/filepath"
	"strconv"
	"strings"

	"github.com/reprise-bench/reprise/arrowio"
)

// Options configure a report. The zero value is a report with the default
// bounds and a title made of the runs' names.
type Options struct {
	// Title heads the page; "" gives "reprise report: " and the runs'
	// labels.
	Title string
	// Labels name the runs in legends and tables, one per run; a missing
	// or empty label is the run directory's base name (with "#2", "#3"…
	// when two runs have the same).
	Labels []string
	// Sections are added after the summary table, in order: the place for
	// a comparison table or a sweep's Pareto front. Their chart IDs must
	// not repeat.
	Sections []Section
	// MaxPoints bounds each scatter: at most this many successful and
	// this many failed requests per run (strided evenly over the run);
	// 0 means DefaultMaxPoints.
	MaxPoints int
	// Repeated marks sets of repeated runs among the runs (replay --runs
	// N): the headline shows each set as one row of means with their
	// across-run intervals.
	Repeated []Repeated
}

// Errors of Build.
var (
	// ErrNoRuns is returned by Build without runs.
	ErrNoRuns = errors.New("report: no runs")
)

// Build writes the report of runs to w: one HTML file with everything
// it needs embedded. It reads each run's tables once (records, then the
// telemetry tables when present); a run without a records table is an
// error naming its directory ([arrowio.ErrNoTable]). Build does not
// close w.
func Build(w io.Writer, runs []*arrowio.RunReader, opts Options) error {
	if len(runs) == 0 {
		return ErrNoRuns
	}
	if opts.MaxPoints <= 0 {
		opts.MaxPoints = DefaultMaxPoints
	}
	// Two passes over each run's requests: the first reads the records,
	// finds what every chart's axes need (the time span of all runs, each
	// latency's range) and how many points each scatter has to choose
	// from, and spills what the charts use of each request to a temporary
	// file; the second reads that back and bins and samples. No request is
	// kept in memory, so a run of any length fits.
	var data []*runData
	defer func() {
		for _, d := range data {
			if d != nil {
				d.views.close()
			}
		}
	}()
	labels := runLabels(runs, opts.Labels)
	// A run with several targets (--url given more than once) is one
	// series per target, each with its own header line: pooled, a
	// fan-out's two servers make one bimodal CDF.
	for i, r := range runs {
		set, err := r.Settings()
		if err != nil {
			return fmt.Errorf("report %s: %w", r.Dir(), err)
		}
		targets := []int{-1}
		if n := len(set.Options.Targets); n > 1 {
			targets = targets[:0]
			for t := range n {
				targets = append(targets, t)
			}
		}
		for _, t := range targets {
			label := labels[i]
			if t >= 0 {
				label += " #" + strconv.Itoa(t)
			}
			d, err := load(r, label, RunColor(len(data)), t)
			if err != nil {
				return fmt.Errorf("report %s: %w", r.Dir(), err)
			}
			data = append(data, d)
		}
	}
	tl := newTimeline(data)
	grids := cdfGrids(data)
	for _, d := range data {
		if err := d.scan(tl, grids, opts.MaxPoints); err != nil {
			return fmt.Errorf("report %s: %w", d.dir, err)
		}
	}
	p := buildPage(data, tl, grids, opts)
	if err := p.check(); err != nil {
		return err
	}
	return p.write(w)
}

// runLabels names the runs: the caller's label, else the directory's base
// name, made unique with "#n".
func runLabels(runs []*arrowio.RunReader, given []string) []string {
	out := make([]string, len(runs))
	seen := map[string]int{}
	for i, r := range runs {
		l := ""
		if i < len(given) {
			l = given[i]
		}
		if l == "" {
			l = filepath.Base(filepath.Clean(r.Dir()))
		}
		seen[l]++
		if n := seen[l]; n > 1 {
			l += "#" + strconv.Itoa(n)
		}
		out[i] = l
	}
	return out
}

// buildPage makes the page's sections from the runs' data, with the
// caller's sections after the summary.
func buildPage(runs []*runData, tl timeline, grids [][]float64, opts Options) *page {
	p := &page{Title: opts.Title}
	var labels []string
	for _, d := range runs {
		labels = append(labels, d.label)
		p.Runs = append(p.Runs, runHead{Label: d.label, Color: d.color, Dir: d.dir, Model: d.sum.Run.Model,
			URL: d.sum.Run.URL, Start: d.sum.Run.Start.UTC().Format("2006-01-02 15:04:05 UTC"), Requests: d.n})
	}
	if p.Title == "" {
		p.Title = "reprise report: " + strings.Join(labels, ", ")
	}
	p.Headline = headlineRows(runs, opts.Repeated)
	secs := []Section{verdictSection(runs), summarySection(runs), accuracySection(runs)}
	secs = append(secs, opts.Sections...)
	secs = append(secs, latencySection(runs, grids, opts.MaxPoints), overTimeSection(runs, tl), loadSection(runs, tl), truthSection(runs, tl, opts.MaxPoints),
		telemetrySection(runs, tl), errorSection(runs, tl), provenanceSection(runs))
	for _, s := range secs {
		if len(s.Tables) > 0 || len(s.Charts) > 0 || len(s.Details) > 0 {
			if s.ID == "" {
				s.ID = slug(s.Title)
			}
			p.Sections = append(p.Sections, s)
		}
	}
	return p
}
