package engine

import (
	"bufio"
	"bytes"
	"context"
	"fmt"
	"io"
	"net"
	"net/http"
	"net/http/httptest"
	"strconv"
	"strings"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/reprise-bench/reprise/engine/adapter"
	"github.com/reprise-bench/reprise/engine/adapter/openai"
	"github.com/reprise-bench/reprise/engine/internal/h1"
	"github.com/reprise-bench/reprise/engine/record"
)

// scriptServer answers every request on a connection with the next of its
// raw responses (then closes the connection when close is set), and keeps
// what it received.
type scriptServer struct {
	ln       net.Listener
	respond  func(n int) (raw string, close bool)
	mu       sync.Mutex
	reqs     []*http.Request
	bodies   []string
	accepted atomic.Int32
	reset    atomic.Bool // end closing connections with a reset (RST)
}

func startScript(t *testing.T, respond func(n int) (string, bool)) *scriptServer {
	t.Helper()
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	s := &scriptServer{ln: ln, respond: respond}
	var wg sync.WaitGroup
	wg.Go(func() {
		for {
			c, err := ln.Accept()
			if err != nil {
				return
			}
			s.accepted.Add(1)
			wg.Go(func() { s.serve(c) })
		}
	})
	t.Cleanup(func() { ln.Close(); wg.Wait() })
	return s
}

func (s *scriptServer) serve(c net.Conn) {
	defer c.Close()
	br := bufio.NewReader(c)
	for {
		req, err := http.ReadRequest(br)
		if err != nil {
			return
		}
		body, _ := io.ReadAll(req.Body)
		s.mu.Lock()
		n := len(s.reqs)
		s.reqs = append(s.reqs, req)
		s.bodies = append(s.bodies, string(body))
		s.mu.Unlock()
		raw, closeConn := s.respond(n)
		if _, err := io.WriteString(c, raw); err != nil || closeConn {
			if s.reset.Load() {
				_ = c.(*net.TCPConn).SetLinger(0)
			}
			return
		}
	}
}

func (s *scriptServer) url() string { return "http://" + s.ln.Addr().String() }

// configured returns an engine for url with the OpenAI chat adapter and
// what mut changes.
func configured(t *testing.T, url string, mut func(*Config)) *Engine {
	t.Helper()
	cfg := NewConfig()
	cfg.BaseURL = url
	cfg.Adapter = openai.Adapter{}
	cfg.AdapterConfig = adapter.Config{Model: "m"}
	if mut != nil {
		mut(&cfg)
	}
	e, err := New(cfg)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(e.Close)
	return e
}

const okJSON = `{"choices":[{"finish_reason":"length","index":0,"message":{"role":"assistant","content":"hi"}}],"usage":{"completion_tokens":1,"prompt_tokens":3,"total_tokens":4}}`

func okResponse() string {
	return fmt.Sprintf("HTTP/1.1 200 OK\r\nContent-Type: application/json\r\nContent-Length: %d\r\n\r\n%s", len(okJSON), okJSON)
}

// TestH1RequestOnTheWire: the request reprise writes is what net/http
// would send: method, path under the base URL's, Host, Content-Length,
// the adapter's headers with -H overriding them, the request id, and the
// body byte for byte. Connections are reused.
func TestH1RequestOnTheWire(t *testing.T) {
	srv := startScript(t, func(int) (string, bool) { return okResponse(), false })
	e := configured(t, srv.url()+"/prefix/", func(c *Config) {
		c.Header = []adapter.Header{{Name: "content-type", Value: "application/json; charset=utf-8"}, {Name: "X-Team", Value: "a b"}}
	})
	s, _ := e.NewSender()
	for i := range 3 {
		p := prepared(t, e, false)
		r := record.Request{RequestID: uint64(40 + i)}
		s.Do(context.Background(), p, &r)
		if !r.OK() || r.StatusCode != 200 || r.ServerPromptTokens != 3 {
			t.Fatalf("request %d: %s %s status %d", i, r.ErrorKind, r.ErrorMessage, r.StatusCode)
		}
		if i > 0 && !r.ConnReused {
			t.Errorf("request %d: connection not reused", i)
		}
		srv.mu.Lock()
		req, body := srv.reqs[i], srv.bodies[i]
		srv.mu.Unlock()
		if req.Method != "POST" || req.URL.Path != "/prefix/v1/chat/completions" || req.Proto != "HTTP/1.1" {
			t.Errorf("request line %s %s %s", req.Method, req.URL.Path, req.Proto)
		}
		if req.Host != srv.ln.Addr().String() {
			t.Errorf("Host %q", req.Host)
		}
		if got := req.Header.Values("Content-Type"); len(got) != 1 || got[0] != "application/json; charset=utf-8" {
			t.Errorf("Content-Type %q: -H must replace the adapter's", got)
		}
		if req.Header.Get("X-Team") != "a b" || req.Header.Get("X-Request-Id") != fmt.Sprint(40+i) {
			t.Errorf("headers %v", req.Header)
		}
		if req.ContentLength != int64(len(p.Body)) || body != string(p.Body) {
			t.Errorf("body %d bytes %q, want %q", req.ContentLength, body, p.Body)
		}
	}
	if n := srv.accepted.Load(); n != 1 {
		t.Errorf("%d connections for 3 sequential requests", n)
	}
}

// TestH1Responses: what servers send back, and what each becomes.
func TestH1Responses(t *testing.T) {
	sse := func(events ...string) string {
		var b strings.Builder
		b.WriteString("HTTP/1.1 200 OK\r\nContent-Type: text/event-stream\r\nTransfer-Encoding: chunked\r\n\r\n")
		for _, ev := range events {
			fmt.Fprintf(&b, "%x\r\n%s\r\n", len(ev), ev)
		}
		b.WriteString("0\r\n\r\n")
		return b.String()
	}
	tok := func(s string) string {
		return `data: {"choices":[{"index":0,"delta":{"content":"` + s + `"},"finish_reason":null}]}` + "\n\n"
	}
	cases := []struct {
		name    string
		stream  bool
		raw     string
		close   bool
		reset   bool // close with a reset (RST) instead of a FIN
		want    record.ErrorKind
		msg     string
		content int32
	}{
		{name: "stream", stream: true, raw: sse(tok("a"), tok("b")+tok("c"), "data: [DONE]\n\n"), content: 3},
		{name: "stream until close", stream: true, close: true,
			raw: "HTTP/1.1 200 OK\r\nContent-Type: text/event-stream\r\n\r\n" + tok("a") + tok("b") + "data: [DONE]\n\n", content: 2},
		{name: "interim 100", raw: "HTTP/1.1 100 Continue\r\n\r\n" + okResponse(), content: 1},
		{name: "status with JSON error", raw: "HTTP/1.1 400 Bad Request\r\nContent-Type: application/json\r\nContent-Length: 40\r\n\r\n" +
			`{"error":{"message":"context too long"}}`, want: record.ErrHTTPStatus, msg: "HTTP 400 Bad Request: context too long"},
		{name: "status closed mid body", close: true, raw: "HTTP/1.1 503 Service Unavailable\r\nContent-Length: 100\r\n\r\nbusy",
			want: record.ErrHTTPStatus, msg: "HTTP 503 Service Unavailable: busy"},
		// A web server's page, not an inference server's error: one line
		// with the content type, the size and the page's first bytes.
		{name: "status with HTML page", raw: "HTTP/1.1 501 Unsupported method ('POST')\r\nContent-Type: text/html;charset=utf-8\r\nContent-Length: 90\r\n\r\n" +
			"<!DOCTYPE HTML>\n<html lang=\"en\">\n    <head>\n        <title>Error response</title>\n</html>\n",
			want: record.ErrHTTPStatus, msg: `HTTP 501 Not Implemented (text/html, 90 bytes): <!DOCTYPE HTML> <html lang="en"> <head> <title>Error response</title> </html>; expected an inference server's JSON`},
		{name: "status without body", raw: "HTTP/1.1 404 Not Found\r\nContent-Length: 0\r\n\r\n",
			want: record.ErrHTTPStatus, msg: "HTTP 404 Not Found (empty body)"},
		{name: "malformed status", raw: "HTTP/1.1 OK\r\n\r\n", want: record.ErrMalformed, msg: "status line"},
		{name: "closed mid stream", stream: true, close: true,
			raw:  "HTTP/1.1 200 OK\r\nContent-Type: text/event-stream\r\nTransfer-Encoding: chunked\r\n\r\n" + fmt.Sprintf("%x\r\n%s\r\n", len(tok("a")), tok("a")),
			want: record.ErrReset, msg: "inside the response body", content: 1},
		{name: "malformed chunk size", stream: true, close: true,
			raw:  "HTTP/1.1 200 OK\r\nContent-Type: text/event-stream\r\nTransfer-Encoding: chunked\r\n\r\n" + fmt.Sprintf("%x\r\n%s\r\n", len(tok("a")), tok("a")) + "zz\r\n" + tok("b"),
			want: record.ErrMalformed, msg: "bad chunk size", content: 1},
		{name: "closed before headers", close: true, raw: "HTTP/1.1 200 OK\r\nContent-", want: record.ErrReset, msg: "before the response headers"},
		{name: "reset mid stream", stream: true, close: true, reset: true,
			raw:  "HTTP/1.1 200 OK\r\nContent-Type: text/event-stream\r\nTransfer-Encoding: chunked\r\n\r\n" + fmt.Sprintf("%x\r\n%s\r\n", len(tok("a")), tok("a")),
			want: record.ErrReset, msg: "connection reset", content: 1},
	}
	for _, c := range cases {
		for _, reactor := range []bool{true, false} {
			t.Run(fmt.Sprintf("%s/reactor=%v", c.name, reactor), func(t *testing.T) {
				srv := startScript(t, func(int) (string, bool) { return c.raw, c.close })
				srv.reset.Store(c.reset)
				// A response whose end the client misses (a FIN or reset read
				// with the last bytes) would hang until the timeout: make that
				// a failure.
				e := configured(t, srv.url(), func(cfg *Config) {
					cfg.AdapterConfig = adapter.Config{Model: "reprise-mock", Stream: true, IncludeUsage: true}
					cfg.Timeout = 5 * time.Second
					cfg.NoReactor = !reactor
				})
				s, _ := e.NewSender()
				var r record.Request
				s.Do(context.Background(), prepared(t, e, c.stream), &r)
				if r.ErrorKind != c.want || !strings.Contains(r.ErrorMessage, c.msg) {
					t.Errorf("kind %q message %q, want %q with %q", r.ErrorKind, r.ErrorMessage, c.want, c.msg)
				}
				if r.ContentEvents != c.content {
					t.Errorf("%d content events, want %d", r.ContentEvents, c.content)
				}
				if r.HeadersNS != 0 && (r.HeadersNS < r.SentNS || r.EndNS < r.HeadersNS) {
					t.Errorf("timeline sent %d headers %d end %d", r.SentNS, r.HeadersNS, r.EndNS)
				}
				if r.Retries != 0 {
					t.Errorf("%d retries of a request the server answered", r.Retries)
				}
			})
		}
	}
}

// TestH1Timeout: --timeout ends a request that stalls, as a timeout:
// before the response, and inside a stream (read by the reactor or by the
// sender).
func TestH1Timeout(t *testing.T) {
	for _, c := range []struct {
		name      string
		stream    bool
		noReactor bool
	}{{"response", false, false}, {"stream", true, false}, {"stream/sender", true, true}} {
		t.Run(c.name, func(t *testing.T) {
			srv := startScript(t, func(int) (string, bool) {
				if !c.stream {
					time.Sleep(300 * time.Millisecond)
					return okResponse(), false
				}
				return "HTTP/1.1 200 OK\r\nContent-Type: text/event-stream\r\n\r\n" +
					`data: {"choices":[{"index":0,"delta":{"content":"a"},"finish_reason":null}]}` + "\n\n", false
			})
			e := configured(t, srv.url(), func(cfg *Config) {
				cfg.Timeout = 50 * time.Millisecond
				cfg.NoReactor = c.noReactor
				cfg.AdapterConfig = adapter.Config{Model: "m", Stream: c.stream}
			})
			s, _ := e.NewSender()
			var r record.Request
			s.Do(context.Background(), prepared(t, e, c.stream), &r)
			if r.ErrorKind != record.ErrTimeout || !strings.HasPrefix(r.ErrorMessage, "request timed out (--timeout)") {
				t.Errorf("kind %q (%s), want the timeout", r.ErrorKind, r.ErrorMessage)
			}
			if d := time.Duration(r.EndNS - r.SentNS); d < 50*time.Millisecond || d > 250*time.Millisecond {
				t.Errorf("ended after %v, want about the 50 ms timeout", d)
			}
		})
	}
}

// TestH1SendAllocs: a request on a kept-alive connection allocates
// nothing on the client: no cancellation hook per request, no
// per-request HTTP objects (net/http's client made about 60). A
// streamed one (three events) allocates no more when the reactor reads it
// than when its sender does. The server here allocates nothing either, so
// the count is the client's.
func TestH1SendAllocs(t *testing.T) {
	if raceEnabled {
		t.Skip("the race detector allocates on its own")
	}
	var events strings.Builder
	for i := range 3 {
		fmt.Fprintf(&events, "data: {\"choices\":[{\"index\":0,\"delta\":{\"content\":\"t%d\"},\"finish_reason\":null}]}\n\n", i)
	}
	events.WriteString("data: [DONE]\n\n")
	sse := fmt.Sprintf("HTTP/1.1 200 OK\r\nContent-Type: text/event-stream\r\nContent-Length: %d\r\n\r\n%s", events.Len(), events.String())
	var got [3]float64
	for i, c := range []struct {
		name              string
		stream, noReactor bool
	}{{"response", false, false}, {"stream/reactor", true, false}, {"stream/sender", true, true}} {
		resp := okResponse()
		if c.stream {
			resp = sse
		}
		got[i] = sendAllocs(t, resp, c.stream, c.noReactor)
		if got[i] > h1SendAllocBudget {
			t.Errorf("%s: %.1f allocations per request, budget %d", c.name, got[i], h1SendAllocBudget)
		}
	}
	if got[1] > got[2] {
		t.Errorf("a stream read by the reactor allocates %.1f per request, by its sender %.1f", got[1], got[2])
	}
}

// sendAllocs returns the allocations per request of sending requests on
// one kept-alive connection to a server answering each with resp.
func sendAllocs(t *testing.T, resp string, stream, noReactor bool) float64 {
	t.Helper()
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	defer ln.Close()
	out := []byte(resp) // converted once: the server must not allocate per response
	go func() {
		c, err := ln.Accept()
		if err != nil {
			return
		}
		defer c.Close()
		buf := make([]byte, 64<<10)
		have := 0
		for {
			n, err := c.Read(buf[have:])
			if err != nil {
				return
			}
			have += n
			// One request: headers, then Content-Length bytes of body.
			end := bytes.Index(buf[:have], []byte("\r\n\r\n"))
			if end < 0 {
				continue
			}
			i := bytes.Index(buf[:end], []byte("Content-Length: "))
			j := bytes.IndexByte(buf[i:end+2], '\r')
			cl, _ := strconv.Atoi(string(buf[i+16 : i+j]))
			if have < end+4+cl {
				continue
			}
			have = copy(buf, buf[end+4+cl:have])
			if _, err := c.Write(out); err != nil {
				return
			}
		}
	}()
	e := configured(t, "http://"+ln.Addr().String(), func(c *Config) {
		c.AdapterConfig = adapter.Config{Model: "m", Stream: stream}
		c.NoReactor = noReactor
	})
	s, _ := e.NewSender()
	p := prepared(t, e, stream)
	ctx, cancel := context.WithCancel(context.Background())
	defer cancel()
	var r record.Request
	send := func() {
		r = record.Request{}
		s.Do(ctx, p, &r)
	}
	send()
	if !r.OK() {
		t.Fatalf("%s: %s", r.ErrorKind, r.ErrorMessage)
	}
	if stream {
		// The server accepts one connection: reuse it once the
		// close-after-stream verdict allows (until then a stream's
		// connection rests and the next request would dial).
		learnKeeps(t, e, send)
	}
	n := testing.AllocsPerRun(200, send)
	if !r.OK() || !r.ConnReused {
		t.Fatalf("%s: %s (reused %v)", r.ErrorKind, r.ErrorMessage, r.ConnReused)
	}
	return n
}

// h1SendAllocBudget: 0 measured on Go 1.26, for a response and for a
// three-event stream on either read path: the caller registers its
// cancellation hook once per context, and reading, framing and parsing
// the events allocate nothing.
const h1SendAllocBudget = 0

// TestH1TLS: https:// works, streams are stamped through TLS, and the
// connection is kept.
func TestH1TLS(t *testing.T) {
	srv := httptest.NewTLSServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		io.Copy(io.Discard, r.Body)
		w.Header().Set("Content-Type", "text/event-stream")
		for i := range 3 {
			fmt.Fprintf(w, "data: {\"choices\":[{\"index\":0,\"delta\":{\"content\":\"t%d\"}}]}\n\n", i)
			w.(http.Flusher).Flush()
			time.Sleep(2 * time.Millisecond)
		}
		io.WriteString(w, "data: [DONE]\n\n")
	}))
	defer srv.Close()
	e := configured(t, srv.URL, func(c *Config) {
		c.AdapterConfig = adapter.Config{Model: "m", Stream: true}
		c.TLS = srv.Client().Transport.(*http.Transport).TLSClientConfig
	})
	s, _ := e.NewSender()
	for i := range 2 {
		if i == 1 {
			// A stream's connection rests before it is reused while the
			// close-after-stream verdict is open (streamCloses).
			time.Sleep(h1.RestAfterStream + 5*time.Millisecond)
		}
		var r record.Request
		s.Do(context.Background(), prepared(t, e, true), &r)
		if !r.OK() || r.ContentEvents != 3 {
			t.Fatalf("request %d: %s %s, %d content events", i, r.ErrorKind, r.ErrorMessage, r.ContentEvents)
		}
		if i == 0 && (r.ConnectNS <= 0 || r.ConnReused) {
			t.Errorf("first request: connect %d ns (TLS included), reused %v", r.ConnectNS, r.ConnReused)
		}
		if i == 1 && !r.ConnReused {
			t.Error("TLS connection not reused")
		}
		if gap := r.SecondTokenNS - r.FirstTokenNS; gap < int64(time.Millisecond) {
			t.Errorf("tokens 2 ms apart stamped %v apart", time.Duration(gap))
		}
	}
}

// learnKeeps lets the engine learn that the server keeps connections after
// streams: send, after the last stream's connection rested, reuses it.
func learnKeeps(t *testing.T, e *Engine, send func()) {
	t.Helper()
	time.Sleep(h1.RestAfterStream + 5*time.Millisecond)
	send()
	if e.h1c.Verdict() != h1.VerdictKeeps {
		t.Fatal("a response on a reused connection after a stream did not teach the engine that the server keeps connections")
	}
}
