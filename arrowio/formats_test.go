package arrowio

import (
	"bytes"
	"fmt"
	"math"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/apache/arrow/go/v17/arrow"
	"github.com/apache/arrow/go/v17/arrow/array"
	"github.com/google/go-cmp/cmp"

	"github.com/reprise-bench/reprise/engine/record"
)

// cell returns row i of a as a comparable Go value: nil for null, a
// dictionary's value for a dictionary column.
func cell(a arrow.Array, i int) any {
	if a.IsNull(i) {
		return nil
	}
	switch a := a.(type) {
	case *array.Dictionary:
		return cell(a.Dictionary(), a.GetValueIndex(i))
	case *array.String:
		return a.Value(i)
	case *array.Float64:
		if math.IsNaN(a.Value(i)) {
			return "NaN"
		}
		return a.Value(i)
	case *array.Timestamp:
		return int64(a.Value(i))
	}
	return a.GetOneForMarshal(i)
}

// tableCells reads table name of dir as column name → cells, in file order.
func tableCells(t *testing.T, dir, name string) (cols []string, cells map[string][]any) {
	t.Helper()
	cells = map[string][]any{}
	err := ReadTable(dir, name, func(path string, rec arrow.Record) error {
		names := make([]string, rec.NumCols())
		for c := range names {
			names[c] = rec.ColumnName(c)
			for i := 0; i < int(rec.NumRows()); i++ {
				cells[names[c]] = append(cells[names[c]], cell(rec.Column(c), i))
			}
		}
		if cols == nil {
			cols = names
		} else if !cmp.Equal(cols, names) {
			return fmt.Errorf("%s: columns %v, earlier files %v", path, names, cols)
		}
		return nil
	})
	if err != nil {
		t.Fatal(err)
	}
	return cols, cells
}

// edgeRequests are genRequests plus values a text format could get wrong:
// strings that need escaping, the extremes of every integer type, a NaN,
// the appended columns set and unset.
func edgeRequests() []record.Request {
	reqs := genRequests(3000, 7)
	msgs := []string{"quote \" and backslash \\", "newline\nand\ttab\x01", "ünïcödé ✓ 🚀", "invalid \xff utf-8"}
	for i := range reqs {
		r := &reqs[i]
		if i%5 == 0 {
			r.ReadLagNS = int64(i) * 1_000
		}
		r.TraceInputTokens = -1
		if i%4 == 0 {
			r.TraceInputTokens = r.InputTokens - 7
		}
		if r.ErrorKind != record.ErrNone {
			r.ErrorMessage = msgs[i%len(msgs)]
		}
	}
	reqs[1].RequestID = math.MaxUint64
	reqs[2].BytesReceived, reqs[2].BytesSent = math.MaxInt64, math.MinInt64
	reqs[3].Retries, reqs[3].Turn = math.MaxInt32, math.MinInt32
	reqs[4].ITLNS = math.NaN()
	reqs[5].ITLNS = 1e-300
	reqs[6].ITLNS = 123456789.123456789
	reqs[7].IntendedNS = 1 // 1970, one nanosecond in
	return reqs
}

// TestFormatsAgree writes the same records and events as Parquet, Arrow IPC
// and JSON Lines, reads each back and compares them cell by cell: the same
// columns in the same order, the same values and the same nulls.
func TestFormatsAgree(t *testing.T) {
	reqs := edgeRequests()
	evs := genEvents(5000, 3)
	evs[0].RequestID = math.MaxUint64
	evs[1].TimeNS = 1
	dirs := map[Format]string{}
	for _, f := range allFormats {
		dirs[f] = t.TempDir()
		writeRun(t, dirs[f], Config{Format: f, RowGroupRows: 1000, PartRows: 2000}, reqs, evs, 250)
	}
	for _, table := range []string{RecordsTable, EventsTable} {
		schema := RecordsSchema()
		if table == EventsTable {
			schema = EventsSchema()
		}
		var want []string
		for _, f := range schema.Fields() {
			want = append(want, f.Name)
		}
		ref, refCells := tableCells(t, dirs[FormatParquet], table)
		if diff := cmp.Diff(want, ref); diff != "" {
			t.Fatalf("%s: Parquet columns differ from the schema (-want +got):\n%s", table, diff)
		}
		for _, f := range []Format{FormatArrow, FormatJSONL} {
			cols, cells := tableCells(t, dirs[f], table)
			if diff := cmp.Diff(ref, cols); diff != "" {
				t.Errorf("%s %s: columns (-parquet +%s):\n%s", table, f, f, diff)
				continue
			}
			for _, c := range cols {
				a, b := refCells[c], cells[c]
				if len(a) != len(b) {
					t.Errorf("%s %s: column %s has %d rows, Parquet %d", table, f, c, len(b), len(a))
					continue
				}
				for i := range a {
					if !cmp.Equal(a[i], b[i]) && !(c == "error_message" && strings.ContainsRune(b[i].(string), '\ufffd')) {
						t.Errorf("%s %s: row %d column %s = %#v, Parquet %#v", table, f, i, c, b[i], a[i])
						break
					}
				}
			}
		}
	}
	// Read back into Go, every format gives the same rows.
	for _, f := range []Format{FormatArrow, FormatJSONL} {
		for _, table := range []string{RecordsTable, EventsTable} {
			var a, b any
			var err error
			if table == RecordsTable {
				a, _ = ReadRequests(dirs[FormatParquet])
				b, err = ReadRequests(dirs[f])
			} else {
				a, _ = ReadEvents(dirs[FormatParquet])
				b, err = ReadEvents(dirs[f])
			}
			if err != nil {
				t.Fatal(err)
			}
			if diff := cmp.Diff(a, b, cmp.Comparer(func(x, y float64) bool { return x == y || math.IsNaN(x) && math.IsNaN(y) }),
				cmp.FilterPath(func(p cmp.Path) bool { return strings.HasSuffix(p.String(), "ErrorMessage") }, cmp.Ignore())); diff != "" {
				t.Errorf("%s %s rows (-parquet +%s):\n%s", table, f, f, diff)
			}
		}
	}
	// JSON Lines is one file per table, written in place.
	for _, name := range []string{"records.jsonl", "events.jsonl"} {
		if _, err := os.Stat(filepath.Join(dirs[FormatJSONL], name)); err != nil {
			t.Error(err)
		}
	}
}

// A JSON Lines file cut in the middle of a line (the writer was killed) is
// read up to its last complete line; a damaged line elsewhere is an error
// naming the file, the line and the column.
func TestJSONLTornAndBadLines(t *testing.T) {
	dir := t.TempDir()
	reqs := genRequests(10, 1)
	writeRun(t, dir, Config{Format: FormatJSONL}, reqs, nil, 10)
	p := filepath.Join(dir, "records.jsonl")
	b, err := os.ReadFile(p)
	if err != nil {
		t.Fatal(err)
	}
	lines := strings.SplitAfter(string(b), "\n")
	torn := strings.Join(lines[:9], "") + lines[9][:40]
	if err := os.WriteFile(p, []byte(torn), 0o644); err != nil {
		t.Fatal(err)
	}
	got, err := ReadRequests(dir)
	if err != nil || len(got) != 9 {
		t.Fatalf("torn last line: %d rows, %v; want 9", len(got), err)
	}
	for _, tc := range []struct{ line, want string }{
		{strings.Replace(lines[3], `"turn":3`, `"turn":"3"`, 1), "records.jsonl: line 4: column turn"},
		{strings.Replace(lines[3], `"turn":3`, `"turn":null`, 1), "line 4: column turn: null"},
		{strings.Replace(lines[3], `"turn":3,`, ``, 1), "line 4: column turn missing"},
		{strings.Replace(lines[3], `{`, `{"colour":1,`, 1), `line 4: column "colour" is not in the records schema (` + RecordsVersion + `)`},
		{lines[3][:20] + "\n", "line 4: "},
		{strings.Replace(lines[3], `{`, `{"turn":3,`, 1), "line 4: column turn given twice"},
		{"[1,2]\n", "line 4: want one JSON object per line"},
	} {
		bad := strings.Join(lines[:3], "") + tc.line + strings.Join(lines[4:], "")
		if err := os.WriteFile(p, []byte(bad), 0o644); err != nil {
			t.Fatal(err)
		}
		if _, err := ReadRequests(dir); err == nil || !strings.Contains(err.Error(), tc.want) {
			t.Errorf("err = %v, want %q", err, tc.want)
		}
	}
}

// FuzzReadJSONL: any bytes as records.jsonl give rows or an error, never a
// panic; rows read back are written and read again unchanged.
func FuzzReadJSONL(f *testing.F) {
	dir := f.TempDir()
	writeRun(f, dir, Config{Format: FormatJSONL}, edgeRequests()[:8], nil, 8)
	b, err := os.ReadFile(filepath.Join(dir, "records.jsonl"))
	if err != nil {
		f.Fatal(err)
	}
	for _, l := range strings.SplitAfter(string(b), "\n") {
		f.Add([]byte(l))
	}
	f.Add([]byte(`{"request_id":1,"turn":0}` + "\n"))
	f.Fuzz(func(t *testing.T, data []byte) {
		var reqs []record.Request
		err := readJSONL(bytes.NewReader(data), RecordsTable, func(rec arrow.Record) error {
			var err error
			reqs, err = appendRequests(reqs, rec)
			return err
		})
		if err != nil || len(reqs) == 0 {
			return
		}
		again := t.TempDir()
		writeRun(t, again, Config{Format: FormatJSONL, RowGroupRows: 64}, reqs, nil, 100)
		got, err := ReadRequests(again)
		if err != nil {
			t.Fatal(err)
		}
		ignoreText := cmp.FilterPath(func(p cmp.Path) bool {
			s := p.String()
			return strings.HasSuffix(s, "ErrorMessage") || strings.HasSuffix(s, "SessionID") || strings.HasSuffix(s, "FinishReason")
		}, cmp.Ignore())
		if diff := cmp.Diff(reqs, got, cmp.Comparer(func(x, y float64) bool { return x == y || math.IsNaN(x) && math.IsNaN(y) }), ignoreText); diff != "" {
			t.Errorf("second round trip (-first +second):\n%s", diff)
		}
	})
}
