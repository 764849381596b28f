package mockserver

import (
	"bytes"
	"io"
	"net/http"
	"strconv"
	"strings"
	"testing"
)

// TestRenderAllocs: rendering an event into a buffer with room allocates
// nothing, for every event kind and both flavors.
func TestRenderAllocs(t *testing.T) {
	for _, llama := range []bool{false, true} {
		for _, chat := range []bool{false, true} {
			var rd renderer
			rd.init(llama, chat, "chatcmpl-0123456789abcdef0123456789abcdef", "reprise-mock", 1795284721)
			rd.setUsage(100, 32, 16, 4, 12.5, 150)
			buf := make([]byte, 0, 4096)
			allocs := testing.AllocsPerRun(100, func() {
				buf = rd.role(buf[:0], 0)
				buf = rd.token(buf[:0], 1, filler(3, 1), false)
				buf = rd.token(buf[:0], 0, filler(4, 0), true)
				buf = rd.finish(buf[:0], 0, "length", true, true)
				buf = rd.usageChunk(buf[:0])
				buf = appendDone(buf[:0])
				rd.setUsage(100, 32, 16, 4, 12.5, 150)
			})
			if allocs != 0 {
				t.Errorf("llama %v chat %v: %v allocations per event set, want 0", llama, chat, allocs)
			}
		}
	}
}

// discardRW is a ResponseWriter that counts and drops what is written. It
// cannot be hijacked.
type discardRW struct {
	h      http.Header
	n      int
	status int
}

func (d *discardRW) Header() http.Header         { return d.h }
func (d *discardRW) Write(p []byte) (int, error) { d.n += len(p); return len(p), nil }
func (d *discardRW) WriteHeader(code int)        { d.status = code }
func (d *discardRW) FlushError() error           { return nil }

// serveOnce returns a function that runs one request through the handler
// with a reused request and writer.
func serveOnce(t testing.TB, s *Server, path, body string) (func(), *discardRW) {
	return serveOnceHeader(t, s, path, body)
}

// serveOnceHeader is serveOnce with request headers (name, value, ...).
func serveOnceHeader(t testing.TB, s *Server, path, body string, headers ...string) (func(), *discardRW) {
	t.Helper()
	rd := bytes.NewReader([]byte(body))
	req, err := http.NewRequest("POST", "http://mock"+path, io.NopCloser(rd))
	if err != nil {
		t.Fatal(err)
	}
	for i := 0; i+1 < len(headers); i += 2 {
		req.Header.Set(headers[i], headers[i+1])
	}
	w := &discardRW{h: http.Header{}}
	api := apiCompletions
	switch path {
	case "/v1/chat/completions":
		api = apiChat
	case "/v1/responses":
		api = apiResponses
	case "/generate":
		api = apiSGLang
	case "/generate_stream":
		api = apiTGIStream
	}
	return func() {
		rd.Reset([]byte(body))
		w.n, w.status = 0, 0
		s.serveCompletion(w, req, api)
	}, w
}

func newTestServer(t testing.TB, mutate func(*Config)) *Server {
	t.Helper()
	cfg := NewConfig()
	cfg.TTFT, cfg.ITL, cfg.KeepLog = 0, 0, false
	if mutate != nil {
		mutate(cfg)
	}
	s := newServer(cfg)
	tok, err := DefaultTokenizer()
	if err != nil {
		t.Fatal(err)
	}
	s.tok = tok
	return s
}

// TestStreamAllocs: a streamed response allocates per request, never per
// event: 16 and 256 tokens cost the same, within the request budget.
func TestStreamAllocs(t *testing.T) {
	const budget = 20 // request decode (encoding/json: 14), response id, request copies
	s := newTestServer(t, nil)
	per := checkStreamAllocs(t, s, "/v1/chat/completions", `{"messages":[{"role":"user","content":"Hello there, how are you today?"}],"max_tokens":N,`+
		`"ignore_eos":true,"stream":true,"stream_options":{"include_usage":true}}`, budget)
	t.Logf("allocations per streamed request: %v", per)
}

// TestStreamAllocsResponses: a streamed Responses answer allocates per
// request, never per event.
func TestStreamAllocsResponses(t *testing.T) {
	const budget = 28 // request decode (encoding/json: the input items), response id, request copies
	s := newTestServer(t, func(c *Config) { c.ReasoningTokens = 4 })
	per := checkStreamAllocs(t, s, "/v1/responses", `{"input":[{"type":"message","role":"user","content":"Hello there, how are you today?"}],"max_output_tokens":N,`+
		`"ignore_eos":true,"stream":true}`, budget)
	t.Logf("allocations per streamed Responses answer: %v", per)
}

// TestStreamAllocsGenerate: streamed SGLang and TGI answers allocate per
// request, never per event.
func TestStreamAllocsGenerate(t *testing.T) {
	const budget = 24 // request decode (encoding/json), response id, request copies
	s := newTestServer(t, nil)
	checkStreamAllocs(t, s, "/generate", `{"text":"Hello there, how are you today?","sampling_params":{"max_new_tokens":N,"ignore_eos":true},"stream":true}`, budget)
	checkStreamAllocs(t, s, "/generate_stream", `{"inputs":"Hello there, how are you today?","parameters":{"max_new_tokens":N,"details":true}}`, budget)
}

// checkStreamAllocs serves body on path with N replaced by 16 and by 256
// tokens, and fails t unless both answers allocate the same, at most
// budget; it returns that count. It skips under -race (sync.Pool drops
// items there).
func checkStreamAllocs(t *testing.T, s *Server, path, body string, budget float64) float64 {
	t.Helper()
	if raceEnabled {
		t.Skip("sync.Pool drops items under -race; run without -race")
	}
	per := map[int]float64{}
	for _, n := range []int{16, 256} {
		run, w := serveOnce(t, s, path, strings.Replace(body, "N", strconv.Itoa(n), 1))
		run()
		if w.n < n*50 {
			t.Fatalf("%s: %d tokens wrote only %d bytes", path, n, w.n)
		}
		per[n] = testing.AllocsPerRun(20, run)
	}
	if per[16] != per[256] || per[16] > budget {
		t.Errorf("%s: allocations per streamed answer: %v with 16 tokens, %v with 256; want equal and at most %v", path, per[16], per[256], budget)
	}
	return per[16]
}
