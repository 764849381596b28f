package arrowio

import (
	"errors"
	"os"
	"path/filepath"
	"strings"
	"sync"
	"sync/atomic"
	"syscall"
	"testing"
	"time"

	"github.com/google/go-cmp/cmp"

	"github.com/reprise-bench/reprise/engine/record"
)

// fullDisk hands out files that share a budget of bytes, like a disk with
// that much free space: a write past it fails with ENOSPC, as write(2)
// does, and so do the Sync and Close of a file whose write failed.
type fullDisk struct {
	left atomic.Int64
}

func (d *fullDisk) create(path string) (tableFile, error) {
	f, err := os.Create(path)
	if err != nil {
		return nil, err
	}
	return &fullFile{File: f, d: d}, nil
}

type fullFile struct {
	*os.File
	d *fullDisk
}

func (f *fullFile) Write(p []byte) (int, error) {
	if f.d.left.Add(-int64(len(p))) < 0 {
		return 0, &os.PathError{Op: "write", Path: f.Name(), Err: syscall.ENOSPC}
	}
	return f.File.Write(p)
}

// TestDiskFull: when the disk fills up, the writer reports the error at
// once (OnError, naming the table and the file), keeps every part completed
// before it readable, leaves no partial part behind, and drops (and counts)
// the rows it can no longer write.
func TestDiskFull(t *testing.T) {
	for _, f := range []Format{FormatParquet, FormatArrow, FormatJSONL} {
		t.Run(string(f), func(t *testing.T) {
			dir := t.TempDir()
			disk := &fullDisk{}
			// Room for a few parts of 100 rows (Parquet, Arrow: 20-30 kB;
			// JSON Lines: about 150 kB), not 30.
			disk.left.Store(150_000)
			if f == FormatJSONL {
				disk.left.Store(800_000)
			}
			var (
				mu       sync.Mutex
				reported []error
			)
			cfg := Config{Format: f, RowGroupRows: 100, PartRows: 100, create: disk.create,
				OnError: func(err error) { mu.Lock(); reported = append(reported, err); mu.Unlock() }}
			w, err := NewRunWriter(dir, cfg)
			if err != nil {
				t.Fatal(err)
			}
			reqs := genRequests(3000, 9)
			var werr error
			handed := 0
			for i := 0; i < len(reqs) && werr == nil; i += 100 {
				werr = w.WriteRequests(reqs[i : i+100])
				handed += 100
			}
			mu.Lock()
			n := len(reported)
			mu.Unlock()
			if werr == nil || n != 1 {
				t.Fatalf("after the disk filled: WriteRequests error %v, OnError called %d times; want the error, reported once, before Close", werr, n)
			}
			cerr := w.Close()
			for _, err := range []error{werr, cerr, reported[0]} {
				if !errors.Is(err, syscall.ENOSPC) || !strings.Contains(err.Error(), "records table") ||
					!strings.Contains(err.Error(), filepath.Join(dir, RecordsTable)) {
					t.Errorf("error %q: want ENOSPC naming the records table and its file", err)
				}
			}
			// The complete parts hold the first rows, whole; nothing else is
			// there but a JSON Lines file's flushed lines.
			got, err := ReadRequests(dir)
			if err != nil {
				t.Fatalf("read after the failure: %v", err)
			}
			if len(got) == 0 || len(got)%100 != 0 || len(got) >= len(reqs) {
				t.Fatalf("%d rows readable, want the first parts' whole (a multiple of 100, some, not all)", len(got))
			}
			if diff := cmp.Diff(reqs[:len(got)], got); diff != "" {
				t.Errorf("rows (-want +got):\n%s", diff)
			}
			assertNoTmp(t, dir)
			st := w.Stats()
			if st.RequestsWritten != int64(len(got)) || st.RequestsWritten+st.RequestsDropped != int64(handed) {
				t.Errorf("stats %+v: want %d written (the rows in the files) and the rest of the %d handed over dropped", st, len(got), handed)
			}
			t.Logf("%s: %d rows in complete files; %v", f, len(got), cerr)
		})
	}
}

// TestTelemetryDiskFull: a telemetry table that cannot be written reports
// it at once through OnError too, naming its table.
func TestTelemetryDiskFull(t *testing.T) {
	disk := &fullDisk{} // no room at all
	reported := make(chan error, 4)
	cfg := Config{PartRows: 1, create: disk.create, OnError: func(err error) { reported <- err }}
	w, err := NewMetricsWriter(t.TempDir(), cfg)
	if err != nil {
		t.Fatal(err)
	}
	w.Write([]record.MetricSample{{TimeNS: 1, Target: "t", Metric: "m", Type: "gauge", Value: 1}})
	select {
	case err := <-reported:
		if !errors.Is(err, syscall.ENOSPC) || !strings.Contains(err.Error(), ServerMetricsTable+" table") {
			t.Errorf("reported %v, want ENOSPC naming the %s table", err, ServerMetricsTable)
		}
	case <-time.After(time.Minute):
		t.Fatal("no error reported a minute after the write")
	}
	if err := w.Close(); !errors.Is(err, syscall.ENOSPC) {
		t.Errorf("Close = %v, want the error", err)
	}
}
