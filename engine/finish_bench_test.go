package engine

import (
	"context"
	"testing"

	"github.com/reprise-bench/reprise/engine/adapter"
	"github.com/reprise-bench/reprise/engine/adapter/openai"
	"github.com/reprise-bench/reprise/engine/record"
)

// BenchmarkSenderFinish derives the timeline, token counts and latencies
// of a streamed response of 64 content events with the server's usage:
// the per-request work after the last event.
func BenchmarkSenderFinish(b *testing.B) {
	cfg := NewConfig()
	cfg.BaseURL = "http://127.0.0.1:9"
	cfg.Adapter = openai.Adapter{}
	cfg.AdapterConfig = adapter.Config{Model: "m", Stream: true}
	e, err := New(cfg)
	if err != nil {
		b.Fatal(err)
	}
	defer e.Close()
	s, err := e.NewSender()
	if err != nil {
		b.Fatal(err)
	}
	for i := range 64 {
		s.evTime = append(s.evTime, int64(1000+10*i))
		s.evRead = append(s.evRead, 1)
		s.evKind = append(s.evKind, record.EventContent)
	}
	s.fin.Valid = adapter.ValidPromptTokens | adapter.ValidCompletionTokens
	s.fin.PromptTokens, s.fin.CompletionTokens = 100, 64
	ctx := context.Background()
	var r record.Request
	b.ReportAllocs()
	for b.Loop() {
		r = record.Request{IntendedNS: 400, SentNS: 500}
		if err := s.finish(ctx, &r, true); err != nil || r.ITLNS == 0 {
			b.Fatal(err, r.ITLNS)
		}
	}
}
