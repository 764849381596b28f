package report

import (
	"context"
	"path/filepath"
	"slices"
	"testing"
	"time"

	"github.com/chromedp/chromedp"
)

// Hooks for the browser tests of package report_test
// (sweep_browser_test.go), which import internal/sweep: sweep imports
// report, so they cannot be in package report.

// DrawnChart is one chart of a report as headless Chromium drew it: its
// first series' points in drawing order (X, Y and the points' names),
// and how many points and coloured pixels the whole chart drew.
type DrawnChart struct {
	ID      string
	X, Y    []float64
	Labels  []string
	Points  int
	Colored int
}

// drawnJS reads the first series of every chart of the page: the data
// uPlot drew (a series with its own X: u.data[1] is [xs, ys]) and the
// names of its points from the page's report data.
const drawnJS = `(() => {
  const spec = JSON.parse(document.getElementById("report-data").textContent);
  const out = {};
  for (const c of window.reprise.charts) {
    const u = window.reprise.plots[c.id];
    const s = spec.charts.find((k) => k.id === c.id).series[0];
    const own = Array.isArray(u.data[1]) && Array.isArray(u.data[1][0]);
    out[c.id] = {x: own ? u.data[1][0] : u.data[0], y: own ? u.data[1][1] : u.data[1], labels: s.labels || []};
  }
  return out;
})()`

// Browser is one headless Chromium for a test of package report_test.
type Browser struct{ b *browser }

// NewBrowser starts Chromium for t (the test fails without one, as
// TestBrowserReports does).
func NewBrowser(t *testing.T) *Browser { return &Browser{newBrowser(t)} }

// LoadDrawn loads the report at path in headless Chromium as
// TestBrowserReports does (a clean console), checks that the charts
// named in want were drawn with data, their SVG and PNG exports
// (checkCharts), saves the page's screenshot as shot in the test's
// artifact directory, and returns the page's charts as drawn.
func (br *Browser) LoadDrawn(t *testing.T, path, shot string, want ...string) map[string]DrawnChart {
	t.Helper()
	b := br.b
	res := b.load(t, path, filepath.Join(artifactDir(t), shot))
	mine := res
	mine.Charts = nil
	for _, c := range res.Charts {
		if slices.Contains(want, c.ID) {
			mine.Charts = append(mine.Charts, c)
		}
	}
	mine.Figures = len(mine.Charts)
	checkCharts(t, mine, want...)
	ctx, cancel := chromedp.NewContext(b.ctx)
	defer cancel()
	tctx, cancelT := context.WithTimeout(ctx, 90*time.Second)
	defer cancelT()
	abs, err := filepath.Abs(path)
	if err != nil {
		t.Fatal(err)
	}
	if err := chromedp.Do(tctx, chromedp.Navigate("file://"+abs)); err != nil {
		t.Fatal(err)
	}
	if _, err := chromedp.Run(tctx, chromedp.Poll[bool]("window.reprise && window.reprise.ready",
		chromedp.WithPollingTimeout(60*time.Second))); err != nil {
		t.Fatal(err)
	}
	type series struct {
		X      []*float64 `json:"x"`
		Y      []*float64 `json:"y"`
		Labels []string   `json:"labels"`
	}
	data, err := chromedp.Run(tctx, chromedp.Evaluate[map[string]series](drawnJS))
	if err != nil {
		t.Fatalf("%s: read the charts' data: %v", path, err)
	}
	out := map[string]DrawnChart{}
	for _, c := range res.Charts {
		d := DrawnChart{ID: c.ID, Points: c.Points, Colored: c.Colored, Labels: data[c.ID].Labels}
		for i, x := range data[c.ID].X {
			if y := data[c.ID].Y; x != nil && i < len(y) && y[i] != nil {
				d.X, d.Y = append(d.X, *x), append(d.Y, *y[i])
			}
		}
		out[c.ID] = d
	}
	return out
}
