package main

import (
	"bufio"
	"encoding/json"
	"math"
	"net/http"
	"net/http/httptest"
	"os"
	"path/filepath"
	"regexp"
	"strconv"
	"strings"
	"testing"
	"unicode"

	"github.com/google/go-cmp/cmp"

	"github.com/reprise-bench/reprise/arrowio"
	"github.com/reprise-bench/reprise/internal/mockserver"
)

// TestSummarizeMatchesRun replays against the mock server (with faults, so
// errors are summarized too, goodput SLOs, warmup, a late threshold, the
// server's /metrics and a DCGM exporter scraped) in every record format,
// as parts and as one file, then recomputes everything from the run
// directory alone: summarize --json prints exactly the run's summary.json,
// summarize --export aiperf writes exactly the files the run's --export
// aiperf wrote, and the table is the one the run would print.
func TestSummarizeMatchesRun(t *testing.T) {
	srv := startMockServer(t, func(c *mockserver.Config) {
		c.MaxNumSeqs = 1024
		f, err := mockserver.ParseFaultRate("500@0.1")
		if err != nil {
			t.Fatal(err)
		}
		c.Faults = []mockserver.FaultRate{f}
	})
	dcgmPage, err := os.ReadFile("../../internal/telemetry/testdata/dcgm-exporter.txt")
	if err != nil {
		t.Fatal(err)
	}
	dcgm := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) { w.Write(dcgmPage) }))
	defer dcgm.Close()
	for _, tc := range []struct {
		format string
		extra  []string
	}{
		{"parquet", nil},
		{"arrow", nil},
		{"jsonl", nil},
		{"parquet", []string{"--single-file", "--export-level", "events"}},
		{"arrow", []string{"--single-file", "--no-streaming"}},
		{"jsonl", []string{"--export-level", "events", "--late-threshold", "50us"}},
	} {
		t.Run(tc.format+strings.Join(tc.extra, ""), func(t *testing.T) {
			out := t.TempDir()
			args := append([]string{"replay", "../../traces/mooncake-sample.jsonl", "--url", srv.URL(),
				"--model", "reprise-mock", "--speedup", "1000", "--request-count", "100", "--out", out, "--format", tc.format, "--quiet",
				"--goodput", "e2e:5000", "--warmup-requests", "5", "--metrics-interval", "50ms",
				"--gpu-telemetry", "dcgm=" + dcgm.URL, "--export", "aiperf"}, tc.extra...)
			code, _, stderr := runCLI(t, "", args...)
			if code != 0 && code != 3 {
				t.Fatalf("replay exit %d: %s", code, stderr)
			}
			want, err := os.ReadFile(filepath.Join(out, "summary.json"))
			if err != nil {
				t.Fatal(err)
			}
			exports := map[string][]byte{}
			for _, f := range []string{arrowio.AIPerfRecordsFile, arrowio.AIPerfSummaryFile} {
				if exports[f], err = os.ReadFile(filepath.Join(out, f)); err != nil {
					t.Fatal(err)
				}
			}
			code, got, stderr := runCLI(t, "", "summarize", "--json", "--export", "aiperf", out)
			if code != 0 {
				t.Fatalf("summarize exit %d: %s", code, stderr)
			}
			if diff := cmp.Diff(string(want), got); diff != "" {
				t.Errorf("summarize --json differs from the run's summary.json (-run +summarize):\n%s", diff)
			}
			for f, w := range exports {
				b, err := os.ReadFile(filepath.Join(out, f))
				if err != nil {
					t.Fatal(err)
				}
				if diff := cmp.Diff(string(w), string(b)); diff != "" {
					t.Errorf("summarize --export aiperf: %s differs from the run's (-run +summarize):\n%s", f, diff)
				}
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
			for _, k := range []string{`"servers"`, `"gpu"`, `"record_writer"`, `"warmup_request_count"`} {
				if !strings.Contains(string(want), k) {
					t.Errorf("summary.json lacks %s: the comparison proves less than it should", k)
				}
			}
			code, table, stderr := runCLI(t, "", "summarize", out)
			if code != 0 || !strings.Contains(table, "Time to first token") == !strings.Contains(strings.Join(tc.extra, " "), "--no-streaming") {
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
		if rec.Metadata["benchmark_phase"] != "profiling" || rec.Error == nil && rec.Metrics["request_latency"].Unit != "ms" {
			t.Errorf("line %d: %s", lines+1, sc.Text())
		}
		lines++
	}
	var profile, ok int
	for _, r := range reqs {
		if r.Phase == 0 {
			profile++
			if r.OK() {
				ok++
			}
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
	if n := sum["request_count"].(map[string]any)["avg"].(float64); int(n) != ok {
		t.Errorf("request_count %v, want %d", n, ok)
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
	// RUN_DIR says what is wrong with the path: it used to be "not a
	// directory" for a path that does not exist.
	file := filepath.Join(t.TempDir(), "requests.parquet")
	if err := os.WriteFile(file, nil, 0o644); err != nil {
		t.Fatal(err)
	}
	for _, tt := range []struct{ dir, want string }{
		{"/nonexistent/run", "reprise: RUN_DIR /nonexistent/run does not exist: give a run directory written by reprise replay"},
		{file, "reprise: RUN_DIR " + file + " is a file, not a directory"},
	} {
		code, _, stderr := runCLI(t, "", "summarize", tt.dir)
		if code != 2 || !strings.HasPrefix(stderr, tt.want) {
			t.Errorf("%s: exit %d, stderr %q; want 2 and %q", tt.dir, code, stderr, tt.want)
		}
	}
	// A directory without records is a usage error naming what is missing.
	code, _, stderr := runCLI(t, "", "summarize", t.TempDir())
	if code != 2 || !strings.Contains(stderr, "records") {
		t.Errorf("empty dir: exit %d, %s", code, stderr)
	}
}

// TestSummarizeBenchfmt checks a real run's benchmark lines are valid Go
// benchmark format and carry summary.json's numbers (the lines of a
// summary with every kind of value are pinned by engine/summary's
// TestWriteBenchfmt).
func TestSummarizeBenchfmt(t *testing.T) {
	srv := startMockServer(t, nil)
	out := t.TempDir()
	code, _, stderr := runCLI(t, "", "replay", "--url", srv.URL(), "--model", "reprise-mock", "--isl", "16", "--osl", "4",
		"--concurrency", "2", "--request-count", "12", "--out", out, "--quiet")
	if code != 0 {
		t.Fatalf("replay exit %d: %s", code, stderr)
	}
	code, got, stderr := runCLI(t, "", "summarize", "--format", "benchfmt", out)
	if code != 0 {
		t.Fatalf("summarize exit %d: %s", code, stderr)
	}
	vals := checkBenchfmt(t, got)
	b2, err := os.ReadFile(filepath.Join(out, "summary.json"))
	if err != nil {
		t.Fatal(err)
	}
	var sum map[string]struct {
		P50, P99 float64
		Avg      float64
		Count    int
	}
	json.Unmarshal(b2, &sum) // non-object keys fail to decode and are skipped
	for name, want := range map[string]float64{
		"BenchmarkReplay/ttft-p50":           sum["time_to_first_token"].P50 / 1000,
		"BenchmarkReplay/e2e-p99":            sum["request_latency"].P99 / 1000,
		"BenchmarkReplay/request-throughput": sum["request_throughput"].Avg,
	} {
		if got, ok := vals[name]; !ok || math.Abs(got-want) > 1e-8*math.Abs(want) || want == 0 { // 9 digits
			t.Errorf("%s = %v (present %v), want %v from summary.json", name, got, ok, want)
		}
	}
	if code, _, _ := runCLI(t, "", "summarize", "--format", "benchfmt", "--json", out); code != 2 {
		t.Errorf("--json with --format benchfmt: exit %d, want 2", code)
	}
	if code, _, _ := runCLI(t, "", "summarize", "--format", "csv", out); code != 2 {
		t.Errorf("--format csv: exit %d, want 2", code)
	}
}

// checkBenchfmt parses text as the Go benchmark format
// (golang.org/design/14313-benchmark-format) and returns the first value of
// each benchmark line by name.
func checkBenchfmt(t *testing.T, text string) map[string]float64 {
	t.Helper()
	config := regexp.MustCompile(`^[\p{Ll}][^\s\p{Lu}]*: .+$`)
	vals := map[string]float64{}
	benches := false
	for i, l := range strings.Split(strings.TrimSuffix(text, "\n"), "\n") {
		f := strings.Fields(l)
		if len(f) > 0 && strings.HasPrefix(f[0], "Benchmark") {
			benches = true
			if len(f) < 4 || len(f)%2 != 0 || strings.HasSuffix(f[0], "-") {
				t.Errorf("line %d: %q: want NAME ITERATIONS VALUE UNIT [VALUE UNIT…]", i+1, l)
				continue
			}
			if r := []rune(f[0][len("Benchmark"):]); len(r) == 0 || unicode.IsLower(r[0]) {
				t.Errorf("line %d: %q: name must continue Benchmark with a non-lower-case letter", i+1, l)
			}
			if n, err := strconv.Atoi(f[1]); err != nil || n < 1 {
				t.Errorf("line %d: %q: iterations %q", i+1, l, f[1])
			}
			for j := 2; j < len(f); j += 2 {
				v, err := strconv.ParseFloat(f[j], 64)
				if err != nil {
					t.Errorf("line %d: %q: value %q", i+1, l, f[j])
				}
				if j == 2 {
					vals[f[0]] = v
				}
			}
			continue
		}
		if benches || !config.MatchString(l) {
			t.Errorf("line %d: %q: want a configuration line (key: value) before the benchmark lines", i+1, l)
		}
	}
	if !benches {
		t.Error("no benchmark lines")
	}
	return vals
}
