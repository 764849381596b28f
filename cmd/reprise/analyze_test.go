package main

import (
	"bytes"
	"compress/gzip"
	"encoding/json"
	"flag"
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"testing"

	gocmp "github.com/google/go-cmp/cmp"
)

// The -update flag rewrites golden files. Another test file of this package
// may register it first; register it only if nobody did.
func init() {
	if flag.Lookup("update") == nil {
		flag.Bool("update", false, "rewrite golden files")
	}
}

func updating() bool {
	f := flag.Lookup("update")
	return f != nil && f.Value.String() == "true"
}

// golden compares got with testdata/<TestName>.golden, rewriting it under
// -update.
func golden(t *testing.T, got string) {
	t.Helper()
	path := filepath.Join("testdata", strings.ReplaceAll(t.Name(), "/", "_")+".golden")
	if updating() {
		if err := os.WriteFile(path, []byte(got), 0o644); err != nil {
			t.Fatal(err)
		}
		return
	}
	want, err := os.ReadFile(path)
	if err != nil {
		t.Fatalf("%v (run go test -run %s -update to create it)", err, t.Name())
	}
	if d := gocmp.Diff(string(want), got); d != "" {
		t.Errorf("output differs from %s (-want +got):\n%s", path, d)
	}
}

const sampleTrace = "testdata/mooncake200.jsonl"

func TestAnalyzeTraceText(t *testing.T) {
	code, out, errOut := runCLI(t, "", "analyze-trace", sampleTrace)
	if code != 0 {
		t.Fatalf("exit %d: %s", code, errOut)
	}
	golden(t, out)
}

func TestAnalyzeTraceJSON(t *testing.T) {
	code, out, errOut := runCLI(t, "", "analyze-trace", "--json", "--cache-sizes", "500K,3M", sampleTrace)
	if code != 0 {
		t.Fatalf("exit %d: %s", code, errOut)
	}
	golden(t, out)

	// The fields docs/format/analyze-json.md promises.
	var doc map[string]any
	if err := json.Unmarshal([]byte(out), &doc); err != nil {
		t.Fatal(err)
	}
	if doc["schema"] != "reprise.analyze/v1" || doc["rows"] != 200.0 || doc["span_seconds"] == nil {
		t.Errorf("schema/rows/span_seconds = %v/%v/%v", doc["schema"], doc["rows"], doc["span_seconds"])
	}
	for _, k := range []string{"isl", "osl"} {
		m, _ := doc[k].(map[string]any)
		for _, f := range []string{"mean", "p50", "p90", "p99", "max"} {
			if _, ok := m[f]; !ok {
				t.Errorf("%s.%s missing", k, f)
			}
		}
	}
	c, _ := doc["cache"].(map[string]any)
	for _, f := range []string{"token_hit_ratio", "block_hit_ratio"} {
		if _, ok := c[f].(float64); !ok {
			t.Errorf("cache.%s missing", f)
		}
	}
	lru, _ := c["lru"].([]any)
	if len(lru) != 2 {
		t.Fatalf("cache.lru has %d points, want 2", len(lru))
	}
	p0, _ := lru[0].(map[string]any)
	if p0["capacity_tokens"] != 500000.0 || p0["token_hit_ratio"] == nil || p0["fraction_of_ceiling"] == nil {
		t.Errorf("cache.lru[0] = %v", p0)
	}
	if a, _ := doc["aiperf"].(map[string]any); a["total_requests"] != 200.0 || a["cache_hit_rate"] == nil {
		t.Errorf("aiperf = %v", a)
	}
}

func TestAnalyzeTraceOutputFileAndStdin(t *testing.T) {
	want, err := os.ReadFile(sampleTrace)
	if err != nil {
		t.Fatal(err)
	}
	path := filepath.Join(t.TempDir(), "out.json")
	code, out, errOut := runCLI(t, "", "analyze-trace", "--json", "-o", path, sampleTrace)
	if code != 0 || out != "" {
		t.Fatalf("exit %d, stdout %q, stderr %s", code, out, errOut)
	}
	fromFile, err := os.ReadFile(path)
	if err != nil {
		t.Fatal(err)
	}
	code, fromStdin, errOut := runCLI(t, string(want), "analyze-trace", "--json", "-")
	if code != 0 {
		t.Fatalf("stdin: exit %d: %s", code, errOut)
	}
	// Same document except the path.
	a := strings.Replace(string(fromFile), `"path": "`+sampleTrace+`"`, `"path": "-"`, 1)
	if d := gocmp.Diff(a, fromStdin); d != "" {
		t.Errorf("stdin vs file (-file +stdin):\n%s", d)
	}
}

func TestAnalyzeTraceErrors(t *testing.T) {
	dir := t.TempDir()
	bad := filepath.Join(dir, "bad.jsonl")
	if err := os.WriteFile(bad, []byte(
		`{"timestamp": 0, "input_length": 600, "output_length": 5, "hash_ids": [1, 2]}`+"\n"+
			`{"timestamp": 5, "input_length": 2000, "output_length": 5, "hash_ids": [1, 2, 3]}`+"\n"), 0o644); err != nil {
		t.Fatal(err)
	}
	tests := []struct {
		name string
		args []string
		code int
		want []string // substrings of stderr
	}{
		{"bad row names file and line", []string{bad}, 2, []string{"bad.jsonl:2", "hash_ids", "--skip-invalid"}},
		{"missing file", []string{filepath.Join(dir, "nope.jsonl")}, 2, []string{"nope.jsonl", "no such file", "hint:"}},
		{"no trace", nil, 2, []string{"missing TRACE"}},
		// Every problem at once.
		{"bad flags", []string{"--cache-sizes", "3X,1M", "--format", "xml", "--block-size", "-1", bad}, 2,
			[]string{"--cache-sizes", `"3X"`, "--format", "--block-size"}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			code, out, errOut := runCLI(t, "", append([]string{"analyze-trace"}, tt.args...)...)
			if code != tt.code {
				t.Errorf("exit %d, want %d; stderr %s", code, tt.code, errOut)
			}
			if out != "" {
				t.Errorf("stdout %q, want nothing", out)
			}
			for _, w := range tt.want {
				if !strings.Contains(errOut, w) {
					t.Errorf("stderr %q lacks %q", errOut, w)
				}
			}
		})
	}

	// --skip-invalid counts the row instead.
	code, out, errOut := runCLI(t, "", "analyze-trace", "--skip-invalid", bad)
	if code != 0 || !strings.Contains(out, "1 kept (dropped: 1 invalid)") {
		t.Errorf("--skip-invalid: exit %d, stderr %s, stdout:\n%s", code, errOut, out)
	}
}

// TestAnalyzeTraceEveryFormat runs the command on the trace package's small
// example of every format: it must succeed, and have a cache section exactly
// when the format has hash ids.
func TestAnalyzeTraceEveryFormat(t *testing.T) {
	tests := []struct {
		file  string
		cache bool
	}{
		{"mooncake40.jsonl", true},
		{"mooncake40.jsonl.zst", true},
		{"mooncake_ext.jsonl", true},
		{"bailian.jsonl", true},
		{"burstgpt_v1.csv", false},
		{"burstgpt_v3.csv", false},
		{"azure2023_crlf.csv", false},
		{"azure2024.csv", false},
		{"azure2025.csv", false},
		{"vidur_bom.csv", false},
		{"aiperf_single.jsonl", false},
		{"aiperf_multi.jsonl", false},
	}
	for _, tt := range tests {
		t.Run(tt.file, func(t *testing.T) {
			path := filepath.Join("..", "..", "trace", "testdata", tt.file)
			if _, err := os.Stat(path); err != nil {
				t.Fatal(err)
			}
			code, out, errOut := runCLI(t, "", "analyze-trace", "--json", path)
			if code != 0 {
				t.Fatalf("exit %d: %s", code, errOut)
			}
			var doc struct {
				Rows  int64           `json:"rows"`
				Cache json.RawMessage `json:"cache"`
			}
			if err := json.Unmarshal([]byte(out), &doc); err != nil {
				t.Fatal(err)
			}
			if doc.Rows == 0 {
				t.Error("no rows")
			}
			if got := doc.Cache != nil; got != tt.cache {
				t.Errorf("cache section present = %v, want %v", got, tt.cache)
			}
			if code, _, errOut := runCLI(t, "", "analyze-trace", path); code != 0 {
				t.Errorf("text: exit %d: %s", code, errOut)
			}
		})
	}
}

func TestAnalyzeTraceHelp(t *testing.T) {
	code, out, _ := runCLI(t, "", "analyze-trace", "--help")
	if code != 0 {
		t.Fatalf("exit %d", code)
	}
	for _, w := range []string{"--cache-sizes", "--block-size", "--skip-invalid", "--json", "--output", "TRACE", "REPRISE_CACHE_SIZES"} {
		if !strings.Contains(out, w) {
			t.Errorf("help lacks %q:\n%s", w, out)
		}
	}
}

// TestAnalyzeTraceUnsorted: an unsorted trace is sorted stably for the
// time-order sections (and says so), or rejected with --strict.
func TestAnalyzeTraceUnsorted(t *testing.T) {
	path := filepath.Join(t.TempDir(), "unsorted.jsonl")
	if err := os.WriteFile(path, []byte(
		`{"timestamp": 2000, "input_length": 600, "output_length": 5, "hash_ids": [1, 2]}`+"\n"+
			`{"timestamp": 0, "input_length": 100, "output_length": 5, "hash_ids": [3]}`+"\n"+
			`{"timestamp": 1000, "input_length": 600, "output_length": 5, "hash_ids": [1, 2]}`+"\n"), 0o644); err != nil {
		t.Fatal(err)
	}
	code, out, errOut := runCLI(t, "", "analyze-trace", "--json", path)
	if code != 0 {
		t.Fatalf("exit %d: %s", code, errOut)
	}
	var doc struct {
		Source struct {
			Sorted bool `json:"sorted"`
		} `json:"source"`
		Span  float64 `json:"span_seconds"`
		Cache struct {
			ReuseTime struct {
				Count int64   `json:"count"`
				Min   float64 `json:"min"`
			} `json:"reuse_time"`
		} `json:"cache"`
	}
	if err := json.Unmarshal([]byte(out), &doc); err != nil {
		t.Fatal(err)
	}
	// In time order blocks 1 and 2 are reused 1 s after the row at 1 s; in
	// file order the reuse would go back in time (−1 s).
	if !doc.Source.Sorted || doc.Span != 2 || doc.Cache.ReuseTime.Count != 2 || doc.Cache.ReuseTime.Min != 1 {
		t.Errorf("sorted %v, span %v s, reuse time %+v; want true, 2 s, two reuses of 1 s", doc.Source.Sorted, doc.Span, doc.Cache.ReuseTime)
	}
	code, _, errOut = runCLI(t, "", "analyze-trace", "--strict", path)
	if code != 2 || !strings.Contains(errOut, "unsorted.jsonl:2") {
		t.Errorf("--strict: exit %d, stderr %s", code, errOut)
	}
}

// A problem with the trace file gets a hint naming the command's own flags:
// analyze-trace --format, replay --trace-format (its --format is the record
// format), synthesize --from-format (and no --skip-invalid).
func TestTraceErrorHints(t *testing.T) {
	dir := t.TempDir()
	write := func(name, text string) string {
		p := filepath.Join(dir, name)
		if err := os.WriteFile(p, []byte(text), 0o644); err != nil {
			t.Fatal(err)
		}
		return p
	}
	unknown := write("unknown.csv", "a,b\n1,2\n")
	badRow := write("bad.jsonl", `{"timestamp": 0, "input_length": 10, "output_length": 5}`+"\n"+`{"timestamp": -5, "input_length": 10, "output_length": 5}`+"\n")
	lfs := write("lfs.jsonl", "version https://git-lfs.github.com/spec/v1\noid sha256:3d74\nsize 1320\n")
	missing := filepath.Join(dir, "missing.jsonl")
	noCol := write("nocol.csv", "Timestamp,Model,Request tokens\n1,ChatGPT,3\n")
	var gz bytes.Buffer // a gzip stream cut short after its first rows
	zw := gzip.NewWriter(&gz)
	for i := range 2000 {
		fmt.Fprintf(zw, `{"timestamp": %d, "input_length": 10, "output_length": 5, "hash_ids": [%d]}`+"\n", i, i)
	}
	zw.Close()
	cut := write("cut.jsonl.gz", gz.String()[:gz.Len()/2])
	tests := []struct {
		name string
		args []string
		hint string
	}{
		// A header without a column the format needs: --skip-invalid cannot help.
		{"analyze header", []string{"analyze-trace", "--format", "burstgpt", noCol},
			"give the header the columns the error names (any order and case), or, if the file is in another format, name it with --format\n"},
		{"analyze header detected", []string{"analyze-trace", "--skip-invalid", noCol}, "name the format with --format"},
		{"replay header", []string{"replay", "-m", "m", "--trace-format", "azure", noCol}, "name it with --trace-format\n"},
		{"synthesize header", []string{"synthesize", "--from", noCol, "--from-format", "burstgpt"}, "name it with --from-format\n"},
		{"synthesize lengths header", []string{"synthesize", "--rate", "1", "--requests", "5", "--isl-from", write("nocol2.csv", "arrived_at\n1\n")},
			"hint: give the header the columns the error names (any order and case)\n"},
		{"analyze unknown", []string{"analyze-trace", unknown}, "name the format with --format"},
		{"replay unknown", []string{"replay", "-m", "m", unknown}, "name the format with --trace-format"},
		{"synthesize unknown", []string{"synthesize", "--from", unknown}, "name the format with --from-format"},
		{"analyze row", []string{"analyze-trace", badRow}, "fix the row, or pass --skip-invalid"},
		{"replay row", []string{"replay", "-m", "m", badRow}, "fix the row, or pass --skip-invalid"},
		{"synthesize row", []string{"synthesize", "--from", badRow}, "hint: fix the row\n"},
		{"replay lfs", []string{"replay", "-m", "m", lfs}, "git lfs pull"},
		{"replay missing", []string{"replay", "-m", "m", missing}, "check the path"},
		// Not about a row: fixing or skipping rows cannot help.
		{"analyze cut gzip", []string{"analyze-trace", cut}, "hint: the file could not be read to its end"},
		{"replay cut gzip", []string{"replay", "-m", "m", cut}, "hint: the file could not be read to its end"},
		{"analyze model filter", []string{"analyze-trace", "--model-filter", "ChatGPT", badRow}, "drop the filter"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			code, _, errOut := runCLI(t, "", tt.args...)
			if code != 2 || !strings.Contains(errOut, tt.hint) {
				t.Errorf("exit %d, stderr %q; want 2 and %q", code, errOut, tt.hint)
			}
			if strings.Contains(errOut, "pass --format") {
				t.Errorf("stderr %q names a flag the command may not have", errOut)
			}
			if !strings.Contains(tt.name, "row") && strings.Contains(errOut, "--skip-invalid") {
				t.Errorf("stderr %q suggests --skip-invalid for a problem that is not a row's", errOut)
			}
		})
	}
}

// An empty trace (0 bytes or blank lines) is a usage error with its own
// message and hint from every command that reads one, whether its format
// is detected or named: with a named format it used to be a report of 0
// rows (analyze-trace, exit 0) or "no rows to replay".
func TestEmptyTrace(t *testing.T) {
	dir := t.TempDir()
	empty := filepath.Join(dir, "empty.jsonl")
	blank := filepath.Join(dir, "blank.csv")
	if err := os.WriteFile(empty, nil, 0o644); err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(blank, []byte("\n \n\t\n"), 0o644); err != nil {
		t.Fatal(err)
	}
	const fileHint = "hint: check the path, and that the file was written or downloaded in full\n"
	const stdinHint = "hint: nothing came on standard input: check the command that feeds the pipe\n"
	tests := []struct {
		name  string
		stdin string
		args  []string
		want  string // stderr, up to the hint
	}{
		{"analyze", "", []string{"analyze-trace", empty}, empty + ": the trace is empty: 0 bytes, so no rows"},
		{"analyze format", "", []string{"analyze-trace", "--format", "mooncake", empty}, empty + ": the trace is empty: 0 bytes"},
		{"analyze csv format", "", []string{"analyze-trace", "--format", "burstgpt", blank}, blank + ": the trace is empty: 3 blank lines"},
		{"analyze stdin", "\n", []string{"analyze-trace", "--format", "bailian", "-"}, "-: the trace is empty: 1 blank line on standard input"},
		{"replay", "", []string{"replay", "-m", "m", "--url", "http://127.0.0.1:9", empty}, empty + ": the trace is empty"},
		{"replay format", "", []string{"replay", "-m", "m", "--url", "http://127.0.0.1:9", "--trace-format", "mooncake", empty}, empty + ": the trace is empty"},
		{"replay stdin", "", []string{"replay", "-m", "m", "--url", "http://127.0.0.1:9", "--trace-format", "mooncake", "-"}, "-: the trace is empty: 0 bytes on standard input"},
		{"synthesize", "", []string{"synthesize", "--from", blank}, blank + ": the trace is empty"},
		{"synthesize format", "", []string{"synthesize", "--from", empty, "--from-format", "mooncake"}, empty + ": the trace is empty"},
		{"synthesize lengths", "", []string{"synthesize", "--rate", "1", "--requests", "5", "--isl-from", empty}, empty + ": the trace is empty"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			code, out, errOut := runCLI(t, tt.stdin, tt.args...)
			hint := fileHint
			if tt.stdin != "" || tt.args[len(tt.args)-1] == "-" {
				hint = stdinHint
			}
			if code != 2 || !strings.HasPrefix(errOut, "reprise: "+tt.want) || !strings.HasSuffix(errOut, hint) {
				t.Errorf("exit %d, stderr %q; want 2, %q … %q", code, errOut, tt.want, hint)
			}
			if out != "" {
				t.Errorf("stdout %q, want nothing", out)
			}
		})
	}
}

// The report never overwrites the trace it describes, even when -o comes
// from REPRISE_OUTPUT, set for another command.
func TestAnalyzeTraceOutputIsNotTheTrace(t *testing.T) {
	data, err := os.ReadFile(sampleTrace)
	if err != nil {
		t.Fatal(err)
	}
	p := filepath.Join(t.TempDir(), "trace.jsonl")
	if err := os.WriteFile(p, data, 0o644); err != nil {
		t.Fatal(err)
	}
	t.Setenv("REPRISE_OUTPUT", p)
	code, _, errOut := runCLI(t, "", "analyze-trace", p)
	if code != 2 || !strings.Contains(errOut, "is the trace itself") {
		t.Errorf("exit %d, stderr %q; want 2 and an explanation", code, errOut)
	}
	if got, _ := os.ReadFile(p); string(got) != string(data) {
		t.Error("the trace was overwritten")
	}
}

// analyze-trace's --format is the trace format, so it reads
// REPRISE_TRACE_FORMAT (as replay's --trace-format does), never replay's
// record format REPRISE_FORMAT.
func TestAnalyzeTraceFormatEnv(t *testing.T) {
	t.Setenv("REPRISE_FORMAT", "jsonl")
	if code, _, errOut := runCLI(t, "", "analyze-trace", sampleTrace); code != 0 {
		t.Errorf("REPRISE_FORMAT=jsonl: exit %d: %s", code, errOut)
	}
	t.Setenv("REPRISE_TRACE_FORMAT", "bailian")
	if code, _, _ := runCLI(t, "", "analyze-trace", sampleTrace); code != 2 {
		t.Errorf("REPRISE_TRACE_FORMAT=bailian on a Mooncake trace: exit %d, want 2", code)
	}
}
