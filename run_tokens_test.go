package reprise

import (
	"context"
	"testing"

	"github.com/reprise-bench/reprise/engine/record"
	"github.com/reprise-bench/reprise/internal/tokenizer"
)

// builtinTokenizer is the builtin tokenizer; a test fails without it.
func builtinTokenizer(t testing.TB) tokenizer.Tokenizer {
	t.Helper()
	tok, err := tokenizer.Builtin()
	if err != nil {
		t.Fatal(err)
	}
	return tok
}

// eventsByRequest groups exported rows by request.
func eventsByRequest(evs []record.Event) map[uint64][]record.Event {
	out := map[uint64][]record.Event{}
	for _, ev := range evs {
		out[ev.RequestID] = append(out[ev.RequestID], ev)
	}
	return out
}

// TestOutputTokensEveryChoice: with n = 2 the client counts the output of
// both choices, as the server's usage does, and the events table has rows
// of both choices whose tokens add up to the client's count.
func TestOutputTokensEveryChoice(t *testing.T) {
	for _, stream := range []bool{true, false} {
		srv := startMock(t, nil)
		sink := &memSink{}
		cfg := mockRunConfig(srv.URL(), mustPlan(t, closedLoop(6, 3), nil), sink)
		cfg.Engine.Counter = builtinTokenizer(t)
		cfg.Engine.AdapterConfig.ExtraBody = []byte(`{"n":2}`)
		cfg.Engine.AdapterConfig.Stream = stream
		cfg.Streaming = stream
		if _, err := runEngine(context.Background(), cfg); err != nil {
			t.Fatal(err)
		}
		rows := eventsByRequest(sink.evs)
		for _, r := range sink.reqs {
			if !r.OK() {
				t.Fatalf("stream %v: request %d failed: %s %s", stream, r.RequestID, r.ErrorKind, r.ErrorMessage)
			}
			client := r.OutputTokens + r.ReasoningTokens
			if r.ServerCompletionTokens != 2*12 || client != r.ServerCompletionTokens || r.ServerMinusClientOutputTokens != 0 {
				t.Errorf("stream %v, request %d: client counted %d output tokens, server %d (difference %d); want 24 both",
					stream, r.RequestID, client, r.ServerCompletionTokens, r.ServerMinusClientOutputTokens)
			}
			var sum [2]int32
			for _, ev := range rows[r.RequestID] {
				if ev.Kind == record.EventContent && (ev.Choice < 0 || ev.Choice > 1 || ev.Tokens < 1) {
					t.Errorf("stream %v, request %d: content row %+v", stream, r.RequestID, ev)
				}
				if ev.Choice >= 0 && ev.Tokens > 0 {
					sum[ev.Choice] += ev.Tokens
				}
			}
			if sum[0] != 12 || sum[1] != 12 {
				t.Errorf("stream %v, request %d: event rows carry %v tokens per choice, want 12 each", stream, r.RequestID, sum)
			}
		}
	}
}

// TestEventTokens: every exported content row carries the tokens the
// client counted in it, and a request's rows add up to its count.
func TestEventTokens(t *testing.T) {
	srv := startMock(t, nil)
	sink := &memSink{}
	cfg := mockRunConfig(srv.URL(), mustPlan(t, closedLoop(4, 2), nil), sink)
	cfg.Engine.Counter = builtinTokenizer(t)
	if _, err := runEngine(context.Background(), cfg); err != nil {
		t.Fatal(err)
	}
	rows := eventsByRequest(sink.evs)
	for _, r := range sink.reqs {
		var sum int32
		for _, ev := range rows[r.RequestID] {
			switch {
			case ev.Tokens < 0:
				t.Errorf("request %d: row %d (%s) has no token count", r.RequestID, ev.Seq, ev.Kind)
			case ev.Kind == record.EventContent && (ev.Tokens != 1 || ev.Choice != 0):
				// The mock writes one single-token word per event.
				t.Errorf("request %d: content row %d: %d tokens, choice %d; want 1, 0", r.RequestID, ev.Seq, ev.Tokens, ev.Choice)
			case ev.Kind != record.EventContent && ev.Tokens != 0:
				t.Errorf("request %d: %s row %d carries %d tokens", r.RequestID, ev.Kind, ev.Seq, ev.Tokens)
			}
			sum += max(ev.Tokens, 0)
		}
		if want := r.OutputTokens + r.ReasoningTokens; sum != want || want != 12 {
			t.Errorf("request %d: rows add up to %d tokens, the record has %d (want 12)", r.RequestID, sum, want)
		}
	}
}
