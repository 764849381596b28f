package arrowio

import (
	"encoding/json"
	"errors"
	"maps"
	"math"
	"os"
	"path/filepath"
	"runtime"
	"strings"
	"testing"
	"time"
	"unsafe"

	"github.com/apache/arrow/go/v17/arrow"
	"github.com/google/go-cmp/cmp"
	"github.com/google/go-cmp/cmp/cmpopts"

	"github.com/reprise-bench/reprise/engine/record"
	"github.com/reprise-bench/reprise/engine/summary"
)

// TestOpenEveryFormat: what Create wrote, Open reads back, row for row and
// byte for byte, in every format, as parts and as one file: the records,
// events and telemetry tables, manifest.json and summary.json.
func TestOpenEveryFormat(t *testing.T) {
	reqs := genRequests(3000, 5)
	evs := genEvents(4000, 6)
	nan := math.NaN()
	var samples []record.MetricSample
	for i := range 300 {
		samples = append(samples,
			record.MetricSample{TimeNS: base + int64(i/3)*1e6, Target: "http://127.0.0.1:1/metrics", Metric: "m", Type: "gauge", Labels: `a="b"`, Bound: nan, Value: float64(i)},
		)
	}
	gpus := []record.GPUSample{
		{TimeNS: base, Source: "dcgm", GPU: 0, UUID: "GPU-a", Name: "H100", UtilPct: 99, MemUsedBytes: 1, MemTotalBytes: 2, PowerW: 700, EnergyJ: 1e6, TempC: 60, SMClockMHz: nan},
		{TimeNS: base + 1e6, Source: "dcgm", GPU: 1, UtilPct: nan, MemUsedBytes: nan, MemTotalBytes: nan, PowerW: nan, EnergyJ: nan, TempC: nan, SMClockMHz: 1980},
	}
	manifest := map[string]any{"model": "m", "streaming": true, "goodput": "ttft:25", "replay": map[string]any{"late_threshold": "2ms"}}
	for _, f := range allFormats {
		for _, single := range []bool{false, true} {
			name := string(f)
			if single {
				name += " single file"
			}
			t.Run(name, func(t *testing.T) {
				dir := filepath.Join(t.TempDir(), "run")
				run, err := Create(dir, CreateConfig{Tables: Config{Format: f, SingleFile: single, RowGroupRows: 500, PartRows: 1000}})
				if err != nil {
					t.Fatal(err)
				}
				for i := 0; i < len(reqs); i += 256 {
					if err := run.Records().WriteRequests(reqs[i:min(i+256, len(reqs))]); err != nil {
						t.Fatal(err)
					}
				}
				if err := run.Records().WriteEvents(evs); err != nil {
					t.Fatal(err)
				}
				mw, err := run.ServerMetrics()
				if err != nil {
					t.Fatal(err)
				}
				gw, err := run.GPU()
				if err != nil {
					t.Fatal(err)
				}
				mw.Write(samples)
				gw.Write(gpus)
				if err := run.WriteManifest(manifest); err != nil {
					t.Fatal(err)
				}
				if err := run.Close(); err != nil {
					t.Fatal(err)
				}
				s := summary.Summarize(reqs, summary.RunInfo{Model: "m", Mode: "fixed", Start: time.Unix(1, 0).UTC()}, summary.Options{Streaming: true})
				if err := run.WriteSummary(s, run.Records().Report()); err != nil {
					t.Fatal(err)
				}

				rr, err := Open(dir)
				if err != nil {
					t.Fatal(err)
				}
				for _, tb := range runTables {
					if !rr.Has(tb) {
						t.Errorf("Has(%s) = false", tb)
					}
				}
				gotR, err := collect(rr.Requests())
				if err != nil {
					t.Fatal(err)
				}
				if diff := cmp.Diff(reqs, gotR); diff != "" {
					t.Errorf("requests (-want +got):\n%s", diff)
				}
				gotE, err := collect(rr.Events())
				if err != nil {
					t.Fatal(err)
				}
				if diff := cmp.Diff(evs, gotE); diff != "" {
					t.Errorf("events (-want +got):\n%s", diff)
				}
				gotM, err := collect(rr.MetricSamples())
				if err != nil {
					t.Fatal(err)
				}
				if diff := cmp.Diff(samples, gotM, cmpopts.EquateNaNs()); diff != "" {
					t.Errorf("server_metrics (-want +got):\n%s", diff)
				}
				gotG, err := collect(rr.GPUSamples())
				if err != nil {
					t.Fatal(err)
				}
				if diff := cmp.Diff(gpus, gotG, cmpopts.EquateNaNs()); diff != "" {
					t.Errorf("gpu (-want +got):\n%s", diff)
				}
				wantSum, err := SummaryJSON(s, run.Records().Report())
				if err != nil {
					t.Fatal(err)
				}
				gotSum, err := rr.Summary()
				if err != nil || string(gotSum) != string(wantSum) {
					t.Errorf("summary.json: %v\n%s\nwant\n%s", err, gotSum, wantSum)
				}
				// WriteManifest adds the schema version and kind that mark
				// the file as reprise's.
				var m map[string]any
				want := maps.Clone(manifest)
				want["schema_version"], want["kind"] = ManifestVersion, ManifestKind
				if b, err := rr.Manifest(); err != nil || json.Unmarshal(b, &m) != nil || !cmp.Equal(m, want) {
					t.Errorf("manifest.json: %v %v, want %v", err, m, want)
				}
				set, err := rr.Settings()
				if err != nil {
					t.Fatal(err)
				}
				if !set.Options.Streaming || set.Options.LateThreshold != 2*time.Millisecond || len(set.Options.Goodput) != 1 ||
					set.Info.Model != "m" || set.RecordWriter == nil {
					t.Errorf("settings %+v", set)
				}
				// A consumer may stop early.
				n := 0
				for _, err := range rr.Requests() {
					if err != nil {
						t.Fatal(err)
					}
					if n++; n == 10 {
						break
					}
				}
				if n != 10 {
					t.Errorf("read %d rows, want 10", n)
				}
			})
		}
	}
}

// TestOpenMissing: a missing directory does not open; a directory without
// a table yields ErrNoTable once, and no rows.
func TestOpenMissing(t *testing.T) {
	if _, err := Open(filepath.Join(t.TempDir(), "nope")); !errors.Is(err, os.ErrNotExist) {
		t.Errorf("Open of a missing dir: %v", err)
	}
	rr, err := Open(t.TempDir())
	if err != nil {
		t.Fatal(err)
	}
	var errs, rows int
	for _, err := range rr.Requests() {
		if err == nil {
			rows++
		} else if errors.Is(err, ErrNoTable) {
			errs++
		}
	}
	if rows != 0 || errs != 1 || rr.Has(RecordsTable) {
		t.Errorf("%d rows, %d ErrNoTable; want 0, 1", rows, errs)
	}
	if _, err := rr.Manifest(); !errors.Is(err, os.ErrNotExist) {
		t.Errorf("Manifest: %v, want ErrNotExist", err)
	}
	if set, err := rr.Settings(); err != nil || set.RecordWriter != nil {
		t.Errorf("Settings of an empty dir: %+v, %v; want defaults", set, err)
	}
}

// TestReadPanicIsTheCallers: a panic in the loop body (or a ReadTable
// callback) is the caller's and goes up as it is, never reported as a
// corrupt file.
func TestReadPanicIsTheCallers(t *testing.T) {
	dir := t.TempDir()
	writeRun(t, dir, Config{}, genRequests(10, 1), nil, 10)
	defer func() {
		if p := recover(); p != "mine" {
			t.Errorf("recovered %v, want the loop body's panic", p)
		}
	}()
	err := ReadTable(dir, RecordsTable, func(string, arrow.Record) error { panic("mine") })
	t.Errorf("ReadTable returned %v instead of panicking", err)
}

// TestSettingsLateThreshold: the late threshold is read from the manifest
// as written now (a duration string) and as written before (Go field name,
// ns); a bad value names the file and key.
func TestSettingsLateThreshold(t *testing.T) {
	for _, tc := range []struct{ manifest, err string }{
		{`{"replay": {"late_threshold": "7ms"}}`, ""},
		{`{"replay": {"LateThreshold": 7000000}}`, ""},
		{`{"replay": {"late_threshold": "7"}}`, `replay.late_threshold "7"`},
	} {
		dir := t.TempDir()
		if err := os.WriteFile(filepath.Join(dir, ManifestFile), []byte(tc.manifest), 0o644); err != nil {
			t.Fatal(err)
		}
		rr, err := Open(dir)
		if err != nil {
			t.Fatal(err)
		}
		s, err := rr.Settings()
		switch {
		case tc.err != "":
			if err == nil || !strings.Contains(err.Error(), tc.err) || !strings.Contains(err.Error(), ManifestFile) {
				t.Errorf("%s: error %v, want one naming manifest.json and %s", tc.manifest, err, tc.err)
			}
		case err != nil:
			t.Errorf("%s: %v", tc.manifest, err)
		case s.Options.LateThreshold != 7*time.Millisecond:
			t.Errorf("%s: late threshold %v, want 7ms", tc.manifest, s.Options.LateThreshold)
		}
	}
}

// TestRequestsBoundedMemory: iterating over a records table holds one
// batch at a time: the live heap stays far below what the table's rows
// take in memory.
func TestRequestsBoundedMemory(t *testing.T) {
	const n = 200_000
	dir := t.TempDir()
	tmpl := genRequests(4096, 9)
	w, err := NewRunWriter(dir, Config{RowGroupRows: 4096, PartRows: 64 * 1024})
	if err != nil {
		t.Fatal(err)
	}
	for i := 0; i < n; i += len(tmpl) {
		if err := w.WriteRequests(tmpl[:min(len(tmpl), n-i)]); err != nil {
			t.Fatal(err)
		}
	}
	if err := w.Close(); err != nil {
		t.Fatal(err)
	}
	tmpl = nil
	rr, err := Open(dir)
	if err != nil {
		t.Fatal(err)
	}
	var ms runtime.MemStats
	runtime.GC()
	runtime.ReadMemStats(&ms)
	before := ms.HeapAlloc
	var first, peak uint64
	rows := 0
	for _, err := range rr.Requests() {
		if err != nil {
			t.Fatal(err)
		}
		if rows++; rows%8192 == 0 {
			runtime.GC()
			runtime.ReadMemStats(&ms)
			grown := ms.HeapAlloc - min(ms.HeapAlloc, before)
			if first == 0 {
				first = grown
			}
			peak = max(peak, grown)
		}
	}
	table := uint64(n) * uint64(unsafe.Sizeof(record.Request{}))
	if rows != n || peak > table/4 || peak > first+table/16 {
		t.Errorf("%d rows; live heap grew by %d MiB after the first batch and up to %d MiB while reading; the rows take %d MiB: "+
			"want a quarter at most, and no growth as the rows go by", rows, first>>20, peak>>20, table>>20)
	}
}

// TestReadLargeRowGroups: a Parquet file whose row groups hold more rows
// than a default read batch is read whole (a batch is one row group).
func TestReadLargeRowGroups(t *testing.T) {
	dir := t.TempDir()
	reqs := genRequests(3000, 4)
	big := make([]record.Request, 0, 100_000)
	for len(big) < cap(big) {
		big = append(big, reqs[:min(len(reqs), cap(big)-len(big))]...)
	}
	writeRun(t, dir, Config{RowGroupRows: len(big), SingleFile: true}, big, nil, 5000)
	got, err := ReadRequests(dir)
	if err != nil {
		t.Fatal(err)
	}
	if len(got) != len(big) || !cmp.Equal(got[len(got)-1], big[len(big)-1]) {
		t.Errorf("read %d rows, want %d", len(got), len(big))
	}
}
