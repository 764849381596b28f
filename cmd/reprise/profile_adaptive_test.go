package main

import (
	"encoding/json"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/reprise-bench/reprise/internal/adaptive"
)

// TestProfileAdaptiveScale: `reprise profile --adaptive-scale` runs the
// controller (an SLA every window meets: it climbs to the ceiling, which
// AIPerf reports as incomplete) and writes both artifacts into the
// artifact directory.
func TestProfileAdaptiveScale(t *testing.T) {
	srv := startMockServer(t, nil)
	dir := t.TempDir()
	code, _, stderr := runCLI(t, "", "profile", "-m", "reprise-mock", "--url", srv.URL(), "--artifact-dir", dir, "--ui-type", "none",
		"--isl", "16", "--osl", "4", "--concurrency", "2", "--benchmark-duration", "10", "--benchmark-grace-period", "1",
		"--adaptive-scale", "--adaptive-scale-control", "concurrency:1,2:int", "--adaptive-assessment-period", "1",
		"--adaptive-sustain-duration", "1", "--adaptive-scale-sla", "request_latency:p95:le:60000", "--adaptive-scale-sla", "error_rate:avg:le:0.01")
	if code != 0 {
		t.Fatalf("exit %d:\n%s", code, stderr)
	}
	b, err := os.ReadFile(filepath.Join(dir, adaptive.SummaryFile))
	if err != nil {
		t.Fatal(err)
	}
	var s adaptive.Summary
	if err := json.Unmarshal(b, &s); err != nil {
		t.Fatal(err)
	}
	if s.Status != adaptive.StatusIncomplete || s.Reason != "max_control_value_reached_without_saturation" || s.Boundary != 2 || len(s.SLAs) != 2 {
		t.Errorf("summary %+v", s.Outcome)
	}
	if ev, err := os.ReadFile(filepath.Join(dir, adaptive.EventsFile)); err != nil || strings.Count(string(ev), "\n") != len(s.Windows) {
		t.Errorf("%s: %d lines (%v), summary %d windows", adaptive.EventsFile, strings.Count(string(ev), "\n"), err, len(s.Windows))
	}
}

// TestProfileAdaptiveErrors: bad adaptive-scale input is a usage error
// naming the flag.
func TestProfileAdaptiveErrors(t *testing.T) {
	base := []string{"--adaptive-scale", "--concurrency", "8", "--benchmark-duration", "60"}
	for _, tt := range []struct {
		args []string
		want string
	}{
		{append(base[:len(base):len(base)], "--adaptive-scale-sla", "request_latency:p95:le:100"), "--adaptive-sustain-duration"},
		{append(base[:len(base):len(base)], "--adaptive-sustain-duration", "10"), "--adaptive-scale-sla"},
		{append(base[:len(base):len(base)], "--adaptive-sustain-duration", "10", "--adaptive-scale-sla", "request_latency:p95:100"), "--adaptive-scale-sla \"request_latency:p95:100\": want METRIC:STAT:OP:THRESHOLD"},
		{append(base[:len(base):len(base)], "--adaptive-sustain-duration", "10", "--adaptive-scale-sla", "latency:p95:le:100"), "latency"},
		{append(base[:len(base):len(base)], "--adaptive-sustain-duration", "10", "--adaptive-scale-sla", "request_latency:p95:le:100", "--adaptive-assessment-period", "0.5"), "--adaptive-assessment-period 0.5"},
		{append(base[:len(base):len(base)], "--adaptive-sustain-duration", "10", "--adaptive-scale-sla", "request_latency:p95:le:100", "--adaptive-scale-control", "request_rate:1,8:float"), "only concurrency"},
		{[]string{"--adaptive-sustain-duration", "10"}, "--adaptive-sustain-duration needs --adaptive-scale"},
		{[]string{"--adaptive-scale", "--concurrency", "8", "--adaptive-sustain-duration", "10", "--adaptive-scale-sla", "request_latency:p95:le:100"}, "--adaptive-scale needs --benchmark-duration"},
	} {
		args := append([]string{"profile", "-m", "reprise-mock", "--url", "http://127.0.0.1:1", "--artifact-dir", t.TempDir()}, tt.args...)
		code, _, stderr := runCLI(t, "", args...)
		if code != 2 || !strings.Contains(stderr, tt.want) {
			t.Errorf("%v: exit %d, want 2 with %q:\n%s", tt.args, code, tt.want, stderr)
		}
	}
}
