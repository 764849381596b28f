package main

import (
	"encoding/json"
	"fmt"
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/reprise-bench/reprise/internal/mockserver"
)

// compareRuns replays one small trace against a mock server of each TTFT
// and returns the run directories.
func compareRuns(t *testing.T, ttfts ...time.Duration) []string {
	t.Helper()
	var b strings.Builder
	for i := range 40 {
		fmt.Fprintf(&b, `{"timestamp": %d, "input_length": 16, "output_length": 2, "hash_ids": [%d]}`+"\n", i, i)
	}
	tr := filepath.Join(t.TempDir(), "trace.jsonl")
	if err := os.WriteFile(tr, []byte(b.String()), 0o644); err != nil {
		t.Fatal(err)
	}
	var dirs []string
	for _, d := range ttfts {
		srv := startMockServer(t, func(c *mockserver.Config) { c.TTFT = d })
		out := filepath.Join(t.TempDir(), "run")
		code, _, stderr := runCLI(t, "", "replay", tr, "--url", srv.URL(), "--model", "reprise-mock",
			"--out", out, "--format", "jsonl", "--quiet")
		if code != 0 {
			t.Fatalf("replay: exit %d: %s", code, stderr)
		}
		dirs = append(dirs, out)
	}
	return dirs
}

// TestCompareCLI: a run against a server 299 ms slower to the first token
// is worse on TTFT, paired by trace row; a --fail-on gate it breaks exits
// 3, one it does not exits 0; --json is the documented document.
func TestCompareCLI(t *testing.T) {
	dirs := compareRuns(t, time.Millisecond, 300*time.Millisecond)
	code, out, stderr := runCLI(t, "", "compare", dirs[0], dirs[1], "--fail-on", "ttft.p50:+50%", "--fail-on", "e2e.p99:+100000%")
	if code != 3 {
		t.Fatalf("exit %d, want 3: %s\n%s", code, stderr, out)
	}
	if !strings.Contains(stderr, "ttft.p50:+50%") || strings.Contains(stderr, "e2e.p99:") {
		t.Errorf("stderr names the wrong gates:\n%s", stderr)
	}
	if !strings.Contains(out, "paired by trace row: 40 pairs") {
		t.Errorf("table:\n%s", out)
	}
	code, out, stderr = runCLI(t, "", "compare", dirs[0], dirs[1], "--json", "--fail-on", "ttft.p50:+1000ms", "--seed", "7")
	if code != 0 {
		t.Fatalf("exit %d: %s", code, stderr)
	}
	var doc struct {
		SchemaVersion string `json:"schema_version"`
		Seed          uint64
		Comparisons   []struct {
			Paired  bool
			Metrics []struct {
				Name    string
				Diff    float64
				Verdict string
			}
		}
	}
	if err := json.Unmarshal([]byte(out), &doc); err != nil {
		t.Fatalf("%v\n%s", err, out)
	}
	if doc.SchemaVersion != "2" || doc.Seed != 7 || len(doc.Comparisons) != 1 || !doc.Comparisons[0].Paired {
		t.Fatalf("JSON:\n%s", out)
	}
	for _, m := range doc.Comparisons[0].Metrics {
		if m.Name == "ttft.p50" && (m.Verdict != "worse" || m.Diff < 150) {
			t.Errorf("ttft.p50: %+v, want worse by about 299 ms", m)
		}
	}

	// reprise report A B adds the comparison.
	html := filepath.Join(t.TempDir(), "ab.html")
	code, _, stderr = runCLI(t, "", "report", "-o", html, "--label", "fast", "--label", "slow", dirs[0], dirs[1])
	if code != 0 {
		t.Fatalf("report: exit %d: %s", code, stderr)
	}
	page, err := os.ReadFile(html)
	if err != nil {
		t.Fatal(err)
	}
	for _, want := range []string{"Comparison: slow against fast", "paired by trace row: 40 pairs", "ttft.p50", `class="bad"`} {
		if !strings.Contains(string(page), want) {
			t.Errorf("report lacks %q", want)
		}
	}
}

// TestCompareReplicatesCLI: two runs a side before and after "vs", and a
// directory of repeated runs (--runs 2) as a side, are compared as
// replicates: the table says how many runs each side had, and B−A is the
// difference of the sides' means.
func TestCompareReplicatesCLI(t *testing.T) {
	dirs := compareRuns(t, time.Millisecond, time.Millisecond, 300*time.Millisecond, 300*time.Millisecond)
	code, out, stderr := runCLI(t, "", "compare", dirs[0], dirs[1], "vs", dirs[2], dirs[3])
	if code != 0 {
		t.Fatalf("exit %d: %s\n%s", code, stderr, out)
	}
	if !strings.Contains(out, "replicates: 2 runs of A, 2 of B") || !strings.Contains(out, "(+1 runs)") {
		t.Errorf("table:\n%s", out)
	}
	// The verdict of two runs a side on a shared machine is the
	// statistics' business (internal/compare's tests); here B−A must be
	// the mean of B's runs less the mean of A's, about +299 ms.
	var ttft []string
	for l := range strings.Lines(out) {
		if strings.HasPrefix(l, "ttft.p50 ") {
			ttft = strings.Fields(l)
		}
	}
	if len(ttft) < 5 || !strings.HasPrefix(ttft[4], "+") {
		t.Errorf("ttft.p50 line %q, want B−A positive", ttft)
	} else if d, err := strconv.ParseFloat(ttft[4][1:], 64); err != nil || d < 150 {
		t.Errorf("ttft.p50 B−A %q, want about +299 ms", ttft[4])
	}
	// A --runs directory is its runs.
	runsDir := filepath.Join(t.TempDir(), "repeated")
	for i, d := range dirs[:2] {
		if err := os.MkdirAll(runsDir, 0o755); err != nil {
			t.Fatal(err)
		}
		if err := os.Rename(d, filepath.Join(runsDir, fmt.Sprintf("run-%d", i+1))); err != nil {
			t.Fatal(err)
		}
	}
	code, out, stderr = runCLI(t, "", "compare", runsDir, "vs", dirs[2], dirs[3])
	if code != 0 || !strings.Contains(out, "replicates: 2 runs of A, 2 of B") {
		t.Errorf("a --runs directory as side A: exit %d: %s\n%s", code, stderr, out)
	}
	for _, args := range [][]string{
		{"compare", "vs", dirs[2]},
		{"compare", dirs[2], "vs"},
		{"compare", dirs[2], dirs[3], "--min-effect", "lots"},
	} {
		if code, _, stderr := runCLI(t, "", args...); code != 2 {
			t.Errorf("%q: exit %d, want 2 (usage): %s", args, code, stderr)
		}
	}
}

func TestCompareUsage(t *testing.T) {
	dir := t.TempDir()
	for _, args := range [][]string{
		{"compare", dir},
		{"compare", dir, filepath.Join(dir, "nope")},
		{"compare", dir, dir, "--level", "95"},
		{"compare", dir, dir, "--fail-on", "ttft.p99:-5%"},
		{"compare", dir, dir, "--fail-on", "speed:+5%"},
	} {
		code, _, stderr := runCLI(t, "", args...)
		if code != 2 {
			t.Errorf("%q: exit %d, want 2: %s", args, code, stderr)
		}
	}
}

// TestCompareTargetsCLI: replay --url twice with --url-policy fan-out
// against a fast and a slow mock server writes one run whose targets
// compare --targets 0,1 pairs by request and finds the slow one worse;
// --target-model names the model sent to target 1.
func TestCompareTargetsCLI(t *testing.T) {
	fast := startMockServer(t, func(c *mockserver.Config) { c.TTFT = time.Millisecond })
	slow := startMockServer(t, func(c *mockserver.Config) {
		c.TTFT, c.Models = 300*time.Millisecond, []string{"other", "reprise-mock"}
	})
	out := filepath.Join(t.TempDir(), "run")
	code, _, stderr := runCLI(t, "", "replay", "--url", fast.URL(), "--url", slow.URL(), "--url-policy", "fan-out",
		"--model", "reprise-mock", "--target-model", "1=other", "--target-header", "1=X-Arm: b",
		"--isl", "16", "--osl", "2", "--concurrency", "4", "--request-count", "12", "--out", out, "--format", "jsonl", "--quiet")
	if code != 0 {
		t.Fatalf("replay: exit %d: %s", code, stderr)
	}
	recs := readRecords(t, out)
	if len(recs) != 24 {
		t.Fatalf("%d records, want 12 per target", len(recs))
	}
	code, stdout, stderr := runCLI(t, "", "compare", out, "--targets", "0,1", "--json")
	if code != 0 {
		t.Fatalf("compare: exit %d: %s", code, stderr)
	}
	var doc struct {
		Comparisons []struct {
			B        struct{ Label, Model string }
			PairedBy string `json:"paired_by"`
			Pairs    int
			Metrics  []struct{ Name, Verdict string }
		}
	}
	if err := json.Unmarshal([]byte(stdout), &doc); err != nil {
		t.Fatalf("%v\n%s", err, stdout)
	}
	c := doc.Comparisons[0]
	if c.PairedBy != "fan-out request" || c.Pairs != 12 || c.B.Model != "other" || c.Metrics[0].Verdict != "worse" {
		t.Errorf("compare --targets 0,1:\n%s", stdout)
	}
	for _, args := range [][]string{{"compare", out, "--targets", "0,2"}, {"compare", out, out, "--targets", "0,1"}} {
		if code, _, stderr := runCLI(t, "", args...); code != 2 {
			t.Errorf("%q: exit %d, want 2: %s", args, code, stderr)
		}
	}
}
