package report

import (
	"strconv"
	"strings"

	"github.com/reprise-bench/reprise/engine/summary"
)

// Repeated is a set of repeated runs of one load (replay --runs N) among
// the runs given to [Build]: the headline shows the set as one row, each
// number the mean over its runs with its across-run interval.
type Repeated struct {
	// Label names the set's row.
	Label string
	// First and Count say which of Build's runs are the set's:
	// runs[First : First+Count].
	First, Count int
	// Across is the set's across-run statistics (runs.json).
	Across *summary.AcrossRuns
}

// headRow is one line of the headline strip: a run, or a set of
// repeated runs.
type headRow struct {
	Label, Color string
	Tiles        []tile
}

// tile is one number of the headline strip. Metric and Value let a
// reader (the browser test) find the number it shows in summary.json
// (Metric: the tag and statistic, "time_to_first_token.p50") or
// runs.json (the interval's mean).
type tile struct {
	Name, Text, Err, Class string
	Metric                 string
	Value                  string
}

// headlineMetrics are the headline's numbers: summary.json's tag and
// statistic, the name shown and the unit.
var headlineMetrics = []struct{ tag, stat, name, unit string }{
	{"time_to_first_token", "p50", "TTFT p50", "ms"},
	{"time_to_first_token", "p99", "TTFT p99", "ms"},
	{"inter_token_latency", "p50", "ITL p50", "ms"},
	{"inter_token_latency", "p99", "ITL p99", "ms"},
	{"request_latency", "p50", "E2E p50", "ms"},
	{"request_latency", "p99", "E2E p99", "ms"},
	{"output_token_throughput", "avg", "output tokens/s", ""},
	{"request_throughput", "avg", "requests/s", ""},
	{"goodput", "avg", "goodput req/s", ""},
}

// metricValue is statistic stat of summary.json's tag in s, ok false
// when the run has none (no streaming: no TTFT; no SLO: no goodput).
func metricValue(s *summary.Summary, tag, stat string) (float64, bool) {
	switch tag {
	case "output_token_throughput":
		return s.OutputTokenThroughput, s.RequestCount > 0
	case "request_throughput":
		return s.RequestThroughput, true
	case "goodput":
		return s.Goodput, len(s.Options.Goodput) > 0
	}
	st, ok := s.Metrics[tag]
	if !ok {
		return 0, false
	}
	switch stat {
	case "p50":
		return st.P50, true
	case "p99":
		return st.P99, true
	}
	return st.Avg, true
}

// headlineRows builds the strip at the top of the page: for each run (a set
// of repeated runs once, as its mean), TTFT, ITL and E2E p50 and p99,
// output tokens/s, requests/s, goodput when an SLO was set, and the
// verdict. Error bars: a calibrated run's p99 timing error beside its
// latencies; a set's across-run interval beside every number. The
// numbers are the summary's (engine/summary), formatted, never
// recomputed.
func headlineRows(runs []*runData, sets []Repeated) []headRow {
	var rows []headRow
	for i := 0; i < len(runs); i++ {
		if set, ok := setAt(sets, i, len(runs)); ok {
			rows = append(rows, setRow(runs[i:i+set.Count], set))
			i += set.Count - 1
			continue
		}
		rows = append(rows, runRow(runs[i]))
	}
	return rows
}

// setAt is the set of repeated runs that starts at run i, if any.
func setAt(sets []Repeated, i, n int) (Repeated, bool) {
	for _, s := range sets {
		if s.First == i && s.Count > 0 && s.First+s.Count <= n && s.Across != nil {
			return s, true
		}
	}
	return Repeated{}, false
}

func runRow(d *runData) headRow {
	s := d.sum
	row := headRow{Label: d.label, Color: d.color}
	cal := s.Options.Calibration
	good := s.Quality().Verdict == summary.QualityGood
	for _, m := range headlineMetrics {
		v, ok := metricValue(s, m.tag, m.stat)
		if !ok {
			continue
		}
		t := tile{Name: m.name, Text: fmtNum(v, m.unit), Metric: m.tag + "." + m.stat, Value: strconv.FormatFloat(v, 'g', -1, 64)}
		if cal != nil && m.unit == "ms" {
			if eb, ok := cal.Errors[m.tag]; ok {
				t.Err = "± " + fmtNum(eb.P99, "ms") + " (calibrated p99 error)"
				if !good {
					t.Err = "calibration does not hold: degraded run"
					t.Class = "warn"
				}
			}
		}
		row.Tiles = append(row.Tiles, t)
	}
	return append1(row, verdictTile(d))
}

func setRow(runs []*runData, set Repeated) headRow {
	row := headRow{Label: set.Label + " (mean of " + strconv.Itoa(set.Across.Runs) + " runs)", Color: runs[0].color}
	for _, m := range headlineMetrics {
		key := m.tag + "." + m.stat
		if m.stat == "avg" {
			key = m.tag // run-level metrics are keyed by their tag
		}
		iv, ok := set.Across.Metrics[key]
		if !ok || iv.N == 0 {
			continue
		}
		row.Tiles = append(row.Tiles, tile{Name: m.name, Text: fmtNum(iv.Mean, m.unit), Metric: key,
			Value: strconv.FormatFloat(iv.Mean, 'g', -1, 64),
			Err:   "[" + fmtNum(iv.Low, "") + ", " + fmtNum(iv.High, "") + "] " + strconv.FormatFloat(100*set.Across.Level, 'g', -1, 64) + " % across runs"})
	}
	// The set's verdict is its worst run's.
	worst := runs[0]
	for _, d := range runs[1:] {
		if exitCode(d.checks()) > exitCode(worst.checks()) {
			worst = d
		}
	}
	return append1(row, verdictTile(worst))
}

func append1(r headRow, t tile) headRow { r.Tiles = append(r.Tiles, t); return r }

// verdictTile is the run's exit code and what it means, as the verdicts
// section judges it.
func verdictTile(d *runData) tile {
	cs := d.checks()
	code := exitCode(cs)
	t := tile{Name: "verdict", Text: "passed", Class: "good", Metric: "exit_code", Value: strconv.Itoa(code)}
	if code != 0 {
		t.Text, t.Class = "exit "+strconv.Itoa(code), "bad"
		for _, c := range cs {
			if c.failed {
				t.Err = c.name + ": " + c.value
				break
			}
		}
		return t
	}
	for _, c := range cs {
		if c.warn {
			what, _, _ := strings.Cut(c.value, ":")
			t.Class, t.Err = "warn", c.name+": "+what
			break
		}
	}
	return t
}

// fmtNum formats a headline number with four significant digits (whole
// numbers from 1000 up) and its unit.
func fmtNum(v float64, unit string) string {
	s := num(v).Text
	if unit != "" {
		s += " " + unit
	}
	return s
}
