// A report's sections: their tables, cells and folded details, and the
// helpers that make a number cell and an anchor.

package report

import (
	"math"
	"strconv"
	"strings"
)

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

// slug makes an anchor of a title.
func slug(s string) string {
	var b strings.Builder
	for _, r := range strings.ToLower(s) {
		switch {
		case r >= 'a' && r <= 'z', r >= '0' && r <= '9':
			b.WriteRune(r)
		case b.Len() > 0 && !strings.HasSuffix(b.String(), "-"):
			b.WriteByte('-')
		}
	}
	return strings.TrimSuffix(b.String(), "-")
}

// num is a right-aligned number cell: whole numbers from 1000 up, four
// significant digits below.
func num(v float64) Cell {
	if math.IsNaN(v) || math.IsInf(v, 0) {
		return Cell{Text: "—", Class: "num"}
	}
	if math.Abs(v) >= 1000 && math.Abs(v) < 1e15 || v == math.Trunc(v) && math.Abs(v) < 1e15 {
		return Cell{Text: strconv.FormatFloat(math.Round(v), 'f', 0, 64), Class: "num"}
	}
	return Cell{Text: strconv.FormatFloat(v, 'g', 4, 64), Class: "num"}
}
