package main

import (
	"os"
	"path/filepath"
	"strings"
	"testing"
)

// TestProfileExportPrefix: --profile-export-prefix (and GenAI-Perf's
// --profile-export-file) renames AIPerf's three export files, as AIPerf
// names them.
func TestProfileExportPrefix(t *testing.T) {
	srv := startMockServer(t, nil)
	dir := t.TempDir()
	for _, tc := range []struct {
		flag, value string
		want        []string
	}{
		{"--profile-export-prefix", "mine", []string{"mine.jsonl", "mine.json", "mine.csv", "inputs.json"}},
		{"--profile-export-file", "gp.json", []string{"gp.jsonl", "gp.json", "gp.csv", "inputs.json"}},
	} {
		out := filepath.Join(dir, tc.value)
		code, _, stderr := runCLI(t, "", "profile", "-m", "reprise-mock", "--url", srv.URL(), "--isl", "16", "--osl", "4",
			"--request-count", "2", "--artifact-dir", out, "--quiet", tc.flag, tc.value)
		if code != 0 {
			t.Fatalf("%s: exit %d: %s", tc.flag, code, stderr)
		}
		for _, f := range tc.want {
			if _, err := os.Stat(filepath.Join(out, f)); err != nil {
				t.Errorf("%s %s: %v", tc.flag, tc.value, err)
			}
		}
		for _, f := range []string{"profile_export.jsonl", "profile_export_aiperf.json", "profile_export_aiperf.csv"} {
			if _, err := os.Stat(filepath.Join(out, f)); err == nil {
				t.Errorf("%s %s: %s is still there", tc.flag, tc.value, f)
			}
		}
		b, err := os.ReadFile(filepath.Join(out, strings.TrimSuffix(tc.value, ".json")+".jsonl"))
		if err != nil || strings.Count(string(b), "\n") != 2 {
			t.Errorf("%s: the records export has %d lines, want 2 (%v)", tc.flag, strings.Count(string(b), "\n"), err)
		}
	}
	for _, bad := range []string{"a/b", "summary", ".."} {
		code, _, stderr := runCLI(t, "", "profile", "-m", "reprise-mock", "--url", srv.URL(), "--isl", "16", "--osl", "4",
			"--artifact-dir", filepath.Join(dir, "bad"), "--profile-export-prefix", bad)
		if code != 2 || !strings.Contains(stderr, "--profile-export-prefix") {
			t.Errorf("prefix %q: exit %d: %s", bad, code, stderr)
		}
	}
}
