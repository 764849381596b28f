package arrowio

import (
	"bytes"
	"encoding/csv"
	"encoding/json"
	"fmt"
	"maps"
	"path/filepath"
	"slices"
	"strconv"
	"time"

	"github.com/reprise-bench/reprise/engine/summary"
)

// AIPerfTimeSlicesFile is the stem of AIPerf's time-slice exports
// (--slice-duration): profile_export_aiperf_timeslices.json and .csv.
const AIPerfTimeSlicesFile = "profile_export_aiperf_timeslices"

// TimeSlices reads the run's records twice and returns the summaries of
// its measured requests per slice of width (by the time each was sent),
// each with info and opts ([summary.Slicer]).
func (r *RunReader) TimeSlices(width time.Duration, info summary.RunInfo, opts summary.Options) ([]summary.TimeSlice, error) {
	s := summary.NewSlicer(width, opts)
	for req, err := range r.Requests() {
		if err != nil {
			return nil, err
		}
		s.Start(&req)
	}
	for req, err := range r.Requests() {
		if err != nil {
			return nil, err
		}
		s.Add(&req)
	}
	return s.Slices(info), nil
}

// AIPerfTimeSliceNames returns the time-slice exports' names under an
// export prefix ("" for AIPerf's defaults): PREFIX_timeslices.json, .csv.
func AIPerfTimeSliceNames(prefix string) (jsonName, csvName string) {
	stem := AIPerfTimeSlicesFile
	if prefix != "" {
		stem = prefix + "_timeslices"
	}
	return stem + ".json", stem + ".csv"
}

// WriteAIPerfTimeSlices writes the time-slice exports to dir, each
// atomically (docs/format/summary.md, "Time slices"): the JSON holds
// slice_duration_sec and one object per slice (timeslice_index,
// start_ns, end_ns and the slice's summary.json metrics); the CSV one row
// per slice, metric and statistic.
func WriteAIPerfTimeSlices(dir, prefix string, width time.Duration, ts []summary.TimeSlice) error {
	jn, cn := AIPerfTimeSliceNames(prefix)
	type slice struct {
		Index   int             `json:"timeslice_index"`
		StartNS int64           `json:"start_ns"`
		EndNS   int64           `json:"end_ns"`
		Metrics json.RawMessage `json:"metrics"`
	}
	out := struct {
		Width  float64 `json:"slice_duration_sec"`
		Slices []slice `json:"timeslices"`
	}{Width: width.Seconds(), Slices: []slice{}}
	var rows bytes.Buffer
	w := csv.NewWriter(&rows)
	_ = w.Write([]string{"Timeslice", "Start NS", "End NS", "Metric", "Unit", "Stat", "Value"})
	for _, t := range ts {
		b, err := t.Summary.JSON()
		if err != nil {
			return err
		}
		out.Slices = append(out.Slices, slice{t.Index, t.StartNS, t.EndNS, b})
		var m map[string]json.RawMessage
		if err := json.Unmarshal(b, &m); err != nil {
			return err
		}
		for _, tag := range slices.Sorted(maps.Keys(m)) {
			var metric map[string]any
			if json.Unmarshal(m[tag], &metric) != nil {
				continue
			}
			unit, ok := metric["unit"].(string)
			if !ok {
				continue
			}
			for _, stat := range slices.Sorted(maps.Keys(metric)) {
				v, ok := metric[stat].(float64)
				if !ok {
					continue
				}
				_ = w.Write([]string{strconv.Itoa(t.Index), strconv.FormatInt(t.StartNS, 10), strconv.FormatInt(t.EndNS, 10),
					tag, unit, stat, strconv.FormatFloat(v, 'g', -1, 64)})
			}
		}
	}
	w.Flush()
	if err := w.Error(); err != nil {
		return err
	}
	js, err := json.MarshalIndent(out, "", "  ")
	if err != nil {
		return fmt.Errorf("encode %s: %w", jn, err)
	}
	if err := writeFileAtomic(filepath.Join(dir, jn), append(js, '\n')); err != nil {
		return err
	}
	return writeFileAtomic(filepath.Join(dir, cn), rows.Bytes())
}
