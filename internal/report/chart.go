// The charts a report draws: their kinds, axes, series and values, and
// the runs' colours.

package report

import (
	"math"
	"strconv"
)

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
