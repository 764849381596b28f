package wasm_test

import (
	"context"
	"encoding/json"
	"fmt"
	"os"
	"path/filepath"
	"runtime"
	"syscall"
	"testing"

	"github.com/reprise-bench/reprise/engine/adapter"
	"github.com/reprise-bench/reprise/engine/adapter/openai"
	"github.com/reprise-bench/reprise/engine/record"
	"github.com/reprise-bench/reprise/wasm"
)

// benchEvents is the number of content events per benchmark stream.
const benchEvents = 64

// workload is one adapter and a stream in its API's shape: benchEvents
// content events of ~150-byte JSON, as a server streams them.
type workload struct {
	name     string // benchmark name: language/adapter
	adapter  string // shipped name, "" = native OpenAI
	events   []adapter.Event
	wantKind record.EventKind
}

func sseEvent(v any) adapter.Event {
	b, _ := json.Marshal(v)
	return adapter.Event{Data: b}
}

func workloads() []workload {
	var oa, tgi, an, ks []adapter.Event
	for i := range benchEvents {
		word := fmt.Sprintf(" token%03d", i)
		oa = append(oa, sseEvent(map[string]any{"id": "chatcmpl-8a4e0c3b", "object": "chat.completion.chunk", "created": 1760000000,
			"model": "sim-model", "choices": []any{map[string]any{"index": 0, "delta": map[string]any{"content": word}, "finish_reason": nil}}, "usage": nil}))
		tgi = append(tgi, sseEvent(map[string]any{"index": i + 1, "token": map[string]any{"id": 1000 + i, "text": word, "logprob": -0.52, "special": false},
			"generated_text": nil, "details": nil}))
		e := sseEvent(map[string]any{"type": "content_block_delta", "index": 0, "delta": map[string]any{"type": "text_delta", "text": word}})
		e.Name = []byte("content_block_delta")
		an = append(an, e)
		ks = append(ks, sseEvent(map[string]any{"model_name": "ensemble", "model_version": "1", "sequence_end": false, "sequence_id": 0,
			"sequence_start": false, "text_output": word}))
	}
	return []workload{
		// The host's own cost: a WAT guest that returns no records.
		{"wat/host-overhead", filepath.Join("testdata", "hostile", "ok.wasm"), oa, record.EventIgnore},
		{"native/openai-chat", "", oa, record.EventContent},
		{"go/openai-chat", "openai-chat", oa, record.EventContent},
		{"c/tgi-generate", "tgi-generate", tgi, record.EventContent},
		{"rust/anthropic-messages", "anthropic-messages", an, record.EventContent},
		{"assemblyscript/kserve-generate", "kserve-generate", ks, record.EventContent},
	}
}

func instanceFor(tb testing.TB, w workload) adapter.Instance {
	cfg := &adapter.Config{Model: "m", Stream: true}
	if w.adapter == "" {
		in, err := openai.Adapter{}.NewInstance(cfg)
		if err != nil {
			tb.Fatal(err)
		}
		return in
	}
	in, err := load(tb, w.adapter).NewInstance(cfg)
	if err != nil {
		tb.Fatal(err)
	}
	return in
}

// parseStream is the benchmarked unit: one response, parsed deferred in
// one batch, as the engine does for Wasm adapters.
func parseStream(in adapter.Instance, s *scratch) error {
	if err := in.Open(1, adapter.OpenStream); err != nil {
		return err
	}
	var err error
	s.recs, err = in.Parse(1, &s.batch, s.recs[:0])
	if cerr := in.Close(1, &s.fin); err == nil {
		err = cerr
	}
	return err
}

// scratch is the caller's reusable state for parseStream.
type scratch struct {
	batch adapter.Batch
	recs  []adapter.Record
	fin   adapter.Final
}

func newScratch(events []adapter.Event) *scratch {
	return &scratch{batch: adapter.Batch{Events: events, Flags: adapter.BatchEndOfStream}}
}

// TestBenchmarkWorkloads checks that every benchmark parses its stream
// into one content record per event with the right text size.
func TestBenchmarkWorkloads(t *testing.T) {
	for _, w := range workloads() {
		t.Run(w.name, func(t *testing.T) {
			in := instanceFor(t, w)
			defer in.Release()
			s := newScratch(w.events)
			if err := parseStream(in, s); err != nil {
				t.Fatal(err)
			}
			recs := s.recs
			if w.wantKind == record.EventIgnore {
				if len(recs) != 0 {
					t.Fatalf("%d records, want none", len(recs))
				}
				return
			}
			if len(recs) != benchEvents {
				t.Fatalf("%d records, want %d", len(recs), benchEvents)
			}
			for i, r := range recs {
				if r.Kind != w.wantKind || r.Event != uint32(i) || r.TextBytes != 9 {
					t.Fatalf("record %d = %+v, want %v for event %d with 9 text bytes", i, r, w.wantKind, i)
				}
			}
		})
	}
}

// BenchmarkParse measures parsing cost per event through each shipped
// adapter and the native OpenAI parser (ns/event; compare ratios within
// one run).
func BenchmarkParse(b *testing.B) {
	for _, w := range workloads() {
		b.Run(w.name, func(b *testing.B) {
			in := instanceFor(b, w)
			defer in.Release()
			benchParse(b, in, w)
		})
	}
}

// BenchmarkParseInterruptible measures the same parse through the C and Go
// adapters compiled interruptible, as every module loaded from a file is
// under --adapter-sandbox auto (compare with BenchmarkParse's ns/event of
// the same adapter within one run).
func BenchmarkParseInterruptible(b *testing.B) {
	for _, w := range workloads() {
		if w.name != "c/tgi-generate" && w.name != "go/openai-chat" {
			continue
		}
		b.Run(w.name, func(b *testing.B) {
			a, err := wasm.Load(context.Background(), w.adapter, wasm.Config{Interrupt: wasm.InterruptAlways})
			if err != nil {
				b.Fatal(err)
			}
			defer a.Close(context.Background())
			if !a.Interruptible() {
				b.Fatal("the module was not compiled interruptible")
			}
			in, err := a.NewInstance(&adapter.Config{Model: "m", Stream: true})
			if err != nil {
				b.Fatal(err)
			}
			defer in.Release()
			benchParse(b, in, w)
		})
	}
}

// benchParse parses w's stream b.N times through in and reports this
// thread's CPU time per event (the machine is shared: other processes
// inflate it far less than wall time) and the wall time per event.
func benchParse(b *testing.B, in adapter.Instance, w workload) {
	s := newScratch(w.events)
	var bytes int
	for _, e := range w.events {
		bytes += len(e.Data)
	}
	b.SetBytes(int64(bytes))
	b.ReportAllocs()
	runtime.LockOSThread()
	defer runtime.UnlockOSThread()
	cpu0 := threadCPU()
	for b.Loop() {
		if err := parseStream(in, s); err != nil {
			b.Fatal(err)
		}
	}
	b.ReportMetric(float64(threadCPU()-cpu0)/float64(b.N)/benchEvents, "cpu-ns/event")
	b.ReportMetric(float64(b.Elapsed().Nanoseconds())/float64(b.N)/benchEvents, "ns/event")
}

// BenchmarkBuild measures building one request (ahead of the send time).
func BenchmarkBuild(b *testing.B) {
	bi := &adapter.BuildInput{Flags: adapter.BuildStream, MaxTokens: 128, HashIDs: make([]uint64, 24), BlockSize: 16,
		PromptText: "synthesized prompt"}
	for _, w := range workloads() {
		b.Run(w.name, func(b *testing.B) {
			in := instanceFor(b, w)
			defer in.Release()
			var r adapter.HTTPRequest
			b.ReportAllocs()
			for b.Loop() {
				if err := in.Build(bi, &r); err != nil {
					b.Fatal(err)
				}
			}
		})
	}
}

// BenchmarkStartCached measures what a run pays before t0 for a Go guest
// (the largest): load with a warm on-disk compilation cache, plus one
// instance. Target: ≤ 100 ms.
func BenchmarkStartCached(b *testing.B) {
	dir := b.TempDir()
	ctx := context.Background()
	warm, err := wasm.Load(ctx, "openai-chat", wasm.Config{CacheDir: dir})
	if err != nil {
		b.Fatal(err)
	}
	warm.Close(ctx)
	cpu0 := processCPU()
	for b.Loop() {
		a, err := wasm.Load(ctx, "openai-chat", wasm.Config{CacheDir: dir})
		if err != nil {
			b.Fatal(err)
		}
		in, err := a.NewInstance(&adapter.Config{Model: "m"})
		if err != nil {
			b.Fatal(err)
		}
		in.Release()
		a.Close(ctx)
	}
	b.ReportMetric(float64(processCPU()-cpu0)/float64(b.N)/1e6, "cpu-ms/op")
}

// TestStartCached checks the cache is used: a second load of the Go guest
// reads the compiled module from CacheDir.
func TestStartCached(t *testing.T) {
	dir := t.TempDir()
	ctx := context.Background()
	a, err := wasm.Load(ctx, "openai-chat", wasm.Config{CacheDir: dir})
	if err != nil {
		t.Fatal(err)
	}
	a.Close(ctx)
	var files int
	filepath.WalkDir(dir, func(p string, d os.DirEntry, err error) error {
		if err == nil && !d.IsDir() {
			files++
		}
		return nil
	})
	if files == 0 {
		t.Fatalf("compilation cache %s is empty after a load", dir)
	}
}

// TestInstanceParseAllocs is the allocation budget of Instance.Parse on a
// shipped C guest: after warm-up, a whole open/parse/close cycle allocates
// nothing on the host.
func TestInstanceParseAllocs(t *testing.T) {
	w := workloads()[3]
	in := instanceFor(t, w)
	defer in.Release()
	s := newScratch(w.events)
	parseStream(in, s)
	allocs := testing.AllocsPerRun(50, func() {
		if err := parseStream(in, s); err != nil {
			t.Fatal(err)
		}
	})
	if allocs > 0 {
		t.Errorf("open+parse+close: %v allocs, want 0", allocs)
	}
}

// threadCPU returns the calling OS thread's CPU time in ns (Linux
// RUSAGE_THREAD; 0 elsewhere, which makes cpu-ns/event read 0).
func threadCPU() int64 {
	var ru syscall.Rusage
	if err := syscall.Getrusage(1 /* RUSAGE_THREAD */, &ru); err != nil {
		return 0
	}
	return ru.Utime.Nano() + ru.Stime.Nano()
}
