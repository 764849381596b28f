package h1

import (
	"bufio"
	"bytes"
	"context"
	"errors"
	"fmt"
	"io"
	"net"
	"net/http"
	"net/http/httptest"
	"os"
	"strconv"
	"strings"
	"sync"
	"sync/atomic"
	"syscall"
	"testing"
	"time"

	"github.com/reprise-bench/reprise/replay"
)

// recorder is a Handler that keeps what it was given.
type recorder struct {
	status  int
	ct      []byte
	length  int64
	headT   int64
	body    []byte
	times   []int64 // per Body call
	refuse  bool    // Header returns false
	stopAt  int     // Body returns false on this call (1-based; 0: never)
	headers int     // Header calls
}

func (h *recorder) Header(resp *Response, t int64) bool {
	h.headers++
	h.status, h.length, h.headT = resp.Status, resp.ContentLength, t
	h.ct = append(h.ct[:0], resp.ContentType...)
	return !h.refuse
}

func (h *recorder) Body(b []byte, t int64) bool {
	h.body = append(h.body, b...)
	h.times = append(h.times, t)
	return len(h.times) != h.stopAt
}

// newClient returns a client for url with what mut changes.
func newClient(t testing.TB, url string, mut func(*Config)) *Client {
	t.Helper()
	cfg := Config{BaseURL: url, Timeout: 10 * time.Second, Clock: replay.NewClock()}
	if mut != nil {
		mut(&cfg)
	}
	c, err := New(cfg)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(c.Close)
	return c
}

// chat returns a chat-completions request as the OpenAI adapter builds
// it, with extra header lines.
func chat(c *Client, stream bool, extra ...string) *Request {
	body := `{"model":"reprise-mock","messages":[{"role":"user","content":"hello"}],"max_tokens":16`
	if stream {
		body += `,"stream":true,"stream_options":{"include_usage":true}`
	}
	body += "}"
	h := c.AppendRequestLine(nil, "POST", "/v1/chat/completions")
	h = append(h, "Content-Type: application/json\r\n"...)
	if stream {
		h = append(h, "Accept: text/event-stream\r\n"...)
	}
	for _, x := range extra {
		h = append(h, x+"\r\n"...)
	}
	h = append(h, "Content-Length: "+strconv.Itoa(len(body))+"\r\n"...)
	return &Request{Head: h, Body: []byte(body), Stream: stream}
}

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
			return
		}
	}
}

func (s *scriptServer) url() string { return "http://" + s.ln.Addr().String() }

const okJSON = `{"choices":[{"finish_reason":"length","index":0,"message":{"role":"assistant","content":"hi"}}]}`

func okResponse() string {
	return fmt.Sprintf("HTTP/1.1 200 OK\r\nContent-Type: application/json\r\nContent-Length: %d\r\n\r\n%s", len(okJSON), okJSON)
}

// TestRequestOnTheWire: the request is the head given, the blank line and
// the body, byte for byte, under the base URL's path; connections are
// reused; Stamps are complete and in order; the handler gets the head and
// the body.
func TestRequestOnTheWire(t *testing.T) {
	srv := startScript(t, func(int) (string, bool) { return okResponse(), false })
	c := newClient(t, srv.url()+"/prefix/", nil)
	k := c.NewCaller()
	for i := range 3 {
		req := chat(c, false, "X-Team: a b")
		var st Stamps
		var h recorder
		if err := k.Do(context.Background(), req, &st, &h); err != nil {
			t.Fatalf("request %d: %v", i, err)
		}
		if h.status != 200 || string(h.ct) != "application/json" || h.length != int64(len(okJSON)) || string(h.body) != okJSON {
			t.Errorf("request %d: handler saw %d %q length %d body %q", i, h.status, h.ct, h.length, h.body)
		}
		if st.Reused != (i > 0) {
			t.Errorf("request %d: reused %v", i, st.Reused)
		}
		if st.Sent == 0 || st.Wrote < st.Sent || st.Headers < st.Sent || st.End < st.Headers || h.headT != st.Headers {
			t.Errorf("request %d: timeline sent %d wrote %d headers %d end %d (handler %d)", i, st.Sent, st.Wrote, st.Headers, st.End, h.headT)
		}
		if want := int64(len(okResponse())); st.Bytes != want || st.Reads < 1 {
			t.Errorf("request %d: %d bytes in %d reads, want %d", i, st.Bytes, st.Reads, want)
		}
		srv.mu.Lock()
		r, body := srv.reqs[i], srv.bodies[i]
		srv.mu.Unlock()
		if r.Method != "POST" || r.URL.Path != "/prefix/v1/chat/completions" || r.Proto != "HTTP/1.1" || r.Close {
			t.Errorf("request line %s %s %s (close %v)", r.Method, r.URL.Path, r.Proto, r.Close)
		}
		if r.Host != srv.ln.Addr().String() || r.Header.Get("X-Team") != "a b" {
			t.Errorf("Host %q, headers %v", r.Host, r.Header)
		}
		if body != string(req.Body) {
			t.Errorf("body %q, want %q", body, req.Body)
		}
	}
	if n := srv.accepted.Load(); n != 1 {
		t.Errorf("%d connections for 3 sequential requests", n)
	}
}

// TestHandlerStops: a handler that refuses the head or stops inside the
// body ends the read at once, Do returns nil, and the connection is not
// reused.
func TestHandlerStops(t *testing.T) {
	body := strings.Repeat("x", 64)
	raw := fmt.Sprintf("HTTP/1.1 200 OK\r\nTransfer-Encoding: chunked\r\n\r\n%x\r\n%s\r\n", len(body), body)
	srv := startScript(t, func(int) (string, bool) { return raw, false }) // the response never ends
	c := newClient(t, srv.url(), nil)
	k := c.NewCaller()
	for i, h := range []*recorder{{refuse: true}, {stopAt: 1}} {
		var st Stamps
		if err := k.Do(context.Background(), chat(c, false), &st, h); err != nil {
			t.Errorf("case %d: %v", i, err)
		}
		if h.headers != 1 || (h.refuse && len(h.times) != 0) || (!h.refuse && len(h.times) != 1) {
			t.Errorf("case %d: %d heads, %d bodies", i, h.headers, len(h.times))
		}
		if st.Reused {
			t.Errorf("case %d: the connection of an abandoned response was reused", i)
		}
	}
	if n := srv.accepted.Load(); n != 2 {
		t.Errorf("%d connections for 2 abandoned responses, want 2", n)
	}
}

// TestMaxConnections: Config.MaxConnections caps open connections;
// requests beyond it wait for one and all succeed.
func TestMaxConnections(t *testing.T) {
	var open, peak atomic.Int32
	srv := httptest.NewUnstartedServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		io.Copy(io.Discard, r.Body)
		time.Sleep(2 * time.Millisecond)
		w.Header().Set("Content-Type", "application/json")
		io.WriteString(w, okJSON)
	}))
	srv.Config.ConnState = func(_ net.Conn, st http.ConnState) {
		switch st {
		case http.StateNew:
			n := open.Add(1)
			for p := peak.Load(); n > p && !peak.CompareAndSwap(p, n); p = peak.Load() {
			}
		case http.StateClosed, http.StateHijacked:
			open.Add(-1)
		}
	}
	srv.Start()
	defer srv.Close()
	c := newClient(t, srv.URL, func(cfg *Config) { cfg.MaxConnections = 3 })
	var wg sync.WaitGroup
	for range 12 {
		k := c.NewCaller()
		wg.Go(func() {
			for range 5 {
				var st Stamps
				var h recorder
				if err := k.Do(context.Background(), chat(c, false), &st, &h); err != nil || h.status != 200 {
					t.Errorf("status %d: %v", h.status, err)
				}
			}
		})
	}
	wg.Wait()
	if p := peak.Load(); p > 3 || p == 0 {
		t.Errorf("peak %d open connections, want at most 3", p)
	}
}

// TestTimeout: Config.Timeout ends a request that stalls as ErrTimeout,
// before the response and inside a stream read by the reactor or by the
// caller; it does not cover the time before the write.
func TestTimeout(t *testing.T) {
	for _, c := range []struct {
		name      string
		stream    bool
		noReactor bool
	}{{"response", false, false}, {"stream", true, false}, {"stream/caller", true, true}} {
		t.Run(c.name, func(t *testing.T) {
			srv := startScript(t, func(int) (string, bool) {
				if !c.stream {
					time.Sleep(300 * time.Millisecond)
					return okResponse(), false
				}
				return "HTTP/1.1 200 OK\r\nContent-Type: text/event-stream\r\n\r\ndata: {}\n\n", false
			})
			cl := newClient(t, srv.url(), func(cfg *Config) {
				cfg.Timeout = 50 * time.Millisecond
				cfg.NoReactor = c.noReactor
			})
			var st Stamps
			var h recorder
			err := cl.NewCaller().Do(context.Background(), chat(cl, c.stream), &st, &h)
			if !errors.Is(err, ErrTimeout) || !errors.Is(err, os.ErrDeadlineExceeded) {
				t.Errorf("error %v, want ErrTimeout", err)
			}
			if c.stream && (h.status != 200 || len(h.body) == 0) {
				t.Errorf("stream: status %d, body %q before the timeout", h.status, h.body)
			}
			if d := time.Duration(st.End - st.Sent); d < 50*time.Millisecond || d > 250*time.Millisecond {
				t.Errorf("ended after %v, want about the 50 ms timeout", d)
			}
			if st.Deadline.IsZero() {
				t.Error("no deadline in the stamps")
			}
		})
	}
}

// failingConn fails the write of the connection's second request: with
// nothing written (the kernel accepted no byte), or after writing part of
// it, and closes the connection.
type failingConn struct {
	net.Conn
	partial bool
	writes  int
}

func (c *failingConn) Write(p []byte) (int, error) {
	c.writes++
	if c.writes != 2 {
		return c.Conn.Write(p)
	}
	n := 0
	if c.partial {
		n, _ = c.Conn.Write(p[:len(p)/2])
	}
	c.Conn.Close()
	return n, &net.OpError{Op: "write", Net: "tcp", Err: os.NewSyscallError("write", syscall.EPIPE)}
}

// TestRetryOnlyWhenUnsent: a request is sent again only when its write on
// a reused connection failed before any byte was accepted; the stamps say
// so. A write that failed after part of the request left is the request's
// failure, never re-sent.
func TestRetryOnlyWhenUnsent(t *testing.T) {
	for _, partial := range []bool{false, true} {
		t.Run(fmt.Sprintf("partial=%v", partial), func(t *testing.T) {
			srv := startScript(t, func(int) (string, bool) { return okResponse(), false })
			var d net.Dialer
			first := true
			c := newClient(t, srv.url(), func(cfg *Config) {
				cfg.Dial = func(ctx context.Context, network, addr string) (net.Conn, error) {
					c, err := d.DialContext(ctx, network, addr)
					if err != nil || !first {
						return c, err
					}
					first = false
					return &failingConn{Conn: c, partial: partial}, nil
				}
			})
			k := c.NewCaller()
			var sts [2]Stamps
			var errs [2]error
			for i := range sts {
				var h recorder
				errs[i] = k.Do(context.Background(), chat(c, false), &sts[i], &h)
			}
			if errs[0] != nil {
				t.Fatalf("first request: %v", errs[0])
			}
			st, err := &sts[1], errs[1]
			srv.mu.Lock()
			received := len(srv.reqs)
			srv.mu.Unlock()
			if !partial {
				if err != nil || st.Retries != 1 || !strings.Contains(st.RetryErrors, "broken pipe") || !strings.Contains(st.RetryErrors, "nothing sent") {
					t.Errorf("error %v, retries %d (%q); want success after one retry that says why", err, st.Retries, st.RetryErrors)
				}
				if received != 2 || c.Retries() != 1 {
					t.Errorf("the server received %d requests, the client counts %d retries; want 2 and 1", received, c.Retries())
				}
				return
			}
			if !errors.Is(err, syscall.EPIPE) || st.Retries != 0 || st.RetryErrors != "" || !strings.Contains(err.Error(), "bytes sent") {
				t.Errorf("error %v, retries %d (%q); want a broken pipe that names the bytes sent, not retried", err, st.Retries, st.RetryErrors)
			}
			if st.Wrote != 0 || st.End < st.Sent {
				t.Errorf("wrote %d, sent %d, end %d for a request not written whole", st.Wrote, st.Sent, st.End)
			}
		})
	}
}

// TestDoAllocs: a request on a kept-alive connection allocates nothing,
// whether its response is read by the reactor or by the caller, with a
// context that can end (its cancellation hook is registered once). The
// server allocates nothing per response.
func TestDoAllocs(t *testing.T) {
	if raceEnabled {
		t.Skip("the race detector allocates on its own")
	}
	events := strings.Repeat("data: {\"choices\":[{\"index\":0,\"delta\":{\"content\":\"t\"}}]}\n\n", 3) + "data: [DONE]\n\n"
	sse := fmt.Sprintf("HTTP/1.1 200 OK\r\nContent-Type: text/event-stream\r\nContent-Length: %d\r\n\r\n%s", len(events), events)
	for _, c := range []struct {
		name              string
		resp              string
		stream, noReactor bool
	}{{"response", okResponse(), false, false}, {"stream/reactor", sse, true, false}, {"stream/caller", sse, true, true}} {
		t.Run(c.name, func(t *testing.T) {
			url := oneConnServer(t, c.resp)
			cl := newClient(t, url, func(cfg *Config) { cfg.NoReactor = c.noReactor })
			k := cl.NewCaller()
			req := chat(cl, c.stream)
			var st Stamps
			h := &recorder{}
			// A context that can end, shared by the requests, as a run's.
			ctx, cancel := context.WithCancel(context.Background())
			defer cancel()
			send := func() {
				h.body, h.times = h.body[:0], h.times[:0]
				if err := k.Do(ctx, req, &st, h); err != nil {
					t.Fatal(err)
				}
			}
			send()
			if c.stream {
				// The server accepts one connection: a stream's
				// connection rests before it is reused while the verdict
				// is open, and the next request would dial.
				learnKeeps(t, cl, send)
			}
			n := testing.AllocsPerRun(200, send)
			if !st.Reused || h.status != 200 {
				t.Fatalf("reused %v, status %d", st.Reused, h.status)
			}
			if n > doAllocBudget {
				t.Errorf("%.1f allocations per request, budget %d", n, doAllocBudget)
			}
		})
	}
}

// doAllocBudget: nothing; the cancellation hook is registered once per
// context, not per request.
const doAllocBudget = 0

// oneConnServer accepts one connection and answers each request on it
// with resp, allocating nothing per request.
func oneConnServer(t *testing.T, resp string) string {
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	out := []byte(resp)
	done := make(chan struct{})
	go func() {
		defer close(done)
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
			for {
				// One request: headers, then Content-Length bytes of body.
				end := bytes.Index(buf[:have], []byte("\r\n\r\n"))
				if end < 0 {
					break
				}
				i := bytes.Index(buf[:end], []byte("Content-Length: "))
				j := bytes.IndexByte(buf[i:end+2], '\r')
				cl, _ := strconv.Atoi(string(buf[i+16 : i+j]))
				if have < end+4+cl {
					break
				}
				have = copy(buf, buf[end+4+cl:have])
				if _, err := c.Write(out); err != nil {
					return
				}
			}
		}
	}()
	t.Cleanup(func() { ln.Close(); <-done })
	return "http://" + ln.Addr().String()
}

// learnKeeps lets the client learn that the server keeps connections
// after streams: send, after the last stream's connection rested, reuses
// it.
func learnKeeps(t *testing.T, c *Client, send func()) {
	t.Helper()
	time.Sleep(c.closes.settle + 5*time.Millisecond)
	send()
	if v := c.Verdict(); v != VerdictKeeps {
		t.Fatalf("verdict %d after a response on a reused connection after a stream, want VerdictKeeps", v)
	}
}

// waitVerdict waits until the client has decided whether the server
// closes connections after streams.
func waitVerdict(t *testing.T, c *Client) {
	t.Helper()
	for deadline := time.Now().Add(10 * time.Second); c.closes.open(); time.Sleep(time.Millisecond) {
		if time.Now().After(deadline) {
			t.Fatal("no close-after-stream verdict 10 s after a stream")
		}
	}
}

// TestLargeRequestOneExchange: a request whose body is as large as one
// write carries (maxOneWrite), on sockets whose buffers hold a fraction
// of it, arrives whole and gets its response: the write the kernel takes
// only in part inside the exchange is finished by an ordinary one.
func TestLargeRequestOneExchange(t *testing.T) {
	srv := startScript(t, func(int) (string, bool) { return okResponse(), false })
	var d net.Dialer
	cl := newClient(t, srv.url(), func(cfg *Config) {
		cfg.Dial = func(ctx context.Context, network, addr string) (net.Conn, error) {
			c, err := d.DialContext(ctx, network, addr)
			if err == nil {
				err = c.(*net.TCPConn).SetWriteBuffer(4096)
			}
			return c, err
		}
	})
	body := strings.Repeat("x", maxOneWrite)
	h := cl.AppendRequestLine(nil, "POST", "/v1/chat/completions")
	h = append(h, "Content-Length: "+strconv.Itoa(len(body))+"\r\n"...)
	k := cl.NewCaller()
	for i := range 3 {
		var st Stamps
		rec := &recorder{}
		if err := k.Do(context.Background(), &Request{Head: h, Body: []byte(body)}, &st, rec); err != nil {
			t.Fatalf("request %d: %v", i, err)
		}
		if rec.status != 200 || string(rec.body) != okJSON || st.Wrote < st.Sent || st.Headers < st.Sent {
			t.Fatalf("request %d: status %d, body %q, sent %d wrote %d headers %d", i, rec.status, rec.body, st.Sent, st.Wrote, st.Headers)
		}
	}
	srv.mu.Lock()
	defer srv.mu.Unlock()
	for i, b := range srv.bodies {
		if b != body {
			t.Errorf("request %d: the server received %d body bytes, want %d", i, len(b), len(body))
		}
	}
}

// TestIdleCheckAfterUnannouncedClose: the server closes the connection
// right after a response without saying so. After an error status, or
// after a success once the connection has been idle freshFor, the idle
// check finds the close and the next request goes on a new connection
// instead of failing.
func TestIdleCheckAfterUnannouncedClose(t *testing.T) {
	const bad = "HTTP/1.1 500 Internal Server Error\r\nContent-Length: 2\r\n\r\n{}"
	for _, c := range []struct {
		name  string
		first string
		pause time.Duration
	}{{"error", bad, 0}, {"idle", okResponse(), 2 * freshFor}} {
		t.Run(c.name, func(t *testing.T) {
			srv := startScript(t, func(n int) (string, bool) {
				if n == 0 {
					return c.first, true
				}
				return okResponse(), false
			})
			cl := newClient(t, srv.url(), nil)
			k := cl.NewCaller()
			var st Stamps
			if err := k.Do(context.Background(), chat(cl, false), &st, &recorder{}); err != nil {
				t.Fatal(err)
			}
			waitFIN(t, cl)
			time.Sleep(c.pause)
			rec := &recorder{}
			if err := k.Do(context.Background(), chat(cl, false), &st, rec); err != nil || rec.status != 200 {
				t.Fatalf("second request: %v, status %d", err, rec.status)
			}
			if st.Reused || srv.accepted.Load() != 2 {
				t.Errorf("second request reused %v, %d connections accepted; want a new connection", st.Reused, srv.accepted.Load())
			}
		})
	}
}

// waitFIN waits until the server's close of cl's one idle connection has
// arrived.
func waitFIN(t *testing.T, cl *Client) {
	t.Helper()
	for i := 0; ; i++ {
		cl.mu.Lock()
		if len(cl.idle) != 1 {
			cl.mu.Unlock()
			t.Fatalf("%d idle connections, want 1", len(cl.idle))
		}
		var n int
		var e syscall.Errno
		var b byte
		err := cl.idle[0].raw.Control(func(fd uintptr) { n, e = peekSocket(fd, &b) })
		cl.mu.Unlock()
		if err == nil && n == 0 && e == 0 {
			return
		}
		if i == 1000 {
			t.Fatalf("no FIN from the server after 1 s (peek: %d bytes, %v, %v)", n, e, err)
		}
		time.Sleep(time.Millisecond)
	}
}

// TestCancelHookPerContext: the caller keeps one cancellation hook per
// context across requests. Ending the context aborts the request in
// flight at once (not at Config.Timeout); a later context, or one that
// never ends, is watched afresh, with nothing left over from the first.
func TestCancelHookPerContext(t *testing.T) {
	release := make(chan struct{})
	srv := startScript(t, func(n int) (string, bool) {
		if n == 1 {
			<-release // the second request gets no answer
			return "", true
		}
		return okResponse(), false
	})
	defer close(release)
	cl := newClient(t, srv.url(), nil)
	k := cl.NewCaller()
	defer k.Close()
	ctx1, cancel1 := context.WithCancelCause(context.Background())
	errStop := errors.New("stopped by the test")
	var st Stamps
	if err := k.Do(ctx1, chat(cl, false), &st, &recorder{}); err != nil {
		t.Fatalf("first request: %v", err)
	}
	time.AfterFunc(20*time.Millisecond, func() { cancel1(errStop) })
	err := k.Do(ctx1, chat(cl, false), &st, &recorder{})
	if err == nil || errors.Is(err, ErrTimeout) || !errors.Is(context.Cause(ctx1), errStop) {
		t.Fatalf("request when its context ends: %v; want it aborted by the context, not the 10 s timeout", err)
	}
	if err := k.Do(ctx1, chat(cl, false), &st, &recorder{}); err == nil {
		t.Error("a request on the ended context succeeded")
	}
	ctx2, cancel2 := context.WithCancel(context.Background())
	defer cancel2()
	for i, ctx := range []context.Context{ctx2, context.Background(), ctx2} {
		rec := &recorder{}
		if err := k.Do(ctx, chat(cl, false), &st, rec); err != nil || rec.status != 200 {
			t.Errorf("request %d after the first context ended: %v, status %d", i, err, rec.status)
		}
	}
}

// slowBody is a Handler whose Body takes a millisecond a call, slower
// than the server sends, so the socket always holds more of the body;
// it cancels the request's context at its second call and counts the
// bytes it is given after that.
type slowBody struct {
	cancel func()
	calls  int
	after  int
}

func (h *slowBody) Header(*Response, int64) bool { return true }

func (h *slowBody) Body(b []byte, _ int64) bool {
	h.calls++
	switch {
	case h.calls == 2:
		h.cancel()
	case h.calls > 2:
		h.after += len(b)
	}
	time.Sleep(time.Millisecond)
	return true
}

// TestCancelStopsFastBody: a response whose bytes keep arriving (the
// socket never empties, so no read waits) stops within a read of its
// context's end, not at its last byte (issue 37, item 21: a second
// SIGTERM waited seconds for a 200 MB body to be read).
func TestCancelStopsFastBody(t *testing.T) {
	const size = 8 << 20
	body := strings.Repeat("a", size)
	srv := startScript(t, func(int) (string, bool) {
		return "HTTP/1.1 200 OK\r\nContent-Type: application/json\r\nContent-Length: " + strconv.Itoa(size) + "\r\n\r\n" + body, true
	})
	cl := newClient(t, srv.url(), nil)
	k := cl.NewCaller()
	defer k.Close()
	ctx, cancel := context.WithCancel(context.Background())
	defer cancel()
	h := &slowBody{cancel: cancel}
	var st Stamps
	err := k.Do(ctx, chat(cl, false), &st, h)
	if err == nil {
		t.Fatalf("request whose context ended: no error, %d bytes read", st.Bytes)
	}
	if h.after > 2*ReadBuffer {
		t.Errorf("%d body bytes read after the context ended (of %d); want at most a read's (%d)", h.after, size, ReadBuffer)
	}
}
