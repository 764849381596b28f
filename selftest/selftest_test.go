package selftest

import (
	"slices"
	"strings"
	"testing"

	"github.com/reprise-bench/reprise/engine/summary"
	"github.com/reprise-bench/reprise/selftest/calibration"
	"github.com/reprise-bench/reprise/selftest/hostinfo"
)

// TestLevels: the steps double from the first setting and end at the
// largest asked, whatever the ratio.
func TestLevels(t *testing.T) {
	for _, c := range []struct {
		cfg  func(*Config)
		want []float64
	}{
		{func(c *Config) {}, []float64{8, 16, 32, 64, 128, 256, 512}},
		{func(c *Config) { c.Streams, c.FirstStreams = 100, 8 }, []float64{8, 16, 32, 64, 100}},
		{func(c *Config) { c.Streams, c.FirstStreams = 4, 8 }, []float64{4}},
		{func(c *Config) { c.Rate = 320 }, []float64{10, 20, 40, 80, 160, 320}},
		{func(c *Config) { c.Trace, c.Speedup = "t.jsonl", 4 }, []float64{0.5, 1, 2, 4}},
	} {
		cfg := NewConfig()
		c.cfg(&cfg)
		if got := cfg.levels(); !slices.Equal(got, c.want) {
			t.Errorf("%+v: levels %v, want %v", cfg, got, c.want)
		}
	}
}

// TestDiagnose: the limit is read from the first step over the bound, in
// the order CPU, timer, loopback, other processes.
func TestDiagnose(t *testing.T) {
	over := calibration.Step{Level: 64, Requests: 128, ClientCores: 0.3, ServerCores: 0.2, SysShare: 0.2, ReadLagP99MS: 4}
	for _, c := range []struct {
		name string
		mut  func(*calibration.File)
		want string
	}{
		{"cpu", func(f *calibration.File) { f.Steps[1].ClientCores, f.Steps[1].ServerCores = 1, 0.7 }, "cpu"},
		{"timer", func(f *calibration.File) { f.Timer.P50MS = 0.5 }, "timer"},
		{"timer late only at p99 is other processes", func(f *calibration.File) { f.Timer.P99MS = 5 }, "scheduling"},
		{"loopback", func(f *calibration.File) { f.Steps[1].SysShare = 0.7 }, "loopback"},
		{"other processes", func(f *calibration.File) {}, "scheduling"},
		{"failures", func(f *calibration.File) { f.Steps[1].Problems = 20 }, "errors"},
		{"none", func(f *calibration.File) { f.Steps[1].Within = true }, "none"},
	} {
		f := &calibration.File{Host: hostinfo.Host{CPUs: 2}, MaxErrorMS: 1,
			Steps: []calibration.Step{{Level: 32, Within: true}, over}}
		c.mut(f)
		cfg := NewConfig()
		if got := diagnose(f, &cfg); got.Kind != c.want || got.Detail == "" || len(got.Advice) == 0 {
			t.Errorf("%s: %+v, want kind %s with detail and advice", c.name, got, c.want)
		}
	}
}

// TestVerdict: the verdict names the safe load in the user's terms, or
// says that even the first step was over the bound, and what the
// co-located case showed.
func TestVerdict(t *testing.T) {
	bars := map[string]summary.ErrorBar{calibration.TTFT: {P50: 0, P99: 0.4}, calibration.ITL: {P99: 0.05}, calibration.E2E: {P99: 0.3}}
	f := &calibration.File{MaxErrorMS: 1, Settings: calibration.Settings{Kind: "streams"},
		Steps:     []calibration.Step{{Level: 8, Errors: bars, Within: true}, {Level: 16, Errors: bars}},
		SafeLevel: 8, SafeLoad: &summary.Load{Streams: 7.6, EventsPerSec: 700, RequestsPerSec: 11}, SafeErrors: bars,
		Limit: calibration.Limit{Kind: "cpu", Detail: "CPU: busy", Advice: []string{"use --nice -20"}},
		CoLocated: &calibration.CoLocated{NiceHow: "client at nice -20",
			Default: calibration.Step{Errors: map[string]summary.ErrorBar{calibration.TTFT: {P99: 7}}},
			Niced:   calibration.Step{Errors: map[string]summary.ErrorBar{calibration.TTFT: {P99: 0.2}}, Within: true}}}
	got := Verdict(f)
	for _, want := range []string{"within ±1 ms (p99)\nup to 8 concurrent streams: 7.6 requests in flight on average, 700 tokens/s, 11.0 requests/s",
		"What limits it: CPU: busy.\n  - use --nice -20", "the TTFT error grows to 7.000 ms at p99; with the client at nice -20 it is 0.200 ms"} {
		if !strings.Contains(got, want) {
			t.Errorf("verdict lacks %q:\n%s", want, got)
		}
	}
	f.SafeLoad, f.SafeErrors, f.SafeLevel = nil, nil, 0
	if got := Verdict(f); !strings.Contains(got, "cannot time responses to within ±1 ms even at the smallest load tried (8 concurrent streams)") {
		t.Errorf("no safe load:\n%s", got)
	}
}

// TestTraceStepTakesLengthsFromTrace: a --trace step replays the trace's
// lengths; the synthetic input length would make the replay refuse it
// (README's `reprise selftest --trace prod.jsonl --speedup 4`).
func TestTraceStepTakesLengthsFromTrace(t *testing.T) {
	c := NewConfig()
	c.Trace = "prod.jsonl"
	o := c.options("http://127.0.0.1:1", t.TempDir(), 1)
	if o.Trace.Path != c.Trace || o.Synthetic.ISL != 0 || o.Synthetic.OSL != float64(c.OSL) {
		t.Errorf("trace %q, synthetic %+v; want the trace, no ISL and OSL %d for rows without one", o.Trace.Path, o.Synthetic, c.OSL)
	}
}
