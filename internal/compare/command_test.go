package compare

import (
	"context"
	"io"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/reprise-bench/reprise/internal/exitcode"
)

// TestParsePercent checks that a percentage and a fraction give the same
// fraction and that what is not a percentage names the flag.
func TestParsePercent(t *testing.T) {
	for v, want := range map[string]float64{"2%": 0.02, " 5 % ": 0.05, "0.02": 0.02, "0": 0} {
		if got, err := parsePercent("--min-effect", v); err != nil || got != want {
			t.Errorf("parsePercent(%q) = %v, %v; want %v", v, got, err, want)
		}
	}
	for _, v := range []string{"", "x%", "-1%", "NaN", "Inf"} {
		if _, err := parsePercent("--min-effect", v); err == nil || !strings.HasPrefix(err.Error(), "--min-effect ") {
			t.Errorf("parsePercent(%q) = %v, want an error naming --min-effect", v, err)
		}
	}
}

// TestParseTargets checks --targets: indexes from 0, comma-separated.
func TestParseTargets(t *testing.T) {
	if ts, err := parseTargets("0, 2,1"); err != nil || len(ts) != 3 || ts[1] != 2 {
		t.Errorf("parseTargets = %v, %v", ts, err)
	}
	for _, v := range []string{"", "0,-1", "a"} {
		if _, err := parseTargets(v); err == nil {
			t.Errorf("parseTargets(%q) succeeded", v)
		}
	}
}

// TestCommandUsage checks that Run reports every problem of a command
// line at once, as a usage error, before reading any run.
func TestCommandUsage(t *testing.T) {
	dir := t.TempDir()
	file := filepath.Join(dir, "f")
	if err := os.WriteFile(file, nil, 0o644); err != nil {
		t.Fatal(err)
	}
	bad, targets := "x", "0"
	for _, tc := range []struct {
		name string
		c    Command
		want []string
	}{
		{"nothing", Command{MinEffect: "2%", Level: DefaultLevel, Resamples: DefaultResamples},
			[]string{"want two or more run directories (A B [C…], or A1 A2 vs B1 B2), or one with --targets, got 0"}},
		{"every problem", Command{Args: []string{dir, filepath.Join(dir, "none"), file}, MinEffect: "y", EquivalentWithin: &bad,
			Level: 2, Resamples: DefaultResamples, FailOn: []string{"nope"}},
			[]string{`--min-effect "y": want a percentage such as 2%`, `--equivalent-within "x": want a percentage such as 2%`,
				"run directory " + filepath.Join(dir, "none") + " does not exist", file + " is a file, not a run directory", "--level "}},
		{"empty side", Command{Args: []string{dir, "vs"}, MinEffect: "2%", Level: DefaultLevel, Resamples: DefaultResamples},
			[]string{"side 2 has no run directory"}},
		{"one target", Command{Args: []string{dir}, Targets: &targets, MinEffect: "2%", Level: DefaultLevel, Resamples: DefaultResamples},
			[]string{"--targets: want two or more target indexes, such as 0,1"}},
	} {
		t.Run(tc.name, func(t *testing.T) {
			err := tc.c.Run(context.Background(), io.Discard)
			if exitcode.Code(err) != exitcode.Usage || exitcode.Hint(err) != "see 'reprise compare --help'" {
				t.Fatalf("Run = %v (exit code %d, hint %q), want a usage error", err, exitcode.Code(err), exitcode.Hint(err))
			}
			for _, w := range tc.want {
				if !strings.Contains(err.Error(), w) {
					t.Errorf("error %q lacks %q", err, w)
				}
			}
		})
	}
}
