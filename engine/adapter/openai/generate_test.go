package openai_test

import (
	"encoding/json"
	"path/filepath"
	"testing"

	"github.com/google/go-cmp/cmp"

	"github.com/reprise-bench/reprise/engine/adapter"
	"github.com/reprise-bench/reprise/engine/adapter/openai"
	"github.com/reprise-bench/reprise/engine/record"
	"github.com/reprise-bench/reprise/wasm"
)

// TestGenerateFixtures classifies SGLang /generate recordings
// (testdata/sglang, composed from SGLang's documented output) and the TGI
// recordings the Wasm adapter's tests use: cumulative and incremental
// SGLang chunks give the same records; a TGI event is one token.
func TestGenerateFixtures(t *testing.T) {
	tgiDir := filepath.Join("..", "..", "..", "wasm", "testdata", "recordings")
	cases := []struct {
		ep      openai.Endpoint
		file    string
		content int
		tokens  uint32 // exact tokens over the content records (0: not exact)
		text    string
		finish  adapter.FinishReason
		prompt  int // -1: not reported
		errMsg  string
	}{
		{openai.SGLang, "testdata/sglang/stream-cumulative.http", 4, 4, " Paris. It is", adapter.FinishLength, 5, ""},
		{openai.SGLang, "testdata/sglang/stream-incremental.http", 4, 4, " Paris. It is", adapter.FinishStop, 5, ""},
		{openai.SGLang, "testdata/sglang/nonstream.http", 1, 4, " Paris. It is", adapter.FinishLength, 5, ""},
		{openai.SGLang, "testdata/sglang/stream-error.http", 1, 1, " Paris", 0, 5, "Abort: the request was aborted by the scheduler."},
		{openai.SGLang, "testdata/sglang/error-400.http", 0, 0, "", 0, -1, "The input (40000 tokens) is longer than the model's context length (32768 tokens)."},
		{openai.TGI, filepath.Join(tgiDir, "tgi-stream.http"), 5, 5, " Deep learning is a subset", adapter.FinishLength, -1, ""},
		{openai.TGI, filepath.Join(tgiDir, "tgi-stream-eos.http"), 3, 3, "Hello!</s>", adapter.FinishStop, -1, ""},
		{openai.TGI, filepath.Join(tgiDir, "tgi-nonstream.http"), 1, 0, " Deep learning is a subset", adapter.FinishLength, -1, ""},
		{openai.TGI, filepath.Join(tgiDir, "tgi-stream-error.http"), 1, 1, " Deep", 0, -1, "Request failed during generation: Server error: CUDA out of memory"},
	}
	for _, tc := range cases {
		a := openai.Adapter{Endpoint: tc.ep}
		in, err := a.NewInstance(&adapter.Config{Model: "m", Stream: true})
		if err != nil {
			t.Fatal(err)
		}
		rec, err := wasm.ReadRecording(tc.file)
		if err != nil {
			t.Fatal(err)
		}
		for _, batch := range []int{0, 1} {
			cl, err := wasm.Classify(in, 1, rec, a.Info().Framing, batch)
			if err != nil {
				t.Fatalf("%s: %v", tc.file, err)
			}
			content, tokens := 0, uint32(0)
			for _, r := range cl.Records {
				if r.Kind == record.EventContent {
					content++
					if r.Flags&adapter.RecordTokensExact != 0 {
						tokens += r.Tokens
					}
				}
			}
			prompt := -1
			if cl.Final.Valid&adapter.ValidPromptTokens != 0 {
				prompt = int(cl.Final.PromptTokens)
			}
			got := []any{content, tokens, string(cl.Final.Text), cl.Final.FinishReason, prompt, string(cl.Final.ErrorMessage)}
			want := []any{tc.content, tc.tokens, tc.text, tc.finish, tc.prompt, tc.errMsg}
			if d := cmp.Diff(want, got); d != "" {
				t.Errorf("%s (batch %d): content records, exact tokens, text, finish, prompt, error (-want +got):\n%s", tc.file, batch, d)
			}
		}
	}
}

// TestBuildGenerate: SGLang and TGI request bodies and paths.
func TestBuildGenerate(t *testing.T) {
	build := func(ep openai.Endpoint, b adapter.BuildInput) (string, map[string]any) {
		t.Helper()
		in, err := openai.Adapter{Endpoint: ep}.NewInstance(&adapter.Config{Model: "m", IgnoreEOS: true})
		if err != nil {
			t.Fatal(err)
		}
		var out adapter.HTTPRequest
		if err := in.Build(&b, &out); err != nil {
			t.Fatal(err)
		}
		var m map[string]any
		if err := json.Unmarshal(out.Body, &m); err != nil {
			t.Fatalf("%s: %v", out.Body, err)
		}
		return out.Path, m
	}
	path, m := build(openai.SGLang, adapter.BuildInput{Flags: adapter.BuildStream, PromptText: "hi \"x\"", MaxTokens: 7})
	want := map[string]any{"text": "hi \"x\"", "sampling_params": map[string]any{"max_new_tokens": 7.0, "ignore_eos": true}, "stream": true}
	if d := cmp.Diff(want, m); d != "" || path != "/generate" {
		t.Errorf("SGLang %s (-want +got):\n%s", path, d)
	}
	_, m = build(openai.SGLang, adapter.BuildInput{PromptTokens: []int{1, 2}, MaxTokens: 3})
	if ids, ok := m["input_ids"].([]any); !ok || len(ids) != 2 || m["stream"] != false {
		t.Errorf("SGLang token ids: %v", m)
	}
	path, m = build(openai.TGI, adapter.BuildInput{Flags: adapter.BuildStream, PromptText: "hi", MaxTokens: 7})
	want = map[string]any{"inputs": "hi", "parameters": map[string]any{"max_new_tokens": 7.0, "details": true}}
	if d := cmp.Diff(want, m); d != "" || path != "/generate_stream" {
		t.Errorf("TGI %s (-want +got):\n%s", path, d)
	}
	if path, _ = build(openai.TGI, adapter.BuildInput{PromptText: "hi"}); path != "/generate" {
		t.Errorf("TGI non-streamed path %s", path)
	}
}

// TestParseGenerateAllocs: classifying SGLang and TGI streams allocates
// nothing once the instance's buffers have grown.
func TestParseGenerateAllocs(t *testing.T) {
	checkParseAllocs(t, openai.SGLang, "testdata/sglang/stream-cumulative.http")
	checkParseAllocs(t, openai.TGI, "../../../wasm/testdata/recordings/tgi-stream.http")
}

// checkParseAllocs fails t unless an open, parse and close of the SSE
// recording file by an ep instance allocates nothing once the instance's
// buffers have grown.
func checkParseAllocs(t *testing.T, ep openai.Endpoint, file string) {
	t.Helper()
	in, err := openai.Adapter{Endpoint: ep}.NewInstance(&adapter.Config{Model: "m", Stream: true})
	if err != nil {
		t.Fatal(err)
	}
	rec, err := wasm.ReadRecording(file)
	if err != nil {
		t.Fatal(err)
	}
	evs, _, _ := rec.Events(adapter.FramingSSE)
	batch := &adapter.Batch{Events: evs}
	recs := make([]adapter.Record, 0, 64)
	var fin adapter.Final
	run := func() {
		in.Open(1, adapter.OpenStream|adapter.OpenCaptureText)
		recs, _ = in.Parse(1, batch, recs[:0])
		in.Close(1, &fin)
	}
	run()
	if n := testing.AllocsPerRun(100, run); n != 0 {
		t.Errorf("%s: %v allocations per open/parse/close of a %d-event stream, want 0", file, n, len(evs))
	}
}
