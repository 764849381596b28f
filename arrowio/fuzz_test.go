package arrowio

import (
	"os"
	"path/filepath"
	"testing"

	"github.com/apache/arrow/go/v17/arrow"
)

// FuzzReadFile feeds arbitrary bytes to the Parquet and Arrow readers: they
// must return rows or an error, never panic or hang. Seeds: real files.
func FuzzReadFile(f *testing.F) {
	dir := f.TempDir()
	for _, fm := range []Format{FormatParquet, FormatArrow} {
		d := filepath.Join(dir, string(fm))
		writeRun(f, d, Config{Format: fm, SingleFile: true}, genRequests(20, 1), genEvents(30, 2), 7)
		for _, name := range []string{RecordsTable, EventsTable} {
			b, err := os.ReadFile(filepath.Join(d, name+fm.Ext()))
			if err != nil {
				f.Fatal(err)
			}
			f.Add(b, fm == FormatArrow)
		}
	}
	f.Add([]byte("PAR1PAR1"), false)
	f.Add([]byte("ARROW1\x00\x00ARROW1"), true)
	f.Fuzz(func(t *testing.T, data []byte, isArrow bool) {
		ext := FormatParquet.Ext()
		if isArrow {
			ext = FormatArrow.Ext()
		}
		p := filepath.Join(t.TempDir(), "f"+ext)
		if err := os.WriteFile(p, data, 0o644); err != nil {
			t.Fatal(err)
		}
		// Decode as records and as events: both must fail cleanly or work.
		_ = ReadFile(p, func(rec arrow.Record) error {
			_, err := appendRequests(nil, rec)
			if err != nil {
				_, err = appendEvents(nil, rec)
			}
			return err
		})
	})
}
