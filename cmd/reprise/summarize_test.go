package main

import (
	"bufio"
	"encoding/json"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/google/go-cmp/cmp"

	"github.com/reprise-bench/reprise/arrowio"
	"github.com/reprise-bench/reprise/internal/mockserver"
)

// TestSummarizeMatchesRun replays a trace against the mock server (with
// faults, so errors are summarized too, and goodput SLOs), then recomputes
// the summary from the record files alone: summarize --json prints exactly
// the run's summary.json, and the table the run would print.
func TestSummarizeMatchesRun(t *testing.T) {
	srv := startMockServer(t, func(c *mockserver.Config) {
		c.MaxNumSeqs = 1024
		f, err := mockserver.ParseFaultRate("500@0.1")
		if err != nil {
			t.Fatal(err)
		}
		c.Faults = []mockserver.FaultRate{f}
	})
	for _, format := range []string{"parquet", "arrow"} {
		t.Run(format, func(t *testing.T) {
			out := t.TempDir()
			code, _, stderr := runCLI(t, "", "replay", "../../traces/mooncake-sample.jsonl", "--url", srv.URL(),
				"--model", "reprise-mock", "--speedup", "1000", "--out", out, "--format", format, "--quiet",
				"--goodput", "ttft:50 e2e:5000")
			if code != 0 && code != 3 {
				t.Fatalf("replay exit %d: %s", code, stderr)
			}
			want, err := os.ReadFile(filepath.Join(out, "summary.json"))
			if err != nil {
				t.Fatal(err)
			}
			code, got, stderr := runCLI(t, "", "summarize", "--json", out)
			if code != 0 {
				t.Fatalf("summarize exit %d: %s", code, stderr)
			}
			if diff := cmp.Diff(string(want), got); diff != "" {
				t.Errorf("summarize --json differs from the run's summary.json (-run +summarize):\n%s", diff)
			}
			var sum map[string]any
			if err := json.Unmarshal(want, &sum); err != nil {
				t.Fatal(err)
			}
			if n := sum["request_count"].(map[string]any)["avg"].(float64); n < 10 {
				t.Errorf("request_count %v: the run did too little to prove anything", n)
			}
			if n := sum["error_request_count"].(map[string]any)["avg"].(float64); n < 1 {
				t.Errorf("error_request_count %v: want some injected errors", n)
			}
			code, table, stderr := runCLI(t, "", "summarize", out)
			if code != 0 || !strings.Contains(table, "time_to_first_token") && !strings.Contains(strings.ToLower(table), "ttft") {
				t.Errorf("summarize table (exit %d, %s):\n%s", code, stderr, table)
			}
		})
	}
}

func TestSummarizeExportAIPerf(t *testing.T) {
	srv := startMockServer(t, nil)
	out := t.TempDir()
	code, _, stderr := runCLI(t, "", "replay", "../../traces/mooncake-sample.jsonl", "--url", srv.URL(),
		"--model", "reprise-mock", "--speedup", "1000", "--out", out, "--quiet")
	if code != 0 {
		t.Fatalf("replay exit %d: %s", code, stderr)
	}
	if code, _, stderr := runCLI(t, "", "summarize", "--export", "aiperf", out); code != 0 {
		t.Fatalf("summarize exit %d: %s", code, stderr)
	}
	reqs, err := arrowio.ReadRequests(out)
	if err != nil {
		t.Fatal(err)
	}
	f, err := os.Open(filepath.Join(out, arrowio.AIPerfRecordsFile))
	if err != nil {
		t.Fatal(err)
	}
	defer f.Close()
	var lines int
	sc := bufio.NewScanner(f)
	sc.Buffer(nil, 1<<20)
	for sc.Scan() {
		var rec struct {
			Metadata map[string]any `json:"metadata"`
			Metrics  map[string]struct {
				Value float64 `json:"value"`
				Unit  string  `json:"unit"`
			} `json:"metrics"`
			Error any `json:"error"`
		}
		if err := json.Unmarshal(sc.Bytes(), &rec); err != nil {
			t.Fatalf("line %d: %v", lines+1, err)
		}
		if rec.Metadata["benchmark_phase"] != "profiling" || rec.Metrics["request_latency"].Unit != "ms" {
			t.Errorf("line %d: %s", lines+1, sc.Text())
		}
		lines++
	}
	var profile int
	for _, r := range reqs {
		if r.Phase == 0 {
			profile++
		}
	}
	if lines != profile || lines == 0 {
		t.Errorf("%s has %d lines, want %d (measured requests)", arrowio.AIPerfRecordsFile, lines, profile)
	}
	b, err := os.ReadFile(filepath.Join(out, arrowio.AIPerfSummaryFile))
	if err != nil {
		t.Fatal(err)
	}
	var sum map[string]any
	if err := json.Unmarshal(b, &sum); err != nil {
		t.Fatal(err)
	}
	for _, k := range []string{"schema_version", "benchmark_id", "request_throughput", "request_latency", "time_to_first_token", "error_summary"} {
		if _, ok := sum[k]; !ok {
			t.Errorf("%s lacks %q", arrowio.AIPerfSummaryFile, k)
		}
	}
	if n := sum["request_count"].(map[string]any)["avg"].(float64); int(n) != profile {
		t.Errorf("request_count %v, want %d", n, profile)
	}
}

func TestSummarizeUsage(t *testing.T) {
	for _, args := range [][]string{
		{"summarize"},
		{"summarize", "/nonexistent/run"},
		{"summarize", "--export", "csv", t.TempDir()},
	} {
		if code, _, _ := runCLI(t, "", args...); code != 2 {
			t.Errorf("%v: exit %d, want 2", args, code)
		}
	}
	// A directory without records is a usage error naming what is missing.
	code, _, stderr := runCLI(t, "", "summarize", t.TempDir())
	if code != 2 || !strings.Contains(stderr, "records") {
		t.Errorf("empty dir: exit %d, %s", code, stderr)
	}
}
