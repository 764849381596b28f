package main

import (
	"encoding/json"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/reprise-bench/reprise/engine/summary"
	"github.com/reprise-bench/reprise/internal/mockserver"
)

// TestProfileStability: GenAI-Perf's -p/-s stop. Against a steady mock
// and the default 999 %, any three windows agree: the run stops after
// the third, far before its cap of 10. Against a jittery mock and 0.001 %
// no three windows agree: the run goes on to --max-trials. Each window's
// requests are requests the mock served (its oracle log).
func TestProfileStability(t *testing.T) {
	for _, tc := range []struct {
		name    string
		jitter  time.Duration
		args    []string
		windows int
		stable  bool
	}{
		{"steady", 0, []string{"-p", "300"}, 3, true},
		{"unstable", 5 * time.Millisecond, []string{"--measurement-interval", "300", "-s", "0.001", "--max-trials", "4"}, 4, false},
	} {
		t.Run(tc.name, func(t *testing.T) {
			srv := startMockServer(t, func(c *mockserver.Config) {
				c.KeepLog, c.Jitter, c.JitterDist, c.Seed = true, tc.jitter, mockserver.JitterUniform, 3
			})
			dir := t.TempDir()
			args := append([]string{"profile", "-m", mockserver.DefaultModel, "--url", srv.URL(), "--artifact-dir", dir, "--ui-type", "none",
				"--no-server-metrics", "--isl", "16", "--osl", "4", "--concurrency", "2", "--streaming"}, tc.args...)
			code, _, stderr := runCLI(t, "", args...)
			if code != 0 {
				t.Fatalf("exit %d:\n%s", code, stderr)
			}
			st := readStability(t, filepath.Join(dir, "summary.json"))
			if st.Stable != tc.stable || len(st.Windows) != tc.windows || st.IntervalNS != int64(300*time.Millisecond) {
				t.Fatalf("stability %+v: want %d windows, stable %v", st, tc.windows, tc.stable)
			}
			completed := 0
			for i, w := range st.Windows {
				if w.EndNS <= w.StartNS || i > 0 && w.StartNS != st.Windows[i-1].EndNS || w.Completed == 0 {
					t.Errorf("window %d: %+v", i, w)
				}
				completed += w.Completed
			}
			if served := len(srv.Log()); completed > served {
				t.Errorf("the windows count %d requests, the mock served %d", completed, served)
			}
		})
	}
}

// TestProfileStabilityErrors: bad values name their flag.
func TestProfileStabilityErrors(t *testing.T) {
	for _, tc := range []struct {
		args []string
		want string
	}{
		{[]string{"-p", "0"}, "--measurement-interval 0"},
		{[]string{"-s", "-1"}, "--stability-percentage -1"},
		{[]string{"-p", "100", "--max-trials", "2"}, "--max-trials 2: want ≥ 3"},
		{[]string{"--max-trials", "5"}, "--max-trials needs --measurement-interval"},
	} {
		args := append([]string{"profile", "-m", "m", "--url", "http://127.0.0.1:1", "--artifact-dir", t.TempDir()}, tc.args...)
		code, _, stderr := runCLI(t, "", args...)
		if code != 2 || !strings.Contains(stderr, tc.want) {
			t.Errorf("%v: exit %d, %q; want 2 and %q", tc.args, code, stderr, tc.want)
		}
	}
}

func readStability(t *testing.T, path string) summary.Stability {
	t.Helper()
	b, err := os.ReadFile(path)
	if err != nil {
		t.Fatal(err)
	}
	var s struct {
		Run struct {
			Stability *summary.Stability `json:"stability"`
		} `json:"run_info"`
	}
	if err := json.Unmarshal(b, &s); err != nil {
		t.Fatal(err)
	}
	if s.Run.Stability == nil {
		t.Fatalf("%s: no run_info.stability", path)
	}
	return *s.Run.Stability
}
