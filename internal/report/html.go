package report

import (
	"bufio"
	_ "embed"
	"encoding/json"
	"fmt"
	"html/template"
	"io"
	"strings"
)

// page is everything the HTML file shows.
type page struct {
	Title    string
	Runs     []runHead
	Headline []headRow
	Sections []Section
}

// runHead names one run at the top of the page.
type runHead struct {
	Label, Color, Dir, Model, URL, Start string
	Requests                             int
}

// check reports charts that repeat an ID or whose series do not match
// their x values: a caller's section is checked as the built-in ones.
func (p *page) check() error {
	seen := map[string]bool{}
	for _, s := range p.Sections {
		for _, c := range s.Charts {
			if c.ID == "" || seen[c.ID] {
				return fmt.Errorf("report: chart %q in section %q: IDs must be unique and not empty", c.ID, s.Title)
			}
			seen[c.ID] = true
			for _, sr := range c.Series {
				switch {
				case (c.Kind == Scatter || len(sr.X) > 0) && len(sr.X) != len(sr.Y):
					return fmt.Errorf("report: chart %q series %q: %d x values for %d y values", c.ID, sr.Label, len(sr.X), len(sr.Y))
				case len(sr.X) > 0 && c.Kind != Scatter && c.Kind != Lines:
					return fmt.Errorf("report: chart %q series %q: only Scatter and Lines series carry their own x", c.ID, sr.Label)
				case c.Kind == Bars && len(sr.Y) != len(c.XAxis.Categories):
					return fmt.Errorf("report: chart %q series %q: %d values for %d categories", c.ID, sr.Label, len(sr.Y), len(c.XAxis.Categories))
				case c.Kind != Scatter && c.Kind != Bars && len(sr.X) == 0 && len(sr.Y) != len(c.X):
					return fmt.Errorf("report: chart %q series %q: %d values for %d x values", c.ID, sr.Label, len(sr.Y), len(c.X))
				case len(sr.Labels) > 0 && len(sr.Labels) != len(sr.X):
					return fmt.Errorf("report: chart %q series %q: %d labels for %d points", c.ID, sr.Label, len(sr.Labels), len(sr.X))
				}
			}
			for _, b := range c.Bands {
				if b.Upper < 0 || b.Lower < 0 || b.Upper >= len(c.Series) || b.Lower >= len(c.Series) || b.Upper == b.Lower ||
					len(c.Series[b.Upper].X) > 0 || len(c.Series[b.Lower].X) > 0 || c.Kind != Lines && c.Kind != Steps {
					return fmt.Errorf("report: chart %q: band %d–%d must join two series of Chart.X", c.ID, b.Upper, b.Lower)
				}
			}
		}
	}
	return nil
}

// The page's scripts and styles, embedded in every report. uPlot is
// vendored from npm (uplot 1.6.32, MIT, assets/LICENSE.uPlot);
// assets/SHA256SUMS pins its bytes and TestAssetsPinned checks them.
var (
	//go:embed assets/uPlot.iife.min.js
	uplotJS string
	//go:embed assets/uPlot.min.css
	uplotCSS string
	//go:embed assets/LICENSE.uPlot
	uplotLicense string
	//go:embed assets/report.js
	reportJS string
	//go:embed assets/report.css
	reportCSS string
)

var pageTmpl = template.Must(template.New("report").Parse(`<!DOCTYPE html>
<html lang="en">
<head>
<meta charset="utf-8">
<meta name="viewport" content="width=device-width, initial-scale=1">
<meta name="generator" content="reprise report">
<title>{{.Title}}</title>
<style>{{.UplotCSS}}</style>
<style>{{.ReportCSS}}</style>
</head>
<body>
<header>
<h1>{{.Title}}</h1>
<ul class="runs">{{range .Runs}}
<li><span class="swatch" style="background:{{.Color}}"></span><b>{{.Label}}</b> {{.Requests}} requests · {{.Model}} at {{.URL}} · {{.Start}} · <code>{{.Dir}}</code></li>{{end}}
</ul>
<nav><a href="#headline">Headline</a> {{range .Sections}}<a href="#{{.ID}}">{{.Title}}</a> {{end}}</nav>
</header>
<main>
<section id="headline" class="headline">
<h2>Headline</h2>
<p class="explain">The answer first: each run's latency percentiles, throughput{{if .Goodput}}, goodput{{end}} and verdict, from its summary (summary.json); ± beside a number is its error bar: a selftest calibration's p99 timing error, or the interval across repeated runs.</p>
{{range .Headline}}<div class="strip"><div class="strip-run"><span class="swatch" style="background:{{.Color}}"></span><b>{{.Label}}</b></div>
{{range .Tiles}}<div class="tile{{if .Class}} {{.Class}}{{end}}" data-metric="{{.Metric}}" data-value="{{.Value}}"><div class="tile-name">{{.Name}}</div><div class="tile-value">{{.Text}}</div>{{if .Err}}<div class="tile-err">{{.Err}}</div>{{end}}</div>
{{end}}</div>
{{end}}</section>
{{range .Sections}}<section id="{{.ID}}">
<h2>{{.Title}}</h2>
{{if .Explain}}<p class="explain">{{.Explain}}</p>{{end}}
{{range .Tables}}<div class="table"><table>{{if .Caption}}<caption>{{.Caption}}</caption>{{end}}
<thead><tr>{{range .Header}}<th>{{.}}</th>{{end}}</tr></thead>
<tbody>{{range .Rows}}<tr>{{range .}}<td{{if .Class}} class="{{.Class}}"{{end}}>{{.Text}}</td>{{end}}</tr>
{{end}}</tbody></table></div>
{{end}}{{if .Charts}}<div class="charts">{{range .Charts}}
<figure class="chart" id="chart-{{.ID}}" data-chart="{{.ID}}"><figcaption>{{.Title}}</figcaption><div class="plot"></div><p class="explain">{{.Explain}}</p><p class="save"><button type="button" data-save="png">PNG</button> <button type="button" data-save="svg">SVG</button></p></figure>{{end}}
</div>{{end}}
{{range .Details}}<details><summary>{{.Summary}}</summary><pre>{{.Text}}</pre></details>
{{end}}</section>
{{end}}</main>
<footer>Made by reprise report. Charts: uPlot 1.6.32 (MIT licence below). Drag on a chart to zoom, double-click to reset; click a legend entry to hide its series.
<details><summary>uPlot licence</summary><pre>{{.UplotLicense}}</pre></details></footer>
<script id="report-data" type="application/json">{{.Data}}</script>
<script>{{.UplotJS}}</script>
<script>{{.ReportJS}}</script>
</body>
</html>
`))

// goodput reports whether any headline shows a goodput.
func (p *page) goodput() bool {
	for _, r := range p.Headline {
		for _, t := range r.Tiles {
			if strings.HasPrefix(t.Metric, "goodput") {
				return true
			}
		}
	}
	return false
}

// write renders the page to w.
func (p *page) write(w io.Writer) error {
	// One chart a line, so that a diff of two reports reads chart by
	// chart.
	data := []byte(`{"charts": [`)
	sep := "\n"
	for _, s := range p.Sections {
		for _, c := range s.Charts {
			b, err := json.Marshal(c)
			if err != nil {
				return err
			}
			data = append(append(data, sep...), b...)
			sep = ",\n"
		}
	}
	data = append(data, "\n]}"...)
	bw := bufio.NewWriterSize(w, 1<<16)
	err := pageTmpl.Execute(bw, map[string]any{
		"Title": p.Title, "Runs": p.Runs, "Sections": p.Sections, "Headline": p.Headline, "Goodput": p.goodput(),
		// Trusted: the vendored files and json.Marshal's output, which
		// escapes <, > and & so that no "</script>" can end the block.
		"UplotCSS":     template.CSS(uplotCSS),
		"ReportCSS":    template.CSS(reportCSS),
		"UplotJS":      template.JS(uplotJS),
		"ReportJS":     template.JS(reportJS),
		"Data":         template.JS(data),
		"UplotLicense": uplotLicense,
	})
	if err != nil {
		return err
	}
	return bw.Flush()
}
