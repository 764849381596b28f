package main

import (
	"bufio"
	"bytes"
	"context"
	"encoding/json"
	"fmt"
	"io"
	"net/http"
	"net/http/httptest"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/apache/arrow/go/v17/arrow"
	"github.com/apache/arrow/go/v17/arrow/array"
	"github.com/apache/arrow/go/v17/arrow/memory"
	"github.com/apache/arrow/go/v17/parquet/pqarrow"

	"github.com/reprise-bench/reprise/internal/accuracy"
	"github.com/reprise-bench/reprise/internal/mockserver"
)

// accData is the generated MMLU-format test data (internal/accuracy's
// TestTestdata makes it).
const accData = "../../testdata/accuracy"

// accuracyMock starts a mock server that knows the answers of the MMLU
// test data: right with probability p, underLoad ("P@N") past N in flight.
func accuracyMock(t *testing.T, p float64, underLoad string, mut func(*mockserver.Config)) *mockserver.Server {
	t.Helper()
	acc, err := mockserver.NewAccuracy(context.Background(), accuracy.LoadOptions{Benchmark: "mmlu", Data: accData + "/mmlu"}, p, underLoad)
	if err != nil {
		t.Fatal(err)
	}
	return startMockServer(t, func(c *mockserver.Config) {
		c.Accuracy = acc
		c.KeepLog = true
		if mut != nil {
			mut(c)
		}
	})
}

type accSummary struct {
	Overall  accStat        `json:"overall"`
	Tasks    []accStat      `json:"tasks"`
	Settings map[string]any `json:"settings"`
}

type accStat struct {
	Task     string  `json:"task"`
	Graded   int     `json:"graded"`
	Correct  int     `json:"correct"`
	Accuracy float64 `json:"accuracy"`
	Low      float64 `json:"ci_low"`
	High     float64 `json:"ci_high"`
}

func readAccuracy(t *testing.T, dir string) accSummary {
	t.Helper()
	b, err := os.ReadFile(filepath.Join(dir, "summary.json"))
	if err != nil {
		t.Fatal(err)
	}
	var s struct {
		Accuracy *accSummary `json:"accuracy"`
	}
	if err := json.Unmarshal(b, &s); err != nil {
		t.Fatal(err)
	}
	if s.Accuracy == nil {
		t.Fatalf("%s/summary.json has no accuracy", dir)
	}
	return *s.Accuracy
}

// TestProfileAccuracyMMLU runs the seed's recipe (aiperf → reprise)
// against a mock that answers right with probability 0.8: the summary
// reports the accuracy per task with a Wilson interval that holds 0.8,
// the text summary shows it, every record carries its grade, and the
// requests were sent with temperature 0 and without ignore_eos.
func TestProfileAccuracyMMLU(t *testing.T) {
	srv := accuracyMock(t, 0.8, "", nil)
	out := filepath.Join(t.TempDir(), "run")
	code, _, stderr := runCLI(t, "", "profile", "-m", "reprise-mock", "--url", srv.URL(), "--endpoint-type", "chat",
		"--accuracy-benchmark", "mmlu", "--accuracy-n-shots", "5", "--accuracy-grader", "multiple_choice",
		"--accuracy-data", accData+"/mmlu", "--concurrency", "4", "--artifact-dir", out, "--format", "jsonl")
	if code != 0 {
		t.Fatalf("exit %d: %s", code, stderr)
	}
	s := readAccuracy(t, out)
	if s.Overall.Graded != 100 || !(s.Overall.Low <= 0.8 && 0.8 <= s.Overall.High) || len(s.Tasks) != 2 {
		t.Errorf("accuracy %+v: want 100 graded with 0.8 inside the interval, 2 tasks", s.Overall)
	}
	if s.Settings["n_shots"] != 5.0 || s.Settings["temperature"] != 0.0 {
		t.Errorf("settings %v", s.Settings)
	}
	if !strings.Contains(stderr, "Accuracy ") || !strings.Contains(stderr, "elementary_addition") {
		t.Errorf("the summary table lacks the accuracy:\n%s", stderr)
	}
	// The records agree with the oracle: a request graded right is one
	// the mock answered right.
	right := map[string]bool{}
	for _, l := range srv.Log() {
		if l.AccuracyItem == "" {
			t.Fatalf("request %d was not recognized as a graded item", l.Seq)
		}
		right[l.AccuracyItem] = l.AccuracyRight
	}
	recs := readRecords(t, out)
	if len(recs) != 100 {
		t.Fatalf("%d records", len(recs))
	}
	for _, r := range recs {
		item, _ := r["accuracy_item"].(string)
		c, ok := r["accuracy_correct"].(bool)
		if !ok || item == "" || r["accuracy_expected"] == nil {
			t.Fatalf("record without its grade: %v", r)
		}
		if c != right[item] {
			t.Errorf("%s: graded %v, the mock answered right: %v (answer %v, expected %v)", item, c, right[item], r["accuracy_answer"], r["accuracy_expected"])
		}
	}
	in, err := os.ReadFile(filepath.Join(out, "inputs.json"))
	if err != nil {
		t.Fatal(err)
	}
	if !bytes.Contains(in, []byte(`"temperature": 0`)) || !bytes.Contains(in, []byte(`"ignore_eos": false`)) {
		t.Errorf("inputs.json: no temperature 0 / ignore_eos false:\n%.600s", in)
	}
}

// mmluParquet writes rows of the MMLU JSON Lines test data as cais/mmlu's
// Parquet (question, subject, choices, answer).
func mmluParquet(t *testing.T, jsonlPath string) string {
	t.Helper()
	f, err := os.Open(jsonlPath)
	if err != nil {
		t.Fatal(err)
	}
	defer f.Close()
	schema := arrow.NewSchema([]arrow.Field{{Name: "question", Type: arrow.BinaryTypes.String}, {Name: "subject", Type: arrow.BinaryTypes.String},
		{Name: "choices", Type: arrow.ListOf(arrow.BinaryTypes.String)}, {Name: "answer", Type: arrow.PrimitiveTypes.Int64}}, nil)
	b := array.NewRecordBuilder(memory.DefaultAllocator, schema)
	defer b.Release()
	sc := bufio.NewScanner(f)
	for sc.Scan() {
		var r struct {
			Question, Subject string
			Choices           []string
			Answer            int64
		}
		if err := json.Unmarshal(sc.Bytes(), &r); err != nil {
			t.Fatal(err)
		}
		b.Field(0).(*array.StringBuilder).Append(r.Question)
		b.Field(1).(*array.StringBuilder).Append(r.Subject)
		lb := b.Field(2).(*array.ListBuilder)
		lb.Append(true)
		for _, c := range r.Choices {
			lb.ValueBuilder().(*array.StringBuilder).Append(c)
		}
		b.Field(3).(*array.Int64Builder).Append(r.Answer)
	}
	rec := b.NewRecord()
	defer rec.Release()
	tbl := array.NewTableFromRecords(schema, []arrow.Record{rec})
	defer tbl.Release()
	var buf bytes.Buffer
	if err := pqarrow.WriteTable(tbl, &buf, 1024, nil, pqarrow.DefaultWriterProps()); err != nil {
		t.Fatal(err)
	}
	return buf.String()
}

// TestProfileAccuracyFromHub: without --accuracy-data the benchmark is
// downloaded from HF_ENDPOINT (cais/mmlu's Parquet files) into the
// Hugging Face cache, and graded as the local copy is; a second run asks
// the Hub nothing.
func TestProfileAccuracyFromHub(t *testing.T) {
	hub, cache := fakeHubEnv(t)
	hub.AddFile("datasets/cais/mmlu", "all/test-00000-of-00001.parquet", mmluParquet(t, accData+"/mmlu/all/test-00000-of-00001.jsonl"))
	hub.AddFile("datasets/cais/mmlu", "all/dev-00000-of-00001.parquet", mmluParquet(t, accData+"/mmlu/all/dev-00000-of-00001.jsonl"))
	srv := accuracyMock(t, 0.8, "", nil)
	out := filepath.Join(t.TempDir(), "run")
	args := []string{"profile", "-m", "reprise-mock", "--url", srv.URL(), "--endpoint-type", "chat",
		"--accuracy-benchmark", "mmlu", "--accuracy-n-shots", "5", "--accuracy-grader", "multiple_choice", "--concurrency", "4", "--format", "jsonl"}
	code, _, stderr := runCLI(t, "", append(args, "--artifact-dir", out)...)
	if code != 0 {
		t.Fatalf("exit %d: %s", code, stderr)
	}
	s := readAccuracy(t, out)
	if s.Overall.Graded != 100 || !(s.Overall.Low <= 0.8 && 0.8 <= s.Overall.High) || s.Settings["hub_repo"] != "cais/mmlu" {
		t.Errorf("accuracy %+v, settings %v", s.Overall, s.Settings)
	}
	if _, err := os.Stat(filepath.Join(cache, "datasets--cais--mmlu", "refs", "main")); err != nil {
		t.Errorf("not cached: %v", err)
	}
	// The same grades as from the local copy (the mock is deterministic).
	local := filepath.Join(t.TempDir(), "run")
	if code, _, stderr := runCLI(t, "", append(args, "--artifact-dir", local, "--accuracy-data", accData+"/mmlu", "--quiet")...); code != 0 {
		t.Fatalf("local: exit %d: %s", code, stderr)
	}
	if l := readAccuracy(t, local); l.Overall.Correct != s.Overall.Correct {
		t.Errorf("hub %d right, local %d", s.Overall.Correct, l.Overall.Correct)
	}
	hub.Requests()
	again := filepath.Join(t.TempDir(), "run")
	if code, _, stderr := runCLI(t, "", append(args, "--artifact-dir", again, "--quiet")...); code != 0 {
		t.Fatalf("second run: exit %d: %s", code, stderr)
	}
	for _, r := range hub.Requests() {
		if strings.Contains(r, "mmlu") {
			t.Errorf("the second run asked the Hub %q", r)
		}
	}
}

// TestAccuracyUnderLoadSweep: a mock that answers right with probability
// 0.9 up to 4 requests in flight and 0.3 past that; a sweep over
// concurrency 1 and 12 grades the same 100 items at each point. The sweep
// shows accuracy falling past the threshold (light load inside the
// interval of 0.9), and compare between the low and the high point,
// paired by item, calls the high point's accuracy worse.
func TestAccuracyUnderLoadSweep(t *testing.T) {
	srv := accuracyMock(t, 0.9, "0.3@4", func(c *mockserver.Config) { c.TTFT = 20 * time.Millisecond; c.KeepLog = false })
	dir := filepath.Join(t.TempDir(), "sw")
	code, _, errOut := runCLI(t, "", "sweep", "--url", srv.URL(), "--model", mockserver.DefaultModel, "--no-server-metrics",
		"--accuracy-benchmark", "mmlu", "--accuracy-data", accData+"/mmlu", "--accuracy-shots", "5",
		"--concurrency", "1,12", "--out", dir)
	if code != 0 {
		t.Fatalf("exit %d: %s", code, errOut)
	}
	b, err := os.ReadFile(filepath.Join(dir, "sweep.json"))
	if err != nil {
		t.Fatal(err)
	}
	type row struct {
		Point           string
		Graded, Correct int
		Accuracy        float64
		AccuracyLow     float64 `json:"accuracy_low"`
		AccuracyHigh    float64 `json:"accuracy_high"`
	}
	var sw struct {
		Points []struct {
			Row *row `json:"row"`
		} `json:"points"`
	}
	if err := json.Unmarshal(b, &sw); err != nil {
		t.Fatal(err)
	}
	if len(sw.Points) != 2 || sw.Points[0].Row == nil || sw.Points[1].Row == nil {
		t.Fatalf("want 2 measured points in sweep.json:\n%s", b)
	}
	low, high := *sw.Points[0].Row, *sw.Points[1].Row
	if low.Graded != 100 || high.Graded != 100 {
		t.Fatalf("graded %d and %d, want 100 each", low.Graded, high.Graded)
	}
	if !(low.AccuracyLow <= 0.9 && 0.9 <= low.AccuracyHigh) || high.Accuracy >= low.Accuracy || high.AccuracyHigh >= low.AccuracyLow {
		t.Errorf("accuracy %v [%v, %v] at concurrency 1, %v [%v, %v] at 12: want 0.9 inside the first and a clear drop",
			low.Accuracy, low.AccuracyLow, low.AccuracyHigh, high.Accuracy, high.AccuracyLow, high.AccuracyHigh)
	}
	if !strings.Contains(errOut, "accuracy% ") {
		t.Errorf("the sweep table shows no accuracy:\n%s", errOut)
	}
	points := filepath.Join(dir, "points")
	code, out, stderr := runCLI(t, "", "compare", filepath.Join(points, low.Point), filepath.Join(points, high.Point))
	if !strings.Contains(out, "accuracy") {
		t.Fatalf("compare (exit %d) has no accuracy row:\n%s\n%s", code, out, stderr)
	}
	var line string
	for _, l := range strings.Split(out, "\n") {
		if strings.HasPrefix(l, "accuracy") {
			line = l
		}
	}
	if !strings.Contains(line, "worse") || !strings.Contains(line, "paired by item") {
		t.Errorf("compare's accuracy line %q: want worse, paired by item", line)
	}
	// And the other way round: better.
	_, out, _ = runCLI(t, "", "compare", filepath.Join(points, high.Point), filepath.Join(points, low.Point))
	if !strings.Contains(out, "better") {
		t.Errorf("compare high → low does not call it better:\n%s", out)
	}
}

// TestGoodputMinAccuracy: --goodput accuracy:V counts a wrong answer as
// not good and exits 3 when the accuracy is below V.
func TestGoodputMinAccuracy(t *testing.T) {
	srv := accuracyMock(t, 0.5, "", nil)
	for _, c := range []struct {
		slo  string
		code int
	}{{"accuracy:0.9", 3}, {"accuracy:20", 0}} {
		out := filepath.Join(t.TempDir(), "run")
		code, _, stderr := runCLI(t, "", "replay", "--url", srv.URL(), "--model", mockserver.DefaultModel, "--concurrency", "4",
			"--accuracy-benchmark", "mmlu", "--accuracy-data", accData+"/mmlu", "--goodput", c.slo, "--min-good-fraction", "0.01", "--out", out, "--quiet")
		if code != c.code {
			t.Errorf("%s: exit %d, want %d:\n%s", c.slo, code, c.code, stderr)
		}
		if c.code == 3 && !strings.Contains(stderr, "accuracy 0.") {
			t.Errorf("%s: %s", c.slo, stderr)
		}
		s := readAccuracy(t, out)
		b, _ := os.ReadFile(filepath.Join(out, "summary.json"))
		var sum struct {
			Good struct{ Avg float64 } `json:"good_request_count"`
		}
		json.Unmarshal(b, &sum)
		if int(sum.Good.Avg) != s.Overall.Correct {
			t.Errorf("%s: %v good requests, want the %d right answers", c.slo, sum.Good.Avg, s.Overall.Correct)
		}
	}
}

// TestAccuracyLlamaCPPFixture replays what llama.cpp's server answered to
// the first MMLU item (testdata/accuracy/llamacpp): reprise sends the
// recorded request (messages, temperature 0, ignore_eos false, the
// grammar of --extra-body) and grades the recorded answers, streamed and
// not: "B" against the expected "A" is answered and wrong; the
// unconstrained gibberish is unanswered.
func TestAccuracyLlamaCPPFixture(t *testing.T) {
	dir := accData + "/llamacpp"
	read := func(name string) []byte {
		b, err := os.ReadFile(filepath.Join(dir, name))
		if err != nil {
			t.Fatal(err)
		}
		return b
	}
	var want map[string]any
	if err := json.Unmarshal(read("request.json"), &want); err != nil {
		t.Fatal(err)
	}
	for _, c := range []struct {
		name, file, extra string
		stream            bool
		answer            string
	}{
		{"non-streamed", "response.json", `{"grammar":"root ::= [ABCD]"}`, false, "B"},
		{"streamed", "response.sse", `{"grammar":"root ::= [ABCD]"}`, true, "B"},
		{"unconstrained", "response-unconstrained.json", "", false, ""},
	} {
		t.Run(c.name, func(t *testing.T) {
			var got map[string]any
			srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
				body, _ := io.ReadAll(r.Body)
				if r.URL.Path == "/v1/chat/completions" && got == nil {
					json.Unmarshal(body, &got)
				}
				if c.stream {
					w.Header().Set("Content-Type", "text/event-stream")
				} else {
					w.Header().Set("Content-Type", "application/json")
				}
				w.Write(read(c.file))
			}))
			defer srv.Close()
			out := filepath.Join(t.TempDir(), "run")
			args := []string{"replay", "--url", srv.URL, "--model", "tiny", "--concurrency", "1", "--no-server-metrics", "--no-preflight",
				"--accuracy-benchmark", "mmlu", "--accuracy-shots", "5", "--accuracy-data", accData + "/mmlu", "--accuracy-limit", "1",
				"--out", out, "--format", "jsonl", "--quiet", "--max-error-rate", "1"}
			if c.extra != "" {
				args = append(args, "--extra-body", c.extra)
			}
			if !c.stream {
				args = append(args, "--streaming=false")
			}
			if code, _, stderr := runCLI(t, "", args...); code != 0 {
				t.Fatalf("exit %d: %s", code, stderr)
			}
			for _, k := range []string{"messages", "temperature", "ignore_eos", "max_tokens"} {
				if mustJSON(got[k]) != mustJSON(want[k]) {
					t.Errorf("sent %s %s, llama.cpp was sent %s", k, mustJSON(got[k]), mustJSON(want[k]))
				}
			}
			recs := readRecords(t, out)
			if len(recs) != 1 {
				t.Fatalf("%d records", len(recs))
			}
			r := recs[0]
			ans, _ := r["accuracy_answer"].(string)
			if ans != c.answer || r["accuracy_correct"] != false || r["accuracy_expected"] != "A" {
				t.Errorf("graded %v", r)
			}
		})
	}
}

// TestAccuracyMix: --accuracy-mix 0.25 replaces one request in four of a
// synthetic load and of a trace (rows 3, 7, 11, …) by a graded item,
// with the item's output budget; the other requests are sent as they
// were and carry no grade.
func TestAccuracyMix(t *testing.T) {
	srv := accuracyMock(t, 1, "", nil)
	tracePath := filepath.Join(t.TempDir(), "trace.jsonl")
	var tr strings.Builder
	for i := range 20 {
		fmt.Fprintf(&tr, `{"timestamp": %d, "input_length": 32, "output_length": 4}`+"\n", i*5)
	}
	if err := os.WriteFile(tracePath, []byte(tr.String()), 0o644); err != nil {
		t.Fatal(err)
	}
	for _, c := range []struct {
		name string
		load []string
		n    int
	}{
		{"synthetic", []string{"--isl", "16", "--osl", "4", "--request-count", "40", "--concurrency", "4"}, 40},
		{"trace", []string{tracePath, "--trace-format", "mooncake"}, 20},
	} {
		t.Run(c.name, func(t *testing.T) {
			out := filepath.Join(t.TempDir(), "run")
			args := append([]string{"replay", "--url", srv.URL(), "--model", mockserver.DefaultModel, "--accuracy-benchmark", "mmlu",
				"--accuracy-data", accData + "/mmlu", "--accuracy-mix", "0.25", "--out", out, "--format", "jsonl", "--quiet"}, c.load...)
			if code, _, stderr := runCLI(t, "", args...); code != 0 {
				t.Fatalf("exit %d: %s", code, stderr)
			}
			recs := readRecords(t, out)
			if len(recs) != c.n {
				t.Fatalf("%d records, want %d", len(recs), c.n)
			}
			graded := 0
			for _, r := range recs {
				id := int(r["request_id"].(float64))
				_, has := r["accuracy_correct"].(bool)
				// A trace's row k carries an item when k mod 4 = 3 (a
				// synthetic request's index is not in its record: the
				// count below checks it).
				if row, ok := r["trace_row"].(float64); ok && row >= 0 && has != (int(row)%4 == 3) {
					t.Errorf("trace row %v: graded %v, want %v", row, has, int(row)%4 == 3)
				}
				if has {
					graded++
					if r["max_tokens"] != 16.0 || r["accuracy_correct"] != true {
						t.Errorf("graded request %d: %v", id, r)
					}
				} else if r["max_tokens"] != 4.0 {
					t.Errorf("request %d: max_tokens %v, want the load's 4", id, r["max_tokens"])
				}
			}
			if graded != c.n/4 {
				t.Errorf("%d graded, want %d", graded, c.n/4)
			}
			if s := readAccuracy(t, out); s.Overall.Graded != c.n/4 || s.Overall.Correct != c.n/4 || s.Settings["mix"] != 0.25 {
				t.Errorf("accuracy %+v %v", s.Overall, s.Settings)
			}
		})
	}
}

// TestReportAccuracy: reprise report of a graded run has an Accuracy
// section with each task's accuracy and interval.
func TestReportAccuracy(t *testing.T) {
	srv := accuracyMock(t, 0.8, "", nil)
	out := filepath.Join(t.TempDir(), "run")
	if code, _, stderr := runCLI(t, "", "replay", "--url", srv.URL(), "--model", mockserver.DefaultModel, "--concurrency", "4",
		"--accuracy-benchmark", "mmlu", "--accuracy-data", accData+"/mmlu", "--out", out, "--quiet"); code != 0 {
		t.Fatalf("exit %d: %s", code, stderr)
	}
	html := filepath.Join(t.TempDir(), "r.html")
	if code, _, stderr := runCLI(t, "", "report", "-o", html, out); code != 0 {
		t.Fatalf("report: exit %d: %s", code, stderr)
	}
	b, err := os.ReadFile(html)
	if err != nil {
		t.Fatal(err)
	}
	s := readAccuracy(t, out)
	want := fmt.Sprintf("[%.1f, %.1f]", 100*s.Overall.Low, 100*s.Overall.High)
	if !bytes.Contains(b, []byte(`id="accuracy"`)) || !bytes.Contains(b, []byte("elementary_multiplication")) || !bytes.Contains(b, []byte(want)) {
		t.Errorf("the report has no accuracy section with %s", want)
	}
}
