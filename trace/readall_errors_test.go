package trace

import (
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"reflect"
	"strings"
	"testing"
)

// ReadAllFrom reports every invalid row (up to MaxRowErrors, then a count)
// instead of stopping at the first, so a user fixes a trace in one pass.
func TestReadAllFromReportsEveryInvalidRow(t *testing.T) {
	var b strings.Builder
	b.WriteString(`{"timestamp": 0, "input_length": 10, "output_length": 1}` + "\n")
	for i := range MaxRowErrors + 5 {
		fmt.Fprintf(&b, `{"timestamp": %d, "input_length": -1, "output_length": 1}`+"\n", i+1)
	}
	b.WriteString(`{"timestamp": 99, "input_length": 10, "output_length": "x"}` + "\n")
	r, err := NewReader("bad.jsonl", strings.NewReader(b.String()), Options{})
	if err != nil {
		t.Fatal(err)
	}
	rows, stats, err := ReadAllFrom(r)
	if err == nil || rows != nil {
		t.Fatalf("rows %d, err %v; want no rows and an error", len(rows), err)
	}
	msg := err.Error()
	if got := strings.Count(msg, "bad.jsonl:"); got != MaxRowErrors {
		t.Errorf("%d rows named, want the first %d:\n%s", got, MaxRowErrors, msg)
	}
	if !strings.Contains(msg, "bad.jsonl:2: input_length") || !strings.Contains(msg, "and 6 more invalid rows (26 in all)") {
		t.Errorf("message:\n%s", msg)
	}
	if _, ok := errors.AsType[*ParseError](err); !ok {
		t.Error("the joined error does not match *ParseError")
	}
	if stats.Read != int64(MaxRowErrors+7) {
		t.Errorf("read %d rows, want all %d", stats.Read, MaxRowErrors+7)
	}
}

// TestReadAllSizesOnce: reading a file, ReadAll makes its row slice once,
// at the file's line count (no append growth: the load peak of a large
// trace); a file without a final newline is counted right.
func TestReadAllSizesOnce(t *testing.T) {
	var b strings.Builder
	for i := range 1000 {
		fmt.Fprintf(&b, `{"timestamp": %d, "input_length": 10, "output_length": 5, "hash_ids": [%d]}`+"\n", i, i)
	}
	text := strings.TrimSuffix(b.String(), "\n")
	path := filepath.Join(t.TempDir(), "t.jsonl")
	if err := os.WriteFile(path, []byte(text), 0o644); err != nil {
		t.Fatal(err)
	}
	rows, _, err := ReadAll(path, Options{})
	if err != nil {
		t.Fatal(err)
	}
	if len(rows) != 1000 || cap(rows) != 1000 {
		t.Errorf("%d rows in a slice of capacity %d, want 1000 sized once", len(rows), cap(rows))
	}
}

// TestScanMatchesReadAll: Scan reports the same problems as ReadAllFrom
// (the same joined error, every row read), and for a valid sorted trace
// it hands over exactly ReadAll's rows, in order, without keeping them.
func TestScanMatchesReadAll(t *testing.T) {
	var b strings.Builder
	b.WriteString(`{"timestamp": 0, "input_length": 10, "output_length": 1}` + "\n")
	for i := range MaxRowErrors + 5 {
		fmt.Fprintf(&b, `{"timestamp": %d, "input_length": -1, "output_length": 1}`+"\n", i+1)
	}
	bad := b.String()
	open := func(text string) *Reader {
		r, err := NewReader("bad.jsonl", strings.NewReader(text), Options{})
		if err != nil {
			t.Fatal(err)
		}
		return r
	}
	_, wantStats, wantErr := ReadAllFrom(open(bad))
	calls := 0
	stats, err := Scan(open(bad), func(*Row) { calls++ })
	if err == nil || err.Error() != wantErr.Error() || stats.Read != wantStats.Read {
		t.Fatalf("Scan: %v (read %d)\nReadAllFrom: %v (read %d)", err, stats.Read, wantErr, wantStats.Read)
	}
	if calls != 1 {
		t.Errorf("fn called %d times, want once (before the first invalid row)", calls)
	}
	path, rows := windowTrace(t, 300)
	r, err := Open(path, Options{})
	if err != nil {
		t.Fatal(err)
	}
	defer r.Close()
	var got []Row
	stats, err = Scan(r, func(row *Row) { got = append(got, row.Clone()) })
	if err != nil || stats.OutOfOrder != 0 {
		t.Fatal(err, stats.OutOfOrder)
	}
	for i := range rows {
		// Clone turns an empty id list into nil; rows here all have ids.
		if !reflect.DeepEqual(got[i], rows[i]) {
			t.Fatalf("row %d: %+v, want %+v", i, got[i], rows[i])
		}
	}
}

// TestScanSortedMatchesReadAll: ScanSorted says sorted exactly when the
// rows Next returns, in file order, are ReadAll's rows (the same order and
// offsets): an arrival out of order (the first row is then not the
// earliest) and a delay-only turn that sorts back to its session are not.
func TestScanSortedMatchesReadAll(t *testing.T) {
	for _, tt := range []struct {
		name, text string
		sorted     bool
	}{
		{"plain", `{"timestamp": 5, "input_length": 5, "output_length": 2}
{"timestamp": 5, "input_length": 6, "output_length": 2}
{"timestamp": 9, "input_length": 7, "output_length": 2}
`, true},
		{"sessions", `{"session_id": "a", "timestamp": 3, "input_length": 5, "output_length": 2}
{"session_id": "a", "delay": 10, "input_length": 5, "output_length": 2}
{"session_id": "b", "timestamp": 4, "input_length": 5, "output_length": 2}
`, true},
		{"unsorted", `{"timestamp": 10, "input_length": 5, "output_length": 2}
{"timestamp": 0, "input_length": 5, "output_length": 2}
`, false},
		{"delay sorts back", `{"session_id": "a", "timestamp": 0, "input_length": 5, "output_length": 2}
{"session_id": "b", "timestamp": 50, "input_length": 5, "output_length": 2}
{"session_id": "a", "delay": 10, "input_length": 5, "output_length": 2}
`, false},
	} {
		open := func() *Reader {
			r, err := NewReader(tt.name+".jsonl", strings.NewReader(tt.text), Options{})
			if err != nil {
				t.Fatal(err)
			}
			return r
		}
		want, _, err := ReadAllFrom(open())
		if err != nil {
			t.Fatal(err)
		}
		var got []Row
		sorted, _, err := ScanSorted(open(), func(row *Row) bool { got = append(got, row.Clone()); return true })
		if err != nil {
			t.Fatal(err)
		}
		if sorted != tt.sorted || sorted != reflect.DeepEqual(got, want) {
			t.Errorf("%s: sorted %v, want %v; rows equal %v", tt.name, sorted, tt.sorted, reflect.DeepEqual(got, want))
		}
	}
	// It stops at the first row out of order: the invalid row after it is
	// not read (ReadAll reports it), and an invalid row before it is.
	for _, tt := range []struct {
		text string
		read int64
		err  bool
	}{
		{`{"timestamp": 5, "input_length": 5, "output_length": 2}
{"timestamp": 1, "input_length": 5, "output_length": 2}
{"timestamp": 6, "input_length": "x", "output_length": 2}
`, 2, false},
		{`{"timestamp": 5, "input_length": "x", "output_length": 2}
{"timestamp": 6, "input_length": 5, "output_length": 2}
{"timestamp": 1, "input_length": 5, "output_length": 2}
`, 3, true},
	} {
		r, err := NewReader("stop.jsonl", strings.NewReader(tt.text), Options{})
		if err != nil {
			t.Fatal(err)
		}
		sorted, stats, err := ScanSorted(r, func(*Row) bool { return true })
		if sorted || stats.Read != tt.read || (err != nil) != tt.err {
			t.Errorf("sorted %v after %d rows (%v); want false after %d, error %v", sorted, stats.Read, err, tt.read, tt.err)
		}
	}
	// fn returning false stops it too.
	r, err := NewReader("fn.jsonl", strings.NewReader(`{"timestamp": 5, "input_length": 5, "output_length": 2}
{"timestamp": 6, "input_length": 5, "output_length": 2}
`), Options{})
	if err != nil {
		t.Fatal(err)
	}
	if sorted, stats, err := ScanSorted(r, func(*Row) bool { return false }); sorted || stats.Read != 1 || err != nil {
		t.Errorf("fn false: sorted %v after %d rows (%v)", sorted, stats.Read, err)
	}
}
