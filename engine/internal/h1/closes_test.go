package h1

import (
	"bufio"
	"context"
	"fmt"
	"io"
	"log/slog"
	"net"
	"net/http"
	"slices"
	"sync"
	"sync/atomic"
	"testing"
	"time"
)

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

// sendStream sends a streamed request on k and fails the test unless its
// response arrived whole.
func sendStream(ctx context.Context, t *testing.T, c *Client, k *Caller, i int) Stamps {
	t.Helper()
	var st Stamps
	var h recorder
	if err := k.Do(ctx, chat(c, true), &st, &h); err != nil || h.status != 200 || len(h.body) == 0 {
		t.Fatalf("request %d: status %d, %d body bytes: %v", i, h.status, len(h.body), err)
	}
	return st
}

// TestClosesVerdictReverses: a server that closes after its first streams
// makes streams ask for Connection: close; once it keeps connections
// again, a probe finds out and streams reuse connections again.
func TestClosesVerdictReverses(t *testing.T) {
	srv := startSwitchServer(t, closeEvidence+1)
	c := newClient(t, "http://"+srv.ln.Addr().String(), nil)
	// Rests short enough for a test; the server closes at once.
	c.closes.settle, c.closes.window = 2*time.Millisecond, 20*time.Millisecond
	k := c.NewCaller()
	const n = closeEvidence + 2*probeEvery
	sawCloses := false
	for i := range n {
		sendStream(context.Background(), t, c, k, i)
		// While the verdict is open, the connection's rested check runs
		// before the next request (which would dial meanwhile).
		for deadline := time.Now().Add(10 * time.Second); c.closes.open() && time.Now().Before(deadline); time.Sleep(time.Millisecond) {
			c.mu.Lock()
			idle := len(c.idle)
			c.mu.Unlock()
			if idle == 0 {
				break
			}
		}
		closes := c.Verdict() == VerdictCloses
		sawCloses = sawCloses || closes
		if closes {
			// Give the probe's connection its rest.
			time.Sleep(time.Millisecond)
		}
	}
	if !sawCloses {
		t.Error("the server's closes after its first streams were not noticed")
	}
	if v := c.Verdict(); v != VerdictKeeps {
		t.Errorf("verdict %d, want it reversed to VerdictKeeps after the server kept connections", v)
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
	c := newClient(t, "http://"+srv.ln.Addr().String(), nil)
	c.closes.settle = time.Hour // the verdict stays open
	k := c.NewCaller()
	for i := range 2 {
		ctx, cancel := context.WithTimeout(context.Background(), 10*time.Second)
		st := sendStream(ctx, t, c, k, i)
		cancel()
		if st.Reused || st.Connect <= 0 {
			t.Errorf("request %d: reused %v, connect %d ns; want a new connection", i, st.Reused, st.Connect)
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
			c := newClient(t, "http://"+srv.ln.Addr().String(), nil)
			c.closes.settle, c.closes.window = 2*time.Millisecond, time.Minute
			k := c.NewCaller()
			n := 2
			if closing {
				n = closeEvidence
			}
			for i := range n {
				sendStream(context.Background(), t, c, k, i)
				// Past the rest: the next request may take this
				// connection, after a peek (here or in the background).
				time.Sleep(5 * c.closes.settle)
			}
			waitVerdict(t, c)
			if got := c.Verdict() == VerdictCloses; got != closing {
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
