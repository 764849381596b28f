package engine

import (
	"bufio"
	"context"
	"fmt"
	"io"
	"log/slog"
	"net"
	"net/http"
	"os"
	"slices"
	"strconv"
	"strings"
	"sync"
	"sync/atomic"
	"syscall"
	"testing"
	"time"

	"github.com/reprise-bench/reprise/engine/adapter/openai"
	"github.com/reprise-bench/reprise/internal/mockserver"
	"github.com/reprise-bench/reprise/internal/record"
)

// countingDial dials TCP and counts the connections opened.
func countingDial(n *atomic.Int32) func(ctx context.Context, network, addr string) (net.Conn, error) {
	var d net.Dialer
	return func(ctx context.Context, network, addr string) (net.Conn, error) {
		n.Add(1)
		return d.DialContext(ctx, network, addr)
	}
}

// TestOneResetKeepsConnections: one reset-before-headers among many
// streamed requests against a vLLM-shaped server that keeps connections
// alive is one failed request and nothing more: the engine does not
// conclude the server closes after every stream (no Connection: close, so
// the connections opened stay at the number of senders, plus the one the
// reset destroyed), the reset request is not re-sent (the server had read
// it), and the server received every request exactly once, as the records
// say.
func TestOneResetKeepsConnections(t *testing.T) {
	srv := startMock(t, func(c *mockserver.Config) { c.TTFT = 2 * time.Millisecond; c.ITL = 200 * time.Microsecond })
	var dials atomic.Int32
	e := configured(t, srv.URL(), func(cfg *Config) {
		cfg.Adapter = openai.Adapter{Endpoint: openai.Chat}
		cfg.AdapterConfig.Model = "reprise-mock"
		cfg.AdapterConfig.Stream = true
		cfg.AdapterConfig.IncludeUsage = true
		cfg.Dial = countingDial(&dials)
	})
	const senders, each, faulted = 6, 30, 70
	// One stream per sender first, then the verdict on the server (it
	// keeps connections): until then requests dial rather than wait for a
	// rested connection, so the connections opened are counted from here.
	var warm sync.WaitGroup
	for i := range senders {
		warm.Go(func() {
			s, err := e.NewSender()
			if err != nil {
				t.Error(err)
				return
			}
			defer s.Close()
			r := record.Request{RequestID: uint64(1000 + i)}
			if s.Do(context.Background(), prepared(t, e, true), &r); !r.OK() {
				t.Errorf("warm-up stream: %s %s", r.ErrorKind, r.ErrorMessage)
			}
		})
	}
	warm.Wait()
	learnKeeps(t, e, func() {
		s, _ := e.NewSender()
		defer s.Close()
		var r record.Request
		r.RequestID = 999
		s.Do(context.Background(), prepared(t, e, true), &r)
	})
	if e.ClosesAfterStream() {
		t.Fatal("the server keeps connections, the verdict says it closes them")
	}
	dials.Store(0)
	recs := make([]record.Request, senders*each)
	var wg sync.WaitGroup
	var next atomic.Int32
	for range senders {
		wg.Go(func() {
			s, err := e.NewSender()
			if err != nil {
				t.Error(err)
				return
			}
			defer s.Close()
			for {
				i := int(next.Add(1)) - 1
				if i >= len(recs) {
					return
				}
				p := prepared(t, e, true)
				if i == faulted {
					p.Head = append(p.Head, mockserver.FaultHeader+": reset-before-headers\r\n"...)
				}
				recs[i].RequestID = uint64(i)
				s.Do(context.Background(), p, &recs[i])
			}
		})
	}
	wg.Wait()
	if err := srv.WaitIdle(context.Background()); err != nil {
		t.Fatal(err)
	}
	seen := map[string]int{}
	for _, l := range srv.Log() {
		seen[l.ClientRequestID]++
	}
	for i := range recs {
		r := &recs[i]
		want := record.ErrNone
		if i == faulted {
			want = record.ErrReset
		}
		if r.ErrorKind != want {
			t.Errorf("request %d: kind %q (%s), want %q", i, r.ErrorKind, r.ErrorMessage, want)
		}
		if r.Retries != 0 {
			t.Errorf("request %d: %d retries (%s)", i, r.Retries, r.RetryErrors)
		}
		if got := seen[strconv.Itoa(i)]; got != 1 {
			t.Errorf("request %d: the server received it %d times, the record says once", i, got)
		}
	}
	if e.ClosesAfterStream() {
		t.Error("one reset made the engine conclude the server closes after every stream")
	}
	// One, to replace the connection the reset destroyed.
	if n := dials.Load(); n > 1 {
		t.Errorf("%d connections opened after the verdict for %d senders, want at most 1", n, senders)
	}
}

// TestStreamClosesVerdict: the verdict needs closeEvidence pieces of
// closing evidence in a row, and one piece of keeping evidence reverses it.
func TestStreamClosesVerdict(t *testing.T) {
	cases := []struct {
		name   string
		events string // c: closed, k: kept
		want   uint32
	}{
		{"nothing yet", "", closesUnknown},
		{"one close", "c", closesUnknown},
		{"one reset among keeps", "kkkckkk", closesNo},
		{"closes repeat", "ccc", closesYes},
		{"closes interrupted by a keep", "cckcc", closesNo},
		{"closes after keeps", "kkccc", closesYes},
		{"a keep reverses", "cccck", closesNo},
		{"and closes again", "ccckccc", closesYes},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			d := newStreamCloses(slog.New(slog.DiscardHandler), "http://x")
			for _, ev := range c.events {
				if ev == 'c' {
					d.closed()
				} else {
					d.kept()
				}
			}
			if got := d.verdict.Load(); got != c.want {
				t.Errorf("verdict %d, want %d", got, c.want)
			}
			// Probes: while the verdict is "closes", one stream in
			// probeEvery goes without Connection: close.
			asked := 0
			for range probeEvery * 3 {
				if d.askClose() {
					asked++
				}
			}
			want := 0
			if c.want == closesYes {
				want = probeEvery*3 - 3
			}
			if asked != want {
				t.Errorf("%d of %d streams asked for Connection: close, want %d", asked, probeEvery*3, want)
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
// a reused connection failed before any byte was accepted; the record
// says so. A write that failed after part of the request left is the
// request's failure, never re-sent.
func TestRetryOnlyWhenUnsent(t *testing.T) {
	for _, partial := range []bool{false, true} {
		t.Run(fmt.Sprintf("partial=%v", partial), func(t *testing.T) {
			srv := startScript(t, func(int) (string, bool) { return okResponse(), false })
			var d net.Dialer
			first := true
			e := configured(t, srv.url(), func(cfg *Config) {
				cfg.Dial = func(ctx context.Context, network, addr string) (net.Conn, error) {
					c, err := d.DialContext(ctx, network, addr)
					if err != nil || !first {
						return c, err
					}
					first = false
					return &failingConn{Conn: c, partial: partial}, nil
				}
			})
			s, _ := e.NewSender()
			var recs [2]record.Request
			for i := range recs {
				recs[i].RequestID = uint64(i)
				s.Do(context.Background(), prepared(t, e, false), &recs[i])
			}
			if !recs[0].OK() {
				t.Fatalf("first request: %s %s", recs[0].ErrorKind, recs[0].ErrorMessage)
			}
			r := &recs[1]
			srv.mu.Lock()
			received := len(srv.reqs)
			srv.mu.Unlock()
			if !partial {
				if !r.OK() || r.Retries != 1 || !strings.Contains(r.RetryErrors, "broken pipe") || !strings.Contains(r.RetryErrors, "nothing sent") {
					t.Errorf("kind %q (%s), retries %d (%q); want success after one retry that says why", r.ErrorKind, r.ErrorMessage, r.Retries, r.RetryErrors)
				}
				if received != 2 {
					t.Errorf("the server received %d requests, want 2", received)
				}
				return
			}
			if r.ErrorKind != record.ErrReset || r.Retries != 0 || r.RetryErrors != "" || !strings.Contains(r.ErrorMessage, "bytes sent") {
				t.Errorf("kind %q (%s), retries %d (%q); want a reset that names the bytes sent, not retried", r.ErrorKind, r.ErrorMessage, r.Retries, r.RetryErrors)
			}
			if r.WroteNS != 0 {
				t.Errorf("wrote_ns %d for a request not written whole", r.WroteNS)
			}
		})
	}
}

// switchServer streams SSE responses; on its first closeConns connections
// it closes the connection right after the stream (llama-server's habit),
// later it keeps connections unless the request asks for
// Connection: close. It counts connections and the requests that asked.
type switchServer struct {
	ln         net.Listener
	closeConns int32
	conns      atomic.Int32
	mu         sync.Mutex
	asked      []bool // per request: Connection: close
}

func startSwitchServer(t *testing.T, closeConns int32) *switchServer {
	t.Helper()
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	s := &switchServer{ln: ln, closeConns: closeConns}
	var wg sync.WaitGroup
	wg.Go(func() {
		for {
			c, err := ln.Accept()
			if err != nil {
				return
			}
			n := s.conns.Add(1)
			wg.Go(func() { s.serve(c, n <= s.closeConns) })
		}
	})
	t.Cleanup(func() { ln.Close(); wg.Wait() })
	return s
}

func (s *switchServer) serve(c net.Conn, closeAfter bool) {
	defer c.Close()
	br := bufio.NewReader(c)
	for {
		req, err := http.ReadRequest(br)
		if err != nil {
			return
		}
		io.Copy(io.Discard, req.Body)
		s.mu.Lock()
		s.asked = append(s.asked, req.Close)
		s.mu.Unlock()
		ev := `data: {"choices":[{"index":0,"delta":{"content":"t"},"finish_reason":null}]}` + "\n\n" + "data: [DONE]\n\n"
		fmt.Fprintf(c, "HTTP/1.1 200 OK\r\nContent-Type: text/event-stream\r\nTransfer-Encoding: chunked\r\n\r\n%x\r\n%s\r\n0\r\n\r\n", len(ev), ev)
		if closeAfter || req.Close {
			return
		}
	}
}

// TestClosesVerdictReverses: a server that closes after its first streams
// makes streams ask for Connection: close; once it keeps connections
// again, a probe finds out and streams reuse connections again.
func TestClosesVerdictReverses(t *testing.T) {
	srv := startSwitchServer(t, closeEvidence+1)
	e := configured(t, "http://"+srv.ln.Addr().String(), func(cfg *Config) {
		cfg.AdapterConfig.Stream = true
	})
	// Rests short enough for a test; the server closes at once.
	e.closes.settle, e.closes.window = 2*time.Millisecond, 20*time.Millisecond
	s, _ := e.NewSender()
	const n = closeEvidence + 2*probeEvery
	sawCloses := false
	for i := range n {
		var r record.Request
		r.RequestID = uint64(i)
		s.Do(context.Background(), prepared(t, e, true), &r)
		if !r.OK() {
			t.Fatalf("request %d: %s %s", i, r.ErrorKind, r.ErrorMessage)
		}
		sawCloses = sawCloses || e.ClosesAfterStream()
		if e.ClosesAfterStream() {
			// Give the probe's connection its rest.
			time.Sleep(time.Millisecond)
		}
	}
	if !sawCloses {
		t.Error("the server's closes after its first streams were not noticed")
	}
	if e.ClosesAfterStream() {
		t.Error("the verdict did not reverse after the server kept connections")
	}
	srv.mu.Lock()
	defer srv.mu.Unlock()
	if !slices.Contains(srv.asked, true) {
		t.Error("no stream asked for Connection: close")
	}
	if tail := srv.asked[len(srv.asked)-5:]; slices.Contains(tail, true) {
		t.Errorf("the last streams still asked for Connection: close: %v", tail)
	}
}

// TestOpenVerdictDials: while the close-after-stream verdict is open, a
// request whose only idle connection is resting after a stream dials
// another instead of waiting for the rest to end (a wait would be hidden
// in its TTFT; a dial is recorded in connect_ns).
func TestOpenVerdictDials(t *testing.T) {
	srv := startSwitchServer(t, 0) // keeps every connection
	e := configured(t, "http://"+srv.ln.Addr().String(), func(cfg *Config) {
		cfg.AdapterConfig.Stream = true
	})
	e.closes.settle = time.Hour // the verdict stays open
	s, _ := e.NewSender()
	for i := range 2 {
		ctx, cancel := context.WithTimeout(context.Background(), 10*time.Second)
		r := record.Request{RequestID: uint64(i)}
		s.Do(ctx, prepared(t, e, true), &r)
		cancel()
		if !r.OK() {
			t.Fatalf("request %d: %s %s", i, r.ErrorKind, r.ErrorMessage)
		}
		if r.ConnReused || r.ConnectNS <= 0 {
			t.Errorf("request %d: reused %v, connect %d ns; want a new connection", i, r.ConnReused, r.ConnectNS)
		}
	}
	if n := srv.conns.Load(); n != 2 {
		t.Errorf("%d connections accepted, want 2", n)
	}
}

// TestRestedCheckVerdict: a connection that rested after a stream tells
// the verdict without a failed request: closed by the server after each
// of closeEvidence streams, the server closes them (the close is found by
// a peek, never by a request); kept, the next request reuses it and its
// response is the evidence of keeping.
func TestRestedCheckVerdict(t *testing.T) {
	for _, closing := range []bool{false, true} {
		t.Run(fmt.Sprintf("closing=%v", closing), func(t *testing.T) {
			srv := startSwitchServer(t, map[bool]int32{false: 0, true: 1 << 30}[closing])
			e := configured(t, "http://"+srv.ln.Addr().String(), func(cfg *Config) {
				cfg.AdapterConfig.Stream = true
			})
			e.closes.settle, e.closes.window = 2*time.Millisecond, time.Minute
			s, _ := e.NewSender()
			n := 2
			if closing {
				n = closeEvidence
			}
			for i := range n {
				r := record.Request{RequestID: uint64(i)}
				s.Do(context.Background(), prepared(t, e, true), &r)
				if !r.OK() {
					t.Fatalf("request %d: %s %s", i, r.ErrorKind, r.ErrorMessage)
				}
				// Past the rest: the next request may take this
				// connection, after a peek (here or in the background).
				time.Sleep(5 * e.closes.settle)
			}
			waitVerdict(t, e)
			if got := e.ClosesAfterStream(); got != closing {
				t.Errorf("verdict closes = %v after %d streams, want %v", got, n, closing)
			}
			want := int32(1)
			if closing {
				want = int32(n)
			}
			if got := srv.conns.Load(); got != want {
				t.Errorf("%d connections for %d streams, want %d", got, n, want)
			}
		})
	}
}
