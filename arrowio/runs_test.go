package arrowio

import (
	"os"
	"path/filepath"
	"slices"
	"strings"
	"testing"

	"github.com/reprise-bench/reprise/engine/summary"
)

// TestRepeatedRuns: the run directories of a --runs directory are those
// runs.json lists, or, without it, run-1, run-2, … that hold a run; a
// run directory, an empty directory and a sweep are not repeated runs.
func TestRepeatedRuns(t *testing.T) {
	t.Run("runs.json", func(t *testing.T) {
		dir := t.TempDir()
		writeTree(t, dir, "run-1/manifest.json", "run-2/manifest.json", "run-3/manifest.json")
		// The file lists two: a third left behind by an earlier,
		// longer run is not one of these runs.
		if err := WriteRuns(dir, &summary.AcrossRuns{SchemaVersion: summary.RunsSchemaVersion, Runs: 2, RunDirs: []string{"run-1", "run-2"}}); err != nil {
			t.Fatal(err)
		}
		dirs, ok, err := RepeatedRuns(dir)
		if want := []string{RepeatedRunDir(dir, 1), RepeatedRunDir(dir, 2)}; err != nil || !ok || !slices.Equal(dirs, want) {
			t.Errorf("RepeatedRuns = %v, %v, %v; want %v", dirs, ok, err, want)
		}
		a, err := ReadRuns(dir)
		if err != nil || a.Runs != 2 {
			t.Errorf("ReadRuns = %+v, %v", a, err)
		}
	})
	t.Run("interrupted", func(t *testing.T) {
		dir := t.TempDir()
		writeTree(t, dir, "run-1/manifest.json", "run-2/records.parquet", "run-3/", "run-4/manifest.json")
		dirs, ok, err := RepeatedRuns(dir)
		if want := []string{RepeatedRunDir(dir, 1), RepeatedRunDir(dir, 2)}; err != nil || !ok || !slices.Equal(dirs, want) {
			t.Errorf("RepeatedRuns = %v, %v, %v; want %v (run-3 holds no run)", dirs, ok, err, want)
		}
	})
	t.Run("not repeated", func(t *testing.T) {
		for name, files := range map[string][]string{
			"run":   {"manifest.json", "records.parquet"},
			"empty": nil,
			"sweep": {"sweep.json", "points/concurrency=1/manifest.json"},
		} {
			dir := t.TempDir()
			writeTree(t, dir, files...)
			if dirs, ok, err := RepeatedRuns(dir); ok || err != nil || dirs != nil {
				t.Errorf("%s: RepeatedRuns = %v, %v, %v; want not repeated", name, dirs, ok, err)
			}
		}
	})
	t.Run("bad runs.json", func(t *testing.T) {
		for body, want := range map[string]string{
			`{"run_dirs": ["../elsewhere"]}`: `"../elsewhere" is not a directory inside`,
			`{"run_dirs": []}`:               "run_dirs is empty",
			`{"run_dirs": 3}`:                "runs.json",
		} {
			dir := t.TempDir()
			if err := os.WriteFile(filepath.Join(dir, RunsFile), []byte(body), 0o644); err != nil {
				t.Fatal(err)
			}
			if _, _, err := RepeatedRuns(dir); err == nil || !strings.Contains(err.Error(), want) {
				t.Errorf("%s: err = %v, want one with %q", body, err, want)
			}
		}
	})
	t.Run("old version", func(t *testing.T) {
		dir := t.TempDir()
		if err := os.WriteFile(filepath.Join(dir, RunsFile), []byte(`{"schema_version": "1", "confidence_level": 0.99, "run_dirs": ["run-1"]}`), 0o644); err != nil {
			t.Fatal(err)
		}
		if _, err := ReadRuns(dir); err == nil || !strings.Contains(err.Error(), `schema_version "1", want "2"`) {
			t.Errorf("ReadRuns of a v1 file: %v", err)
		}
		if a := ReadRunsAnyVersion(dir); a == nil || a.Level != 0.99 {
			t.Errorf("ReadRunsAnyVersion = %+v", a)
		}
	})
}
