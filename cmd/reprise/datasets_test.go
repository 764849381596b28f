package main

import (
	"bytes"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/apache/arrow/go/v17/arrow"
	"github.com/apache/arrow/go/v17/arrow/array"
	"github.com/apache/arrow/go/v17/arrow/memory"
	"github.com/apache/arrow/go/v17/parquet"
	"github.com/apache/arrow/go/v17/parquet/pqarrow"
)

// testShareGPT is a ShareGPT file of three conversations, the first with
// two human→gpt pairs (written for this test).
const testShareGPT = `[
  {"id": "c1", "conversations": [
    {"from": "human", "value": "Explain paged attention in one paragraph."},
    {"from": "gpt", "value": "Paged attention keeps the KV cache in fixed-size blocks, like virtual memory pages."},
    {"from": "human", "value": "Why does that help batching?"},
    {"from": "gpt", "value": "Blocks are allocated on demand, so memory is not reserved for the longest possible sequence."}]},
  {"id": "c2", "conversations": [
    {"from": "human", "value": "What is a prefix cache?"},
    {"from": "gpt", "value": "A cache of the KV blocks of prompt prefixes already computed."}]},
  {"id": "c3", "conversations": [
    {"from": "human", "value": "Name three sorting algorithms."},
    {"from": "gpt", "value": "Quicksort, mergesort and heapsort."}]}
]
`

// testPrompts is a prompts file, one prompt a line.
const testPrompts = "What is the capital of France?\nWrite a haiku about caches.\nExplain speculative decoding briefly.\n"

// writeDatasets writes the three datasets of TestReplayDatasets into dir:
// ShareGPT, Parquet (text, max_new_tokens, arrival_ms) and prompts.
func writeDatasets(t *testing.T, dir string) (sharegpt, pq, prompts string) {
	t.Helper()
	sharegpt = filepath.Join(dir, "sharegpt.json")
	prompts = filepath.Join(dir, "prompts.txt")
	pq = filepath.Join(dir, "train.parquet")
	if err := os.WriteFile(sharegpt, []byte(testShareGPT), 0o644); err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(prompts, []byte(testPrompts), 0o644); err != nil {
		t.Fatal(err)
	}
	schema := arrow.NewSchema([]arrow.Field{
		{Name: "text", Type: arrow.BinaryTypes.String},
		{Name: "max_new_tokens", Type: arrow.PrimitiveTypes.Int64},
		{Name: "arrival_ms", Type: arrow.PrimitiveTypes.Float64},
		{Name: "conv", Type: arrow.BinaryTypes.String},
	}, nil)
	b := array.NewRecordBuilder(memory.DefaultAllocator, schema)
	defer b.Release()
	b.Field(0).(*array.StringBuilder).AppendValues([]string{"Tell me a joke about GPUs.", "Explain KV caching in two sentences.",
		"List the planets.", "Translate 'cache' into French."}, nil)
	b.Field(1).(*array.Int64Builder).AppendValues([]int64{12, 20, 8, 4}, nil)
	b.Field(2).(*array.Float64Builder).AppendValues([]float64{0, 5, 10, 15}, nil)
	b.Field(3).(*array.StringBuilder).AppendValues([]string{"a", "b", "a", "b"}, nil)
	rec := b.NewRecord()
	defer rec.Release()
	var buf bytes.Buffer
	w, err := pqarrow.NewFileWriter(schema, &buf, parquet.NewWriterProperties(), pqarrow.DefaultWriterProps())
	if err != nil {
		t.Fatal(err)
	}
	if err := w.Write(rec); err != nil {
		t.Fatal(err)
	}
	if err := w.Close(); err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(pq, buf.Bytes(), 0o644); err != nil {
		t.Fatal(err)
	}
	return sharegpt, pq, prompts
}

// TestReplayDatasets replays a ShareGPT file, a Parquet dataset, a
// prompts file and AIPerf multi_turn rows against the mock server in every timing mode that applies
// (the fixed schedule only for the Parquet table, the one with arrival
// times; user-centric needs multi-turn sessions, which the prompts file
// has not, and says so): every request succeeds, the server counts exactly the tokens of
// the dataset's prompt (the text is sent as it is), output lengths follow
// the dataset, and ShareGPT's later turns carry their history.
func TestReplayDatasets(t *testing.T) {
	dir := t.TempDir()
	sharegpt, pq, prompts := writeDatasets(t, dir)
	multi := filepath.Join(dir, "multi.jsonl")
	if err := os.WriteFile(multi, []byte(`{"session_id": "a", "turns": [{"text": "Hello there", "output_length": 5}, {"text": "And then?", "output_length": 5}]}
{"session_id": "b", "turns": [{"text": "Hi", "output_length": 5}, {"text": "Go on, please", "output_length": 5}]}
`), 0o644); err != nil {
		t.Fatal(err)
	}
	srv := startMockServer(t, nil)
	modes := map[string][]string{
		// Rate: every row once (a count would wrap the sessions, whose
		// later turns wait for the earlier ones' responses).
		"rate":        {"--mode", "rate", "--request-rate", "200", "--arrival", "constant"},
		"concurrency": {"--mode", "concurrency", "--concurrency", "2", "--request-count", "6"},
		// User-centric users start new sessions on their schedule whether
		// or not earlier turns are answered: turns 200 ms apart per user
		// leave time for an answer on a loaded machine under -race (at
		// 20 ms, the count went to new sessions before any later turn).
		"user-centric": {"--mode", "user-centric", "--user-centric-rate", "10", "--num-users", "2", "--request-count", "6"},
		"fixed":        {"--mode", "fixed", "--speedup", "10"},
	}
	datasets := []struct {
		name     string
		args     []string
		fixed    bool // has arrival times
		sessions bool // has multi-turn sessions
		rows     int
	}{
		{"sharegpt", []string{sharegpt, "--all-turns"}, false, true, 4},
		{"parquet", []string{pq, "--prompt-column", "text", "--output-len-column", "max_new_tokens", "--timestamp-column", "arrival_ms",
			"--session-column", "conv"}, true, true, 4},
		{"prompts", []string{prompts, "--osl", "10", "--dataset-sampling", "shuffle", "--seed", "3"}, false, false, 3},
		{"aiperf multi_turn", []string{multi}, false, true, 4},
	}
	for _, ds := range datasets {
		for _, mode := range []string{"rate", "concurrency", "user-centric", "fixed"} {
			if mode == "fixed" && !ds.fixed {
				continue
			}
			t.Run(ds.name+"/"+mode, func(t *testing.T) {
				out := filepath.Join(dir, strings.ReplaceAll(ds.name, " ", "_")+"-"+mode)
				args := append([]string{"replay"}, ds.args...)
				args = append(args, "--url", srv.URL(), "--model", "reprise-mock", "--out", out, "--format", "jsonl", "--quiet")
				args = append(args, modes[mode]...)
				code, _, stderr := runCLI(t, "", args...)
				if mode == "user-centric" && !ds.sessions {
					// As in AIPerf: user-centric users send the turns of
					// sessions; one-turn rows are refused with the reason.
					if code != 2 || !strings.Contains(stderr, "needs a trace with multi-turn sessions") {
						t.Fatalf("exit %d, want 2 saying user-centric needs sessions: %s", code, stderr)
					}
					return
				}
				if code != 0 {
					t.Fatalf("exit %d: %s", code, stderr)
				}
				recs := readRecords(t, out)
				want := 6
				if mode == "fixed" || mode == "rate" {
					want = ds.rows
				}
				if len(recs) != want {
					t.Fatalf("%d records, want %d", len(recs), want)
				}
				history := 0
				for _, r := range recs {
					if r["error_kind"] != nil && r["error_kind"] != "" {
						t.Fatalf("request failed: %v", r)
					}
					in, trace := r["input_tokens"].(float64), r["trace_input_tokens"].(float64)
					if sp := r["server_prompt_tokens"].(float64); sp != in {
						t.Errorf("row %v: server counted %v prompt tokens, client %v", r["trace_row"], sp, in)
					}
					if in > trace {
						history++
					} else if in != trace {
						t.Errorf("row %v: %v input tokens, dataset prompt has %v", r["trace_row"], in, trace)
					}
					if ds.name == "prompts" && r["server_completion_tokens"].(float64) != 10 {
						t.Errorf("row %v: %v output tokens, want --osl 10", r["trace_row"], r["server_completion_tokens"])
					}
				}
				if ds.sessions && history == 0 {
					for _, r := range recs {
						t.Logf("row %v session %v turn %v: input %v, dataset %v, intended %v, sent %v, end %v",
							r["trace_row"], r["session_id"], r["turn"], r["input_tokens"], r["trace_input_tokens"], r["intended_ns"], r["sent_ns"], r["end_ns"])
					}
					t.Errorf("no request carried history; later turns should")
				}
				if !ds.sessions && history != 0 {
					t.Errorf("%d requests longer than their prompt", history)
				}
			})
		}
	}
}

// TestReplayDatasetErrors: a dataset problem is a usage error naming the
// file, the line and the column.
func TestReplayDatasetErrors(t *testing.T) {
	dir := t.TempDir()
	bad := filepath.Join(dir, "bad.csv")
	if err := os.WriteFile(bad, []byte("prompt,output_length\nhello,12\nworld,many\n"), 0o644); err != nil {
		t.Fatal(err)
	}
	_, pq, _ := writeDatasets(t, dir)
	for _, tc := range []struct {
		args []string
		want string
	}{
		{[]string{bad}, "bad.csv:3: output_length: \"many\" is not a number"},
		{[]string{pq, "--prompt-column", "question"}, `no column "question" (--prompt-column); the table has "text", "max_new_tokens", "arrival_ms", "conv"`},
		{[]string{pq, "--dataset-sampling", "sideways"}, "--dataset-sampling"},
	} {
		args := append([]string{"replay", "--url", "http://127.0.0.1:1", "--model", "m", "--quiet", "--osl", "5"}, tc.args...)
		code, _, stderr := runCLI(t, "", args...)
		if code != 2 || !strings.Contains(stderr, tc.want) {
			t.Errorf("%v: exit %d, want 2 with %q:\n%s", tc.args, code, tc.want, stderr)
		}
	}
}
