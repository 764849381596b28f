package wasm_test

import (
	"bytes"
	"context"
	"net/http"
	"net/http/httptest"
	"syscall"
	"testing"

	"github.com/reprise-bench/reprise/engine"
	"github.com/reprise-bench/reprise/engine/adapter"
	"github.com/reprise-bench/reprise/engine/adapter/openai"
	"github.com/reprise-bench/reprise/engine/record"
)

// e2eServer streams events (one SSE event each) in 64 writes.
func e2eServer(tb testing.TB, events []adapter.Event) string {
	var body bytes.Buffer
	for _, e := range events {
		if len(e.Name) > 0 {
			body.WriteString("event: " + string(e.Name) + "\n")
		}
		body.WriteString("data: ")
		body.Write(e.Data)
		body.WriteString("\n\n")
	}
	payload := body.Bytes()
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		w.Header().Set("Content-Type", "text/event-stream")
		step := max(len(payload)/64, 1)
		for i := 0; i < len(payload); i += step {
			w.Write(payload[i:min(i+step, len(payload))])
			w.(http.Flusher).Flush()
		}
	}))
	tb.Cleanup(srv.Close)
	return srv.URL
}

// e2eSetup returns a sender and a prepared request for workload w.
func e2eSetup(tb testing.TB, w workload) (*engine.Sender, *engine.Prepared) {
	cfg := engine.NewConfig()
	cfg.BaseURL = e2eServer(tb, w.events)
	cfg.Adapter = openai.Adapter{}
	if w.adapter != "" {
		cfg.Adapter = load(tb, w.adapter)
	}
	cfg.AdapterConfig = adapter.Config{Model: "m", Stream: true}
	e, err := engine.New(cfg)
	if err != nil {
		tb.Fatal(err)
	}
	tb.Cleanup(e.Close)
	bl, err := e.NewBuilder()
	if err != nil {
		tb.Fatal(err)
	}
	defer bl.Close()
	var p engine.Prepared
	if err := bl.Build(&adapter.BuildInput{Flags: adapter.BuildStream, PromptText: "hello", MaxTokens: benchEvents}, &p); err != nil {
		tb.Fatal(err)
	}
	s, err := e.NewSender()
	if err != nil {
		tb.Fatal(err)
	}
	tb.Cleanup(func() { s.Close() })
	return s, &p
}

// TestEndToEnd runs each benchmark workload through the whole engine path
// (HTTP, SSE framing, timestamps, the adapter) and checks the row.
func TestEndToEnd(t *testing.T) {
	for _, w := range workloads()[1:] {
		t.Run(w.name, func(t *testing.T) {
			s, p := e2eSetup(t, w)
			var r record.Request
			s.Do(context.Background(), p, &r)
			if !r.OK() || r.ContentEvents != benchEvents || r.FirstTokenNS == 0 {
				t.Fatalf("row: ok=%v error=%s %q content events %d", r.OK(), r.ErrorKind, r.ErrorMessage, r.ContentEvents)
			}
		})
	}
}

// BenchmarkEndToEnd measures the client's whole per-event cost (HTTP
// read, framing, stamping, parsing through the adapter) for one stream of
// benchEvents events in 64 reads over loopback; compare the Wasm adapters'
// ns/event with native/openai-chat for the streaming capacity ratio.
func BenchmarkEndToEnd(b *testing.B) {
	for _, w := range workloads()[1:] {
		b.Run(w.name, func(b *testing.B) {
			s, p := e2eSetup(b, w)
			b.ReportAllocs()
			cpu0 := processCPU()
			for b.Loop() {
				var r record.Request
				s.Do(context.Background(), p, &r)
				if r.ContentEvents != benchEvents {
					b.Fatalf("%d content events: %s", r.ContentEvents, r.ErrorMessage)
				}
			}
			// Process CPU (client and in-process server) per event: the
			// capacity measure on a shared machine.
			b.ReportMetric(float64(processCPU()-cpu0)/float64(b.N*benchEvents), "cpu-ns/event")
			b.ReportMetric(float64(b.Elapsed().Nanoseconds())/float64(b.N*benchEvents), "ns/event")
		})
	}
}

// processCPU returns this process's CPU time in ns.
func processCPU() int64 {
	var ru syscall.Rusage
	if err := syscall.Getrusage(syscall.RUSAGE_SELF, &ru); err != nil {
		return 0
	}
	return ru.Utime.Nano() + ru.Stime.Nano()
}
