package main

import (
	"bufio"
	"context"
	"encoding/json"
	"errors"
	"os"
	"path/filepath"
	"slices"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/google/go-cmp/cmp"

	"github.com/reprise-bench/reprise/arrowio"
	"github.com/reprise-bench/reprise/engine/summary"
	"github.com/reprise-bench/reprise/internal/mockserver"
	"github.com/reprise-bench/reprise/internal/prio"
	"github.com/reprise-bench/reprise/internal/runout"
	"github.com/reprise-bench/reprise/trace"
)

func startMockServer(t *testing.T, mut func(*mockserver.Config)) *mockserver.Server {
	t.Helper()
	cfg := mockserver.NewConfig()
	cfg.Addr = "127.0.0.1:0"
	cfg.TTFT = time.Millisecond
	cfg.ITL = 0
	if mut != nil {
		mut(cfg)
	}
	srv, err := mockserver.Start(context.Background(), cfg)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { srv.Close() })
	return srv
}

// readRecords reads records.jsonl of a run directory.
func readRecords(t *testing.T, dir string) []map[string]any {
	t.Helper()
	f, err := os.Open(filepath.Join(dir, "records.jsonl"))
	if err != nil {
		t.Fatal(err)
	}
	defer f.Close()
	var out []map[string]any
	sc := bufio.NewScanner(f)
	sc.Buffer(nil, 1<<20)
	for sc.Scan() {
		var m map[string]any
		if err := json.Unmarshal(sc.Bytes(), &m); err != nil {
			t.Fatal(err)
		}
		out = append(out, m)
	}
	return out
}

// TestReplayMooncakeISLFidelity replays the bundled Mooncake sample
// against the mock server with the builtin tokenizer: the server's
// prompt_tokens equals the trace's input_length for every request, and
// the client's count of the output text equals completion_tokens.
func TestReplayMooncakeISLFidelity(t *testing.T) {
	const tracePath = "../../traces/mooncake-sample.jsonl"
	rows, _, err := trace.ReadAll(tracePath, trace.Options{})
	if err != nil {
		t.Fatal(err)
	}
	srv := startMockServer(t, func(c *mockserver.Config) { c.MaxNumSeqs = 1024 })
	out := t.TempDir()
	args := []string{"replay", tracePath, "--url", srv.URL(), "--model", "reprise-mock",
		"--speedup", "1000", "--out", out, "--format", "jsonl", "--quiet", "--max-error-rate", "0", "--no-streaming"}
	if replayRowsUnderRace > 0 {
		args = append(args, "--request-count", strconv.Itoa(replayRowsUnderRace))
		rows = rows[:replayRowsUnderRace]
	}
	code, _, stderr := runCLI(t, "", args...)
	if code != 0 {
		t.Fatalf("exit %d: %s", code, stderr)
	}
	recs := readRecords(t, out)
	if len(recs) != len(rows) {
		t.Fatalf("%d records for %d rows", len(recs), len(rows))
	}
	byIndex := map[int64]int{}
	for _, r := range rows {
		byIndex[r.Index] = r.InputTokens
	}
	// The client can read a response's end just before the server logs it.
	if err := srv.WaitIdle(t.Context()); err != nil {
		t.Fatal(err)
	}
	logs := map[string]mockserver.RequestLog{}
	for _, l := range srv.Log() {
		logs[l.ClientRequestID] = l
	}
	for _, r := range recs {
		want := byIndex[int64(r["trace_row"].(float64))]
		id := strconv.FormatInt(int64(r["request_id"].(float64)), 10)
		l, ok := logs[id]
		if !ok {
			t.Fatalf("request %s missing from the server log", id)
		}
		if l.PromptTokens != want || int(r["input_tokens"].(float64)) != want || int(r["server_prompt_tokens"].(float64)) != want {
			t.Errorf("row %v: trace input_length %d, client %v, server record %v, server log %d",
				r["trace_row"], want, r["input_tokens"], r["server_prompt_tokens"], l.PromptTokens)
		}
		if r["error_kind"] != nil {
			t.Errorf("request %s failed: %v %v", id, r["error_kind"], r["error_message"])
		}
		if out, srv := r["output_tokens"].(float64)+r["reasoning_tokens"].(float64), r["server_completion_tokens"].(float64); out != srv || int(srv) != l.OutputTokens {
			t.Errorf("request %s: client counted %v output tokens, server reported %v, server log %d", id, out, srv, l.OutputTokens)
		}
	}
	var sum map[string]any
	b, err := os.ReadFile(filepath.Join(out, "summary.json"))
	if err != nil {
		t.Fatal(err)
	}
	if err := json.Unmarshal(b, &sum); err != nil {
		t.Fatal(err)
	}
	if got := sum["request_count"].(map[string]any)["avg"].(float64); int(got) != len(rows) {
		t.Errorf("summary request_count %v", got)
	}
	for _, k := range []string{"request_latency", "schedule_lateness", "latency_from_intended", "input_sequence_length"} {
		if st, ok := sum[k].(map[string]any); !ok || st["p99"] == nil {
			t.Errorf("summary.json lacks %s stats", k)
		}
	}
}

// TestReplayValidation: every problem of the command line is reported at
// once, with exit code 2, before anything is sent.
func TestReplayValidation(t *testing.T) {
	code, _, stderr := runCLI(t, "", "replay", "--url", "ftp://x", "--endpoint", "soap", "--extra-body", "{",
		"-H", "no colon", "--goodput", "nope:1", "--isl", "10", "--nice", "-21")
	if code != 2 {
		t.Fatalf("exit %d, want 2: %s", code, stderr)
	}
	for _, want := range []string{"--model is required", "--url", "--endpoint", "--extra-body", "--header", "--goodput", "--osl", "--nice: nice -21 is out of range"} {
		if !strings.Contains(stderr, want) {
			t.Errorf("stderr lacks %q:\n%s", want, stderr)
		}
	}
	// A trace with a row whose hash ids do not fit its length.
	dir := t.TempDir()
	p := filepath.Join(dir, "bad.jsonl")
	os.WriteFile(p, []byte(`{"timestamp":0,"input_length":10,"output_length":5,"hash_ids":[1,2,3]}`+"\n"), 0o644)
	code, _, stderr = runCLI(t, "", "replay", p, "--model", "m", "--url", "http://127.0.0.1:1", "--quiet")
	if code != 2 || !strings.Contains(stderr, "bad.jsonl:1") {
		t.Errorf("exit %d: %s", code, stderr)
	}
}

// TestReplayExitCodes: goodput verdicts exit 3 after the run wrote its
// files; a run in which nothing succeeded exits 1, whatever
// --max-error-rate allows (the error-rate verdict: verdict_test.go).
func TestReplayExitCodes(t *testing.T) {
	srv := startMockServer(t, nil)
	base := []string{"replay", "--url", srv.URL(), "--model", "reprise-mock", "--isl", "20", "--osl", "4",
		"--concurrency", "4", "--request-count", "20", "--quiet", "--format", "jsonl"}
	out := t.TempDir()
	code, _, stderr := runCLI(t, "", append(base, "--out", out, "-H", "X-Reprise-Fault: 500", "--max-error-rate", "0.5")...)
	if code != 1 || !strings.Contains(stderr, "no request succeeded") {
		t.Errorf("all failing, --max-error-rate 0.5: exit %d, want 1: %s", code, stderr)
	}
	if len(readRecords(t, out)) != 20 {
		t.Error("failed requests were not all recorded")
	}
	out = t.TempDir()
	code, _, stderr = runCLI(t, "", append(base, "--out", out, "-H", "X-Reprise-Fault: 500")...)
	if code != 1 || !strings.Contains(stderr, "no request succeeded (20 failed; e.g. http_status") {
		t.Errorf("all failing, no --max-error-rate: exit %d, want 1: %s", code, stderr)
	}
	if len(readRecords(t, out)) != 20 {
		t.Error("failed requests were not all recorded")
	}
	out = t.TempDir()
	code, _, stderr = runCLI(t, "", append(base, "--out", out, "--goodput", "ttft:0.0001")...)
	if code != 3 || !strings.Contains(stderr, "goodput") {
		t.Errorf("impossible SLO: exit %d, want 3: %s", code, stderr)
	}
	out = t.TempDir()
	code, _, stderr = runCLI(t, "", append(base, "--out", out, "--goodput", "e2e:60000", "--no-streaming")...)
	if code != 0 {
		t.Errorf("easy SLO, non-streaming: exit %d: %s", code, stderr)
	}
	code, _, stderr = runCLI(t, "", append(base, "--out", t.TempDir(), "--goodput", "ttft:100", "--no-streaming")...)
	if code != 2 || !strings.Contains(stderr, "only for streamed") {
		t.Errorf("TTFT SLO without streaming: exit %d, want 2: %s", code, stderr)
	}
}

// TestReplayNice: --nice sets the process's nice value before the run and
// the manifest records it. The test asks for the value the test process
// already has, which needs no privilege and leaves it as it was.
func TestReplayNice(t *testing.T) {
	have, err := prio.Nice()
	if err != nil {
		t.Skip(err)
	}
	srv := startMockServer(t, nil)
	out := t.TempDir()
	code, _, stderr := runCLI(t, "", "replay", "--url", srv.URL(), "--model", "reprise-mock", "--isl", "8", "--osl", "2",
		"--request-count", "2", "--concurrency", "1", "--quiet", "--format", "jsonl", "--out", out, "--nice", strconv.Itoa(have))
	if code != 0 {
		t.Fatalf("exit %d: %s", code, stderr)
	}
	var m struct{ Nice *int }
	b, err := os.ReadFile(filepath.Join(out, "manifest.json"))
	if err == nil {
		err = json.Unmarshal(b, &m)
	}
	if err != nil || m.Nice == nil || *m.Nice != have {
		t.Errorf("manifest nice = %v (%v), want %d", m.Nice, err, have)
	}
}

// TestReplayAllWarmup: a warmup that covers the whole trace measures
// nothing, and the run says so even with --quiet.
func TestReplayAllWarmup(t *testing.T) {
	srv := startMockServer(t, nil)
	tr := filepath.Join(t.TempDir(), "t.jsonl")
	row := `{"timestamp": 0, "input_length": 16, "output_length": 2, "hash_ids": [1]}` + "\n"
	if err := os.WriteFile(tr, []byte(strings.Repeat(row, 3)), 0o644); err != nil {
		t.Fatal(err)
	}
	code, _, stderr := runCLI(t, "", "replay", tr, "--url", srv.URL(), "--model", "reprise-mock", "--quiet",
		"--format", "jsonl", "--out", t.TempDir(), "--warmup-requests", "10")
	if code != 0 || !strings.Contains(stderr, "all 3 requests were warmup, so nothing was measured") {
		t.Errorf("exit %d, want 0 and the warmup note: %s", code, stderr)
	}
}

// TestReplayNoSecrets: the API key never reaches any file of the run.
func TestReplayNoSecrets(t *testing.T) {
	srv := startMockServer(t, nil)
	out := t.TempDir()
	const secret = "sk-very-secret-123"
	code, _, stderr := runCLI(t, "", "replay", "--url", srv.URL(), "--model", "reprise-mock", "--isl", "8", "--osl", "2",
		"--request-count", "3", "--concurrency", "1", "--out", out, "--api-key", secret, "-H", "X-Api-Key: "+secret, "--quiet")
	if code != 0 {
		t.Fatalf("exit %d: %s", code, stderr)
	}
	filepath.Walk(out, func(p string, fi os.FileInfo, err error) error {
		if err != nil || fi.IsDir() {
			return err
		}
		b, _ := os.ReadFile(p)
		if strings.Contains(string(b), secret) {
			t.Errorf("%s contains the API key", p)
		}
		return nil
	})
	if _, err := os.Stat(filepath.Join(out, "summary.json")); err != nil {
		t.Error(err)
	}
}

// reverseLines returns the lines of b in reverse order, so a sorted trace
// becomes one the reader must sort.
func reverseLines(b []byte) []byte {
	lines := strings.Split(strings.TrimRight(string(b), "\n"), "\n")
	slices.Reverse(lines)
	return []byte(strings.Join(lines, "\n") + "\n")
}

// TestReplayStdin: `reprise replay -` reads the trace from standard input
// once and replays exactly what the same bytes in a file replay: the same
// rows at the same intended offsets.
func TestReplayStdin(t *testing.T) {
	srv := startMockServer(t, func(c *mockserver.Config) { c.MaxNumSeqs = 1024 })
	b, err := os.ReadFile("../../traces/mooncake-sample.jsonl")
	if err != nil {
		t.Fatal(err)
	}
	// 30 rows, reversed: the reader must see the first bytes and sort.
	lines := strings.SplitAfter(string(b), "\n")[:30]
	data := reverseLines([]byte(strings.Join(lines, "")))
	file := filepath.Join(t.TempDir(), "trace.jsonl")
	if err := os.WriteFile(file, data, 0o644); err != nil {
		t.Fatal(err)
	}
	run := func(path, stdin string) map[int64]int64 {
		t.Helper()
		out := t.TempDir()
		code, _, stderr := runCLI(t, stdin, "replay", path, "--url", srv.URL(), "--model", "reprise-mock",
			"--speedup", "1000", "--out", out, "--format", "jsonl", "--quiet", "--max-error-rate", "0")
		if code != 0 {
			t.Fatalf("replay %s: exit %d: %s", path, code, stderr)
		}
		recs := readRecords(t, out)
		if len(recs) != 30 {
			t.Fatalf("replay %s: %d records, want 30", path, len(recs))
		}
		var t0 int64 = -1
		for _, r := range recs {
			if in := int64(r["intended_ns"].(float64)); t0 < 0 || in < t0 {
				t0 = in
			}
		}
		offsets := map[int64]int64{}
		for _, r := range recs {
			offsets[int64(r["trace_row"].(float64))] = int64(r["intended_ns"].(float64)) - t0
		}
		m, err := os.ReadFile(filepath.Join(out, "manifest.json"))
		if err != nil {
			t.Fatal(err)
		}
		if !strings.Contains(string(m), `"trace_format": "mooncake"`) {
			t.Errorf("replay %s: manifest lacks the detected format:\n%s", path, m)
		}
		return offsets
	}
	fromFile := run(file, "")
	fromStdin := run("-", string(data))
	// Intended times are the run's start plus the planned offset; the
	// start's sub-microsecond part differs between runs.
	near := cmp.Comparer(func(a, b int64) bool { return max(a-b, b-a) < 1000 })
	if diff := cmp.Diff(fromFile, fromStdin, near); diff != "" {
		t.Errorf("trace_row → intended offset (-file +stdin):\n%s", diff)
	}
}

// TestReplaySingleFileExportAIPerf: --single-file writes records.parquet
// (no parts), and --export aiperf writes the AIPerf files after the run,
// byte for byte what `reprise summarize --export aiperf` writes from the
// same directory. With --format jsonl, --export aiperf is a usage error.
func TestReplaySingleFileExportAIPerf(t *testing.T) {
	srv := startMockServer(t, nil)
	out := t.TempDir()
	code, _, stderr := runCLI(t, "", "replay", "--url", srv.URL(), "--model", "reprise-mock", "--isl", "16", "--osl", "4",
		"--concurrency", "2", "--request-count", "12", "--out", out, "--quiet", "--single-file", "--export", "aiperf")
	if code != 0 {
		t.Fatalf("exit %d: %s", code, stderr)
	}
	if _, err := os.Stat(filepath.Join(out, "records.parquet")); err != nil {
		t.Errorf("--single-file: %v", err)
	}
	if _, err := os.Stat(filepath.Join(out, "records")); !errors.Is(err, os.ErrNotExist) {
		t.Errorf("--single-file: records/ exists (%v)", err)
	}
	files := []string{arrowio.AIPerfRecordsFile, arrowio.AIPerfSummaryFile}
	fromRun := map[string]string{}
	for _, f := range files {
		b, err := os.ReadFile(filepath.Join(out, f))
		if err != nil {
			t.Fatalf("--export aiperf: %v", err)
		}
		fromRun[f] = string(b)
	}
	if n := strings.Count(fromRun[arrowio.AIPerfRecordsFile], "\n"); n != 12 {
		t.Errorf("%s: %d lines, want 12", arrowio.AIPerfRecordsFile, n)
	}
	if code, _, stderr := runCLI(t, "", "summarize", "--export", "aiperf", out); code != 0 {
		t.Fatalf("summarize exit %d: %s", code, stderr)
	}
	for _, f := range files {
		b, err := os.ReadFile(filepath.Join(out, f))
		if err != nil {
			t.Fatal(err)
		}
		if diff := cmp.Diff(string(b), fromRun[f]); diff != "" {
			t.Errorf("%s (-summarize +replay):\n%s", f, diff)
		}
	}

	// JSON Lines records are read back the same way.
	out = t.TempDir()
	code, _, stderr = runCLI(t, "", "replay", "--url", srv.URL(), "--model", "reprise-mock", "--isl", "16", "--osl", "4",
		"--concurrency", "1", "--request-count", "3", "--out", out, "--quiet", "--format", "jsonl", "--export", "aiperf")
	if code != 0 {
		t.Fatalf("jsonl + --export aiperf: exit %d: %s", code, stderr)
	}
	if b, err := os.ReadFile(filepath.Join(out, arrowio.AIPerfRecordsFile)); err != nil || strings.Count(string(b), "\n") != 3 {
		t.Errorf("jsonl + --export aiperf: %s has %d lines (%v), want 3", arrowio.AIPerfRecordsFile, strings.Count(string(b), "\n"), err)
	}
}

// TestReplayRecordWriter: a Parquet run puts the record writer's
// back-pressure counters in summary.json (a fact only the run knows),
// summarize carries them into the summary it recomputes, and a run whose
// writer had to wait says so.
func TestReplayRecordWriter(t *testing.T) {
	srv := startMockServer(t, nil)
	out := t.TempDir()
	code, _, stderr := runCLI(t, "", "replay", "--url", srv.URL(), "--model", "reprise-mock", "--isl", "16", "--osl", "4",
		"--concurrency", "2", "--request-count", "10", "--out", out, "--quiet")
	if code != 0 {
		t.Fatalf("exit %d: %s", code, stderr)
	}
	path := filepath.Join(out, "summary.json")
	b, err := os.ReadFile(path)
	if err != nil {
		t.Fatal(err)
	}
	var sum struct {
		RecordWriter *arrowio.WriterReport `json:"record_writer"`
	}
	if err := json.Unmarshal(b, &sum); err != nil {
		t.Fatal(err)
	}
	if w := sum.RecordWriter; w == nil || w.Dropped != 0 || w.Waits < 0 || w.WaitNS < 0 || w.Waits == 0 && w.WaitNS != 0 {
		t.Fatalf("summary.json record_writer = %+v, want counters with nothing dropped", w)
	}

	// A run whose writer waited: summarize copies the counters and prints
	// the note under its table.
	var m map[string]json.RawMessage
	if err := json.Unmarshal(b, &m); err != nil {
		t.Fatal(err)
	}
	m[arrowio.RecordWriterKey] = json.RawMessage(`{"waits":3,"wait_ns":1500000,"dropped":0,"max_queued_batches":64}`)
	if b, err = json.MarshalIndent(m, "", "  "); err != nil {
		t.Fatal(err)
	}
	b = append(b, '\n')
	if err := os.WriteFile(path, b, 0o644); err != nil {
		t.Fatal(err)
	}
	code, got, stderr := runCLI(t, "", "summarize", "--json", out)
	if code != 0 {
		t.Fatalf("summarize exit %d: %s", code, stderr)
	}
	if diff := cmp.Diff(string(b), got); diff != "" {
		t.Errorf("summarize --json (-run +summarize):\n%s", diff)
	}
	code, table, _ := runCLI(t, "", "summarize", out)
	if want := "the disk did not keep up: 3 waits totalling 1.5ms"; code != 0 || !strings.Contains(table, want) {
		t.Errorf("summarize table lacks %q:\n%s", want, table)
	}
	// JSON Lines goes through the same writer.
	out = t.TempDir()
	if code, _, stderr := runCLI(t, "", "replay", "--url", srv.URL(), "--model", "reprise-mock", "--isl", "16", "--osl", "4",
		"--concurrency", "1", "--request-count", "2", "--out", out, "--quiet", "--format", "jsonl"); code != 0 {
		t.Fatalf("jsonl: exit %d: %s", code, stderr)
	}
	if b, _ := os.ReadFile(filepath.Join(out, "summary.json")); !strings.Contains(string(b), arrowio.RecordWriterKey) {
		t.Errorf("jsonl run lacks %s", arrowio.RecordWriterKey)
	}
}

func TestRecordWriterNote(t *testing.T) {
	tests := []struct {
		w    *arrowio.WriterReport
		want string
	}{
		{nil, ""},
		{&arrowio.WriterReport{MaxQueuedBatches: 7}, ""}, // kept up
		{&arrowio.WriterReport{Waits: 2, WaitNS: 2_345_678, MaxQueuedBatches: 64},
			"note: the disk did not keep up: 2 waits totalling 2.346ms (up to 64 batches queued): senders waited for the record writer; " +
				"check schedule_lateness\n"},
		// A report from before the tables were counted apart.
		{&arrowio.WriterReport{Dropped: 40},
			"note: the disk did not keep up; 40 rows were dropped and are missing from the record files\n"},
		{&arrowio.WriterReport{Dropped: 405, DroppedRecords: 365, DroppedEvents: 40, Error: "records table: write x: no space left on device"},
			"note: the record writer failed (records table: write x: no space left on device): the run was stopped; " +
				"365 records and 40 events are missing from the record files\n"},
		{&arrowio.WriterReport{Dropped: 1, DroppedRecords: 1, Error: "e"},
			"note: the record writer failed (e): the run was stopped; 1 record is missing from the record files\n"},
	}
	for _, tt := range tests {
		if got := runout.WriterNote(tt.w); got != tt.want {
			t.Errorf("%+v: note\n%q, want\n%q", tt.w, got, tt.want)
		}
	}
}

// TestReplayAdapterSandbox: --adapter-sandbox reaches the Wasm host: a
// shipped adapter is trusted by default and interruptible with always
// (recorded in the manifest); both replay against the mock server.
func TestReplayAdapterSandbox(t *testing.T) {
	srv := startMockServer(t, nil)
	for _, tt := range []struct {
		sandbox       string
		interruptible bool
	}{
		{"", false}, // auto: shipped adapters are trusted
		{"always", true},
		{"never", false},
	} {
		t.Run("sandbox="+tt.sandbox, func(t *testing.T) {
			out := t.TempDir()
			args := []string{"replay", "--url", srv.URL(), "--model", "reprise-mock", "--endpoint", "openai-chat",
				"--isl", "16", "--osl", "4", "--concurrency", "2", "--request-count", "6", "--out", out, "--quiet",
				"--format", "jsonl", "--max-error-rate", "0"}
			if tt.sandbox != "" {
				args = append(args, "--adapter-sandbox", tt.sandbox)
			}
			code, _, stderr := runCLI(t, "", args...)
			if code != 0 {
				t.Fatalf("exit %d: %s", code, stderr)
			}
			b, err := os.ReadFile(filepath.Join(out, "manifest.json"))
			if err != nil {
				t.Fatal(err)
			}
			var m struct {
				Adapter struct {
					Source        string `json:"source"`
					Interruptible *bool  `json:"interruptible"`
				} `json:"adapter"`
			}
			if err := json.Unmarshal(b, &m); err != nil {
				t.Fatal(err)
			}
			if m.Adapter.Interruptible == nil || *m.Adapter.Interruptible != tt.interruptible {
				t.Errorf("manifest adapter %s: interruptible %v, want %v", m.Adapter.Source, m.Adapter.Interruptible, tt.interruptible)
			}
			if n := len(readRecords(t, out)); n != 6 {
				t.Errorf("%d records, want 6", n)
			}
		})
	}
	code, _, stderr := runCLI(t, "", "replay", "--url", srv.URL(), "--model", "m", "--endpoint", "openai-chat",
		"--isl", "16", "--osl", "4", "--concurrency", "1", "--adapter-sandbox", "sometimes")
	if code != 2 || !strings.Contains(stderr, "--adapter-sandbox") || !strings.Contains(stderr, "auto, always or never") {
		t.Errorf("bad --adapter-sandbox: exit %d: %s", code, stderr)
	}
}

// TestReadLagNote: the note appears only when a tenth of the requests read
// later than the median gap between tokens.
func TestReadLagNote(t *testing.T) {
	sum := func(lagP90, itlP50 float64) *summary.Summary {
		s := &summary.Summary{Metrics: map[string]*summary.Stats{}}
		if lagP90 >= 0 {
			s.Metrics["client_read_lag"] = &summary.Stats{P90: lagP90}
		}
		if itlP50 >= 0 {
			s.Metrics["inter_token_latency"] = &summary.Stats{P50: itlP50}
		}
		return s
	}
	for _, tt := range []struct {
		lag, itl float64
		note     bool
	}{
		{3.9, 2.0, true},
		{1.5, 2.0, false},
		{2.0, 2.0, false},
		{-1, 2.0, false}, // no kernel timestamps: no lag metric
		{3.9, -1, false}, // not streamed
		{3.9, 0, false},
	} {
		got := runout.ReadLagNote(sum(tt.lag, tt.itl))
		if (got != "") != tt.note {
			t.Errorf("lag p90 %v, ITL p50 %v: note %q", tt.lag, tt.itl, got)
		}
		if tt.note && !strings.Contains(got, "client read lag p90 3.90 ms") {
			t.Errorf("note %q lacks the numbers", got)
		}
	}
}
