package sweep

import (
	"bytes"
	"cmp"
	"encoding/json"
	"fmt"
	"path/filepath"
	"slices"

	"github.com/reprise-bench/reprise/arrowio"
	"github.com/reprise-bench/reprise/engine/summary"
	"github.com/reprise-bench/reprise/internal/report"
	"github.com/reprise-bench/reprise/replay"
)

// LoadSeries is a set of plain run directories that differ in load: the
// output of AIPerf's Methodology B loop (one `reprise profile` per
// --concurrency, each into its own --artifact-dir), read as the points
// of a sweep.
type LoadSeries struct {
	// Setting is the load setting that differs: [Concurrency],
	// [RequestRate] or [Speedup].
	Setting string
	// Dirs are the run directories in load order (ascending Values),
	// Order their indexes in the directories given to [ReadLoadSeries].
	Dirs   []string
	Order  []int
	Values []float64
	// Rows are the points' rows, as a sweep's table shows them.
	Rows []Row
	// Sections are what a sweep adds to its report: the table, the
	// Pareto front with its knee, per-user output tokens/s against
	// throughput, latency and goodput against load.
	Sections []report.Section
}

// runLoad is what a run directory's manifest says of its load.
type runLoad struct {
	Mode   string `json:"mode"`
	Replay struct {
		Concurrency float64 `json:"concurrency"`
		RequestRate float64 `json:"request_rate"`
		Speedup     float64 `json:"speedup"`
	} `json:"replay"`
	Goodput         string   `json:"goodput"`
	MinGoodFraction *float64 `json:"min_good_fraction"`
	// What must be the same for runs to differ only in load.
	Model       string          `json:"model"`
	URL         string          `json:"url"`
	Endpoint    string          `json:"endpoint"`
	Streaming   bool            `json:"streaming"`
	TraceSHA256 string          `json:"trace_sha256"`
	Synthetic   json.RawMessage `json:"synthetic"`
}

// sameWorkload reports whether l and m ran the same workload against the
// same server (model, URL, endpoint, streaming, trace or synthetic
// lengths, SLOs): then only their load can differ.
func (l runLoad) sameWorkload(m runLoad) bool {
	return l.Model == m.Model && l.URL == m.URL && l.Endpoint == m.Endpoint && l.Streaming == m.Streaming &&
		l.TraceSHA256 == m.TraceSHA256 && bytes.Equal(l.Synthetic, m.Synthetic) && l.Goodput == m.Goodput
}

// setting is the load setting of a run's mode and its value.
func (l runLoad) setting() (string, float64, bool) {
	switch replay.Mode(l.Mode) {
	case replay.ModeConcurrency:
		return Concurrency, l.Replay.Concurrency, true
	case replay.ModeRate:
		return RequestRate, l.Replay.RequestRate, true
	case replay.ModeFixed:
		return Speedup, l.Replay.Speedup, true
	}
	return "", 0, false
}

// ReadLoadSeries reads dirs as a load series. ok is false, with no
// error, when they are not one: fewer than two, a run without a
// manifest, runs of different modes (one paced by concurrency, another
// by rate), runs of different workloads or servers (model, URL,
// endpoint, streaming, trace, synthetic lengths, SLOs) or two runs at
// the same load. A run that is one but cannot be
// read is an error naming its directory.
func ReadLoadSeries(dirs []string) (_ *LoadSeries, ok bool, err error) {
	if len(dirs) < 2 {
		return nil, false, nil
	}
	type entry struct {
		i     int
		dir   string
		value float64
		load  runLoad
	}
	var es []entry
	setting := ""
	for i, d := range dirs {
		rr, err := arrowio.Open(d)
		if err != nil {
			return nil, false, nil
		}
		raw, err := rr.Manifest()
		if err != nil {
			return nil, false, nil
		}
		var l runLoad
		if json.Unmarshal(raw, &l) != nil {
			return nil, false, nil
		}
		s, v, ok := l.setting()
		if !ok || setting != "" && s != setting || v <= 0 || len(es) > 0 && !es[0].load.sameWorkload(l) {
			return nil, false, nil
		}
		setting = s
		es = append(es, entry{i, d, v, l})
	}
	slices.SortStableFunc(es, func(a, b entry) int { return cmp.Compare(a.value, b.value) })
	for k := 1; k < len(es); k++ {
		if es[k].value == es[k-1].value {
			return nil, false, nil
		}
	}
	s := &LoadSeries{Setting: setting}
	m := &Manifest{SchemaVersion: SchemaVersion, Plan: Plan{Kind: "grid", Runs: 1, Level: summary.DefaultConfidenceLevel,
		Base: BaseInfo{Goodput: es[0].load.Goodput}}}
	axis := Axis{Name: setting}
	for _, e := range es {
		meas, err := readRun(e.dir, DefaultSaturationTolerance)
		if err != nil {
			return nil, false, fmt.Errorf("read %s: %w", e.dir, err)
		}
		minGood := 1.0
		if e.load.MinGoodFraction != nil {
			minGood = *e.load.MinGoodFraction
		}
		p := Point{Names: []string{setting}, Values: []float64{e.value}}
		row := newRow(p, []*measured{meas}, minGood, summary.DefaultConfidenceLevel)
		s.Dirs, s.Order, s.Values = append(s.Dirs, e.dir), append(s.Order, e.i), append(s.Values, e.value)
		s.Rows = append(s.Rows, row)
		axis.Values = append(axis.Values, e.value)
		m.Points = append(m.Points, PointStatus{Name: row.Point, Dir: filepath.Base(e.dir), Settings: row.Settings, Status: StatusDone, Row: &s.Rows[len(s.Rows)-1]})
	}
	m.Axes = []Axis{axis}
	front := Pareto(s.Rows)
	for _, i := range front {
		m.Pareto = append(m.Pareto, s.Rows[i].Point)
	}
	if k := Knee(s.Rows, front); k >= 0 {
		m.Knee = s.Rows[k].Point
	}
	s.Sections = ReportSections(m)
	return s, true, nil
}
