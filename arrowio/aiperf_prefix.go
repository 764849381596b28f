package arrowio

import (
	"fmt"
	"os"
	"path/filepath"
	"strings"
)

// AIPerfExportNames returns the names of AIPerf's records, summary and
// summary CSV exports under prefix, as AIPerf's --profile-export-prefix
// names them (PREFIX.jsonl, PREFIX.json, PREFIX.csv); the default names
// for "".
func AIPerfExportNames(prefix string) (records, summary, csv string) {
	if prefix == "" {
		return AIPerfRecordsFile, AIPerfSummaryFile, AIPerfSummaryCSV
	}
	return prefix + ".jsonl", prefix + ".json", prefix + ".csv"
}

// ValidExportPrefix reports whether prefix can name files of a run
// directory: not empty, no path separator, not . or .., no NUL, not a
// table's name (records.jsonl), and none of the names it makes is one
// reprise writes already (summary.json, manifest.json, inputs.json, outputs.json).
func ValidExportPrefix(prefix string) bool {
	if prefix == "" || prefix == "." || prefix == ".." || strings.ContainsAny(prefix, "/\\\x00") {
		return false
	}
	for _, t := range runTables {
		if prefix == t { // records.jsonl, the records table in JSONL
			return false
		}
	}
	r, s, c := AIPerfExportNames(prefix)
	for _, n := range []string{r, s, c} {
		switch n {
		case SummaryFile, ManifestFile, ReportFile, AIPerfInputsFile, AIPerfOutputsFile:
			return false
		}
	}
	return true
}

// RenameAIPerfExports renames the AIPerf exports ExportAIPerf wrote in
// dir to their names under prefix; a no-op for "". A file of the new
// name is replaced.
func RenameAIPerfExports(dir, prefix string) error {
	if prefix == "" {
		return nil
	}
	if !ValidExportPrefix(prefix) {
		return fmt.Errorf("export prefix %q: want a plain file name", prefix)
	}
	r, s, c := AIPerfExportNames(prefix)
	for _, p := range [][2]string{{AIPerfRecordsFile, r}, {AIPerfSummaryFile, s}, {AIPerfSummaryCSV, c}} {
		if err := os.Rename(filepath.Join(dir, p[0]), filepath.Join(dir, p[1])); err != nil {
			return fmt.Errorf("rename %s to %s: %w", p[0], p[1], err)
		}
	}
	return nil
}
