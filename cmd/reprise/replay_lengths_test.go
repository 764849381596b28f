package main

import (
	"encoding/json"
	"io"
	"net/http"
	"net/http/httptest"
	"os"
	"path/filepath"
	"strings"
	"sync"
	"testing"
)

// captureServer answers every chat request at once, without streaming,
// and keeps each request's max_tokens (-1 when the body has none).
type captureServer struct {
	*httptest.Server
	mu        sync.Mutex
	maxTokens []int
}

func newCaptureServer(t *testing.T) *captureServer {
	t.Helper()
	s := &captureServer{}
	s.Server = httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		if !strings.HasPrefix(r.URL.Path, "/v1/") || r.Method == http.MethodGet { // no metrics, no /v1/models (the preflight passes on a 404)
			http.NotFound(w, r)
			return
		}
		var body struct {
			MaxTokens *int `json:"max_tokens"`
		}
		b, _ := io.ReadAll(r.Body)
		if err := json.Unmarshal(b, &body); err != nil {
			http.Error(w, err.Error(), http.StatusBadRequest)
			return
		}
		n := -1
		if body.MaxTokens != nil {
			n = *body.MaxTokens
		}
		s.mu.Lock()
		s.maxTokens = append(s.maxTokens, n)
		s.mu.Unlock()
		w.Header().Set("Content-Type", "application/json")
		io.WriteString(w, `{"id":"x","object":"chat.completion","model":"m","choices":[{"index":0,`+
			`"message":{"role":"assistant","content":"ok"},"finish_reason":"length"}],`+
			`"usage":{"prompt_tokens":1,"completion_tokens":1,"total_tokens":2}}`)
	}))
	t.Cleanup(s.Close)
	return s
}

func (s *captureServer) sent() []int {
	s.mu.Lock()
	defer s.mu.Unlock()
	return append([]int(nil), s.maxTokens...)
}

// A trace row without an output length would be sent without max_tokens,
// which under the default --ignore-eos the server never ends (a real server
// generated 89,862 tokens and the run hung). It is a usage error naming
// file, line and field, before anything is sent; --osl N gives such rows N
// output tokens; --no-max-tokens-from-trace sends no max_tokens anyway.
func TestReplayMissingOutputLength(t *testing.T) {
	path := filepath.Join(t.TempDir(), "t.jsonl")
	trace := `{"timestamp": 0, "input_length": 20, "output_length": 3}
{"timestamp": 1, "input_length": 20}
`
	if err := os.WriteFile(path, []byte(trace), 0o644); err != nil {
		t.Fatal(err)
	}
	replay := func(t *testing.T, stdin string, args ...string) (*captureServer, int, string) {
		t.Helper()
		srv := newCaptureServer(t)
		code, _, stderr := runCLI(t, stdin, append([]string{"replay", "--url", srv.URL, "--model", "m", "--no-streaming",
			"--out", t.TempDir(), "--format", "jsonl", "--quiet", "--max-error-rate", "0"}, args...)...)
		return srv, code, stderr
	}
	for _, src := range []struct{ name, path, stdin string }{{"file", path, ""}, {"stdin", "-", trace}} {
		t.Run(src.name, func(t *testing.T) {
			srv, code, stderr := replay(t, src.stdin, src.path)
			name := src.path
			if code != 2 || !strings.Contains(stderr, name+":2: output_length: missing") || !strings.Contains(stderr, "--osl N") {
				t.Errorf("exit %d, stderr %q; want 2 and %s:2: output_length: missing … --osl N", code, stderr, name)
			}
			if n := len(srv.sent()); n != 0 {
				t.Errorf("%d requests sent; want none", n)
			}

			srv, code, stderr = replay(t, src.stdin, src.path, "--osl", "7")
			got := srv.sent()
			if code != 0 || len(got) != 2 || !(got[0] == 3 && got[1] == 7 || got[0] == 7 && got[1] == 3) {
				t.Errorf("--osl 7: exit %d, max_tokens %v, stderr %q; want 0 and [3 7]", code, got, stderr)
			}
		})
	}

	srv, code, stderr := replay(t, "", path, "--no-max-tokens-from-trace")
	if got := srv.sent(); code != 0 || len(got) != 2 || got[0] != -1 || got[1] != -1 {
		t.Errorf("--no-max-tokens-from-trace: exit %d, max_tokens %v, stderr %q; want 0 and none sent", code, got, stderr)
	}
	for _, bad := range [][]string{{"--osl", "7.5"}, {"--osl", "7", "--osl-stddev", "2"}, {"--isl", "10"}} {
		if _, code, stderr := replay(t, "", append([]string{path}, bad...)...); code != 2 {
			t.Errorf("%v with a trace: exit %d, stderr %q; want 2", bad, code, stderr)
		}
	}
}

// A row longer than --max-input-tokens (default 2^24) is a usage error
// naming file, line and field, in replay and analyze-trace alike.
func TestMaxInputTokensFlag(t *testing.T) {
	path := filepath.Join(t.TempDir(), "t.jsonl")
	if err := os.WriteFile(path, []byte(`{"timestamp": 0, "input_length": 200, "output_length": 3}`+"\n"), 0o644); err != nil {
		t.Fatal(err)
	}
	want := path + ":1: input_length: 200 tokens, over the cap of 100 (--max-input-tokens)"
	srv := newCaptureServer(t)
	code, _, stderr := runCLI(t, "", "replay", path, "--url", srv.URL, "--model", "m", "--out", t.TempDir(), "--quiet", "--max-input-tokens", "100")
	if code != 2 || !strings.Contains(stderr, want) {
		t.Errorf("replay: exit %d, stderr %q; want 2 and %q", code, stderr, want)
	}
	code, _, stderr = runCLI(t, "", "analyze-trace", "--max-input-tokens", "100", path)
	if code != 2 || !strings.Contains(stderr, want) {
		t.Errorf("analyze-trace: exit %d, stderr %q; want 2 and %q", code, stderr, want)
	}
	if code, _, stderr := runCLI(t, "", "analyze-trace", path); code != 0 {
		t.Errorf("analyze-trace under the default cap: exit %d, %s", code, stderr)
	}
	if code, _, _ := runCLI(t, "", "analyze-trace", "--max-input-tokens", "0", path); code != 2 {
		t.Errorf("--max-input-tokens 0: exit %d, want 2", code)
	}
}
