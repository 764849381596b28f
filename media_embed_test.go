package reprise

import (
	"fmt"

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
