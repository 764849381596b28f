package assemble

import (
	"context"
	"io"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/reprise-bench/reprise/arrowio"
	"github.com/reprise-bench/reprise/internal/exitcode"
	"github.com/reprise-bench/reprise/internal/sweep"
)

// TestOutputPath checks where a report goes without --output.
func TestOutputPath(t *testing.T) {
	for _, tc := range []struct {
		output string
		runs   []string
		want   string
	}{
		{"x.html", []string{"a"}, "x.html"},
		{"", []string{"a"}, filepath.Join("a", arrowio.ReportFile)},
		{"", []string{"a", "b"}, arrowio.ReportFile},
	} {
		if got := OutputPath(tc.output, tc.runs); got != tc.want {
			t.Errorf("OutputPath(%q, %q) = %q, want %q", tc.output, tc.runs, got, tc.want)
		}
	}
}

// TestRunUsage checks that Run reports every problem of a command line
// at once, as a usage error, and writes nothing.
func TestRunUsage(t *testing.T) {
	dir := t.TempDir()
	file := filepath.Join(dir, "f")
	if err := os.WriteFile(file, nil, 0o644); err != nil {
		t.Fatal(err)
	}
	env := Env{Stdout: io.Discard, Write: func(string, func(io.Writer) error) error {
		t.Error("Write called")
		return nil
	}}
	for _, tc := range []struct {
		name string
		c    Config
		want []string
	}{
		{"nothing", Config{}, []string{"missing RUN_DIR"}},
		{"every problem", Config{Runs: []string{filepath.Join(dir, "none"), file}, Labels: []string{"a", "b", "c"}, MaxPoints: -1, Output: "-"},
			[]string{"RUN_DIR " + filepath.Join(dir, "none") + " does not exist", "RUN_DIR " + file + " is a file",
				"--label given 3 times for 2 runs", "--max-points -1", "--output: give a file name"}},
	} {
		t.Run(tc.name, func(t *testing.T) {
			err := Run(context.Background(), tc.c, env)
			if exitcode.Code(err) != exitcode.Usage || exitcode.Hint(err) != "see 'reprise report --help'" {
				t.Fatalf("Run = %v, want a usage error", err)
			}
			for _, w := range tc.want {
				if !strings.Contains(err.Error(), w) {
					t.Errorf("error %q lacks %q", err, w)
				}
			}
		})
	}
}

// TestWriteSweepAlone checks that a sweep directory is refused beside
// other directories.
func TestWriteSweepAlone(t *testing.T) {
	sw, run := t.TempDir(), t.TempDir()
	if err := os.WriteFile(filepath.Join(sw, sweep.ManifestFile), []byte("{}"), 0o644); err != nil {
		t.Fatal(err)
	}
	err := Write(context.Background(), Config{Runs: []string{run, sw}}, Env{Stdout: io.Discard})
	if exitcode.Code(err) != exitcode.Usage || !strings.Contains(err.Error(), sw+" is a sweep: give it alone") {
		t.Errorf("Write = %v, want the sweep refused", err)
	}
}
