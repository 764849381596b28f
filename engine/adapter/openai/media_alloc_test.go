package openai

import (
	"bytes"
	"runtime"
	"testing"

	"github.com/reprise-bench/reprise/engine/adapter"
	"github.com/reprise-bench/reprise/trace/media"
)

// TestBenchmarkBuildChat1024PNG checks what BenchmarkBuildChat1024PNG
// measures: the body carries the 1024 × 1024 PNG's part once, as
// rendered, and a build into a reused request allocates at most one small
// object and nowhere near the image's size (the image is never encoded
// or copied into a new buffer on the send path).
func TestBenchmarkBuildChat1024PNG(t *testing.T) {
	it, err := media.SynthImage(media.ImageSpec{Width: 1024, Height: 1024, Format: "png", Seed: 1})
	if err != nil {
		t.Fatal(err)
	}
	p := media.NewPart(it)
	in, _ := Adapter{}.NewInstance(&adapter.Config{Model: "m"})
	bi := &adapter.BuildInput{PromptText: "describe the image", MaxTokens: 16, Media: []adapter.MediaPart{{Chat: p.Chat, Responses: p.Responses}}}
	var out adapter.HTTPRequest
	if err := in.Build(bi, &out); err != nil {
		t.Fatal(err)
	}
	if bytes.Count(out.Body, p.Chat) != 1 || !bytes.Contains(out.Body, []byte(`{"type":"text","text":"describe the image"}`)) {
		t.Fatalf("body of %d bytes does not carry the text and the part once", len(out.Body))
	}
	if n := testing.AllocsPerRun(20, func() { _ = in.Build(bi, &out) }); n > 1 {
		t.Errorf("a build allocates %v times, want ≤ 1", n)
	}
	var m0, m1 runtime.MemStats
	runtime.ReadMemStats(&m0)
	const builds = 20
	for range builds {
		_ = in.Build(bi, &out)
	}
	runtime.ReadMemStats(&m1)
	if per := (m1.TotalAlloc - m0.TotalAlloc) / builds; per > 4096 {
		t.Errorf("a build allocates %d bytes, want < 4 KiB (the part is %d bytes)", per, len(p.Chat))
	}
}
