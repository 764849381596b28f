package dashboard

import (
	"flag"
	"math"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"charm.land/lipgloss/v2"
	"github.com/charmbracelet/x/ansi"
	"github.com/google/go-cmp/cmp"
)

var update = flag.Bool("update", false, "rewrite the golden files under testdata/")

// fixedSnapshot is a run 42 s in: a Mooncake replay against vLLM with a
// few errors, a scrape and sparklines.
func fixedSnapshot() Snapshot {
	ms := func(x float64) time.Duration { return time.Duration(x * 1e6) }
	q := func(n int64, p50, p90, p99 float64) Quantiles {
		return Quantiles{N: n, P50: ms(p50), P90: ms(p90), P99: ms(p99)}
	}
	pts := func(f func(i int) float64) []float64 {
		out := make([]float64, 42)
		for i := range out {
			out[i] = f(i)
		}
		return out
	}
	return Snapshot{
		Title: "traces/mooncake-sample.jsonl → http://10.0.0.7:8000 · fixed", State: Running,
		Elapsed: 42 * time.Second, ETA: 18 * time.Second, Planned: 300,
		Sent: 212, Done: 205, InFlight: 7, Failed: 4,
		Errors:   []KindCount{{"http_status", 3}, {"timeout", 1}},
		Window:   10 * time.Second,
		Intended: Rate{Window: 5.1, Run: 5.0}, Achieved: Rate{Window: 5.0, Run: 5.0}, OutputTokens: Rate{Window: 1234.5, Run: 1187},
		Metrics: []Metric{
			{"TTFT", q(48, 183.2, 412.9, 913.4), q(201, 175.5, 398.1, 1204)},
			{"TTFO", q(48, 183.2, 412.9, 913.4), q(201, 175.5, 398.1, 1204)},
			{"ITL", q(48, 12.31, 14.02, 19.9), q(201, 12.1, 13.95, 21.3)},
			{"latency", q(48, 2310, 4120, 7800), q(201, 2250, 4011, 8120)},
			{"lateness", q(50, 0.012, 0.041, 0.38), q(205, 0.011, 0.04, 0.52)},
			{"read lag", q(48, 0.08, 0.15, 0.61), q(201, 0.08, 0.14, 0.7)},
		},
		Server:  &Server{Target: "http://10.0.0.7:8000/metrics", KVUsage: 0.421, Running: 7, Waiting: 2, Age: 800 * time.Millisecond, Up: true},
		Quality: Quality{Verdict: "good"},
		Series: []Series{
			{"req/s", "/s", pts(func(i int) float64 { return 5 + math.Sin(float64(i)/3) })},
			{"TTFT p50", "ms", pts(func(i int) float64 { return 150 + 40*math.Cos(float64(i)/5) })},
			{"ITL p50", "ms", pts(func(i int) float64 { return 12 + float64(i%7)/10 })},
			{"in flight", "n", pts(func(i int) float64 { return float64(i % 9) })},
			{"tokens/s", "/s", pts(func(i int) float64 { return 1100 + 10*float64(i) })},
			{"KV cache", "%", pts(func(i int) float64 { return float64(i) })},
		},
	}
}

// golden compares got with testdata/<name>.golden (-update rewrites it).
func golden(t *testing.T, name, got string) {
	t.Helper()
	path := filepath.Join("testdata", name+".golden")
	if *update {
		if err := os.WriteFile(path, []byte(got), 0o644); err != nil {
			t.Fatal(err)
		}
	}
	want, err := os.ReadFile(path)
	if err != nil {
		t.Fatalf("%v (run go test -run %s -update to write it)", err, t.Name())
	}
	if d := cmp.Diff(string(want), got); d != "" {
		t.Errorf("%s differs (-want +got):\n%s", path, d)
	}
}

// checkFits fails when a rendered screen has more lines than height or a
// line wider than width cells.
func checkFits(t *testing.T, screen string, width, height int) {
	t.Helper()
	lines := strings.Split(screen, "\n")
	if len(lines) > height {
		t.Errorf("%d×%d: %d lines", width, height, len(lines))
	}
	for i, l := range lines {
		if w := ansi.StringWidth(l); w > width {
			t.Errorf("%d×%d: line %d is %d cells wide: %q", width, height, i+1, w, ansi.Strip(l))
		}
	}
}

// TestRender is the view at 80×24 (the smallest it is laid out for) and
// after resizes to a larger and to a smaller screen, as the user sees them
// (styles stripped).
func TestRender(t *testing.T) {
	s := fixedSnapshot()
	for _, tc := range []struct {
		name          string
		width, height int
	}{
		{"80x24", 80, 24},
		{"120x40", 120, 40}, // wider sparklines, same rows
		{"60x16", 60, 16},   // no p90 columns, no sparklines
	} {
		t.Run(tc.name, func(t *testing.T) {
			screen := Render(&s, tc.width, tc.height, false)
			checkFits(t, screen, tc.width, tc.height)
			golden(t, "TestRender_"+tc.name, ansi.Strip(screen)+"\n")
		})
	}
}

// TestRenderEveryRow checks that the 80×24 screen has every row the
// dashboard promises, with the snapshot's numbers.
func TestRenderEveryRow(t *testing.T) {
	s := fixedSnapshot()
	screen := ansi.Strip(Render(&s, 80, 24, false))
	for _, want := range []string{
		"[running]", "ETA 18s", "sent 212", "done 205", "in flight 7", "failed 4", "of 300",
		"http_status 3 · timeout 1", "intended 5.1", "achieved 5.0", "1234 tokens/s",
		"last 10s", "TTFT", "TTFO", "ITL", "latency", "lateness", "read lag", "183.2ms", "1.20s",
		"KV cache 42.1%", "running 7", "queued 2", "quality   good",
		"req/s", "TTFT p50", "tokens/s", "q stop sending",
	} {
		if !strings.Contains(screen, want) {
			t.Errorf("80×24 screen lacks %q:\n%s", want, screen)
		}
	}
}

// TestRenderFitsEverySize renders the snapshot at many sizes, paused and
// not, in every state: no screen overflows.
func TestRenderFitsEverySize(t *testing.T) {
	s := fixedSnapshot()
	for _, st := range []State{Running, Stopping, Aborting, Draining, Finished, Interrupted} {
		s.State = st
		for w := 1; w <= 140; w += 7 {
			for h := 1; h <= 45; h += 4 {
				checkFits(t, Render(&s, w, h, st == Stopping), w, h)
			}
		}
	}
	if got := Render(&s, 0, 24, false); got != "" {
		t.Errorf("width 0: %q", got)
	}
}

// TestRenderUnknown shows a snapshot before anything was measured: every
// unknown number is "–", no scrape, no planned count.
func TestRenderUnknown(t *testing.T) {
	s := Snapshot{ETA: -1, Planned: -1, Intended: Rate{-1, -1}, Achieved: Rate{-1, -1}, OutputTokens: Rate{-1, -1},
		Metrics: []Metric{{Name: "TTFT"}}}
	screen := ansi.Strip(Render(&s, 80, 24, true))
	for _, want := range []string{"[paused]", "ETA –", "intended –", "not scraped", "nothing measured yet", "p resume view"} {
		if !strings.Contains(screen, want) {
			t.Errorf("screen lacks %q:\n%s", want, screen)
		}
	}
	if strings.Contains(screen, "of -1") {
		t.Errorf("an unknown plan is shown:\n%s", screen)
	}
}

func TestFormatDuration(t *testing.T) {
	for _, tc := range []struct {
		d    time.Duration
		want string
	}{
		{999, "999ns"},
		{850 * time.Microsecond, "850µs"},
		{4254 * time.Microsecond, "4.25ms"}, // two decimals below 10 ms
		{123449 * time.Microsecond, "123.4ms"},
		{1234 * time.Millisecond, "1.23s"},
	} {
		if got := FormatDuration(tc.d); got != tc.want {
			t.Errorf("FormatDuration(%v) = %q, want %q", tc.d, got, tc.want)
		}
	}
}

func TestSparkline(t *testing.T) {
	for _, tc := range []struct {
		pts  []float64
		want string
	}{
		{nil, ""},
		{[]float64{0, 0}, "▁▁"},
		{[]float64{3, 3}, "▄▄"},
		{[]float64{0, 1, 2, 3, 4, 5, 6, 7}, "▁▂▃▄▅▆▇█"},
		{[]float64{10, 17, 13.5}, "▁█▅"}, // from the smallest to the largest
		{[]float64{1, math.NaN(), 2}, "▁ █"},
	} {
		if got := Sparkline(tc.pts); got != tc.want {
			t.Errorf("Sparkline(%v) = %q, want %q", tc.pts, got, tc.want)
		}
	}
}

// TestPaint: a paint styles a one-line text as lipgloss's Render does.
func TestPaint(t *testing.T) {
	for _, st := range []lipgloss.Style{lipgloss.NewStyle().Faint(true), lipgloss.NewStyle().Bold(true),
		lipgloss.NewStyle().Foreground(lipgloss.Red).Bold(true), lipgloss.NewStyle().Foreground(lipgloss.Cyan), lipgloss.NewStyle()} {
		for _, text := range []string{"x", "requests ", "183.2ms", "  (scraped 0.8s ago)", "▁▂▃█", "–"} {
			if got, want := newPaint(st).Render(text), st.Render(text); got != want {
				t.Errorf("paint %q, lipgloss %q", got, want)
			}
		}
	}
}
