package arrowio

import (
	"encoding/json"
	"errors"
	"fmt"
	"io/fs"
	"os"
	"path/filepath"
	"strconv"

	"github.com/reprise-bench/reprise/engine/summary"
)

// RunsFile is the across-run summary of repeated runs
// (docs/format/sweep.md), beside their run directories run-1, run-2, …:
// reprise replay --runs N and a sweep point with --runs write such a
// directory.
const RunsFile = "runs.json"

// RepeatedRunDir is the directory of run k (from 1) of the repeated runs
// in dir.
func RepeatedRunDir(dir string, k int) string { return filepath.Join(dir, "run-"+strconv.Itoa(k)) }

// WriteRuns writes dir/runs.json atomically. a.RunDirs are relative to
// dir.
func WriteRuns(dir string, a *summary.AcrossRuns) error {
	b, err := json.MarshalIndent(a, "", "  ")
	if err != nil {
		return fmt.Errorf("write %s: %w", filepath.Join(dir, RunsFile), err)
	}
	return writeFileAtomic(filepath.Join(dir, RunsFile), append(b, '\n'))
}

// ReadRuns reads dir/runs.json. A file of another schema version is an
// error naming both versions.
func ReadRuns(dir string) (*summary.AcrossRuns, error) {
	p := filepath.Join(dir, RunsFile)
	b, err := os.ReadFile(p)
	if err != nil {
		return nil, err
	}
	var a summary.AcrossRuns
	if err := json.Unmarshal(b, &a); err != nil {
		return nil, fmt.Errorf("read %s: %w", p, err)
	}
	if a.SchemaVersion != summary.RunsSchemaVersion {
		return nil, fmt.Errorf("read %s: schema_version %q, want %q (written by another version of reprise; reprise summarize %s recomputes the runs from their records)",
			p, a.SchemaVersion, summary.RunsSchemaVersion, dir)
	}
	return &a, nil
}

// ReadRunsAnyVersion reads dir/runs.json whatever its schema version
// (the fields it shares with this one: level, run directories, stop
// rule), for a reader that recomputes the intervals from the runs
// ([summary.RecomputeRuns]); nil when there is none or it cannot be
// read.
func ReadRunsAnyVersion(dir string) *summary.AcrossRuns {
	b, err := os.ReadFile(filepath.Join(dir, RunsFile))
	if err != nil {
		return nil
	}
	var a summary.AcrossRuns
	if json.Unmarshal(b, &a) != nil {
		return nil
	}
	return &a
}

// RepeatedRuns returns the run directories of the repeated runs in dir,
// in run order, each joined to dir: those runs.json lists (whatever its
// schema version), or, without runs.json (runs interrupted before it was
// written), run-1, run-2, … up to the first that is missing or holds no
// run (no manifest.json and no records table). ok is false, with a nil
// error, when dir is not a directory of repeated runs: it has neither
// runs.json nor a run-1 run directory. A runs.json that cannot be read,
// or that lists a directory outside dir, is an error naming the file.
func RepeatedRuns(dir string) (dirs []string, ok bool, err error) {
	p := filepath.Join(dir, RunsFile)
	b, err := os.ReadFile(p)
	switch {
	case errors.Is(err, fs.ErrNotExist):
		for k := 1; ; k++ {
			d := RepeatedRunDir(dir, k)
			if !holdsRun(d) {
				break
			}
			dirs = append(dirs, d)
		}
		return dirs, len(dirs) > 0, nil
	case err != nil:
		return nil, false, err
	}
	var f struct {
		Dirs []string `json:"run_dirs"`
	}
	if err := json.Unmarshal(b, &f); err != nil {
		return nil, false, fmt.Errorf("read %s: %w", p, err)
	}
	if len(f.Dirs) == 0 {
		return nil, false, fmt.Errorf("read %s: run_dirs is empty: the file lists no run", p)
	}
	for _, d := range f.Dirs {
		if !filepath.IsLocal(d) {
			return nil, false, fmt.Errorf("read %s: run_dirs: %q is not a directory inside %s", p, d, dir)
		}
		dirs = append(dirs, filepath.Join(dir, d))
	}
	return dirs, true, nil
}

// holdsRun reports whether dir is a run directory: it has manifest.json
// or a records table.
func holdsRun(dir string) bool {
	ents, err := os.ReadDir(dir)
	if err != nil {
		return false
	}
	for _, e := range ents {
		if runDirEntry(dir, e) == entryMarks {
			return true
		}
	}
	return false
}

// SummarizeRepeated recomputes, from their records, the summaries of the
// runs dirs of the repeated runs in dir ([RepeatedRuns]), each with its
// own settings ([RunReader.Settings]; goodput, when not nil, replaces
// every run's SLOs), and their across-run intervals with the level and
// stop rule dir/runs.json records ([summary.RecomputeRuns]). An error
// names the run directory.
func SummarizeRepeated(dir string, dirs []string, goodput []summary.SLO) ([]*summary.Summary, []Settings, *summary.AcrossRuns, error) {
	sums := make([]*summary.Summary, len(dirs))
	sets := make([]Settings, len(dirs))
	for i, d := range dirs {
		rr, err := Open(d)
		if err != nil {
			return nil, nil, nil, err
		}
		set, err := rr.Settings()
		if err != nil {
			return nil, nil, nil, fmt.Errorf("%s: %w", d, err)
		}
		if goodput != nil {
			set.Options.Goodput = goodput
		}
		s, err := rr.Summarize(set.Info, set.Options)
		if err != nil {
			return nil, nil, nil, fmt.Errorf("%s: %w", d, err)
		}
		sums[i], sets[i] = s, set
	}
	across := summary.RecomputeRuns(sums, ReadRunsAnyVersion(dir))
	if len(across.RunDirs) != len(dirs) {
		across.RunDirs = across.RunDirs[:0]
		for _, d := range dirs {
			if r, err := filepath.Rel(dir, d); err == nil {
				across.RunDirs = append(across.RunDirs, r)
			} else {
				across.RunDirs = append(across.RunDirs, d)
			}
		}
	}
	return sums, sets, across, nil
}
