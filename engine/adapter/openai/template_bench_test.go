package openai

import (
	"path/filepath"
	"testing"

	"github.com/reprise-bench/reprise/engine/adapter"
)

// BenchmarkTemplateParse parses, with the shipped OpenAI chat template,
// the events BenchmarkParseChunk's native parser reads: a typical vLLM
// content chunk, and a llama.cpp usage chunk.
func BenchmarkTemplateParse(b *testing.B) {
	tpl, err := LoadTemplate(filepath.Join("templates", "openai-chat.json"))
	if err != nil {
		b.Fatal(err)
	}
	for _, tc := range []struct{ name, ev string }{{"content", vllmChunk}, {"usage", llamaUsage}} {
		b.Run(tc.name, func(b *testing.B) {
			in, err := tpl.NewInstance(&adapter.Config{Model: "m", Stream: true})
			if err != nil {
				b.Fatal(err)
			}
			if err := in.Open(1, adapter.OpenStream); err != nil {
				b.Fatal(err)
			}
			batch := &adapter.Batch{Events: []adapter.Event{data(tc.ev)}}
			recs := make([]adapter.Record, 0, 4)
			b.SetBytes(int64(len(tc.ev)))
			b.ReportAllocs()
			for b.Loop() {
				if recs, err = in.Parse(1, batch, recs[:0]); err != nil || len(recs) != 1 {
					b.Fatalf("%v %+v", err, recs)
				}
			}
		})
	}
}
