package engine

import (
	"context"
	"fmt"
	"net"
	"os"
	"strconv"
	"strings"
	"sync"
	"sync/atomic"
	"syscall"
	"testing"
	"time"

	"github.com/reprise-bench/reprise/engine/adapter/openai"
	"github.com/reprise-bench/reprise/engine/record"
	"github.com/reprise-bench/reprise/internal/mockserver"
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
