package trace

import (
	"context"
	"errors"
	"fmt"
	"io/fs"
	"os"
	"path/filepath"
	"strings"

	"github.com/reprise-bench/reprise/internal/exitcode"
	"github.com/reprise-bench/reprise/internal/spool"
)

// runManifest is the file that marks a run directory (arrowio.ManifestFile;
// arrowio imports this package, so the name is repeated here and a test
// holds the two equal).
const runManifest = "manifest.json"

// UsageError maps an error of reading a trace to its exit code: problems
// with the input itself (missing, unreadable format, bad row) are usage
// errors (exit code 2) with the hint [Hint] gives; anything else is
// returned as it is, a run error. formatFlag and canSkip are as for Hint.
func UsageError(err error, formatFlag string, canSkip bool) error {
	if h, ok := Hint(err, formatFlag, canSkip); ok {
		return exitcode.UsageError(err, h)
	}
	return err
}

// Hint says what to do about a problem with a trace file, naming the
// command's own flags: formatFlag names the trace format ("" when the
// command has none), canSkip tells whether it has --skip-invalid. ok is
// false when err is not about the trace file (an interrupted read
// included); hint is "" when err's message already says what to do.
func Hint(err error, formatFlag string, canSkip bool) (hint string, ok bool) {
	switch {
	case errors.Is(err, context.Canceled) || errors.Is(err, context.DeadlineExceeded):
		return "", false // interrupted: nothing is wrong with the trace
	case errors.Is(err, spool.ErrFull):
		return "", true // the message says what to do
	case errors.Is(err, fs.ErrNotExist):
		return "check the path; use - to read standard input", true
	case errors.Is(err, ErrLFSPointer):
		return "fetch the data with 'git lfs pull' or download the real file", true
	case errors.Is(err, ErrEmpty):
		if pe, ok := errors.AsType[*ParseError](err); ok && pe.Path == "-" {
			return "nothing came on standard input: check the command that feeds the pipe", true
		}
		return "check the path, and that the file was written or downloaded in full", true
	case errors.Is(err, ErrHeader):
		if formatFlag == "" {
			return "give the header the columns the error names (any order and case)", true
		}
		return "give the header the columns the error names (any order and case), or, if the file is in another format, name it with " + formatFlag, true
	case errors.Is(err, ErrIsDir):
		return dirHint(err), true
	case errors.Is(err, ErrRead):
		return "the file could not be read to its end (a compressed file may be cut short or corrupt): check it, or fetch it again", true
	case errors.Is(err, ErrUnknownFormat):
		if formatFlag == "" {
			return "give a trace in a supported format (docs/format/traces.md)", true
		}
		return "name the format with " + formatFlag, true
	}
	if pe, isParse := errors.AsType[*ParseError](err); isParse {
		if pe.Line == 0 {
			return "", true // about the whole file: the message says what to do
		}
		if canSkip {
			return "fix the row, or pass --skip-invalid to skip and count invalid rows", true
		}
		return "fix the row", true
	}
	return "", false
}

// dirHint says what to give instead of the directory a trace error names:
// one of its files (the first few are listed), or, for a run directory,
// what reads one.
func dirHint(err error) string {
	pe, ok := errors.AsType[*ParseError](err)
	if !ok {
		return "give a trace file, not a directory"
	}
	ents, _ := os.ReadDir(pe.Path)
	var files []string
	for _, e := range ents {
		if e.Type().IsRegular() && !strings.HasPrefix(e.Name(), ".") {
			if e.Name() == runManifest {
				return "it is a run directory: give a trace file (reprise summarize, report and compare read run directories)"
			}
			files = append(files, e.Name())
		}
	}
	switch {
	case len(files) == 0:
		return "give a trace file (this directory holds none)"
	case len(files) > 3:
		files = append(files[:3], "…")
	}
	return fmt.Sprintf("give a trace file, e.g. %s (the directory holds %s)", filepath.Join(pe.Path, files[0]), strings.Join(files, ", "))
}

// SameFile reports whether the paths a and b name one existing file; "-"
// (a standard stream) and "" never do. Commands use it to refuse an
// output that would overwrite their input.
func SameFile(a, b string) bool {
	if a == "" || a == "-" || b == "" || b == "-" {
		return false
	}
	fa, err := os.Stat(a)
	if err != nil {
		return false
	}
	fb, err := os.Stat(b)
	return err == nil && os.SameFile(fa, fb)
}
