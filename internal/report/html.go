package report

import (
	"bufio"
	_ "embed"
	"encoding/json"
	"html/template"
	"io"
	"strings"
)

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
