package report

import (
	"errors"
	"fmt"
	"io"
	"math"
	"path/filepath"
	"strconv"

	"github.com/reprise-bench/reprise/arrowio"
)

// The bounds that keep a report's size independent of the run's.
const (
	// DefaultMaxPoints is the default of [Options.MaxPoints].
	DefaultMaxPoints = 20000
	// MaxBuckets bounds the buckets of a time series: the bucket is 1 s,
	// or wider when a run is longer than MaxBuckets seconds.
	MaxBuckets = 3600
	// CDFPoints is the number of latencies each CDF is evaluated at.
	CDFPoints = 240
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

// Section is one part of the report: a heading, a one-line explanation,
// then its tables and charts. Commands that build on the report
// (compare, sweep) add theirs through [Options.Sections].
type Section struct {
	// ID is the section's anchor (letters, digits, '-'); "" derives one
	// from Title.
	ID      string
	Title   string
	Explain string // one line under the title
	Tables  []Table
	Charts  []Chart
	// Details are preformatted texts shown folded (a manifest).
	Details []Detail
}

// Detail is a preformatted text under a summary line, folded until
// clicked.
type Detail struct {
	Summary string
	Text    string
}

// Table is a table of text cells. The first column is the row's name.
type Table struct {
	Caption string
	Header  []string
	Rows    [][]Cell
}

// Cell is one table cell. Class styles it: "good", "warn" and "bad"
// colour a verdict, "num" aligns a number to the right; "" is plain text.
type Cell struct {
	Text  string
	Class string
}

// Text returns plain cells of texts.
func Text(texts ...string) []Cell {
	out := make([]Cell, len(texts))
	for i, t := range texts {
		out[i] = Cell{Text: t}
	}
	return out
}

// ChartKind says how a chart draws its series.
type ChartKind string

// The chart kinds.
const (
	// Lines joins each series' points; Series.Y against Chart.X.
	Lines ChartKind = "lines"
	// Steps draws each series as steps (a CDF, a bucketed count).
	Steps ChartKind = "steps"
	// Bars draws one bar per category (Chart.X.Categories) and series,
	// grouped side by side.
	Bars ChartKind = "bars"
	// Scatter draws each series' points (Series.X, Series.Y) unjoined.
	Scatter ChartKind = "scatter"
)

// Chart is one plot. Values that are NaN are gaps (JSON null).
type Chart struct {
	// ID is unique in the report (letters, digits, '-'); it names the
	// saved PNG and SVG files.
	ID      string    `json:"id"`
	Title   string    `json:"title"`
	Explain string    `json:"explain"` // one line under the plot
	Kind    ChartKind `json:"kind"`
	XAxis   Axis      `json:"xaxis"`
	YAxis   Axis      `json:"yaxis"`
	// X is the x of every series of Lines and Steps charts that do not
	// carry their own (Series.X), ascending; Bars charts have one bar per
	// XAxis.Categories and leave X empty; Scatter series carry their own.
	X      Values   `json:"x,omitempty"`
	Series []Series `json:"series"`
	// Shade holds x ranges drawn as a grey band (warmup).
	Shade []Span `json:"shade,omitempty"`
	// TimeAxis marks a chart whose x is seconds since its run's start:
	// such charts share one cursor and zoom together, and each ends at
	// its own last point (the last activity it shows).
	TimeAxis bool `json:"time,omitempty"`
	// Bands fill the area between two series of a Lines or Steps chart
	// that share Chart.X (a p50–p99 band).
	Bands []Band `json:"bands,omitempty"`
}

// Band is the area between two series of a chart, by index in
// Chart.Series: Upper above, Lower below.
type Band struct {
	Upper int `json:"upper"`
	Lower int `json:"lower"`
}

// Axis is a chart axis.
type Axis struct {
	Label string `json:"label"`
	// Log draws the axis on a log₁₀ scale; values ≤ 0 are not drawn.
	Log bool `json:"log,omitempty"`
	// Categories name the bars of a Bars chart's x axis.
	Categories []string `json:"categories,omitempty"`
}

// Series is one line, set of bars or set of points of a chart.
type Series struct {
	Label string `json:"label"`
	// Color is a CSS colour; "" picks the palette's next.
	Color string `json:"color,omitempty"`
	// X is the series' own x values, one per Y: required in a Scatter
	// chart, allowed in a Lines chart (points joined in the order given),
	// empty otherwise.
	X Values `json:"x,omitempty"`
	Y Values `json:"y"`
	// Dash draws a line dashed (a second series of the same run).
	Dash bool `json:"dash,omitempty"`
	// Labels name the points of a series with its own X, one per point
	// ("" for none): they are written beside each point (a sweep's
	// points by their load).
	Labels []string `json:"labels,omitempty"`
}

// Span is a range of x values.
type Span struct {
	From  float64 `json:"from"`
	To    float64 `json:"to"`
	Label string  `json:"label,omitempty"`
}

// Values are a series of numbers. They are written to the report with
// five significant digits (the precision a plot shows); NaN and ±Inf
// are written as null.
type Values []float64

// MarshalJSON writes the values as a JSON array.
func (v Values) MarshalJSON() ([]byte, error) {
	b := make([]byte, 0, 2+8*len(v))
	b = append(b, '[')
	for i, x := range v {
		if i > 0 {
			b = append(b, ',')
		}
		b = appendNum(b, x)
	}
	return append(b, ']'), nil
}

// appendNum appends x with five significant digits, null when x is not
// finite.
func appendNum(b []byte, x float64) []byte {
	if math.IsNaN(x) || math.IsInf(x, 0) {
		return append(b, "null"...)
	}
	if x == math.Trunc(x) && math.Abs(x) < 1e15 {
		return strconv.AppendInt(b, int64(x), 10)
	}
	return strconv.AppendFloat(b, x, 'g', 5, 64)
}

// Palette is the colours runs get, in order; a report of more runs
// wraps around.
var Palette = []string{"#1f77b4", "#d62728", "#2ca02c", "#9467bd", "#ff7f0e", "#17becf", "#8c564b", "#e377c2"}

// RunColor is the colour of the i-th run (0-based) in every chart of a
// report, for sections that draw runs the same way.
func RunColor(i int) string { return Palette[i%len(Palette)] }

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
