package sweep

import (
	"cmp"
	"encoding/json"
	"fmt"
	"maps"
	"math"
	"os"
	"path/filepath"
	"slices"
	"sort"
	"strings"

	"github.com/reprise-bench/reprise/internal/report"
)

// Read reads sweep.json of the sweep directory dir.
func Read(dir string) (*Manifest, error) {
	p := filepath.Join(dir, ManifestFile)
	b, err := os.ReadFile(p)
	if err != nil {
		return nil, err
	}
	var m Manifest
	if err := json.Unmarshal(b, &m); err != nil {
		return nil, fmt.Errorf("read %s: %w", p, err)
	}
	// Version 1 has a subset of version 2's fields, with the same
	// meanings but for a search's outcomes (docs/format/sweep.md).
	if m.SchemaVersion != SchemaVersion && m.SchemaVersion != "2" && m.SchemaVersion != "1" {
		return nil, fmt.Errorf("read %s: schema_version %q, want %q, \"2\" or \"1\"", p, m.SchemaVersion, SchemaVersion)
	}
	return &m, nil
}

// RunDirs returns the run directory of every done point of m, in sweep
// order (the first run's, with several runs per point), with the
// points' names.
func (m *Manifest) RunDirs(dir string) (dirs, names []string) {
	for _, p := range m.Points {
		if p.Status != StatusDone || p.Row == nil {
			continue
		}
		d := filepath.Join(dir, p.Dir)
		if m.Runs > 1 {
			d = RunDir(d, 1)
		}
		dirs, names = append(dirs, d), append(names, p.Name)
	}
	return dirs, names
}

// ReportSections are the sections a sweep adds to the HTML report of its
// points (report.Options.Sections): the sweep table, throughput against
// p99 latency with the Pareto front and knee, latency against load and
// goodput against load (one line per value of the outer setting of a
// two-setting grid).
func ReportSections(m *Manifest) []report.Section {
	var rows []Row
	for _, p := range m.Points {
		if p.Status == StatusDone && p.Row != nil {
			rows = append(rows, *p.Row)
		}
	}
	if m.Find != nil {
		// A search's table is in load order, as printed.
		slices.SortStableFunc(rows, func(a, b Row) int { return cmp.Compare(a.Settings[m.Find.Setting], b.Settings[m.Find.Setting]) })
	}
	explain := fmt.Sprintf("%d points", len(rows))
	if len(m.Stops) > 0 {
		explain += "; stopped: " + strings.Join(m.Stops, "; ")
	}
	if m.Found != nil {
		explain += "; " + m.Found.Text
	}
	table := report.Table{Header: []string{"point", "asked/s", "sent/s", "done/s", "good %", "goodput/s", "TTFT p50", "TTFT p99",
		"ITL p50", "ITL p99", "E2E p50", "E2E p99", "output tok/s", "tok/s/user", "errors", "lateness p99", "note"}}
	onFront := map[string]bool{}
	for _, n := range m.Pareto {
		onFront[n] = true
	}
	for _, r := range rows {
		note := []string{}
		if r.Saturated {
			note = append(note, "saturated ("+strings.Join(r.Saturation.Reasons, ", ")+")")
		}
		if onFront[r.Point] {
			note = append(note, "Pareto")
		}
		if r.Point == m.Knee {
			note = append(note, "knee")
		}
		if a := r.AccuracyText(); a != "" {
			note = append(note, "accuracy % "+a)
		}
		good, gp := "-", "-"
		if m.Base.Goodput != "" {
			good, gp = fmt.Sprintf("%.1f [%.1f, %.1f]", 100*r.GoodFraction, 100*r.GoodLow, 100*r.GoodHigh), fmt.Sprintf("%.3g", r.Goodput)
		}
		cls := ""
		if !r.SLOMet || r.Saturated {
			cls = "warn"
		}
		table.Rows = append(table.Rows, []report.Cell{{Text: r.Point}, num(r.IntendedRate), num(r.SentRate), num(r.Throughput),
			{Text: good, Class: "num"}, {Text: gp, Class: "num"}, num(r.TTFTP50), num(r.TTFTP99), num(r.ITLP50), num(r.ITLP99),
			num(r.E2EP50), num(r.E2EP99), num(r.OutputThroughput), num(r.PerUserTPS), {Text: fmt.Sprint(r.Errors), Class: "num"},
			num(r.LatenessP99), {Text: strings.Join(note, ", "), Class: cls}})
	}
	sections := []report.Section{{ID: "sweep-table", Title: "Sweep", Explain: explain +
		" (latencies in ms; good % with its Wilson interval)", Tables: []report.Table{table}}}
	if m.Search != nil {
		sections = append([]report.Section{searchSection(m.Search)}, sections...)
	}
	if len(m.Trials) > 0 {
		sections = append(sections, trialSection(m))
	}
	if len(rows) == 0 {
		return sections
	}
	sections = append(append(sections, paretoSection(m, rows)), loadSections(m, rows)...)
	return sections
}

// searchSection is a recipe's or search's answer and its probes, each
// with its validity.
func searchSection(r *SearchResult) report.Section {
	t := report.Table{Header: []string{"probe", "why", "valid", "level", "pass", "metrics", "why not valid"}}
	for _, p := range r.Probes {
		var ms []string
		for _, k := range slices.Sorted(maps.Keys(p.Metrics)) {
			ms = append(ms, fmt.Sprintf("%s %.4g", k, p.Metrics[k]))
		}
		cls := ""
		if !p.Valid {
			cls = "warn"
		}
		t.Rows = append(t.Rows, []report.Cell{{Text: p.Point}, {Text: p.Why}, {Text: fmt.Sprint(p.Valid), Class: cls},
			num(p.Level), {Text: fmt.Sprint(p.Pass)}, {Text: strings.Join(ms, ", ")}, {Text: strings.Join(p.Reasons, "; ")}})
	}
	explain := r.Text
	if len(r.Violations) > 0 {
		explain += " Monotonicity: " + strings.Join(r.Violations, "; ") + "."
	}
	return report.Section{ID: "search-answer", Title: "Search: " + r.Kind, Explain: explain, Tables: []report.Table{t}}
}

func num(v float64) report.Cell { return report.Cell{Text: fmt.Sprintf("%.4g", v), Class: "num"} }

// paretoSection draws every point's output throughput against its p99
// latency, the front joined, the knee marked.
func paretoSection(m *Manifest, rows []Row) report.Section {
	all := report.Series{Label: "points", Color: report.RunColor(0)}
	for _, r := range rows {
		if r.E2EP99 <= 0 {
			continue // nothing succeeded: no latency to draw
		}
		all.X, all.Y = append(all.X, r.OutputThroughput), append(all.Y, r.E2EP99)
		all.Labels = append(all.Labels, r.Point)
	}
	byName := map[string]Row{}
	for _, r := range rows {
		byName[r.Point] = r
	}
	// The front is joined in load order (the last axis, or the searched
	// setting), whatever order the points were given or run in: the line
	// follows the server from light to heavy load.
	load := m.Plan.axisNames()[len(m.Plan.axisNames())-1]
	ordered := slices.Clone(rows)
	slices.SortStableFunc(ordered, func(a, b Row) int { return cmp.Compare(a.Settings[load], b.Settings[load]) })
	onFront := map[string]bool{}
	for _, n := range m.Pareto {
		onFront[n] = true
	}
	front := report.Series{Label: "Pareto front", Color: report.RunColor(1)}
	for _, r := range ordered {
		if onFront[r.Point] && r.E2EP99 > 0 {
			front.X, front.Y = append(front.X, r.OutputThroughput), append(front.Y, r.E2EP99)
			front.Labels = append(front.Labels, r.Point)
		}
	}
	c := report.Chart{ID: "sweep-pareto", Title: "Throughput against p99 latency", Kind: report.Lines,
		Explain: "the front: the points no other beats on both (more tokens/s, lower p99), joined in order of " + load,
		XAxis:   report.Axis{Label: "output tokens/s"}, YAxis: report.Axis{Label: "request latency p99 (ms)", Log: true},
		Series: []report.Series{front}}
	scatter := report.Chart{ID: "sweep-points", Title: "Every point", Kind: report.Scatter,
		Explain: "all measured points, throughput against p99 latency, each named by its load", XAxis: c.XAxis, YAxis: c.YAxis, Series: []report.Series{all}}
	// Per-user output tokens/s (the median request's decode rate, 1/ITL)
	// against output throughput, in load order: how much each user's
	// stream slows as the server serves more.
	users := report.Series{Label: "points by " + load, Color: report.RunColor(0)}
	for _, r := range ordered {
		if r.PerUserTPS > 0 {
			users.X, users.Y = append(users.X, r.OutputThroughput), append(users.Y, r.PerUserTPS)
			users.Labels = append(users.Labels, r.Point)
		}
	}
	perUser := report.Chart{ID: "sweep-per-user", Title: "Per-user tokens/s against throughput", Kind: report.Lines,
		Explain: "the median request's output tokens/s (one user's stream) against the server's output tokens/s, joined in order of " + load,
		XAxis:   report.Axis{Label: "output tokens/s"}, YAxis: report.Axis{Label: "output tokens/s per user"}, Series: []report.Series{users}}
	charts := []report.Chart{c, scatter}
	if len(users.X) > 0 {
		charts = append(charts, perUser)
	}
	explain := "the knee (Kneedle): " + m.Knee
	if m.Knee == "" {
		explain = "no knee: fewer than three points on the front"
	} else if r, ok := byName[m.Knee]; ok {
		knee := report.Series{Label: "knee " + m.Knee, Color: report.RunColor(2), X: report.Values{r.OutputThroughput}, Y: report.Values{r.E2EP99}}
		charts[1].Series = append(charts[1].Series, knee)
		explain += fmt.Sprintf(" at %.4g output tokens/s, p99 %.4g ms", r.OutputThroughput, r.E2EP99)
	}
	return report.Section{ID: "sweep-front", Title: "Pareto front", Explain: explain, Charts: charts}
}

// loadSections draw latency and goodput against the load setting (the
// last axis, or the searched setting), a line per value of the outer
// axis.
func loadSections(m *Manifest, rows []Row) []report.Section {
	names := m.Plan.axisNames()
	load := names[len(names)-1]
	outer := ""
	if len(names) == 2 {
		outer = names[0]
	}
	groups := map[float64][]Row{}
	var keys []float64
	for _, r := range rows {
		k := 0.0
		if outer != "" {
			k = r.Settings[outer]
		}
		if _, ok := groups[k]; !ok {
			keys = append(keys, k)
		}
		groups[k] = append(groups[k], r)
	}
	slices.Sort(keys)
	label := func(k float64, what string) string {
		if outer == "" {
			return what
		}
		return fmt.Sprintf("%s %s=%s", what, outer, formatValue(k))
	}
	lines := func(id, title, explain, ylabel string, logY bool, metrics []struct {
		name string
		get  func(*Row) float64
	}) report.Chart {
		c := report.Chart{ID: id, Title: title, Explain: explain, Kind: report.Lines,
			XAxis: report.Axis{Label: load}, YAxis: report.Axis{Label: ylabel, Log: logY}}
		for gi, k := range keys {
			g := slices.Clone(groups[k])
			sort.SliceStable(g, func(a, b int) bool { return g[a].Settings[load] < g[b].Settings[load] })
			for mi, mt := range metrics {
				s := report.Series{Label: label(k, mt.name), Color: report.RunColor(gi*len(metrics) + mi), Dash: mi%2 == 1}
				for _, r := range g {
					v := mt.get(&r)
					if v == 0 && logY {
						v = math.NaN()
					}
					s.X, s.Y = append(s.X, r.Settings[load]), append(s.Y, v)
				}
				c.Series = append(c.Series, s)
			}
		}
		return c
	}
	type metric = struct {
		name string
		get  func(*Row) float64
	}
	lat := []report.Chart{
		lines("sweep-ttft", "TTFT against load", "p50 solid, p99 dashed", "ms", true, []metric{
			{"TTFT p50", func(r *Row) float64 { return r.TTFTP50 }}, {"TTFT p99", func(r *Row) float64 { return r.TTFTP99 }}}),
		lines("sweep-itl", "ITL against load", "p50 solid, p99 dashed", "ms", true, []metric{
			{"ITL p50", func(r *Row) float64 { return r.ITLP50 }}, {"ITL p99", func(r *Row) float64 { return r.ITLP99 }}}),
		lines("sweep-e2e", "Request latency against load", "p50 solid, p99 dashed", "ms", true, []metric{
			{"E2E p50", func(r *Row) float64 { return r.E2EP50 }}, {"E2E p99", func(r *Row) float64 { return r.E2EP99 }}}),
	}
	good := []report.Chart{
		lines("sweep-goodput", "Goodput and throughput against load", "requests/s: completed (solid) and meeting every SLO (dashed)",
			"requests/s", false, []metric{
				{"throughput", func(r *Row) float64 { return r.Throughput }}, {"goodput", func(r *Row) float64 { return r.Goodput }}}),
		lines("sweep-good-fraction", "Good fraction against load", "the fraction meeting every SLO (solid) and the upper end of its Wilson interval (dashed)",
			"fraction", false, []metric{
				{"good fraction", func(r *Row) float64 { return r.GoodFraction }}, {"Wilson high", func(r *Row) float64 { return r.GoodHigh }}}),
	}
	if m.Base.Goodput == "" {
		good = good[:1]
		good[0].Explain = "requests/s completed (goodput needs --goodput)"
		good[0].Series = slices.DeleteFunc(good[0].Series, func(s report.Series) bool { return strings.HasPrefix(s.Label, "goodput") })
	}
	return []report.Section{
		{ID: "sweep-load-latency", Title: "Latency against load", Explain: "how each latency grows with " + load, Charts: lat},
		{ID: "sweep-load-goodput", Title: "Goodput against load", Explain: "what the server completed, and what met the SLOs, at each " + load, Charts: good},
	}
}
