package engine

import (
	"bufio"
	"context"
	"fmt"
	"io"
	"net"
	"net/http"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/reprise-bench/reprise/engine/adapter/openai"
	"github.com/reprise-bench/reprise/engine/record"
)

// llamaServer imitates llama-server's connection handling (see
// testdata/servers/llamacpp/keepalive_second_request.json): it
// advertises keep-alive, streams a chunked SSE response, then closes the
// connection 300 µs after the last chunk. A request written on the
// connection in that window is read by nobody: the client sees EOF.
type llamaServer struct {
	ln       net.Listener
	wg       sync.WaitGroup
	mu       sync.Mutex
	served   int
	accepted int
}

func startLlamaServer(t *testing.T) *llamaServer {
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	s := &llamaServer{ln: ln}
	s.wg.Add(1)
	go func() {
		defer s.wg.Done()
		for {
			c, err := ln.Accept()
			if err != nil {
				return
			}
			s.mu.Lock()
			s.accepted++
			s.mu.Unlock()
			s.wg.Add(1)
			go func() { defer s.wg.Done(); s.serve(c) }()
		}
	}()
	t.Cleanup(func() { ln.Close(); s.wg.Wait() })
	return s
}

func (s *llamaServer) serve(c net.Conn) {
	defer c.Close()
	br := bufio.NewReader(c)
	req, err := http.ReadRequest(br)
	if err != nil {
		return
	}
	io.Copy(io.Discard, req.Body)
	stream := strings.Contains(req.Header.Get("Accept"), "text/event-stream")
	w := bufio.NewWriter(c)
	if !stream {
		body := `{"choices":[{"finish_reason":"length","index":0,"message":{"role":"assistant","content":"hi there"}}],"object":"chat.completion","usage":{"completion_tokens":2,"prompt_tokens":5,"total_tokens":7}}`
		fmt.Fprintf(w, "HTTP/1.1 200 OK\r\nKeep-Alive: timeout=5, max=100\r\nContent-Type: application/json\r\nContent-Length: %d\r\n\r\n%s", len(body), body)
		w.Flush()
		s.count()
		return // closes too; non-streaming reuse is not what this tests
	}
	fmt.Fprintf(w, "HTTP/1.1 200 OK\r\nKeep-Alive: timeout=5, max=100\r\nContent-Type: text/event-stream\r\nServer: llama.cpp\r\nTransfer-Encoding: chunked\r\n\r\n")
	chunk := func(s string) { fmt.Fprintf(w, "%x\r\n%s\r\n", len(s), s); w.Flush() }
	chunk(`data: {"choices":[{"finish_reason":null,"index":0,"delta":{"role":"assistant","content":null}}],"object":"chat.completion.chunk"}` + "\n\n")
	for i := range 4 {
		chunk(fmt.Sprintf(`data: {"choices":[{"finish_reason":null,"index":0,"delta":{"content":"t%d"}}],"object":"chat.completion.chunk"}`+"\n\n", i))
	}
	chunk(`data: {"choices":[{"finish_reason":"length","index":0,"delta":{}}],"object":"chat.completion.chunk"}` + "\n\n" +
		`data: {"choices":[],"object":"chat.completion.chunk","usage":{"completion_tokens":4,"prompt_tokens":5,"total_tokens":9}}` + "\n\n")
	chunk("data: [DONE]\n\n")
	fmt.Fprintf(w, "0\r\n\r\n")
	w.Flush()
	s.count()
	time.Sleep(300 * time.Microsecond) // llama-server's FIN comes ~0.3 ms later
}

func (s *llamaServer) count() {
	s.mu.Lock()
	s.served++
	s.mu.Unlock()
}

// TestServerClosesAfterStream: back-to-back streams against a server that
// closes after every stream while advertising keep-alive give zero errors
// (Go's default client fails a few percent of them with EOF).
func TestServerClosesAfterStream(t *testing.T) {
	srv := startLlamaServer(t)
	e := newTestEngine(t, "http://"+srv.ln.Addr().String(), openai.Chat, nil)
	const senders, each = 4, 50
	var wg sync.WaitGroup
	var mu sync.Mutex
	var failed []string
	for range senders {
		wg.Add(1)
		go func() {
			defer wg.Done()
			s, err := e.NewSender()
			if err != nil {
				t.Error(err)
				return
			}
			for range each {
				var r record.Request
				s.Do(context.Background(), prepared(t, e, true), &r)
				if !r.OK() || r.ContentEvents != 4 || r.ServerCompletionTokens != 4 {
					mu.Lock()
					failed = append(failed, fmt.Sprintf("%s %s events %d", r.ErrorKind, r.ErrorMessage, r.ContentEvents))
					mu.Unlock()
				}
			}
		}()
	}
	wg.Wait()
	if len(failed) > 0 {
		t.Errorf("%d of %d requests failed, first: %s", len(failed), senders*each, failed[0])
	}
	if !e.ClosesAfterStream() {
		t.Error("the engine did not notice the server closing after streams")
	}
	srv.mu.Lock()
	accepted := srv.accepted
	srv.mu.Unlock()
	t.Logf("retries %d, connections %d for %d requests", e.Retries(), accepted, senders*each)
}

// TestHTTP2 sends streams over prior-knowledge h2c and checks the server
// saw HTTP/2 and the records are complete.
func TestHTTP2(t *testing.T) {
	srv := httptestH2C(t, func(w http.ResponseWriter, r *http.Request) {
		if r.ProtoMajor != 2 {
			http.Error(w, `{"error":{"message":"want HTTP/2, got `+r.Proto+`"}}`, http.StatusHTTPVersionNotSupported)
			return
		}
		w.Header().Set("Content-Type", "text/event-stream")
		for i := range 3 {
			fmt.Fprintf(w, "data: {\"choices\":[{\"index\":0,\"delta\":{\"content\":\"t%d\"}}]}\n\n", i)
			w.(http.Flusher).Flush()
		}
		fmt.Fprint(w, "data: {\"choices\":[{\"index\":0,\"delta\":{},\"finish_reason\":\"stop\"}],\"usage\":{\"prompt_tokens\":1,\"completion_tokens\":3}}\n\ndata: [DONE]\n\n")
	})
	cfg := NewConfig()
	cfg.BaseURL = srv
	cfg.Adapter = openai.Adapter{}
	cfg.HTTP2 = true
	e, err := New(cfg)
	if err != nil {
		t.Fatal(err)
	}
	defer e.Close()
	s, _ := e.NewSender()
	for range 3 {
		var r record.Request
		s.Do(context.Background(), prepared(t, e, true), &r)
		if !r.OK() || r.ContentEvents != 3 || r.FinishReason != "stop" {
			t.Fatalf("%s %s: %d content events, finish %q", r.ErrorKind, r.ErrorMessage, r.ContentEvents, r.FinishReason)
		}
	}
}

func httptestH2C(t *testing.T, h http.HandlerFunc) string {
	t.Helper()
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	var p http.Protocols
	p.SetHTTP1(true)
	p.SetUnencryptedHTTP2(true)
	hs := &http.Server{Handler: h, Protocols: &p}
	go hs.Serve(ln)
	t.Cleanup(func() { hs.Close() })
	return "http://" + ln.Addr().String()
}
