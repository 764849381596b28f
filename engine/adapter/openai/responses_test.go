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

// responsesWant is what one Responses fixture must classify to.
type responsesWant struct {
	kinds     map[record.EventKind]int // records per kind
	final     adapter.Final            // Valid, counts, finish, error code
	text      string
	reasoning string
	errMsg    string
	firstTok  uint32 // event index of the first token record (TTFT)
}

// TestResponsesFixtures classifies the Responses API recordings in
// testdata/responses (composed from the API's published shapes, see
// testdata/responses/README.md) in one batch and in batches of 2: the
// envelopes are meta, only deltas carry tokens, usage and the finish come
// from the terminal event.
func TestResponsesFixtures(t *testing.T) {
	usage := adapter.ValidPromptTokens | adapter.ValidCompletionTokens | adapter.ValidReasoningTokens | adapter.ValidCachedTokens
	cases := map[string]responsesWant{
		"stream-reasoning.http": {
			kinds: map[record.EventKind]int{record.EventReasoning: 3, record.EventContent: 4, record.EventUsage: 1, record.EventFinish: 1, record.EventMeta: 10},
			final: adapter.Final{Valid: usage | adapter.ValidFinishReason, PromptTokens: 22, CompletionTokens: 7, ReasoningTokens: 3,
				CachedTokens: 16, FinishReason: adapter.FinishStop, Choices: 1},
			text: "Blue light scatters most.", reasoning: "Rayleigh scattering.", firstTok: 3,
		},
		"stream-summary-incomplete.http": {
			kinds: map[record.EventKind]int{record.EventReasoning: 2, record.EventContent: 3, record.EventUsage: 1, record.EventFinish: 1, record.EventMeta: 13},
			final: adapter.Final{Valid: usage | adapter.ValidFinishReason, PromptTokens: 40, CompletionTokens: 16, ReasoningTokens: 12,
				FinishReason: adapter.FinishLength, Choices: 1},
			text: "The sky is", reasoning: "**Planning** the answer", firstTok: 5,
		},
		"stream-tool-call.http": {
			kinds: map[record.EventKind]int{record.EventToolCall: 2, record.EventUsage: 1, record.EventFinish: 1, record.EventMeta: 4},
			final: adapter.Final{Valid: usage | adapter.ValidFinishReason, PromptTokens: 80, CompletionTokens: 12,
				FinishReason: adapter.FinishToolCalls, Choices: 1},
			firstTok: 2,
		},
		"stream-error.http": {
			kinds:  map[record.EventKind]int{record.EventContent: 2, record.EventError: 1, record.EventMeta: 2},
			final:  adapter.Final{Valid: adapter.ValidError, ErrorCode: 500, Choices: 1},
			text:   "Once upon",
			errMsg: "The model produced invalid content.", firstTok: 2,
		},
		"stream-failed.http": {
			kinds:  map[record.EventKind]int{record.EventError: 1, record.EventMeta: 1},
			final:  adapter.Final{Valid: adapter.ValidError, ErrorCode: 500},
			errMsg: "The server had an error while processing your request.", firstTok: ^uint32(0),
		},
		"nonstream.http": {
			kinds: map[record.EventKind]int{record.EventReasoning: 1, record.EventContent: 1, record.EventUsage: 1, record.EventFinish: 1},
			final: adapter.Final{Valid: usage | adapter.ValidFinishReason, PromptTokens: 22, CompletionTokens: 7, ReasoningTokens: 3,
				CachedTokens: 16, FinishReason: adapter.FinishStop, Choices: 1},
			text: "Blue light scatters most.", reasoning: "Rayleigh scattering.", firstTok: 0,
		},
		"error-400.http": {
			kinds:  map[record.EventKind]int{record.EventError: 1},
			final:  adapter.Final{Valid: adapter.ValidError, ErrorCode: 500},
			errMsg: "max_output_tokens must be at least 1", firstTok: ^uint32(0),
		},
	}
	a := openai.Adapter{Endpoint: openai.Responses}
	in, err := a.NewInstance(&adapter.Config{Model: "m", Stream: true})
	if err != nil {
		t.Fatal(err)
	}
	for name, want := range cases {
		rec, err := wasm.ReadRecording(filepath.Join("testdata", "responses", name))
		if err != nil {
			t.Fatal(err)
		}
		for _, batch := range []int{0, 2} {
			cl, err := wasm.Classify(in, 1, rec, a.Info().Framing, batch)
			if err != nil {
				t.Fatalf("%s (batch %d): %v", name, batch, err)
			}
			kinds := map[record.EventKind]int{}
			first := ^uint32(0)
			for _, r := range cl.Records {
				kinds[r.Kind]++
				if first == ^uint32(0) && (r.Kind == record.EventContent || r.Kind == record.EventReasoning || r.Kind == record.EventToolCall) {
					first = r.Event
				}
			}
			if d := cmp.Diff(want.kinds, kinds); d != "" {
				t.Errorf("%s (batch %d): records per kind (-want +got):\n%s", name, batch, d)
			}
			fin := cl.Final
			got := responsesWant{kinds: want.kinds, final: adapter.Final{Valid: fin.Valid, PromptTokens: fin.PromptTokens,
				CompletionTokens: fin.CompletionTokens, ReasoningTokens: fin.ReasoningTokens, CachedTokens: fin.CachedTokens,
				FinishReason: fin.FinishReason, Choices: fin.Choices, ErrorCode: fin.ErrorCode},
				text: string(fin.Text), reasoning: string(fin.Reasoning), errMsg: string(fin.ErrorMessage), firstTok: first}
			if d := cmp.Diff(want, got, cmp.AllowUnexported(responsesWant{})); d != "" {
				t.Errorf("%s (batch %d) (-want +got):\n%s", name, batch, d)
			}
		}
	}
}

// TestBuildResponses: the request body of the Responses API, first turn
// and later turn, with the row's extra winning.
func TestBuildResponses(t *testing.T) {
	in, err := openai.Adapter{Endpoint: openai.Responses}.NewInstance(&adapter.Config{Model: "org/m", ExtraBody: json.RawMessage(`{"reasoning":{"effort":"low"}}`)})
	if err != nil {
		t.Fatal(err)
	}
	body := func(b adapter.BuildInput) map[string]any {
		t.Helper()
		var out adapter.HTTPRequest
		if err := in.Build(&b, &out); err != nil {
			t.Fatal(err)
		}
		if out.Path != "/v1/responses" {
			t.Errorf("path %q", out.Path)
		}
		var m map[string]any
		if err := json.Unmarshal(out.Body, &m); err != nil {
			t.Fatalf("body %s: %v", out.Body, err)
		}
		return m
	}
	got := body(adapter.BuildInput{Flags: adapter.BuildStream, PromptText: "why \"blue\"?", MaxTokens: 64})
	want := map[string]any{"model": "org/m", "input": []any{map[string]any{"type": "message", "role": "user", "content": "why \"blue\"?"}},
		"max_output_tokens": 64.0, "stream": true, "store": false, "reasoning": map[string]any{"effort": "low"}}
	if d := cmp.Diff(want, got); d != "" {
		t.Errorf("first turn (-want +got):\n%s", d)
	}
	got = body(adapter.BuildInput{Flags: adapter.BuildHistory, MaxTokens: 8, Raw: json.RawMessage(`{"extra":{"max_output_tokens":9}}`),
		Messages: []adapter.Message{{Role: "user", Content: "q1"}, {Role: "assistant", Content: "a1"}, {Role: "user", Content: "q2"}}})
	want = map[string]any{"model": "org/m", "input": []any{
		map[string]any{"type": "message", "role": "user", "content": "q1"},
		map[string]any{"type": "message", "role": "assistant", "content": "a1"},
		map[string]any{"type": "message", "role": "user", "content": "q2"}},
		"max_output_tokens": 9.0, "stream": false, "store": false, "reasoning": map[string]any{"effort": "low"}}
	if d := cmp.Diff(want, got); d != "" {
		t.Errorf("later turn (-want +got):\n%s", d)
	}
}

// TestParseResponsesAllocs: classifying Responses events allocates
// nothing once the instance's buffers have grown.
func TestParseResponsesAllocs(t *testing.T) {
	checkParseAllocs(t, openai.Responses, filepath.Join("testdata", "responses", "stream-reasoning.http"))
}
