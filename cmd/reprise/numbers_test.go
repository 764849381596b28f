package main

import (
	"os"
	"path/filepath"
	"strings"
	"testing"
)

// TestNonFiniteNumbersRefused: NaN, infinities and seconds no duration
// holds are usage errors naming the flag, from the command line or a
// variable, before anything runs (no run directory is made); they used to
// fail late (NaN in the manifest), run every run (--until-ci NaN), or read
// as a negative duration.
func TestNonFiniteNumbersRefused(t *testing.T) {
	base := []string{"--url", "http://127.0.0.1:1", "--model", "m", "--isl", "4", "--osl", "4", "--request-count", "1", "--concurrency", "1", "--quiet"}
	for _, tt := range []struct {
		name string
		env  string // NAME=VALUE
		args []string
		want string
	}{
		{"osl", "", []string{"replay", "--osl", "NaN"}, `--osl "NaN"`},
		{"isl inf", "", []string{"replay", "--isl", "+Inf"}, `--isl "+Inf"`},
		{"request-rate", "", []string{"replay", "--request-rate", "NaN"}, `--request-rate "NaN"`},
		{"isl-stddev env", "REPRISE_ISL_STDDEV=NaN", []string{"replay"}, "REPRISE_ISL_STDDEV"},
		{"confidence-level", "", []string{"replay", "--runs", "3", "--confidence-level", "NaN"}, `--confidence-level "NaN"`},
		{"until-ci", "", []string{"replay", "--runs", "5", "--until-ci", "NaN"}, `--until-ci "NaN"`},
		{"until-ci inf", "", []string{"replay", "--runs", "5", "--until-ci", "Inf%"}, `--until-ci "Inf%"`},
		{"benchmark-duration", "", []string{"profile", "--benchmark-duration", "1e300"}, "--benchmark-duration: 1e+300 seconds is out of range"},
		{"request-timeout-seconds", "", []string{"profile", "--request-timeout-seconds", "-1e300"}, "--request-timeout-seconds: -1e+300 seconds is out of range"},
		{"benchmark-grace-period", "", []string{"profile", "--benchmark-duration", "1", "--benchmark-grace-period", "1e300"}, "--benchmark-grace-period: 1e+300 seconds"},
		{"warmup-duration", "", []string{"profile", "--warmup-duration", "NaN"}, `--warmup-duration "NaN"`},
	} {
		t.Run(tt.name, func(t *testing.T) {
			if k, v, ok := strings.Cut(tt.env, "="); ok {
				t.Setenv(k, v)
			}
			out := filepath.Join(t.TempDir(), "run")
			args := append(append([]string{tt.args[0]}, base...), tt.args[1:]...)
			if tt.args[0] == "profile" {
				args = append(args, "--artifact-dir", out)
			} else {
				args = append(args, "--out", out)
			}
			code, _, stderr := runCLI(t, "", args...)
			if code != 2 || !strings.Contains(stderr, tt.want) {
				t.Errorf("%v: exit %d, want 2 and %q in:\n%s", args, code, tt.want, stderr)
			}
			if strings.Contains(stderr, "must not be negative") {
				t.Errorf("%v: the value wrapped around to a negative duration:\n%s", args, stderr)
			}
			if _, err := os.Stat(out); !os.IsNotExist(err) {
				t.Errorf("%v: a run directory was made", args)
			}
		})
	}
}
