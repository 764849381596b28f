package otlp

import (
	"testing"
	"time"

	"github.com/reprise-bench/reprise/engine/record"
	"github.com/reprise-bench/reprise/internal/livemetrics"
)

// BenchmarkEncode measures one push's encoding of a run's live metrics
// (one target, the Go and process collectors included), read by Gather
// as each push reads them; TestEncodeDecodes checks what it encodes.
func BenchmarkEncode(b *testing.B) {
	m := livemetrics.New(livemetrics.Config{RunID: "r", Streaming: true, Go: true, Targets: []livemetrics.Target{{URL: "http://h:8000", Model: "m"}}})
	m.Observe([]record.Request{{IntendedNS: 1, FirstTokenNS: 2, TTFTNS: 42e6, E2ENS: 90e6, InputTokens: 512, OutputTokens: 127}})
	batch := Batch{Resource: []Attr{{"service.name", "reprise"}}, Start: time.Unix(1, 0), Now: time.Unix(2, 0)}
	b.ReportAllocs()
	var n int
	for b.Loop() {
		fams, err := m.Gatherer().Gather()
		if err != nil {
			b.Fatal(err)
		}
		body, err := Encode(fams, batch)
		if err != nil {
			b.Fatal(err)
		}
		n = len(body)
	}
	b.ReportMetric(float64(n), "body-bytes")
}
