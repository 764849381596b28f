package main

import (
	"bufio"
	"encoding/json"
	"math"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/reprise-bench/reprise/internal/exitcode"
	"github.com/reprise-bench/reprise/internal/mockserver"
)

// wireArgs is a small profile run against srv into out.
func wireArgs(srv *mockserver.Server, out string, extra ...string) []string {
	return append([]string{"profile", "-m", "reprise-mock", "--url", srv.URL(), "--isl", "16", "--osl", "4", "--streaming",
		"--request-count", "6", "--concurrency", "2", "--artifact-dir", out}, extra...)
}

// summaryJSON reads dir's summary.json.
func summaryJSON(t *testing.T, dir string) map[string]json.RawMessage {
	t.Helper()
	b, err := os.ReadFile(filepath.Join(dir, "summary.json"))
	if err != nil {
		t.Fatal(err)
	}
	var m map[string]json.RawMessage
	if err := json.Unmarshal(b, &m); err != nil {
		t.Fatal(err)
	}
	return m
}

type statsJSON struct {
	Avg, Min, Max, P1, P5, P10, P25, P50, P75, P90, P95, P99, Std float64
	Count                                                         int
}

func stats(t *testing.T, m map[string]json.RawMessage, tag string) statsJSON {
	t.Helper()
	var s statsJSON
	if err := json.Unmarshal(m[tag], &s); err != nil || s.Count == 0 {
		t.Fatalf("summary.json %s: %s (%v)", tag, m[tag], err)
	}
	return s
}

// checkAdjusted: every network_adjusted_* statistic is its source's less
// rtt (ms), clamped at 0; std and count are the source's.
func checkAdjusted(t *testing.T, m map[string]json.RawMessage, rtt float64) {
	t.Helper()
	for adj, src := range map[string]string{"network_adjusted_time_to_first_token": "time_to_first_token",
		"network_adjusted_time_to_first_output_token": "time_to_first_output_token",
		"network_adjusted_request_latency":            "request_latency"} {
		a, s := stats(t, m, adj), stats(t, m, src)
		raw := []float64{s.Avg, s.Min, s.Max, s.P1, s.P5, s.P10, s.P25, s.P50, s.P75, s.P90, s.P95, s.P99}
		got := []float64{a.Avg, a.Min, a.Max, a.P1, a.P5, a.P10, a.P25, a.P50, a.P75, a.P90, a.P95, a.P99}
		for i := range raw {
			if want := math.Max(raw[i]-rtt, 0); math.Abs(got[i]-want) > 1e-9 {
				t.Errorf("%s stat %d = %v, want %s's %v − %v = %v", adj, i, got[i], src, raw[i], rtt, want)
			}
		}
		if a.Std != s.Std || a.Count != s.Count {
			t.Errorf("%s std, count %v, %d; want %s's %v, %d", adj, a.Std, a.Count, src, s.Std, s.Count)
		}
	}
}

// TestProfileHTTPTraceAndNetworkMean: --transport http is taken,
// --show-trace-timing prints the HTTP timing table, --export-http-trace
// puts each request's trace_data in profile_export.jsonl (its phases
// adding up), and --network-latency-mean 2.5 subtracts exactly 2.5 ms
// from TTFT, TTFO and request latency.
func TestProfileHTTPTraceAndNetworkMean(t *testing.T) {
	srv := startMockServer(t, func(c *mockserver.Config) { c.TTFT = 20 * time.Millisecond })
	out := filepath.Join(t.TempDir(), "run")
	code, _, stderr := runCLI(t, "", wireArgs(srv, out, "--transport", "http", "--show-trace-timing", "--export-http-trace",
		"--network-latency-mean", "2.5")...)
	if code != 0 {
		t.Fatalf("exit %d: %s", code, stderr)
	}
	for _, want := range []string{"HTTP timing (ms)", "DNS lookup", "Receiving (headers → end)", "Requests on a reused connection",
		"Network-adjusted time to first token"} {
		if !strings.Contains(stderr, want) {
			t.Errorf("stderr lacks %q:\n%s", want, stderr)
		}
	}
	m := summaryJSON(t, out)
	if r := stats(t, m, "network_rtt"); r.Avg != 2.5 || r.Count != 1 {
		t.Errorf("network_rtt %+v, want 2.5 ms once", r)
	}
	checkAdjusted(t, m, 2.5)
	stats(t, m, "http_req_duration")
	f, err := os.Open(filepath.Join(out, "profile_export.jsonl"))
	if err != nil {
		t.Fatal(err)
	}
	defer f.Close()
	n := 0
	for sc := bufio.NewScanner(f); sc.Scan(); n++ {
		var rec struct {
			Trace *struct {
				Start    int64 `json:"request_send_start_ns"`
				Wrote    int64 `json:"request_send_end_ns"`
				Headers  int64 `json:"response_headers_received_ns"`
				End      int64 `json:"response_receive_end_ns"`
				Sending  int64 `json:"sending_ns"`
				Waiting  int64 `json:"waiting_ns"`
				Receive  int64 `json:"receiving_ns"`
				Duration int64 `json:"duration_ns"`
				Status   int32 `json:"response_status_code"`
			} `json:"trace_data"`
		}
		if err := json.Unmarshal(sc.Bytes(), &rec); err != nil {
			t.Fatal(err)
		}
		tr := rec.Trace
		if tr == nil || tr.Status != 200 || tr.Start == 0 || tr.End < tr.Headers || tr.Headers < tr.Wrote {
			t.Fatalf("record %d: trace_data %+v", n, tr)
		}
		if tr.Sending+tr.Waiting+tr.Receive != tr.Duration || tr.Duration != tr.End-tr.Start {
			t.Errorf("record %d: sending %d + waiting %d + receiving %d ≠ duration %d (end − start %d)", n, tr.Sending, tr.Waiting, tr.Receive, tr.Duration, tr.End-tr.Start)
		}
	}
	if n != 6 {
		t.Errorf("%d records in profile_export.jsonl, want 6", n)
	}
}

// TestProfileNetworkAutomatic: --network-latency-automatic measures TCP
// handshakes to the mock (at least 5, listed in run_info.network_rtt)
// and subtracts their mean.
func TestProfileNetworkAutomatic(t *testing.T) {
	srv := startMockServer(t, func(c *mockserver.Config) { c.TTFT = 20 * time.Millisecond })
	out := filepath.Join(t.TempDir(), "run")
	code, _, stderr := runCLI(t, "", wireArgs(srv, out, "--network-latency-automatic", "--network-latency-ping-interval", "0.05", "--quiet")...)
	if code != 0 {
		t.Fatalf("exit %d: %s", code, stderr)
	}
	m := summaryJSON(t, out)
	var info struct {
		RTT *struct {
			Source  string  `json:"source"`
			MeanNS  int64   `json:"mean_ns"`
			Samples []int64 `json:"samples_ns"`
		} `json:"network_rtt"`
	}
	if err := json.Unmarshal(m["run_info"], &info); err != nil || info.RTT == nil {
		t.Fatalf("run_info: %s (%v)", m["run_info"], err)
	}
	rtt := info.RTT
	if rtt.Source != "probe" || len(rtt.Samples) < 5 {
		t.Fatalf("network_rtt %+v, want at least 5 probes", rtt)
	}
	var sum float64
	for _, s := range rtt.Samples {
		if s <= 0 {
			t.Errorf("probe %d ns", s)
		}
		sum += float64(s)
	}
	if want := int64(sum/float64(len(rtt.Samples)) + 0.5); rtt.MeanNS != want {
		t.Errorf("mean_ns %d, want the samples' mean %d", rtt.MeanNS, want)
	}
	if r := stats(t, m, "network_rtt"); r.Count != len(rtt.Samples) {
		t.Errorf("network_rtt count %d, want %d samples", r.Count, len(rtt.Samples))
	}
	checkAdjusted(t, m, float64(rtt.MeanNS)/1e6)
}

// TestProfileWireRefusals: a transport other than HTTP, and both
// network latency flags at once, exit 2 with a sentence naming them.
func TestProfileWireRefusals(t *testing.T) {
	srv := startMockServer(t, nil)
	for _, tc := range []struct {
		args []string
		want string
	}{
		{[]string{"--transport", "grpc"}, `--transport "grpc": reprise speaks HTTP only`},
		{[]string{"--network-latency-automatic", "--network-latency-mean", "1"}, "--network-latency-automatic and --network-latency-mean are exclusive"},
		{[]string{"--connection-reuse-strategy", "sticky"}, `connection reuse strategy "sticky": want pooled, never, sticky-user-sessions`},
		{[]string{"--connection-reuse-strategy", "never", "--http2"}, "--connection-reuse-strategy never needs HTTP/1.1"},
	} {
		code, _, stderr := runCLI(t, "", wireArgs(srv, filepath.Join(t.TempDir(), "r"), tc.args...)...)
		if code != exitcode.Usage || !strings.Contains(stderr, tc.want) {
			t.Errorf("%v: exit %d, want 2 with %q:\n%s", tc.args, code, tc.want, stderr)
		}
	}
}
