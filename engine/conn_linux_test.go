package engine

import (
	"context"
	"fmt"
	"net"
	"net/http"
	"net/http/httptest"
	"testing"
	"time"

	"golang.org/x/sys/unix"

	"github.com/reprise-bench/reprise/engine/adapter"
	"github.com/reprise-bench/reprise/engine/adapter/openai"
	"github.com/reprise-bench/reprise/engine/record"
	"github.com/reprise-bench/reprise/replay"
)

// slowParse wraps an adapter so that its first Parse notes when it
// began (on the engine's clock), tells parsing and then takes 40 ms: the
// sender reads the next event that much late, as on a saturated client.
type slowParse struct {
	adapter.Adapter
	parsing chan struct{}
	clock   **replay.Clock
	began   *int64
}

func (a slowParse) NewInstance(cfg *adapter.Config) (adapter.Instance, error) {
	in, err := a.Adapter.NewInstance(cfg)
	return &slowInstance{Instance: in, p: a}, err
}

type slowInstance struct {
	adapter.Instance
	p     slowParse
	slept bool
}

const slowParseFor = 40 * time.Millisecond

func (s *slowInstance) Parse(ctx uint32, b *adapter.Batch, dst []adapter.Record) ([]adapter.Record, error) {
	if !s.slept {
		s.slept = true
		*s.p.began = (*s.p.clock).Now()
		s.p.parsing <- struct{}{}
		time.Sleep(slowParseFor)
	}
	return s.Instance.Parse(ctx, b, dst)
}

// TestSlowClientStampsArrival: the server writes token 1, and token 2 as
// soon as the client starts a 40 ms parse of token 1, so the client reads
// token 2 late. Token 2's time is its arrival (inside the server's write)
// and the lag is recorded, reaching past the parse's end; with
// --no-kernel-timestamps the time is the late read and the lag is 0. The
// bounds are causal, so a slow machine (the server's write delayed into
// the parse) cannot fail them.
func TestSlowClientStampsArrival(t *testing.T) {
	var clock *replay.Clock
	parsing := make(chan struct{}, 1)
	var before, after int64 // token 2's write
	var began int64         // the slow parse's start
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
		cfg.Adapter = slowParse{openai.Adapter{Endpoint: openai.Chat}, parsing, &clock, &began}
		cfg.AdapterConfig = adapter.Config{Model: "m", Stream: true}
		cfg.NoKernelStamps = !kernel
		e, err := New(cfg)
		if err != nil {
			t.Fatal(err)
		}
		if kernel {
			awaitKernelStamps(t)
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
		parseEnd := began + int64(slowParseFor)
		if kernel {
			// The kernel stamps the segment inside the write; the read
			// comes after the parse, and the lag reaches to it.
			if r.LastTokenNS < before || r.LastTokenNS > after {
				t.Errorf("token 2 stamped %v after its write began (written in %v): not its arrival",
					time.Duration(r.LastTokenNS-before), time.Duration(after-before))
			}
			if read := r.LastTokenNS + r.ReadLagNS; read < parseEnd {
				t.Errorf("read lag %v ends %v before the parse that held the reader did",
					time.Duration(r.ReadLagNS), time.Duration(parseEnd-read))
			}
		} else if r.LastTokenNS < parseEnd || r.ReadLagNS != 0 {
			t.Errorf("without kernel stamps token 2 is stamped %v before the parse ended, read lag %v; want its read after the parse and 0",
				time.Duration(parseEnd-r.LastTokenNS), time.Duration(r.ReadLagNS))
		}
	}
}

// awaitKernelStamps returns once loopback segments carry kernel receive
// stamps. Linux turns stamping on for the whole system from a work queue
// after the first socket asks (the engine's client holds one socket
// asking); on a loaded machine that work can run after a test's first
// response arrived, which is then stamped at its read.
func awaitKernelStamps(t *testing.T) {
	t.Helper()
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	defer ln.Close()
	c, err := net.Dial("tcp", ln.Addr().String())
	if err != nil {
		t.Fatal(err)
	}
	defer c.Close()
	srv, err := ln.Accept()
	if err != nil {
		t.Fatal(err)
	}
	defer srv.Close()
	raw, err := c.(*net.TCPConn).SyscallConn()
	if err != nil {
		t.Fatal(err)
	}
	var serr error
	if err := raw.Control(func(fd uintptr) {
		serr = unix.SetsockoptInt(int(fd), unix.SOL_SOCKET, unix.SO_TIMESTAMPNS, 1)
	}); err != nil || serr != nil {
		t.Fatal("SO_TIMESTAMPNS:", err, serr)
	}
	p, oob := make([]byte, 8), make([]byte, 64)
	for i := 0; ; i++ {
		if _, err := srv.Write([]byte("x")); err != nil {
			t.Fatal(err)
		}
		var oobn int
		var rerr error
		if err := raw.Read(func(fd uintptr) bool {
			_, oobn, _, _, rerr = unix.Recvmsg(int(fd), p, oob, 0)
			return rerr != unix.EAGAIN
		}); err != nil || rerr != nil {
			t.Fatal("recvmsg:", err, rerr)
		}
		if oobn > 0 {
			return
		}
		if i == 100 {
			t.Fatal("no kernel receive stamps after 1 s")
		}
		time.Sleep(10 * time.Millisecond)
	}
}
