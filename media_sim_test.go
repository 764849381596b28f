package reprise

import (
	"context"
	"io"
	"net/http"
	"net/http/httptest"
	"os"
	"path/filepath"
	"strings"
	"sync/atomic"
	"testing"

	"github.com/reprise-bench/reprise/arrowio"
)

// TestMediaSimAcceptsImages serves what llm-d-inference-sim (vLLM's API)
// answered to a chat request with an image part (trace/media/testdata,
// recorded): every request carries its image, succeeds, and takes the
// server's prompt-token count.
func TestMediaSimAcceptsImages(t *testing.T) {
	rec, err := os.ReadFile("trace/media/testdata/llmd_sim_chat_image.http")
	if err != nil {
		t.Fatal(err)
	}
	head, body, ok := strings.Cut(strings.ReplaceAll(string(rec), "\r\n", "\n"), "\n\n")
	if !ok || !strings.HasPrefix(head, "HTTP/1.1 200") {
		t.Fatalf("fixture: %q", head)
	}
	var seen atomic.Int32
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		b, _ := io.ReadAll(r.Body)
		if strings.Contains(string(b), `"image_url"`) {
			seen.Add(1)
		}
		w.Header().Set("Content-Type", "application/json")
		io.WriteString(w, body)
	}))
	defer srv.Close()
	o := NewOptions()
	o.URL, o.Model = srv.URL, "tiny"
	o.Streaming = false
	o.Synthetic = SyntheticLoad{ISL: 8, OSL: 3}
	o.Replay.Concurrency, o.Replay.RequestCount = 1, 2
	o.Media = MediaOptions{Images: 1, ImageWidthMean: 32, ImageHeightMean: 24}
	o.Output.Dir = filepath.Join(t.TempDir(), "run")
	res, err := Run(context.Background(), o)
	if err != nil {
		t.Fatal(err)
	}
	reqs, err := arrowio.ReadRequests(res.Dir)
	if err != nil {
		t.Fatal(err)
	}
	if len(reqs) != 2 || seen.Load() != 2 {
		t.Fatalf("%d records, %d requests with an image seen", len(reqs), seen.Load())
	}
	for _, r := range reqs {
		if !r.OK() || r.InputImages != 1 || r.ServerPromptTokens != 25 {
			t.Errorf("request %d: ok %v (%s %s) images %d server prompt tokens %v", r.RequestID, r.OK(), r.ErrorKind, r.ErrorMessage, r.InputImages, r.ServerPromptTokens)
		}
	}
}
