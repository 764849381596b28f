package arrowio

import (
	"encoding/json"
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"strconv"
	"strings"

	"github.com/reprise-bench/reprise/engine/summary"
)

// ErrRunDirInUse is returned (wrapped in a [*RunDirError]) when a run
// directory cannot be used for a new run: it is not empty, or, when asked
// to clear it, it holds files reprise did not write.
var ErrRunDirInUse = errors.New("run directory in use")

// RunDirError says why a directory cannot hold a new run.
type RunDirError struct {
	Dir    string
	Reason string
}

func (e *RunDirError) Error() string { return e.Dir + ": " + e.Reason }

// Is reports whether target is [ErrRunDirInUse].
func (e *RunDirError) Is(target error) bool { return target == ErrRunDirInUse }

// Names of the run directory's own files.
const (
	ManifestFile = "manifest.json"
	SummaryFile  = "summary.json"
	// ReportFile is where `reprise report RUN_DIR` writes by default:
	// cleared with the run's other files.
	ReportFile = "report.html"
)

// ManifestVersion and ManifestKind are manifest.json's schema_version
// and kind (docs/format/manifest.md): what tells a manifest reprise wrote
// from another file of that name.
const (
	ManifestVersion = "2"
	ManifestKind    = "reprise.run"
)

// AIPerf export file names (--export aiperf), written next to the records.
const (
	AIPerfRecordsFile = "profile_export.jsonl"
	AIPerfSummaryFile = "profile_export_aiperf.json"
	// AIPerfSummaryCSV is the summary as AIPerf's CSV.
	AIPerfSummaryCSV = "profile_export_aiperf.csv"
	// AIPerfInputsFile holds the request bodies (WriteAIPerfInputs).
	AIPerfInputsFile = "inputs.json"
	// AIPerfSchemaVersion is the profile_export_aiperf.json schema written.
	AIPerfSchemaVersion = "1.3"
)

// runTables are the tables a run directory may hold, as files
// (name.parquet, name.arrow, name.jsonl) or part directories (name/).
var runTables = []string{RecordsTable, EventsTable, ServerMetricsTable, GPUTable}

// prepareRunDir makes dir ready for a new run, so that no file of an
// earlier run is read with the new one's. A missing dir is created (with
// its parents) and an empty one is used as is. A non-empty dir is refused
// with a [*RunDirError] unless overwrite is set; then it is cleared, but
// only if it is a run directory (it has manifest.json or a records table)
// and holds nothing but the files reprise writes there: anything else is
// refused and nothing is removed.
func prepareRunDir(dir string, overwrite bool) error {
	ents, err := os.ReadDir(dir)
	switch {
	case errors.Is(err, os.ErrNotExist):
		if err := os.MkdirAll(dir, 0o755); err != nil {
			return fmt.Errorf("create run directory: %w", err)
		}
		return nil
	case err != nil:
		return fmt.Errorf("run directory: %w", err)
	case len(ents) == 0:
		return nil
	case !overwrite:
		return &RunDirError{Dir: dir, Reason: fmt.Sprintf("not empty (%s): a new run would mix its files with these", listNames(ents))}
	}
	var (
		remove  []string
		foreign []string
		isRun   bool
	)
	for _, e := range ents {
		name := e.Name()
		kind := runDirEntry(dir, e)
		if kind != entryForeign && (name == ManifestFile || name == SummaryFile) {
			if why := notOurs(filepath.Join(dir, name)); why != "" {
				return &RunDirError{Dir: dir, Reason: fmt.Sprintf("%s is not one reprise wrote (%s): the directory is cleared only when nothing but a run's files is in it; nothing was removed",
					name, why)}
			}
		}
		switch kind {
		case entryForeign:
			foreign = append(foreign, name)
		default:
			if kind == entryMarks {
				isRun = true
			}
			remove = append(remove, filepath.Join(dir, name))
		}
	}
	if !isRun {
		return &RunDirError{Dir: dir, Reason: fmt.Sprintf("not empty (%s) and not a run directory (no %s, no %s table): only a run directory is cleared",
			listNames(ents), ManifestFile, RecordsTable)}
	}
	if len(foreign) > 0 {
		return &RunDirError{Dir: dir, Reason: fmt.Sprintf("holds files a run does not write (%s): the directory is cleared only when nothing but a run's files is in it; nothing was removed",
			strings.Join(foreign, ", "))}
	}
	for _, p := range remove {
		if err := os.RemoveAll(p); err != nil {
			return fmt.Errorf("clear run directory: %w", err)
		}
	}
	return nil
}

// notOurs says why the manifest.json or summary.json at p is not one
// reprise wrote, "" when it is: a manifest has schema_version
// ManifestVersion and kind ManifestKind (or, written before them, the v1
// keys reprise_version, start_time and replay); a summary has a
// schema_version from "1" to summary.SchemaVersion and run_info.
func notOurs(p string) string {
	b, err := readRunFile(p, MaxJSONFileBytes)
	if err != nil {
		return err.Error()
	}
	var m map[string]json.RawMessage
	if json.Unmarshal(b, &m) != nil {
		return "not a JSON object"
	}
	str := func(k string) (string, bool) {
		var s string
		return s, json.Unmarshal(m[k], &s) == nil && m[k] != nil
	}
	obj := func(k string) bool { return len(m[k]) > 0 && m[k][0] == '{' }
	if filepath.Base(p) == SummaryFile {
		// Any version reprise has written: "1" up to the current one.
		v, _ := str("schema_version")
		n, err := strconv.Atoi(v)
		if cur, _ := strconv.Atoi(summary.SchemaVersion); err != nil || n < 1 || n > cur || !obj("run_info") {
			return fmt.Sprintf("want schema_version \"1\" to %q and run_info", summary.SchemaVersion)
		}
		return ""
	}
	if _, has := m["schema_version"]; !has {
		_, rv := str("reprise_version")
		_, st := str("start_time")
		if rv && st && obj("replay") {
			return "" // v1
		}
		return fmt.Sprintf("want schema_version %q and kind %q", ManifestVersion, ManifestKind)
	}
	v, _ := str("schema_version")
	k, _ := str("kind")
	if v != ManifestVersion || k != ManifestKind {
		return fmt.Sprintf("schema_version %q and kind %q, want %q and %q", v, k, ManifestVersion, ManifestKind)
	}
	return ""
}

// createUniqueDir creates a new, empty run directory named base, or base-2,
// base-3, … when that exists, and returns its path: two runs started in the
// same second (whose default names are equal) get a directory each. The
// parent directories are created as needed.
func createUniqueDir(base string) (string, error) {
	if err := os.MkdirAll(filepath.Dir(base), 0o755); err != nil {
		return "", fmt.Errorf("create run directory: %w", err)
	}
	dir := base
	for i := 2; ; i++ {
		err := os.Mkdir(dir, 0o755)
		if err == nil {
			return dir, nil
		}
		if !errors.Is(err, os.ErrExist) || i > 1000 {
			return "", fmt.Errorf("create run directory: %w", err)
		}
		dir = fmt.Sprintf("%s-%d", base, i)
	}
}

type entryKind int

const (
	entryForeign entryKind = iota
	entryOwn               // a file reprise writes in a run directory
	entryMarks             // one that makes the directory a run directory
)

// runDirEntry classifies an entry of a run directory.
func runDirEntry(dir string, e os.DirEntry) entryKind {
	name := e.Name()
	if e.IsDir() {
		for _, t := range runTables {
			if name == t && partsOnly(filepath.Join(dir, name)) {
				if t == RecordsTable {
					return entryMarks
				}
				return entryOwn
			}
		}
		return entryForeign
	}
	if !e.Type().IsRegular() {
		return entryForeign
	}
	switch name {
	case ManifestFile:
		return entryMarks
	case SummaryFile, AIPerfRecordsFile, AIPerfSummaryFile, ReportFile:
		return entryOwn
	}
	// Atomic writes' temporary files: .summary.json.123.tmp.
	if strings.HasPrefix(name, ".") && strings.HasSuffix(name, tmpSuffix) {
		for _, f := range []string{ManifestFile, SummaryFile, AIPerfRecordsFile, AIPerfSummaryFile, ReportFile} {
			if strings.HasPrefix(name, "."+f+".") {
				return entryOwn
			}
		}
	}
	base := strings.TrimSuffix(name, tmpSuffix)
	for _, t := range runTables {
		for _, f := range allFormats {
			if base == t+f.Ext() {
				if t == RecordsTable {
					return entryMarks
				}
				return entryOwn
			}
		}
	}
	return entryForeign
}

// partsOnly reports whether dir holds only part files (complete or .tmp).
func partsOnly(dir string) bool {
	ents, err := os.ReadDir(dir)
	if err != nil {
		return false
	}
	for _, e := range ents {
		if !e.Type().IsRegular() || !isPartName(strings.TrimSuffix(e.Name(), tmpSuffix)) {
			return false
		}
	}
	return true
}

// listNames lists up to five entry names for a message.
func listNames(ents []os.DirEntry) string {
	var names []string
	for i, e := range ents {
		if i == 5 {
			names = append(names, fmt.Sprintf("and %d more", len(ents)-5))
			break
		}
		n := e.Name()
		if e.IsDir() {
			n += "/"
		}
		names = append(names, n)
	}
	return strings.Join(names, ", ")
}
