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
// event: 16 and 512 tokens cost the same, within the request budget.
func TestStreamAllocs(t *testing.T) {
	const budget = 20 // request decode (encoding/json: 14), response id, request copies
	if raceEnabled {
		t.Skip("sync.Pool drops items under -race; run without -race")
	}
	s := newTestServer(t, nil)
	per := map[int]float64{}
	for _, n := range []int{16, 512} {
		run, w := serveOnce(t, s, "/v1/chat/completions", `{"messages":[{"role":"user","content":"Hello there, how are you today?"}],"max_tokens":`+
			strconv.Itoa(n)+`,"ignore_eos":true,"stream":true,"stream_options":{"include_usage":true}}`)
		run()
		if w.n < n*100 {
			t.Fatalf("%d tokens wrote only %d bytes", n, w.n)
		}
		per[n] = testing.AllocsPerRun(50, run)
	}
	if per[16] != per[512] || per[16] > budget {
		t.Errorf("allocations per streamed request: %v with 16 tokens, %v with 512; want equal and at most %d", per[16], per[512], budget)
	}
	t.Logf("allocations per streamed request: %v", per[16])
}

// TestStreamAllocsResponses: a streamed Responses answer allocates per
// request, never per event.
func TestStreamAllocsResponses(t *testing.T) {
	const budget = 28 // request decode (encoding/json: the input items), response id, request copies
	if raceEnabled {
		t.Skip("sync.Pool drops items under -race; run without -race")
	}
	s := newTestServer(t, func(c *Config) { c.ReasoningTokens = 4 })
	per := map[int]float64{}
	for _, n := range []int{16, 512} {
		run, w := serveOnce(t, s, "/v1/responses", `{"input":[{"type":"message","role":"user","content":"Hello there, how are you today?"}],"max_output_tokens":`+
			strconv.Itoa(n)+`,"ignore_eos":true,"stream":true}`)
		run()
		if w.n < n*100 {
			t.Fatalf("%d tokens wrote only %d bytes", n, w.n)
		}
		per[n] = testing.AllocsPerRun(50, run)
	}
	if per[16] != per[512] || per[16] > budget {
		t.Errorf("allocations per streamed Responses answer: %v with 16 tokens, %v with 512; want equal and at most %d", per[16], per[512], budget)
	}
	t.Logf("allocations per streamed Responses answer: %v", per[16])
}

// TestStreamAllocsGenerate: streamed SGLang and TGI answers allocate per
// request, never per event.
func TestStreamAllocsGenerate(t *testing.T) {
	const budget = 24 // request decode (encoding/json), response id, request copies
	if raceEnabled {
		t.Skip("sync.Pool drops items under -race; run without -race")
	}
	s := newTestServer(t, nil)
	for _, tc := range []struct{ path, body string }{
		{"/generate", `{"text":"Hello there, how are you today?","sampling_params":{"max_new_tokens":N,"ignore_eos":true},"stream":true}`},
		{"/generate_stream", `{"inputs":"Hello there, how are you today?","parameters":{"max_new_tokens":N,"details":true}}`},
	} {
		per := map[int]float64{}
		for _, n := range []int{16, 256} {
			run, w := serveOnce(t, s, tc.path, strings.Replace(tc.body, "N", strconv.Itoa(n), 1))
			run()
			if w.n < n*50 {
				t.Fatalf("%s: %d tokens wrote only %d bytes", tc.path, n, w.n)
			}
			per[n] = testing.AllocsPerRun(20, run)
		}
		if per[16] != per[256] || per[16] > budget {
			t.Errorf("%s: allocations per streamed answer: %v with 16 tokens, %v with 256; want equal and at most %d", tc.path, per[16], per[256], budget)
		}
	}
}
