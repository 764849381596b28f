package engine

import (
	"context"
	"errors"
	"fmt"
	"io"
	"log/slog"
	"net"
	"net/http"
	"net/http/httptest"
	"syscall"
	"testing"
	"time"

	"github.com/reprise-bench/reprise/engine/adapter"
	"github.com/reprise-bench/reprise/engine/adapter/openai"
	"github.com/reprise-bench/reprise/internal/record"
)

// tcpPair returns a tracked client connection (kernel stamps on) and the
// server's end of it.
func tcpPair(t *testing.T) (*trackedConn, *net.TCPConn, *Engine) {
	t.Helper()
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	defer ln.Close()
	accepted := make(chan net.Conn, 1)
	go func() {
		c, _ := ln.Accept()
		accepted <- c
	}()
	c, err := net.Dial("tcp", ln.Addr().String())
	if err != nil {
		t.Fatal(err)
	}
	srv := (<-accepted).(*net.TCPConn)
	e := &Engine{clock: NewClock(), log: slog.New(slog.DiscardHandler)}
	tc := newTrackedConn(c, true)
	t.Cleanup(func() { tc.Close(); srv.Close() })
	if tc.rx == nil {
		t.Fatal("kernel receive timestamps could not be turned on")
	}
	// The kernel turns stamping on for the whole system when the first
	// socket asks, from a work queue: a segment that arrives before that
	// has no stamp. Wait for stamps to flow.
	buf := make([]byte, 8)
	for i := 0; ; i++ {
		if _, err := srv.Write([]byte("x")); err != nil {
			t.Fatal(err)
		}
		if _, err := tc.Read(buf); err != nil {
			t.Fatal(err)
		}
		if tc.rxNS.Load() != 0 {
			break
		}
		if i == 100 {
			t.Fatal("no kernel receive stamps after 1 s")
		}
		time.Sleep(10 * time.Millisecond)
	}
	return tc, srv, e
}

// TestKernelStampIsArrival: a read's time is when its bytes arrived, not
// when reprise got round to reading them, and bytes that waited in the
// socket for two writes carry the later write's time (the kernel merges
// queued segments; docs/format/records.md).
func TestKernelStampIsArrival(t *testing.T) {
	tc, srv, e := tcpPair(t)
	write := func(s string) (before, after int64) {
		_, before = e.clock.NowWall()
		if _, err := srv.Write([]byte(s)); err != nil {
			t.Fatal(err)
		}
		_, after = e.clock.NowWall()
		return before, after
	}
	buf := make([]byte, 64)

	b1, a1 := write("first")
	time.Sleep(30 * time.Millisecond) // the reader is late
	n, err := tc.Read(buf)
	now, wall := e.clock.NowWall()
	if err != nil || string(buf[:n]) != "first" {
		t.Fatalf("read %q, %v", buf[:n], err)
	}
	rx := tc.rxNS.Load()
	if rx < b1 || rx > a1 {
		t.Fatalf("kernel stamp %d outside the write [%d, %d]", rx, b1, a1)
	}
	got := tc.arrival(now, wall, 0)
	if lag := now - got; lag < 30*int64(time.Millisecond) {
		t.Errorf("arrival %d is only %v before the late read: the read time leaked in", got, time.Duration(lag))
	}
	if tc.arrival(now, wall, now) != now {
		t.Error("arrival below the floor not clamped to it")
	}

	write("a")
	time.Sleep(5 * time.Millisecond)
	b2, a2 := write("b")
	time.Sleep(5 * time.Millisecond)
	n, err = tc.Read(buf)
	if err != nil || string(buf[:n]) != "ab" {
		t.Fatalf("read %q, %v", buf[:n], err)
	}
	if rx := tc.rxNS.Load(); rx < b2 || rx > a2 {
		t.Errorf("merged read stamped %d, want the last write's [%d, %d]", rx, b2, a2)
	}
}

// TestKernelStampReadErrors: EOF and resets look exactly as net.Conn.Read
// reports them, so closed-connection detection and error kinds hold.
func TestKernelStampReadErrors(t *testing.T) {
	tc, srv, _ := tcpPair(t)
	srv.Close()
	if _, err := tc.Read(make([]byte, 8)); err != io.EOF {
		t.Errorf("after close: %v, want io.EOF", err)
	}

	tc, srv, _ = tcpPair(t)
	_ = srv.SetLinger(0) // close sends RST
	srv.Close()
	_, err := tc.Read(make([]byte, 8))
	var op *net.OpError
	if !errors.Is(err, syscall.ECONNRESET) || !errors.As(err, &op) || op.Op != "read" {
		t.Errorf("after reset: %#v, want a read *net.OpError wrapping ECONNRESET", err)
	}

	tc, _, _ = tcpPair(t)
	tc.Conn.Close()
	if _, err := tc.Read(make([]byte, 8)); !errors.Is(err, net.ErrClosed) {
		t.Errorf("after our close: %v, want net.ErrClosed", err)
	}
}

// TestKernelStampReadAllocs: a read with its stamp allocates nothing.
func TestKernelStampReadAllocs(t *testing.T) {
	tc, srv, _ := tcpPair(t)
	buf := make([]byte, 64)
	msg := []byte("data: x\n\n")
	allocs := testing.AllocsPerRun(200, func() {
		if _, err := srv.Write(msg); err != nil {
			t.Fatal(err)
		}
		if _, err := io.ReadFull(tc, buf[:len(msg)]); err != nil {
			t.Fatal(err)
		}
	})
	if allocs != 0 {
		t.Errorf("%.1f allocations per read", allocs)
	}
}

// slowParse wraps an adapter so that its first Parse tells parsing and
// then takes 40 ms: the sender reads the next event that much late, as on
// a saturated client.
type slowParse struct {
	adapter.Adapter
	parsing chan struct{}
}

func (a slowParse) NewInstance(cfg *adapter.Config) (adapter.Instance, error) {
	in, err := a.Adapter.NewInstance(cfg)
	return &slowInstance{Instance: in, parsing: a.parsing}, err
}

type slowInstance struct {
	adapter.Instance
	parsing chan struct{}
	slept   bool
}

func (s *slowInstance) Parse(ctx uint32, b *adapter.Batch, dst []adapter.Record) ([]adapter.Record, error) {
	if !s.slept {
		s.slept = true
		s.parsing <- struct{}{}
		time.Sleep(40 * time.Millisecond)
	}
	return s.Instance.Parse(ctx, b, dst)
}

// TestSlowClientStampsArrival: the server writes token 1, and token 2 as
// soon as the client starts a 40 ms parse of token 1, so the client reads
// token 2 about 40 ms after it arrived. Token 2's time is its arrival and
// the lag is recorded; with --no-kernel-timestamps the lag is in the time.
func TestSlowClientStampsArrival(t *testing.T) {
	var clock *Clock
	parsing := make(chan struct{}, 1)
	var before, after int64 // token 2's write
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		w.Header().Set("Content-Type", "text/event-stream")
		for i, tok := range []string{"a", "b"} {
			if i > 0 {
				<-parsing
				before = clock.Now()
			}
			fmt.Fprintf(w, "data: {\"id\":\"x\",\"object\":\"chat.completion.chunk\",\"choices\":[{\"index\":0,\"delta\":{\"content\":%q}}]}\n\n", tok)
			w.(http.Flusher).Flush()
		}
		after = clock.Now()
		time.Sleep(100 * time.Millisecond) // the end comes in a later read
		fmt.Fprint(w, "data: [DONE]\n\n")
	}))
	defer srv.Close()
	for _, kernel := range []bool{true, false} {
		cfg := NewConfig()
		cfg.BaseURL = srv.URL
		cfg.Adapter = slowParse{openai.Adapter{Endpoint: openai.Chat}, parsing}
		cfg.AdapterConfig = adapter.Config{Model: "m", Stream: true}
		cfg.NoKernelStamps = !kernel
		e, err := New(cfg)
		if err != nil {
			t.Fatal(err)
		}
		clock = e.Clock()
		s, err := e.NewSender()
		if err != nil {
			t.Fatal(err)
		}
		var r record.Request
		s.Do(context.Background(), prepared(t, e, true), &r)
		e.Close()
		if !r.OK() || r.ContentEvents != 2 {
			t.Fatalf("kernel=%v: %s %s, %d content events", kernel, r.ErrorKind, r.ErrorMessage, r.ContentEvents)
		}
		if kernel {
			// Causal bounds: the kernel stamps the segment inside the write.
			if r.LastTokenNS < before || r.LastTokenNS > after {
				t.Errorf("token 2 stamped %v after its write began (written in %v): not its arrival",
					time.Duration(r.LastTokenNS-before), time.Duration(after-before))
			}
			if r.ReadLagNS < int64(30*time.Millisecond) {
				t.Errorf("read lag %v, want the ~40 ms the parse held the reader", time.Duration(r.ReadLagNS))
			}
		} else if late := r.LastTokenNS - after; late < int64(30*time.Millisecond) || r.ReadLagNS != 0 {
			t.Errorf("without kernel stamps token 2 is %v after its write, read lag %v; want ≥ 30 ms and 0",
				time.Duration(late), time.Duration(r.ReadLagNS))
		}
	}
}
