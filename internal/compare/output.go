package compare

import (
	"encoding/json"
	"fmt"
	"io"
	"math"
	"strconv"
	"strings"
	"unicode/utf8"
)

// SchemaVersion is the version of the JSON that [WriteJSON] writes
// (docs/format/compare-json.md).
const SchemaVersion = "2"

// WriteTable writes the results as a human table: the sides, how they
// were paired, the warnings, then one line per metric with A, B, B−A,
// its relative change, the interval of B−A and the verdict.
func WriteTable(w io.Writer, results []*Result) error {
	var b strings.Builder
	for k, r := range results {
		if k > 0 {
			b.WriteString("\n")
		}
		for _, s := range []struct {
			name string
			side Side
		}{{"A", r.A}, {"B", r.B}} {
			fmt.Fprintf(&b, "%s  %s: %d requests over %.3f s", s.name, s.side.Label, s.side.Requests, s.side.DurationS)
			if s.side.TraceSHA256 != "" {
				fmt.Fprintf(&b, ", trace %s", short(s.side.TraceSHA256))
			}
			fmt.Fprintf(&b, ", model %s\n", s.side.Model)
		}
		switch {
		case r.Paired:
			fmt.Fprintf(&b, "paired by %s: %d pairs", r.PairedBy, r.Pairs)
		case r.RunsA > 1 || r.RunsB > 1:
			fmt.Fprintf(&b, "replicates: %d runs of A, %d of B, resampled run by run", r.RunsA, r.RunsB)
		default:
			b.WriteString("unpaired: each run resampled on its own")
		}
		fmt.Fprintf(&b, "; simultaneous %g%% bootstrap intervals (blocks of consecutive requests), %d resamples, seed %d\n", r.Level*100, r.Resamples, r.Seed)
		for _, x := range r.Warnings {
			fmt.Fprintf(&b, "warning: not comparable? %s\n", x)
		}
		for _, x := range r.Notes {
			fmt.Fprintf(&b, "note: %s\n", x)
		}
		rows := [][]string{{"metric", "unit", "A", "B", "B−A", "B/A−1", fmt.Sprintf("%g%% interval of B−A", r.Level*100), "verdict"}}
		for _, m := range r.Metrics {
			iv := "-"
			if !math.IsNaN(m.DiffLow) {
				iv = "[" + num(m.DiffLow, m.Unit, true) + ", " + num(m.DiffHigh, m.Unit, true) + "]"
			}
			verdict := string(m.Verdict)
			if m.Verdict == NoDifference {
				verdict = "no significant difference"
			}
			if m.Note != "" {
				verdict += ": " + m.Note
			}
			rows = append(rows, []string{m.Name, m.Unit, num(m.A, m.Unit, false), num(m.B, m.Unit, false),
				num(m.Diff, m.Unit, true), pct(m.Rel), iv, verdict})
		}
		writeColumns(&b, rows)
	}
	_, err := io.WriteString(w, b.String())
	return err
}

// writeColumns writes rows as columns two spaces apart: the first two
// and the last left-aligned, the numbers between right-aligned.
func writeColumns(b *strings.Builder, rows [][]string) {
	width := make([]int, len(rows[0]))
	for _, r := range rows {
		for i, c := range r {
			width[i] = max(width[i], utf8.RuneCountInString(c))
		}
	}
	for _, r := range rows {
		for i, c := range r {
			pad := strings.Repeat(" ", width[i]-utf8.RuneCountInString(c))
			switch {
			case i == len(r)-1:
				b.WriteString(c)
			case i < 2:
				b.WriteString(c + pad + "  ")
			default:
				b.WriteString(pad + c + "  ")
			}
		}
		b.WriteString("\n")
	}
}

// jnum is a number in JSON, null when it does not exist.
type jnum float64

func (v jnum) MarshalJSON() ([]byte, error) {
	f := float64(v)
	if math.IsNaN(f) || math.IsInf(f, 0) {
		return []byte("null"), nil
	}
	return strconv.AppendFloat(nil, f, 'g', -1, 64), nil
}

type jsonMetric struct {
	Name           string  `json:"name"`
	Unit           string  `json:"unit"`
	HigherIsBetter bool    `json:"higher_is_better"`
	A              jnum    `json:"a"`
	B              jnum    `json:"b"`
	Diff           jnum    `json:"diff"`
	Rel            jnum    `json:"rel_diff"`
	CI             [2]jnum `json:"ci"`
	RelCI          [2]jnum `json:"rel_ci"`
	Floor          jnum    `json:"noise_floor"`
	FloorWhy       string  `json:"noise_floor_source,omitempty"`
	Degradation    jnum    `json:"degradation"`
	Verdict        Verdict `json:"verdict"`
	Note           string  `json:"note,omitempty"`
}

type jsonResult struct {
	A         Side         `json:"a"`
	B         Side         `json:"b"`
	RunsA     int          `json:"runs_a"`
	RunsB     int          `json:"runs_b"`
	Blocks    int          `json:"blocks"`
	Tail      float64      `json:"tail"`
	Paired    bool         `json:"paired"`
	PairedBy  string       `json:"paired_by,omitempty"`
	Pairs     int          `json:"pairs"`
	UnpairedA int          `json:"unpaired_a"`
	UnpairedB int          `json:"unpaired_b"`
	Metrics   []jsonMetric `json:"metrics"`
	Warnings  []string     `json:"warnings"`
	Notes     []string     `json:"notes"`
	Breaches  []string     `json:"breaches"`
}

// WriteJSON writes the results as one JSON document
// (docs/format/compare-json.md), with the breaches of ts per result.
func WriteJSON(w io.Writer, results []*Result, ts []Threshold) error {
	doc := struct {
		SchemaVersion string       `json:"schema_version"`
		Level         float64      `json:"level"`
		Resamples     int          `json:"resamples"`
		Seed          uint64       `json:"seed"`
		Comparisons   []jsonResult `json:"comparisons"`
	}{SchemaVersion: SchemaVersion, Comparisons: []jsonResult{}}
	for _, r := range results {
		doc.Level, doc.Resamples, doc.Seed = r.Level, r.Resamples, r.Seed
		jr := jsonResult{A: r.A, B: r.B, RunsA: r.RunsA, RunsB: r.RunsB, Blocks: r.Blocks, Tail: r.Tail, Notes: append([]string{}, r.Notes...), Paired: r.Paired, PairedBy: r.PairedBy, Pairs: r.Pairs, UnpairedA: r.UnpairedA, UnpairedB: r.UnpairedB,
			Warnings: append([]string{}, r.Warnings...), Breaches: []string{}}
		for _, m := range r.Metrics {
			jr.Metrics = append(jr.Metrics, jsonMetric{Name: m.Name, Unit: m.Unit, HigherIsBetter: m.HigherIsBetter,
				A: jnum(m.A), B: jnum(m.B), Diff: jnum(m.Diff), Rel: jnum(m.Rel),
				CI: [2]jnum{jnum(m.DiffLow), jnum(m.DiffHigh)}, RelCI: [2]jnum{jnum(m.RelLow), jnum(m.RelHigh)},
				Floor: jnum(m.Floor), FloorWhy: m.FloorWhy, Degradation: jnum(m.Degradation), Verdict: m.Verdict, Note: m.Note})
		}
		for _, br := range r.Breaches(ts) {
			jr.Breaches = append(jr.Breaches, br.String())
		}
		doc.Comparisons = append(doc.Comparisons, jr)
	}
	enc := json.NewEncoder(w)
	enc.SetIndent("", "  ")
	return enc.Encode(doc)
}
