package main

import (
	"bytes"
	"encoding/json"
	"errors"
	"io"
	"math"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/reprise-bench/reprise/trace"
	"github.com/reprise-bench/reprise/trace/synth"
)

// readRows reads a trace from bytes with the trace reader.
func readRows(t *testing.T, data string) []trace.Row {
	t.Helper()
	rd, err := trace.NewReader("out", strings.NewReader(data), trace.Options{})
	if err != nil {
		t.Fatal(err)
	}
	defer rd.Close()
	var rows []trace.Row
	var row trace.Row
	for {
		err := rd.Next(&row)
		if errors.Is(err, io.EOF) {
			return rows
		}
		if err != nil {
			t.Fatal(err)
		}
		rows = append(rows, row.Clone())
	}
}

// analyzeJSON runs `reprise analyze-trace --json` on a file.
func analyzeJSON(t *testing.T, path string, extra ...string) map[string]any {
	t.Helper()
	code, out, errOut := runCLI(t, "", append(append([]string{"analyze-trace", "--json"}, extra...), path)...)
	if code != 0 {
		t.Fatalf("analyze-trace: exit %d: %s", code, errOut)
	}
	var doc map[string]any
	if err := json.Unmarshal([]byte(out), &doc); err != nil {
		t.Fatal(err)
	}
	return doc
}

func cacheField(doc map[string]any, f string) float64 {
	c, _ := doc["cache"].(map[string]any)
	v, _ := c[f].(float64)
	return v
}

func TestSynthesizeGenerateToStdout(t *testing.T) {
	code, out, errOut := runCLI(t, "", "synthesize", "--rate", "4", "--sessions", "50", "--turns", "3", "--think-time", "2s",
		"--prefix-roots", "2", "--prefix-tokens", "1K", "--isl", "300", "-o", "-")
	if code != 0 {
		t.Fatalf("exit %d: %s", code, errOut)
	}
	rows := readRows(t, out)
	if len(rows) != 150 || rows[0].SessionID == "" || rows[0].BlockSize != 512 {
		t.Errorf("%d rows, first %+v", len(rows), rows[0])
	}
	for _, want := range []string{"synthesize: 150 rows (mooncake) to stdout", "mean rate", "infinite-cache token hit ratio", "generate: 50 sessions"} {
		if !strings.Contains(errOut, want) {
			t.Errorf("summary lacks %q:\n%s", want, errOut)
		}
	}
}

func TestSynthesizeDeriveFromStdin(t *testing.T) {
	in, err := os.ReadFile(sampleTrace)
	if err != nil {
		t.Fatal(err)
	}
	code, out, errOut := runCLI(t, string(in), "synthesize", "--from", "-", "--speedup", "2", "--quiet")
	if code != 0 || errOut != "" {
		t.Fatalf("exit %d, stderr %q", code, errOut)
	}
	orig, got := readRows(t, string(in)), readRows(t, out)
	if len(got) != len(orig) {
		t.Fatalf("%d rows, want %d", len(got), len(orig))
	}
	for i := range got {
		if got[i].Offset*2 != orig[i].Offset || got[i].InputTokens != orig[i].InputTokens {
			t.Fatalf("row %d: %v %d, want %v/2 %d", i, got[i].Offset, got[i].InputTokens, orig[i].Offset, orig[i].InputTokens)
		}
	}
}

// TestSynthesizeTargetsMeasuredByAnalyzeTrace runs the command and then
// analyze-trace on its output, as an operator would.
func TestSynthesizeTargetsMeasuredByAnalyzeTrace(t *testing.T) {
	dir := t.TempDir()
	hit := filepath.Join(dir, "hit.jsonl")
	code, _, errOut := runCLI(t, "", "synthesize", "--rate", "10", "--requests", "2000", "--prefix-roots", "20",
		"--prefix-depth", "2", "--prefix-fanout", "3", "--prefix-tokens", "2000,800", "--isl", "800", "--isl-stddev", "300",
		"--target-hit-ratio", "0.55", "-o", hit)
	if code != 0 {
		t.Fatalf("exit %d: %s", code, errOut)
	}
	if got := cacheField(analyzeJSON(t, hit, "--cache-sizes", ""), "token_hit_ratio"); math.Abs(got-0.55) > 0.02 {
		t.Errorf("analyze-trace: token hit ratio %.4f, target 0.55 ± 0.02", got)
	}

	ws := filepath.Join(dir, "ws.jsonl")
	code, _, errOut = runCLI(t, "", "synthesize", "--rate", "10", "--working-set", "4M", "--turns", "3", "--think-time", "20s",
		"--isl", "1500", "--output-format", "bailian", "-o", ws)
	if code != 0 {
		t.Fatalf("exit %d: %s", code, errOut)
	}
	doc := analyzeJSON(t, ws, "--cache-sizes", "")
	if got := cacheField(doc, "distinct_blocks") * cacheField(doc, "block_size"); math.Abs(got-4e6)/4e6 > 0.05 {
		t.Errorf("analyze-trace: working set %.0f tokens, target 4M ± 5 %%", got)
	}
}

func TestSynthesizeDeterministic(t *testing.T) {
	args := []string{"synthesize", "--rate", "3", "--duration", "2m", "--arrival", "gamma", "--smoothness", "0.3",
		"--turns", "2", "--turns-stddev", "1", "--think-time", "5s", "--isl-dist", "lognormal", "--isl", "700", "--isl-stddev", "500",
		"--seed", "7", "-q"}
	_, a, _ := runCLI(t, "", args...)
	_, b, _ := runCLI(t, "", args...)
	if a == "" || a != b {
		t.Fatalf("two runs with seed 7 differ (or are empty: %d bytes)", len(a))
	}
	_, c, _ := runCLI(t, "", append(args[:len(args)-3], "--seed", "8", "-q")...)
	if c == a {
		t.Error("seeds 7 and 8 gave the same trace")
	}
}

func TestSynthesizeFileAndLengthsFrom(t *testing.T) {
	path := filepath.Join(t.TempDir(), "out.jsonl")
	code, out, errOut := runCLI(t, "", "synthesize", "--rate", "5", "--requests", "40", "--isl-from", sampleTrace,
		"--osl-from", sampleTrace, "-o", path)
	if code != 0 || out != "" {
		t.Fatalf("exit %d, stdout %q: %s", code, out, errOut)
	}
	data, err := os.ReadFile(path)
	if err != nil {
		t.Fatal(err)
	}
	if fi, err := os.Stat(path); err != nil || fi.Mode().Perm()&0o044 == 0 {
		t.Errorf("output file mode %v, %v: want it readable by others like any file we create", fi.Mode(), err)
	}
	pairs := map[[2]int]bool{}
	for _, r := range readRows(t, mustReadString(t, sampleTrace)) {
		pairs[[2]int{r.InputTokens, r.OutputTokens}] = true
	}
	for _, r := range readRows(t, string(data)) {
		if !pairs[[2]int{r.InputTokens, r.OutputTokens}] {
			t.Fatalf("(%d, %d) is not a pair of %s", r.InputTokens, r.OutputTokens, sampleTrace)
		}
	}
	if m, _ := filepath.Glob(filepath.Join(filepath.Dir(path), ".*tmp*")); len(m) > 0 {
		t.Errorf("temporary files left: %v", m)
	}
}

func mustReadString(t *testing.T, path string) string {
	t.Helper()
	b, err := os.ReadFile(path)
	if err != nil {
		t.Fatal(err)
	}
	return string(b)
}

// TestSynthesizeRejects: invalid values and combinations exit 2 with every
// problem named, and nothing is written.
func TestSynthesizeRejects(t *testing.T) {
	tests := []struct {
		name string
		args []string
		want []string
	}{
		{"derive flags without --from", []string{"--rate", "1", "--requests", "5", "--speedup", "2", "--window", "1:2"},
			[]string{"--speedup transforms a trace", "--window transforms a trace"}},
		{"generate flags with --from", []string{"--from", sampleTrace, "--rate", "3", "--turns", "2"},
			[]string{"--rate describes a generated trace", "--turns describes a generated trace"}},
		{"bad derive values", []string{"--from", sampleTrace, "--speedup", "0", "--sample", "2", "--window", "5m:1m", "--prefix-root-multiplier", "0"},
			[]string{"--speedup 0", "--sample 2", "--window: window", "--prefix-root-multiplier 0"}},
		{"no count, no rate", []string{"--isl", "0"}, []string{"give one of --requests", "--rate 0", "--isl: mean 0"}},
		{"two counts", []string{"--rate", "1", "--requests", "5", "--duration", "1m"}, []string{"exclusive"}},
		{"bad lists and sizes", []string{"--rate", "1", "--working-set", "lots", "--prefix-roots", "2", "--prefix-fanout", "x", "--prefix-tokens", "0"},
			[]string{"--working-set: token count", "--prefix-fanout", "--prefix-tokens"}},
		{"lengths twice", []string{"--rate", "1", "--requests", "5", "--isl-from", sampleTrace, "--isl", "100"},
			[]string{"drop --isl"}},
		{"formats", []string{"--rate", "1", "--requests", "5", "--output-format", "csv", "--arrival", "bursty", "--isl-dist", "zipf"},
			[]string{`--output-format "csv"`, "--arrival", "--isl-dist"}},
		{"unreachable target", []string{"--rate", "1", "--sessions", "20", "--turns", "8", "--target-hit-ratio", "0.1"},
			[]string{"below"}},
		{"positional argument", []string{"trace.jsonl"}, []string{"unexpected arguments"}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			path := filepath.Join(t.TempDir(), "out.jsonl")
			code, out, errOut := runCLI(t, "", append(append([]string{"synthesize"}, tt.args...), "-o", path)...)
			if code != 2 {
				t.Fatalf("exit %d, want 2; stderr %s", code, errOut)
			}
			for _, w := range tt.want {
				if !strings.Contains(errOut, w) {
					t.Errorf("stderr lacks %q:\n%s", w, errOut)
				}
			}
			if out != "" {
				t.Errorf("stdout %q", out)
			}
			if _, err := os.Stat(path); err == nil {
				t.Error("the output file was written")
			}
		})
	}
	code, _, errOut := runCLI(t, "", "synthesize", "--from", "no/such/trace.jsonl")
	if code != 2 || !strings.Contains(errOut, "no/such/trace.jsonl") {
		t.Errorf("missing trace: exit %d, %s", code, errOut)
	}
}

// TestSynthesizeEnvVars: synthesize reads REPRISE_SYNTH_<FLAG>, and not
// replay's REPRISE_<FLAG> (a shared REPRISE_SPEEDUP would apply twice in
// `synthesize | replay -`).
func TestSynthesizeEnvVars(t *testing.T) {
	t.Setenv("REPRISE_SYNTH_RATE", "2")
	t.Setenv("REPRISE_SYNTH_REQUESTS", "7")
	t.Setenv("REPRISE_REQUESTS", "3")
	t.Setenv("REPRISE_SEED", "7")
	code, out, errOut := runCLI(t, "", "synthesize", "-q")
	rows := readRows(t, out)
	if code != 0 || len(rows) != 7 {
		t.Fatalf("exit %d, %d rows, want 7: %s", code, len(rows), errOut)
	}
	code, seeded, errOut := runCLI(t, "", "synthesize", "-q", "--seed", "42")
	if code != 0 || seeded != out {
		t.Errorf("replay's REPRISE_SEED changed synthesize's output (exit %d): %s", code, errOut)
	}
}

// TestSynthesizeAgentic generates agentic tasks of fan-out 4 and depth 3
// with tool and think times and shared system prompts; analyze-trace's
// dependencies section on the file measures the asked shape.
func TestSynthesizeAgentic(t *testing.T) {
	path := filepath.Join(t.TempDir(), "agentic.jsonl")
	code, _, errOut := runCLI(t, "", "synthesize", "--tasks", "6", "--rate", "5", "--fan-out", "4", "--depth", "3",
		"--tool-time", "5ms", "--think-time", "2ms", "--system-prompts", "2", "--system-prompt-tokens", "1024", "--isl", "300", "-o", path)
	if code != 0 {
		t.Fatalf("exit %d: %s", code, errOut)
	}
	if !strings.Contains(errOut, "agentic: 6 tasks, depth 3–3, fan-out mean 4.00") {
		t.Errorf("summary: %s", errOut)
	}
	deps, _ := analyzeJSON(t, path)["dependencies"].(map[string]any)
	stat := func(k, f string) float64 {
		m, _ := deps[k].(map[string]any)
		v, _ := m[f].(float64)
		return v
	}
	if deps["tasks"] != 6.0 || stat("depth", "min") != 3 || stat("depth", "max") != 3 || stat("fan_out", "min") != 4 || stat("fan_out", "max") != 4 ||
		stat("tool_time_seconds", "mean") != 0.005 || stat("think_time_seconds", "mean") != 0.002 {
		t.Errorf("analyze-trace dependencies: %v", deps)
	}
	if r, _ := deps["ancestor_token_hit_ratio"].(float64); r < 0.5 {
		t.Errorf("ancestor token hit ratio %v; children extend their parents' prompts", r)
	}
	for _, args := range [][]string{
		{"--rate", "5", "--sessions", "3", "--fan-out", "2"},
		{"--tasks", "2", "--rate", "5", "--turns", "3"},
		{"--tasks", "2", "--rate", "5", "--output-format", "bailian"},
	} {
		if code, _, _ := runCLI(t, "", append([]string{"synthesize", "-o", path}, args...)...); code != 2 {
			t.Errorf("%v: exit %d, want 2", args, code)
		}
	}
}

// TestSynthesizeDeriveStreams: a derive with settings that stream, on a
// file in arrival order, is streamed row by row, says so, and writes the
// bytes of the in-memory derive (synth.Derive on trace.ReadAll's rows); an
// option that needs the whole trace reads it whole and says why.
func TestSynthesizeDeriveStreams(t *testing.T) {
	dir := t.TempDir()
	out := filepath.Join(dir, "out.jsonl")
	code, _, errOut := runCLI(t, "", "synthesize", "--from", sampleTrace, "--speedup", "3", "--max-osl", "40",
		"--window", "1s:", "-o", out)
	if code != 0 {
		t.Fatalf("exit %d: %s", code, errOut)
	}
	if !strings.Contains(errOut, "streamed row by row") {
		t.Errorf("summary does not say the derive streamed:\n%s", errOut)
	}
	rows, _, err := trace.ReadAll(sampleTrace, trace.Options{DropFailed: true})
	if err != nil {
		t.Fatal(err)
	}
	c := synth.NewDeriveConfig()
	c.Speedup, c.MaxOSL, c.Window = 3, 40, synth.Window{Start: time.Second}
	res, err := synth.Derive(rows, c)
	if err != nil {
		t.Fatal(err)
	}
	var want bytes.Buffer
	if err := synth.Write(&want, res); err != nil {
		t.Fatal(err)
	}
	got, err := os.ReadFile(out)
	if err != nil {
		t.Fatal(err)
	}
	if len(res.Rows) == 0 || !bytes.Equal(got, want.Bytes()) {
		t.Errorf("streamed output (%d bytes) is not the in-memory derive's (%d bytes, %d rows)", len(got), want.Len(), len(res.Rows))
	}

	code, _, errOut = runCLI(t, "", "synthesize", "--from", sampleTrace, "--sample", "0.5", "-o", out)
	if code != 0 || !strings.Contains(errOut, "read whole into memory: --sample") {
		t.Errorf("--sample: exit %d, summary:\n%s", code, errOut)
	}
}
