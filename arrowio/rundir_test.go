package arrowio

import (
	"errors"
	"math"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"testing"

	"github.com/reprise-bench/reprise/engine/record"
)

// writeTree creates the files (and directories, names ending in "/") under
// dir.
func writeTree(t *testing.T, dir string, names ...string) {
	t.Helper()
	for _, n := range names {
		p := filepath.Join(dir, n)
		if strings.HasSuffix(n, "/") {
			if err := os.MkdirAll(p, 0o755); err != nil {
				t.Fatal(err)
			}
			continue
		}
		if err := os.MkdirAll(filepath.Dir(p), 0o755); err != nil {
			t.Fatal(err)
		}
		data := []byte("x")
		switch filepath.Base(n) {
		case ManifestFile:
			data = []byte(`{"schema_version": "2", "kind": "reprise.run", "model": "m"}`)
		case SummaryFile:
			data = []byte(`{"schema_version": "1", "run_info": {}}`)
		}
		if err := os.WriteFile(p, data, 0o644); err != nil {
			t.Fatal(err)
		}
	}
}

// tree lists the files under dir, relative, sorted.
func tree(t *testing.T, dir string) []string {
	t.Helper()
	var out []string
	if _, err := os.Stat(dir); errors.Is(err, os.ErrNotExist) {
		return nil
	}
	err := filepath.WalkDir(dir, func(p string, d os.DirEntry, err error) error {
		if err != nil || p == dir {
			return err
		}
		rel, _ := filepath.Rel(dir, p)
		if d.IsDir() {
			rel += "/"
		}
		out = append(out, filepath.ToSlash(rel))
		return nil
	})
	if err != nil {
		t.Fatal(err)
	}
	slices.Sort(out)
	return out
}

// An earlier run's files are never mixed with a new run's: a non-empty
// directory is refused, and --overwrite clears only a run directory that
// holds nothing but a run's files.
func TestPrepareRunDir(t *testing.T) {
	run := []string{"manifest.json", "summary.json", "records/part-00000.parquet", "records/part-00001.parquet.tmp",
		"events/part-00000.parquet", "server_metrics/part-00000.parquet", "gpu.parquet", "profile_export.jsonl",
		"profile_export_aiperf.json", ".summary.json.123.tmp", ".profile_export.jsonl.45.tmp"}
	tests := []struct {
		name      string
		files     []string // nil: the directory does not exist
		overwrite bool
		inUse     bool // refused with ErrRunDirInUse; nothing removed
		want      []string
		content   map[string]string // of files, replacing writeTree's
	}{
		{name: "missing", files: nil},
		{name: "empty", files: []string{}},
		{name: "run without --overwrite", files: run, inUse: true},
		{name: "run with --overwrite", files: run, overwrite: true},
		{name: "jsonl run", files: []string{"manifest.json", "records.jsonl", "events.jsonl"}, overwrite: true},
		{name: "records only", files: []string{"records.arrow"}, overwrite: true},
		// Not a run directory (no manifest, no records): never cleared.
		{name: "home directory", files: []string{"notes.txt", "src/"}, overwrite: true, inUse: true},
		{name: "summary only", files: []string{"summary.json"}, overwrite: true, inUse: true},
		// A run directory with a file of the user's in it: left whole.
		{name: "run plus trace", files: append([]string{"trace.jsonl"}, run...), overwrite: true, inUse: true},
		{name: "run plus file in records", files: append([]string{"records/keep.txt"}, run...), overwrite: true, inUse: true},
		{name: "run plus foreign dir", files: append([]string{"plots/"}, run...), overwrite: true, inUse: true},
		// A user's own manifest.json and summary.json, not reprise's: left whole.
		{name: "user's json files", files: []string{"manifest.json", "summary.json"}, overwrite: true, inUse: true,
			content: map[string]string{"manifest.json": `{"name": "my-app", "version": "1.0"}`, "summary.json": `{"total": 3}`}},
		{name: "user's manifest", files: []string{"manifest.json", "records.parquet"}, overwrite: true, inUse: true,
			content: map[string]string{"manifest.json": `{"schema_version": "2", "kind": "app"}`}},
		{name: "user's summary", files: run, overwrite: true, inUse: true,
			content: map[string]string{"summary.json": `{"schema_version": "1"}`}},
		{name: "manifest not json", files: []string{"manifest.json"}, overwrite: true, inUse: true,
			content: map[string]string{"manifest.json": `x`}},
		// A v1 manifest (before schema_version and kind) is reprise's.
		{name: "v1 manifest", files: []string{"manifest.json", "summary.json"}, overwrite: true,
			content: map[string]string{"manifest.json": `{"reprise_version": "v0.1", "start_time": "2026-11-01T00:00:00Z", "replay": {}}`}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			dir := filepath.Join(t.TempDir(), "run")
			if tt.files != nil {
				writeTree(t, dir, append([]string{"./"}, tt.files...)...)
			}
			for n, c := range tt.content {
				if err := os.WriteFile(filepath.Join(dir, n), []byte(c), 0o644); err != nil {
					t.Fatal(err)
				}
			}
			before := tree(t, dir)
			err := prepareRunDir(dir, tt.overwrite)
			if tt.inUse {
				if !errors.Is(err, ErrRunDirInUse) || !strings.Contains(err.Error(), dir) {
					t.Fatalf("err = %v, want ErrRunDirInUse naming %s", err, dir)
				}
				if got := tree(t, dir); !slices.Equal(got, before) {
					t.Errorf("refused, but the directory changed: %v → %v", before, got)
				}
				return
			}
			if err != nil {
				t.Fatal(err)
			}
			if got := tree(t, dir); len(got) != 0 {
				t.Errorf("left %v, want an empty directory", got)
			}
		})
	}
}

// Two runs whose default names are equal (started in the same second) get
// a directory each.
func TestCreateRunDirUnique(t *testing.T) {
	base := filepath.Join(t.TempDir(), "runs", "20260101T000000Z-m-rate")
	seen := map[string]bool{}
	for i := 0; i < 3; i++ {
		dir, err := createUniqueDir(base)
		if err != nil {
			t.Fatal(err)
		}
		if seen[dir] {
			t.Fatalf("createUniqueDir returned %s twice", dir)
		}
		seen[dir] = true
		writeTree(t, dir, "manifest.json")
	}
	if !seen[base] || !seen[base+"-2"] || !seen[base+"-3"] {
		t.Errorf("dirs %v, want %s, -2, -3", seen, base)
	}
}

// TestCreate: Create refuses a directory with an earlier run's files
// unless told to clear it, finds a free name when asked for a unique one,
// and writes every table of the run in the format asked for.
func TestCreate(t *testing.T) {
	parent := t.TempDir()
	dir := filepath.Join(parent, "run")
	writeTree(t, dir, "manifest.json", "records/part-00000.parquet")
	if _, err := Create(dir, CreateConfig{}); !errors.Is(err, ErrRunDirInUse) {
		t.Fatalf("Create on an earlier run: %v, want ErrRunDirInUse", err)
	}
	if _, err := Create(dir, CreateConfig{Tables: Config{Format: "csv"}, Overwrite: true}); err == nil || len(tree(t, dir)) != 3 {
		t.Fatalf("a bad config: %v, and the directory holds %v; want an error and nothing removed", err, tree(t, dir))
	}
	for _, f := range allFormats {
		run, err := Create(dir, CreateConfig{Tables: Config{Format: f}, Overwrite: true})
		if err != nil {
			t.Fatal(err)
		}
		if err := run.Records().WriteRequests(genRequests(3, 1)); err != nil {
			t.Fatal(err)
		}
		mw, err := run.ServerMetrics()
		if err != nil {
			t.Fatal(err)
		}
		mw.Write([]record.MetricSample{{TimeNS: base, Target: "t", Metric: "m", Type: "gauge", Value: 1, Bound: math.NaN()}})
		if _, err := run.ServerMetrics(); err == nil {
			t.Error("server_metrics opened twice")
		}
		if err := run.WriteManifest(map[string]any{"model": "m"}); err != nil {
			t.Fatal(err)
		}
		if err := errors.Join(mw.Close(), run.Close(), run.Close()); err != nil {
			t.Fatal(err)
		}
		want := []string{"manifest.json", "records/", "records/part-00000" + f.Ext(), "server_metrics/", "server_metrics/part-00000" + f.Ext()}
		if f == FormatJSONL {
			want = []string{"manifest.json", "records.jsonl", "server_metrics.jsonl"}
		}
		if got := tree(t, dir); !slices.Equal(got, want) {
			t.Errorf("%s: files %v, want %v", f, got, want)
		}
	}
	base := filepath.Join(parent, "runs", "x")
	a, err := Create(base, CreateConfig{Unique: true})
	if err != nil {
		t.Fatal(err)
	}
	b, err := Create(base, CreateConfig{Unique: true})
	if err != nil {
		t.Fatal(err)
	}
	a.Close()
	b.Close()
	if a.Dir() != base || b.Dir() != base+"-2" {
		t.Errorf("unique dirs %s, %s; want %s, %s-2", a.Dir(), b.Dir(), base, base)
	}
}
