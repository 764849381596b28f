package report

import (
	"encoding/json"
	"os"
	"path/filepath"
	"regexp"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/reprise-bench/reprise/engine/summary"
)

var tileRE = regexp.MustCompile(`data-metric="([^"]+)" data-value="([^"]*)"`)

// headlineValues are the headline's numbers by data-metric, in order.
func headlineValues(t *testing.T, page string) map[string][]float64 {
	t.Helper()
	out := map[string][]float64{}
	for _, m := range tileRE.FindAllStringSubmatch(page, -1) {
		v, err := strconv.ParseFloat(m[2], 64)
		if err != nil {
			t.Fatalf("tile %s: value %q: %v", m[1], m[2], err)
		}
		out[m[1]] = append(out[m[1]], v)
	}
	return out
}

// summaryJSONValue is statistic stat of tag in a summary.json.
func summaryJSONValue(t *testing.T, doc map[string]any, key string) (float64, bool) {
	t.Helper()
	tag, stat, _ := strings.Cut(key, ".")
	m, ok := doc[tag].(map[string]any)
	if !ok {
		return 0, false
	}
	v, ok := m[stat].(float64)
	return v, ok
}

// TestHeadline checks that the headline's numbers are summary.json's,
// that goodput is shown only when an SLO was set, and that the verdict
// is the exit code.
func TestHeadline(t *testing.T) {
	dir := filepath.Join(t.TempDir(), "run")
	synthRun{n: 200, rate: 50, ttft: 20 * time.Millisecond, itl: 5 * time.Millisecond, errEvery: 50, seed: 5}.write(t, dir)
	page := string(build(t, Options{}, dir))
	got := headlineValues(t, page)
	raw, err := os.ReadFile(filepath.Join(dir, "summary.json"))
	if err != nil {
		t.Fatal(err)
	}
	var doc map[string]any
	if err := json.Unmarshal(raw, &doc); err != nil {
		t.Fatal(err)
	}
	for _, m := range headlineMetrics {
		key := m.tag + "." + m.stat
		want, ok := summaryJSONValue(t, doc, key)
		if m.tag == "goodput" {
			if len(got[key]) > 0 {
				t.Errorf("goodput shown without an SLO: %v", got[key])
			}
			continue
		}
		if !ok || len(got[key]) != 1 || got[key][0] != want {
			t.Errorf("headline %s = %v, summary.json %v (present %v)", key, got[key], want, ok)
		}
	}
	// 4 of 200 failed: 2 %, within the 5 % limit.
	if v := got["exit_code"]; len(v) != 1 || v[0] != 0 {
		t.Errorf("verdict %v, want exit 0", v)
	}
	if !strings.Contains(page, `id="headline"`) || strings.Index(page, `id="headline"`) > strings.Index(page, `id="verdicts"`) {
		t.Error("the headline is not the first section")
	}
}

// TestHeadlineErrorBars checks both error bars: a calibration's p99
// error beside the latencies, and a set of repeated runs as one row of
// means with their across-run intervals.
func TestHeadlineErrorBars(t *testing.T) {
	tmp := t.TempDir()
	var sums []*summary.Summary
	var dirs []string
	for i := range 3 {
		d := filepath.Join(tmp, "run-"+strconv.Itoa(i+1))
		sums = append(sums, synthRun{n: 100, rate: 50, ttft: 20 * time.Millisecond, itl: 5 * time.Millisecond, seed: uint64(10 + i)}.write(t, d))
		dirs = append(dirs, d)
	}
	across := summary.SummarizeRuns(sums, 0.95)
	page := string(build(t, Options{Repeated: []Repeated{{Label: "set", First: 0, Count: 3, Across: across}}}, dirs...))
	got := headlineValues(t, page)
	if v := got["time_to_first_token.p50"]; len(v) != 1 || v[0] != across.Metrics["time_to_first_token.p50"].Mean {
		t.Errorf("set row TTFT p50 %v, want the across-run mean %v (one row for the set)", v, across.Metrics["time_to_first_token.p50"].Mean)
	}
	if !strings.Contains(page, "set (mean of 3 runs)") || !strings.Contains(page, "95 % across runs") {
		t.Error("the set's row or its interval is missing")
	}

	// A calibrated run: ± its p99 error.
	d := filepath.Join(tmp, "cal")
	synthRun{n: 50, rate: 50, ttft: 20 * time.Millisecond, itl: 5 * time.Millisecond, seed: 3}.write(t, d)
	runs := loadRuns(t, d)
	runs[0].sum.Options.Calibration = &summary.Calibration{Errors: map[string]summary.ErrorBar{"time_to_first_token": {P99: 0.25}}}
	row := runRow(runs[0])
	var ttft tile
	for _, tl := range row.Tiles {
		if tl.Metric == "time_to_first_token.p50" {
			ttft = tl
		}
	}
	if !strings.HasPrefix(ttft.Err, "± 0.25 ms") {
		t.Errorf("calibrated TTFT p50 error bar %q, want ± 0.25 ms", ttft.Err)
	}
}
