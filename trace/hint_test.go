package trace_test

import (
	"context"
	"fmt"
	"os"
	"path/filepath"
	"testing"

	"github.com/reprise-bench/reprise/arrowio"
	"github.com/reprise-bench/reprise/internal/exitcode"
	"github.com/reprise-bench/reprise/trace"
)

// TestHint pins the hints a trace read error gets, the flags they name,
// and which errors are not about the trace.
func TestHint(t *testing.T) {
	dir := t.TempDir()
	run := filepath.Join(dir, "run")
	if err := os.Mkdir(run, 0o755); err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(filepath.Join(run, arrowio.ManifestFile), []byte("{}"), 0o644); err != nil {
		t.Fatal(err)
	}
	for _, tc := range []struct {
		name    string
		err     error
		flag    string
		canSkip bool
		hint    string
		ok      bool
	}{
		{"canceled", fmt.Errorf("read: %w", context.Canceled), "--format", true, "", false},
		{"other", fmt.Errorf("boom"), "--format", true, "", false},
		{"missing", fmt.Errorf("open: %w", os.ErrNotExist), "--format", true, "check the path; use - to read standard input", true},
		{"unknown", trace.ErrUnknownFormat, "--format", true, "name the format with --format", true},
		{"unknown no flag", trace.ErrUnknownFormat, "", true, "give a trace in a supported format (docs/format/traces.md)", true},
		{"row skip", &trace.ParseError{Path: "t", Line: 3, Err: fmt.Errorf("bad")}, "", true, "fix the row, or pass --skip-invalid to skip and count invalid rows", true},
		{"row", &trace.ParseError{Path: "t", Line: 3, Err: fmt.Errorf("bad")}, "", false, "fix the row", true},
		{"whole file", &trace.ParseError{Path: "t", Err: fmt.Errorf("bad")}, "", false, "", true},
		{"run dir", &trace.ParseError{Path: run, Err: trace.ErrIsDir}, "", false, "it is a run directory: give a trace file (reprise summarize, report and compare read run directories)", true},
		{"empty dir", &trace.ParseError{Path: t.TempDir(), Err: trace.ErrIsDir}, "", false, "give a trace file (this directory holds none)", true},
	} {
		t.Run(tc.name, func(t *testing.T) {
			hint, ok := trace.Hint(tc.err, tc.flag, tc.canSkip)
			if hint != tc.hint || ok != tc.ok {
				t.Errorf("Hint = %q, %v; want %q, %v", hint, ok, tc.hint, tc.ok)
			}
			err := trace.UsageError(tc.err, tc.flag, tc.canSkip)
			if got := exitcode.Code(err) == exitcode.Usage; got != tc.ok {
				t.Errorf("UsageError(%v) is a usage error: %v, want %v", tc.err, got, tc.ok)
			}
		})
	}
}

// TestSameFile checks that a path is the same file as itself and that
// the standard streams and the empty path never are.
func TestSameFile(t *testing.T) {
	p := filepath.Join(t.TempDir(), "f")
	if err := os.WriteFile(p, nil, 0o644); err != nil {
		t.Fatal(err)
	}
	if !trace.SameFile(p, p) || trace.SameFile(p, "-") || trace.SameFile("", "") || trace.SameFile(p, p+"x") {
		t.Error("SameFile is wrong")
	}
}
