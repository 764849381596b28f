package engine

import (
	"bytes"
	"context"
	"testing"
	"time"

	"github.com/reprise-bench/reprise/engine/adapter"
	"github.com/reprise-bench/reprise/engine/adapter/openai"
	"github.com/reprise-bench/reprise/engine/record"
	"github.com/reprise-bench/reprise/internal/mockserver"
	"github.com/reprise-bench/reprise/trace/media"
)

// mediaEngine is an engine for the OpenAI chat adapter against url.
func mediaEngine(t testing.TB, url string) *Engine {
	t.Helper()
	cfg := NewConfig()
	cfg.BaseURL = url
	cfg.Adapter = openai.Adapter{}
	e, err := New(cfg)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(e.Close)
	return e
}

// buildMedia builds request i with g's synthetic media into p, as the
// runner does: the generator's cached parts, then the adapter's build.
func buildMedia(b *Builder, g *media.Generator, i uint64, parts []*media.Part, mp []adapter.MediaPart, p *Prepared) ([]*media.Part, []adapter.MediaPart, error) {
	parts, err := g.Request(parts[:0], i)
	if err != nil {
		return parts, mp, err
	}
	mp = mp[:0]
	for _, q := range parts {
		mp = append(mp, adapter.MediaPart{Chat: q.Chat, Responses: q.Responses})
	}
	in := adapter.BuildInput{PromptText: "describe the image", MaxTokens: 4, Media: mp}
	return parts, mp, b.Build(&in, p)
}

// BenchmarkBuildRequest1024PNG is the cost of building one chat request
// that carries a 1024 × 1024 synthetic PNG, from the generator's cache to
// the engine's Prepared request (the image was encoded once, before the
// loop): the adapter's body and the Prepared copy of it.
func BenchmarkBuildRequest1024PNG(b *testing.B) {
	e := mediaEngine(b, "http://127.0.0.1:1")
	bl, err := e.NewBuilder()
	if err != nil {
		b.Fatal(err)
	}
	defer bl.Close()
	g := media.NewGenerator(media.SyntheticConfig{Images: 1, ImageWidthMean: 1024, ImageHeightMean: 1024, ImageReuse: true}, 1)
	var p Prepared
	parts, mp, err := buildMedia(bl, g, 0, nil, nil, &p)
	if err != nil {
		b.Fatal(err)
	}
	b.SetBytes(int64(len(p.Body)))
	b.ReportAllocs()
	i := uint64(0)
	for b.Loop() {
		i++
		if parts, mp, err = buildMedia(bl, g, i, parts, mp, &p); err != nil {
			b.Fatal(err)
		}
	}
}

// TestBenchmarkBuildRequest1024PNG checks what the benchmark measures and
// where images are encoded: three requests of two distinct 1024 × 1024
// PNGs each, every one built twice, encode six images (once per distinct
// image, cached by seed); each Prepared body carries its two parts once;
// sending them to the mock server encodes nothing more (the send path
// only writes bytes), and the mock decodes every image at its size. With
// --image-reuse the benchmark's loop encodes nothing at all.
func TestBenchmarkBuildRequest1024PNG(t *testing.T) {
	srv := startMock(t, func(c *mockserver.Config) { c.KeepLog = true })
	e := mediaEngine(t, srv.URL())
	bl, err := e.NewBuilder()
	if err != nil {
		t.Fatal(err)
	}
	defer bl.Close()
	g := media.NewGenerator(media.SyntheticConfig{Images: 2, ImageWidthMean: 1024, ImageHeightMean: 1024}, 9)
	ps := make([]Prepared, 3)
	var parts []*media.Part
	var mp []adapter.MediaPart
	for range 2 {
		for i := range ps {
			ps[i] = Prepared{}
			if parts, mp, err = buildMedia(bl, g, uint64(i), parts, mp, &ps[i]); err != nil {
				t.Fatal(err)
			}
			for _, q := range parts {
				if bytes.Count(ps[i].Body, q.Chat) != 1 {
					t.Fatalf("request %d: the body of %d bytes does not carry its image part once", i, len(ps[i].Body))
				}
			}
		}
	}
	if n := g.Encodes(); n != 6 {
		t.Fatalf("%d images encoded for 3 requests of 2 distinct images, each built twice; want 6", n)
	}
	s, err := e.NewSender()
	if err != nil {
		t.Fatal(err)
	}
	defer s.Close()
	for i := range ps {
		var r record.Request
		s.Do(context.Background(), &ps[i], &r)
		if !r.OK() {
			t.Fatalf("request %d: %s %s", i, r.ErrorKind, r.ErrorMessage)
		}
	}
	if n := g.Encodes(); n != 6 {
		t.Errorf("%d images encoded after the sends, want still 6", n)
	}
	ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
	defer cancel()
	if err := srv.WaitIdle(ctx); err != nil { // each request is logged after its response
		t.Fatal(err)
	}
	images := 0
	for _, l := range srv.Log() {
		for _, m := range l.InputMedia {
			if m.Kind != "image" || m.Format != "png" || m.Width != 1024 || m.Height != 1024 {
				t.Errorf("the server decoded %+v, want a 1024×1024 png", m)
			}
			images++
		}
	}
	if images != 6 {
		t.Errorf("the server got %d images, want 6", images)
	}
	reuse := media.NewGenerator(media.SyntheticConfig{Images: 1, ImageWidthMean: 1024, ImageHeightMean: 1024, ImageReuse: true}, 1)
	var p Prepared
	for i := range uint64(5) {
		if parts, mp, err = buildMedia(bl, reuse, i, parts, mp, &p); err != nil {
			t.Fatal(err)
		}
	}
	if n := reuse.Encodes(); n != 1 {
		t.Errorf("with --image-reuse, 5 builds encoded %d images, want 1", n)
	}
	// The benchmark's allocations: the Prepared body (a copy of the
	// adapter's, 1.7 MB here) and its request head, nothing per pixel.
	i := uint64(5)
	if n := testing.AllocsPerRun(10, func() { i++; parts, mp, _ = buildMedia(bl, reuse, i, parts, mp, &p) }); n > 5 {
		t.Errorf("a build with a cached 1024×1024 PNG allocates %v times, want ≤ 5", n)
	}
}
