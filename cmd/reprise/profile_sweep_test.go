package main

import (
	"encoding/json"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/reprise-bench/reprise/internal/mockserver"
	"github.com/reprise-bench/reprise/internal/sweep"
)

func readSweepManifest(t *testing.T, dir string) sweep.Manifest {
	t.Helper()
	b, err := os.ReadFile(filepath.Join(dir, sweep.ManifestFile))
	if err != nil {
		t.Fatal(err)
	}
	var m sweep.Manifest
	if err := json.Unmarshal(b, &m); err != nil {
		t.Fatal(err)
	}
	return m
}

// TestProfileMethodologyB: AIPerf's Methodology B loop (one profile per
// concurrency) is one command with a comma list: one run directory per
// value named as AIPerf names them, the sweep table on stderr, and
// reprise report of the directory draws the Pareto front.
func TestProfileMethodologyB(t *testing.T) {
	srv := startMockServer(t, nil)
	dir := filepath.Join(t.TempDir(), "sweep")
	code, _, stderr := runCLI(t, "", "profile", "-m", "reprise-mock", "--url", srv.URL(), "--streaming", "--isl", "16", "--osl", "4",
		"--request-count", "6", "--concurrency", "1,2,4", "--artifact-dir", dir)
	if code != 0 {
		t.Fatalf("exit %d: %s", code, stderr)
	}
	for _, c := range []string{"1", "2", "4"} {
		if _, err := os.Stat(filepath.Join(dir, "concurrency_"+c, "summary.json")); err != nil {
			t.Errorf("no run directory of concurrency %s: %v", c, err)
		}
		if _, err := os.Stat(filepath.Join(dir, "concurrency_"+c, "profile_export_aiperf.json")); err != nil {
			t.Errorf("no AIPerf export at concurrency %s: %v", c, err)
		}
	}
	if !strings.Contains(stderr, "concurrency_4") || !strings.Contains(stderr, "pareto") {
		t.Errorf("no sweep table or Pareto line on stderr:\n%s", stderr)
	}
	m := readSweepManifest(t, dir)
	if len(m.Points) != 3 || m.Points[2].Settings["concurrency"] != 4 || m.PointsDir != "." {
		t.Errorf("sweep.json: %+v", m.Points)
	}
	html := filepath.Join(t.TempDir(), "report.html")
	if code, _, stderr := runCLI(t, "", "report", "-o", html, dir); code != 0 {
		t.Fatalf("report: exit %d: %s", code, stderr)
	}
	b, err := os.ReadFile(html)
	if err != nil {
		t.Fatal(err)
	}
	if !strings.Contains(string(b), "Pareto front") {
		t.Error("the report of the sweep has no Pareto front")
	}
	// --no-sweep-table keeps the table off stderr; the same command again
	// reads every point back.
	code, _, stderr = runCLI(t, "", "profile", "-m", "reprise-mock", "--url", srv.URL(), "--streaming", "--isl", "16", "--osl", "4",
		"--request-count", "6", "--concurrency", "1,2,4", "--artifact-dir", dir, "--no-sweep-table")
	if code != 0 || strings.Contains(stderr, "pareto") {
		t.Errorf("exit %d, table printed with --no-sweep-table:\n%s", code, stderr)
	}
}

func TestProfileSweepKinds(t *testing.T) {
	// Gaps between tokens well above the client's read lag: with none, a
	// streamed probe's quality is degraded (read lag > ITL) and the recipe
	// cannot measure it.
	srv := startMockServer(t, func(c *mockserver.Config) { c.ITL = 20 * time.Millisecond })
	base := []string{"profile", "-m", "reprise-mock", "--url", srv.URL(), "--isl", "16", "--osl", "2", "--request-count", "2"}
	t.Run("zip and variants", func(t *testing.T) {
		dir := t.TempDir()
		code, _, stderr := runCLI(t, "", append(base, "--concurrency", "1,2", "--osl", "2,3", "--sweep-type", "zip", "--artifact-dir", dir)...)
		if code != 0 {
			t.Fatalf("exit %d: %s", code, stderr)
		}
		if m := readSweepManifest(t, dir); len(m.Points) != 2 || m.Points[1].Name != "osl_3_concurrency_2" {
			t.Errorf("zip points %+v", m.Points)
		}
		dir = t.TempDir()
		code, _, stderr = runCLI(t, "", append(base, "--variant", "small: concurrency=1, isl=8", "--sweep-variant", "concurrency=2", "--artifact-dir", dir)...)
		if code != 0 {
			t.Fatalf("exit %d: %s", code, stderr)
		}
		if _, err := os.Stat(filepath.Join(dir, "small", "summary.json")); err != nil {
			t.Error(err)
		}
		if _, err := os.Stat(filepath.Join(dir, "variant_2", "summary.json")); err != nil {
			t.Error(err)
		}
	})
	t.Run("sampling", func(t *testing.T) {
		dir := t.TempDir()
		code, _, stderr := runCLI(t, "", append(base, "--sweep-sampling", "latin_hypercube", "--sweep-samples", "3", "--random-seed", "7",
			"--sweep-dimension", "concurrency:1,4:int", "--artifact-dir", dir)...)
		if code != 0 {
			t.Fatalf("exit %d: %s", code, stderr)
		}
		b, err := os.ReadFile(filepath.Join(dir, sweep.DesignFile))
		if err != nil {
			t.Fatal(err)
		}
		if !strings.Contains(string(b), `"latin_hypercube"`) {
			t.Errorf("design: %s", b)
		}
		if _, err := os.Stat(filepath.Join(dir, "sample_0003", "summary.json")); err != nil {
			t.Error(err)
		}
	})
	t.Run("repeated trials", func(t *testing.T) {
		dir := t.TempDir()
		code, _, stderr := runCLI(t, "", append(base, "--concurrency", "1,2", "--num-profile-runs", "2", "--artifact-dir", dir)...)
		if code != 0 {
			t.Fatalf("exit %d: %s", code, stderr)
		}
		if _, err := os.Stat(filepath.Join(dir, "profile_runs", "trial_0002", "concurrency_2", "summary.json")); err != nil {
			t.Error(err)
		}
		// Each point across its trials: sweep.json and the table.
		m := readSweepManifest(t, dir)
		if len(m.Trials) != 2 || m.Trials[1].Point != "concurrency_2" || m.Trials[1].Trials != 2 {
			t.Errorf("sweep.json trials %+v", m.Trials)
		}
		if !strings.Contains(stderr, "concurrency_2 over 2 trials (95% CI): done/s ") {
			t.Errorf("no across-trials line in the table:\n%s", stderr)
		}
	})
	t.Run("recipe", func(t *testing.T) {
		dir := t.TempDir()
		code, _, stderr := runCLI(t, "", append(base, "--streaming", "--search-recipe", "max-concurrency-under-sla", "--e2e-sla-ms", "60000",
			"--concurrency-max", "4", "--artifact-dir", dir)...)
		if code != 0 {
			t.Fatalf("exit %d: %s", code, stderr)
		}
		m := readSweepManifest(t, dir)
		if m.Search == nil || m.Search.Value != 4 || len(m.Search.Probes) < 2 {
			t.Errorf("search %+v", m.Search)
		}
		if !strings.Contains(stderr, "max concurrency 4") {
			t.Errorf("no answer on stderr:\n%s", stderr)
		}
		html := filepath.Join(t.TempDir(), "r.html")
		if code, _, stderr := runCLI(t, "", "report", "-o", html, dir); code != 0 {
			t.Fatalf("report: exit %d: %s", code, stderr)
		}
		if b, _ := os.ReadFile(html); !strings.Contains(string(b), "Search: max-concurrency-under-sla") {
			t.Error("the report has no section of the recipe's answer")
		}
	})
	t.Run("model-based search", func(t *testing.T) {
		dir := t.TempDir()
		code, _, stderr := runCLI(t, "", append(base, "--streaming", "--search-space", "concurrency:1,4:int", "--search-metric", "output_token_throughput",
			"--search-max-iterations", "3", "--search-initial-points", "2", "--artifact-dir", dir)...)
		if code != 0 {
			t.Fatalf("exit %d: %s", code, stderr)
		}
		if m := readSweepManifest(t, dir); m.Search == nil || len(m.Search.Probes) == 0 || len(m.Search.Probes) > 3 {
			t.Errorf("search %+v", m.Search)
		}
	})
	t.Run("monotone search", func(t *testing.T) {
		// One load setting, one metric to maximize, an upper-limit SLA:
		// the boundary search, which probes the range's ends first and,
		// with both passing, stops there.
		dir := t.TempDir()
		code, _, stderr := runCLI(t, "", append(base, "--streaming", "--search-space", "concurrency:1,4:int", "--search-metric", "output_token_throughput",
			"--search-sla", "request_latency:avg:<=:60000", "--artifact-dir", dir)...)
		if code != 0 {
			t.Fatalf("exit %d: %s", code, stderr)
		}
		// A probe the client could not drive faithfully (a loaded machine)
		// is rerun; the reruns are not the search's choices.
		m := readSweepManifest(t, dir)
		if m.Search == nil {
			t.Fatal("sweep.json has no search")
		}
		var chosen []string
		for _, p := range m.Search.Probes {
			if p.Why != "rerun" {
				chosen = append(chosen, p.Why)
			}
		}
		if !slices.Equal(chosen, []string{"end", "end"}) || m.Search.Value != 4 ||
			!strings.Contains(m.Search.Stopped, "every setting does") {
			t.Errorf("search %+v", m.Search)
		}
	})
}

func TestProfileSweepRefusals(t *testing.T) {
	for _, tt := range []struct {
		args []string
		want string
	}{
		{[]string{"--concurrency", "1,2", "--isl", "1,2,3", "--sweep-type", "zip"}, "zip pairs"},
		{[]string{"--variant", "concurrency=2"}, "at least two"},
		{[]string{"--variant", "concurrency=2", "--variant", "concurrency=3", "--concurrency", "1,2"}, "three kinds"},
		{[]string{"--concurrency", "1,2", "--ui-type", "dashboard"}, "dashboard"},
		{[]string{"--concurrency", "1:8:x2"}, "comma list"},
		{[]string{"--sweep-sampling", "sobol", "--sweep-samples", "2"}, "--sweep-dimension"},
		{[]string{"--search-recipe", "max-throughput-ttft-sla"}, "--ttft-sla-ms"},
		{[]string{"--search-recipe", "fastest"}, "want one of"},
		{[]string{"--search-metric", "output_token_throughput"}, "--search-space"},
		{[]string{"--search-space", "model:1,2"}, "not a setting"},
		{[]string{"--search-space", "concurrency:1,8", "--search-sla", "ttft:p99:500"}, "METRIC:STAT:OP:THRESHOLD"},
		{[]string{"--sweep-type", "zip"}, "needs comma lists"},
		{[]string{"--search-sla-tier", "gold:request_latency:avg:<=:300"}, "--search-space"},
		{[]string{"--search-space", "concurrency:1,8", "--search-sla-tier", "gold:request_latency:avg:<=:300"}, "want 2 to 10 tiers"},
		{[]string{"--search-space", "concurrency:1,8", "--search-sla-tier", "a:request_latency:avg:<=:300",
			"--search-sla-tier", "b:output_token_throughput:avg:>=:10"}, "upper limits"},
	} {
		args := append([]string{"profile", "-m", "reprise-mock", "--url", "http://127.0.0.1:1", "--artifact-dir", t.TempDir()}, tt.args...)
		code, _, stderr := runCLI(t, "", args...)
		if code != 2 || !strings.Contains(stderr, tt.want) {
			t.Errorf("%v: exit %d, want 2 with %q:\n%s", tt.args, code, tt.want, stderr)
		}
	}
}

// TestSweepCommandZipAndVariants: reprise sweep takes the same kinds of
// sweep as profile (zip lists, variants), under points/.
func TestSweepCommandZipAndVariants(t *testing.T) {
	srv := startMockServer(t, nil)
	base := []string{"sweep", "-m", "reprise-mock", "--url", srv.URL(), "--isl", "16", "--request-count", "2", "--quiet"}
	dir := t.TempDir()
	code, _, stderr := runCLI(t, "", append(base, "--osl", "2,3", "--concurrency", "1,2", "--sweep-type", "zip", "--out", dir)...)
	if code != 0 {
		t.Fatalf("exit %d: %s", code, stderr)
	}
	if _, err := os.Stat(filepath.Join(dir, "points", "osl_3_concurrency_2", "summary.json")); err != nil {
		t.Error(err)
	}
	dir = t.TempDir()
	code, _, stderr = runCLI(t, "", append(base, "--osl", "2", "--variant", "a: concurrency=1", "--variant", "b: concurrency=2, isl=32", "--out", dir)...)
	if code != 0 {
		t.Fatalf("exit %d: %s", code, stderr)
	}
	if _, err := os.Stat(filepath.Join(dir, "points", "b", "summary.json")); err != nil {
		t.Error(err)
	}
}

// TestProfileSweepGenAIPerfForm: GenAI-Perf analyze's --sweep-type
// concurrency --sweep-range 1:4 is the sweep of --concurrency 1,2,4 (one
// run directory per value, the same sweep.json points), and it resumes
// with --enable-checkpointing: the second run reads every point back,
// the mock serving no request more.
func TestProfileSweepGenAIPerfForm(t *testing.T) {
	srv := startMockServer(t, func(c *mockserver.Config) { c.KeepLog = true })
	dir := filepath.Join(t.TempDir(), "sweep")
	args := []string{"profile", "-m", "reprise-mock", "--url", srv.URL(), "--no-server-metrics", "--isl", "16", "--osl", "4",
		"--request-count", "4", "--sweep-type", "concurrency", "--sweep-range", "1:4", "--artifact-dir", dir, "--enable-checkpointing"}
	if code, _, stderr := runCLI(t, "", args...); code != 0 {
		t.Fatalf("exit %d: %s", code, stderr)
	}
	m := readSweepManifest(t, dir)
	if len(m.Points) != 3 || m.Points[0].Settings["concurrency"] != 1 || m.Points[2].Settings["concurrency"] != 4 {
		t.Fatalf("sweep.json: %+v", m.Points)
	}
	for _, c := range []string{"1", "2", "4"} {
		if _, err := os.Stat(filepath.Join(dir, "concurrency_"+c, "summary.json")); err != nil {
			t.Errorf("no run directory of concurrency %s: %v", c, err)
		}
	}
	served := len(srv.Log())
	if code, _, stderr := runCLI(t, "", args...); code != 0 {
		t.Fatalf("resume: exit %d: %s", code, stderr)
	}
	if again := len(srv.Log()); again != served {
		t.Errorf("the resumed sweep sent %d requests, want none (every point complete)", again-served)
	}
}
