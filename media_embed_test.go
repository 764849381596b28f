package reprise

import (
	"fmt"
	"os"
	"path/filepath"
	"sort"
	"testing"

	"github.com/reprise-bench/reprise/trace/media"
)

// TestMediaEmbeddingsAgainstMock: chat-form embeddings (vLLM's VLM2Vec
// style, AIPerf's chat_embeddings) carry each request's synthetic images
// as image_url parts; the mock decodes every one at the asked size and
// format, and the records count what its log shows.
func TestMediaEmbeddingsAgainstMock(t *testing.T) {
	o := NewOptions()
	o.Endpoint = "chat-embeddings"
	o.Synthetic = SyntheticLoad{ISL: 8, OSL: 1}
	o.Replay.Concurrency, o.Replay.RequestCount = 2, 4
	o.Media = MediaOptions{Images: 2, ImageWidthMean: 48, ImageHeightMean: 32, ImageFormat: "jpeg"}
	reqs, logs := mediaRun(t, o)
	if len(reqs) != 4 {
		t.Fatalf("%d records, want 4", len(reqs))
	}
	for _, r := range reqs {
		if !r.OK() {
			t.Fatalf("request %d failed: %s %s", r.RequestID, r.ErrorKind, r.ErrorMessage)
		}
		l := logs[fmt.Sprint(r.RequestID)]
		if len(l.InputMedia) != 2 {
			t.Fatalf("request %d: the server got %+v, want 2 images", r.RequestID, l.InputMedia)
		}
		for _, m := range l.InputMedia {
			if m.Kind != media.Image.String() || m.Format != "jpeg" || m.Width != 48 || m.Height != 32 {
				t.Errorf("request %d: the server decoded %+v, want a 48x32 jpeg", r.RequestID, m)
			}
		}
		if lm := logMedia(l.InputMedia); r.Media() != lm {
			t.Errorf("request %d: records say %+v, the server's log %+v", r.RequestID, r.Media(), lm)
		}
	}
}

// TestMediaNIMImageEmbeddingsAgainstMock: NIM embeddings (NVIDIA's VLM
// embedding NIMs) carry each request's images as inputs of their own, data
// URLs with modality "image": synthetic ones, and a single_turn dataset's
// row images after the row's text. The mock decodes every one at its size
// and format, and the records count what its log shows.
func TestMediaNIMImageEmbeddingsAgainstMock(t *testing.T) {
	dir := t.TempDir()
	writeMedia(t, dir, "a.png", mustItem(t)(media.SynthImage(media.ImageSpec{Width: 20, Height: 10, Format: "png", Seed: 1})))
	rows := filepath.Join(dir, "rows.jsonl")
	if err := os.WriteFile(rows, []byte(`{"text": "a page", "image": "a.png"}`+"\n"+`{"text": "two", "images": ["a.png", "a.png"]}`+"\n"), 0o644); err != nil {
		t.Fatal(err)
	}
	for _, c := range []struct {
		name   string
		set    func(*Options)
		images []int // per request, in order
		want   string
	}{
		{"synthetic", func(o *Options) {
			o.Synthetic = SyntheticLoad{ISL: 8, OSL: 1}
			o.Replay.RequestCount = 3
			o.Media = MediaOptions{Images: 2, ImageWidthMean: 48, ImageHeightMean: 32, ImageFormat: "jpeg"}
		}, []int{2, 2, 2}, "jpeg 48x32"},
		{"single_turn", func(o *Options) {
			o.Trace.Path, o.Trace.Format, o.Synthetic.OSL = rows, "aiperf-single", 1
		}, []int{1, 2}, "png 20x10"},
	} {
		t.Run(c.name, func(t *testing.T) {
			o := NewOptions()
			o.Endpoint = "nim-embeddings"
			o.Replay.Concurrency = 1
			c.set(&o)
			reqs, logs := mediaRun(t, o)
			if len(reqs) != len(c.images) {
				t.Fatalf("%d records, want %d", len(reqs), len(c.images))
			}
			sort.Slice(reqs, func(i, j int) bool { return reqs[i].RequestID < reqs[j].RequestID })
			for i, r := range reqs {
				if !r.OK() {
					t.Fatalf("request %d failed: %s %s", i, r.ErrorKind, r.ErrorMessage)
				}
				l := logs[fmt.Sprint(r.RequestID)]
				if len(l.InputMedia) != c.images[i] {
					t.Fatalf("request %d: the server got %+v, want %d images", i, l.InputMedia, c.images[i])
				}
				for _, m := range l.InputMedia {
					if got := fmt.Sprintf("%s %dx%d", m.Format, m.Width, m.Height); m.Kind != "image" || got != c.want {
						t.Errorf("request %d: the server decoded %+v, want %s", i, m, c.want)
					}
				}
				if lm := logMedia(l.InputMedia); r.Media() != lm {
					t.Errorf("request %d: records say %+v, the server's log %+v", i, r.Media(), lm)
				}
			}
		})
	}
}
