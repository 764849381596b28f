package main

import (
	"encoding/json"
	"os"
	"path/filepath"
	"strings"
	"testing"
)

// TestProfileSliceDuration: --slice-duration puts one summary per slice
// of send time in summary.json and AIPerf's time-slice files, and each
// slice's request count and output tokens are those of the mock server's
// oracle log for the requests sent in that slice (joined by X-Request-Id).
func TestProfileSliceDuration(t *testing.T) {
	srv := startMockServer(t, nil)
	out := filepath.Join(t.TempDir(), "run")
	code, _, stderr := runCLI(t, "", "profile", "-m", "reprise-mock", "--url", srv.URL(), "--streaming", "--isl", "16", "--osl", "8",
		"--osl-stddev", "3", "--request-rate", "40", "--arrival-pattern", "constant", "--request-count", "16", "--warmup-request-count", "2",
		"--slice-duration", "0.1", "--artifact-dir", out, "--format", "jsonl", "--quiet")
	if code != 0 {
		t.Fatalf("exit %d: %s", code, stderr)
	}
	b, err := os.ReadFile(filepath.Join(out, "summary.json"))
	if err != nil {
		t.Fatal(err)
	}
	type stat struct {
		Avg float64 `json:"avg"`
	}
	var sum struct {
		Slices []struct {
			Index   int   `json:"slice_index"`
			StartNS int64 `json:"start_ns"`
			EndNS   int64 `json:"end_ns"`
			Metrics struct {
				Count stat `json:"request_count"`
				OSL   stat `json:"total_osl"`
				TTFT  *struct {
					P50 float64 `json:"p50"`
				} `json:"time_to_first_token"`
			} `json:"metrics"`
		} `json:"time_slices"`
	}
	if err := json.Unmarshal(b, &sum); err != nil {
		t.Fatal(err)
	}
	if len(sum.Slices) < 2 {
		t.Fatalf("%d time slices, want several (16 requests over 0.4 s in slices of 0.1 s)", len(sum.Slices))
	}
	oracle := map[string]int{}
	for _, l := range srv.Log() {
		oracle[l.ClientRequestID] = l.OutputTokens
	}
	// Nanosecond times do not fit a float64: decode them as numbers.
	rb, err := os.ReadFile(filepath.Join(out, "records.jsonl"))
	if err != nil {
		t.Fatal(err)
	}
	var recs []map[string]any
	for _, line := range strings.Split(strings.TrimSpace(string(rb)), "\n") {
		d := json.NewDecoder(strings.NewReader(line))
		d.UseNumber()
		var m map[string]any
		if err := d.Decode(&m); err != nil {
			t.Fatal(err)
		}
		recs = append(recs, m)
	}
	total := 0
	for _, sl := range sum.Slices {
		if sl.EndNS-sl.StartNS != 100_000_000 {
			t.Errorf("slice %d is %d ns wide, want 0.1 s", sl.Index, sl.EndNS-sl.StartNS)
		}
		n, osl := 0, 0
		for _, r := range recs {
			sent, _ := r["sent_ns"].(json.Number).Int64()
			if r["phase"] != "profile" || sent < sl.StartNS || sent >= sl.EndNS {
				continue
			}
			n++
			id := r["request_id"].(json.Number).String()
			tok, ok := oracle[id]
			if !ok {
				t.Fatalf("request %s is not in the oracle log", id)
			}
			osl += tok
		}
		if int(sl.Metrics.Count.Avg) != n || int(sl.Metrics.OSL.Avg) != osl {
			t.Errorf("slice %d: %v requests and %v output tokens, the oracle log says %d and %d", sl.Index, sl.Metrics.Count.Avg, sl.Metrics.OSL.Avg, n, osl)
		}
		if sl.Metrics.TTFT == nil || sl.Metrics.TTFT.P50 <= 0 {
			t.Errorf("slice %d has no TTFT", sl.Index)
		}
		total += n
	}
	if total != 16 {
		t.Errorf("the slices hold %d requests, want the 16 measured (warmup left out)", total)
	}
	js, err := os.ReadFile(filepath.Join(out, "profile_export_aiperf_timeslices.json"))
	if err != nil || strings.Count(string(js), `"timeslice_index"`) != len(sum.Slices) {
		t.Errorf("AIPerf's time-slice JSON: %v, %d slices", err, strings.Count(string(js), `"timeslice_index"`))
	}
	csv, err := os.ReadFile(filepath.Join(out, "profile_export_aiperf_timeslices.csv"))
	if err != nil || !strings.HasPrefix(string(csv), "Timeslice,Start NS,End NS,Metric,Unit,Stat,Value\n") || !strings.Contains(string(csv), ",time_to_first_token,ms,p99,") {
		t.Errorf("AIPerf's time-slice CSV: %v\n%.300s", err, csv)
	}
	// The report draws the slices.
	html := filepath.Join(t.TempDir(), "report.html")
	if code, _, stderr := runCLI(t, "", "report", "-o", html, out); code != 0 {
		t.Fatalf("report: exit %d: %s", code, stderr)
	}
	if b, err := os.ReadFile(html); err != nil || !strings.Contains(string(b), "slices-ttft") || !strings.Contains(string(b), "slices-throughput") {
		t.Errorf("the report has no time-slice charts (%v)", err)
	}
	if code, _, stderr := runCLI(t, "", "profile", "-m", "m", "--slice-duration", "0"); code != 2 || !strings.Contains(stderr, "--slice-duration 0: want seconds > 0") {
		t.Errorf("--slice-duration 0: exit %d: %s", code, stderr)
	}
}
