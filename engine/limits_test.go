package engine

import (
	"bufio"
	"context"
	"errors"
	"fmt"
	"io"
	"net"
	"net/http"
	"strings"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/reprise-bench/reprise/engine/adapter"
	"github.com/reprise-bench/reprise/engine/record"
)

// endlessServer answers the first request with head and then body
// repeated without end (until the client closes the connection, or
// endlessBound bytes as a safety net), and every later request with
// okResponse. It records whether the client closed the endless response.
type endlessServer struct {
	ln     net.Listener
	head   string
	body   string
	n      atomic.Int32
	wrote  atomic.Int64 // body bytes written to the endless response
	closed atomic.Bool  // a write failed: the client closed the connection
}

// endlessBound ends an endless response that the client never stops
// reading: far above every cap the tests set.
const endlessBound = 256 << 20

func startEndless(t *testing.T, head, body string) *endlessServer {
	t.Helper()
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	s := &endlessServer{ln: ln, head: head, body: body}
	var wg sync.WaitGroup
	wg.Go(func() {
		for {
			c, err := ln.Accept()
			if err != nil {
				return
			}
			wg.Go(func() { s.serve(c) })
		}
	})
	t.Cleanup(func() { ln.Close(); wg.Wait() })
	return s
}

func (s *endlessServer) serve(c net.Conn) {
	defer c.Close()
	br := bufio.NewReader(c)
	for {
		req, err := http.ReadRequest(br)
		if err != nil {
			return
		}
		_, _ = io.Copy(io.Discard, req.Body)
		if s.n.Add(1) > 1 {
			if _, err := io.WriteString(c, okResponse()); err != nil {
				return
			}
			continue
		}
		if _, err := io.WriteString(c, s.head); err != nil {
			return
		}
		chunk := []byte(strings.Repeat(s.body, max(1, 64<<10/len(s.body))))
		for s.wrote.Load() < endlessBound {
			_ = c.SetWriteDeadline(time.Now().Add(30 * time.Second))
			n, err := c.Write(chunk)
			s.wrote.Add(int64(n))
			if err != nil {
				s.closed.Store(true)
				return
			}
		}
		return
	}
}

func (s *endlessServer) url() string { return "http://" + s.ln.Addr().String() }

const (
	sseHead    = "HTTP/1.1 200 OK\r\nContent-Type: text/event-stream\r\n\r\n"
	sseContent = `data: {"choices":[{"index":0,"delta":{"content":"a"},"finish_reason":null}]}` + "\n\n"
	jsonHead   = "HTTP/1.1 200 OK\r\nContent-Type: application/json\r\n\r\n"
)

// TestResponseCaps: a server that never stops answering (an endless
// stream of valid events, one endless data line, one event of endless data
// lines, an endless JSON body, a body whose Content-Length is over the
// cap, an endless error body) gets its request ended at the cap with its
// own kind, the connection closed, and no more than the cap read and held;
// the next request on the same sender works. Before the caps only
// --timeout stopped such a response, and the client's memory grew without
// limit.
func TestResponseCaps(t *testing.T) {
	const (
		maxEvents = 1000
		maxEvent  = 64 << 10
		maxBody   = 1 << 20
		slack     = 2 * DefaultReadBuffer // what a read or two past a cap brings
	)
	cases := []struct {
		name       string
		head, body string
		stream     bool
		want       record.ErrorKind
		maxRead    int64 // bytes the client may read before it stops
	}{
		{"endless stream", sseHead, sseContent, true, record.ErrTooLarge, int64(maxEvents*len(sseContent) + slack)},
		{"endless data line", sseHead + "data: ", "a", true, record.ErrTooLarge, maxEvent + slack},
		// 8 bytes on the wire add 2 to the event ("\na").
		{"endless event", sseHead, "data: a\n", true, record.ErrTooLarge, 4*maxEvent + slack},
		{"endless comment", sseHead, ": ping\n", true, record.ErrTooLarge, 2*maxEvent + slack},
		{"endless blank lines", sseHead, "\n", true, record.ErrTooLarge, maxBody + slack},
		{"endless body", jsonHead + `{"choices":[{"index":0,"message":{"content":"`, "a", false, record.ErrTooLarge, maxBody + slack},
		{"endless chunked body", "HTTP/1.1 200 OK\r\nContent-Type: application/json\r\nTransfer-Encoding: chunked\r\n\r\n",
			"8000\r\n" + strings.Repeat("a", 0x8000) + "\r\n", false, record.ErrTooLarge, maxBody + slack},
		{"length over the cap", fmt.Sprintf("HTTP/1.1 200 OK\r\nContent-Type: application/json\r\nContent-Length: %d\r\n\r\n", 1<<40), "a",
			false, record.ErrTooLarge, slack},
		{"endless error body", "HTTP/1.1 500 Internal Server Error\r\nContent-Type: text/plain\r\n\r\n", "oops ", true,
			record.ErrHTTPStatus, maxBody + slack},
	}
	for _, c := range cases {
		for _, noReactor := range []bool{false, true} {
			name := c.name
			if noReactor {
				if !c.stream {
					continue // the reactor reads only streams
				}
				name += "/sender"
			}
			t.Run(name, func(t *testing.T) {
				srv := startEndless(t, c.head, c.body)
				e := configured(t, srv.url(), func(cfg *Config) {
					cfg.AdapterConfig = adapter.Config{Model: "m", Stream: c.stream}
					cfg.Timeout = time.Minute // never what ends it here
					cfg.NoReactor = noReactor
					cfg.Events = true
					cfg.MaxResponseEvents, cfg.MaxEventBytes, cfg.MaxResponseBytes = maxEvents, maxEvent, maxBody
				})
				s, _ := e.NewSender()
				var r record.Request
				s.Do(context.Background(), prepared(t, e, c.stream), &r)
				if r.ErrorKind != c.want {
					t.Fatalf("kind %q (%s), want %q; read %d bytes, %d events", r.ErrorKind, r.ErrorMessage, c.want, r.BytesReceived, r.Events)
				}
				if c.want == record.ErrTooLarge && !strings.Contains(r.ErrorMessage, "--max-") {
					t.Errorf("message %q does not name the cap's flag", r.ErrorMessage)
				}
				if r.BytesReceived > c.maxRead {
					t.Errorf("read %d bytes, want at most %d", r.BytesReceived, c.maxRead)
				}
				// What the sender holds: never more events than the cap,
				// no line or event buffer over it.
				if r.Events > maxEvents || len(s.evTime) > maxEvents || len(s.Events()) > maxEvents {
					t.Errorf("%d events recorded, %d kept, %d exported; cap %d", r.Events, len(s.evTime), len(s.Events()), maxEvents)
				}
				if n := max(len(s.framer.line), len(s.framer.data), len(s.framer.comment)); n > maxEvent {
					t.Errorf("the framer holds a line or event of %d bytes, cap %d", n, maxEvent)
				}
				if len(s.whole) > maxBody {
					t.Errorf("holds %d body bytes, cap %d", len(s.whole), maxBody)
				}
				// The client closed the connection: the server's writes fail.
				for i := 0; !srv.closed.Load() && i < 1000; i++ {
					time.Sleep(10 * time.Millisecond)
				}
				if !srv.closed.Load() {
					t.Errorf("the server could write %d bytes: the connection was not closed", srv.wrote.Load())
				}
				// The run goes on: the next request works.
				r = record.Request{}
				s.Do(context.Background(), prepared(t, e, false), &r)
				if !r.OK() {
					t.Errorf("next request: %s: %s", r.ErrorKind, r.ErrorMessage)
				}
			})
		}
	}
}

// slowCounter takes far longer than the request's --timeout to count: its
// CountContext returns only when its context ends (at most after 10 s),
// its Count after 2 s.
type slowCounter struct{ started chan struct{} }

func (c slowCounter) Count(text string) int {
	time.Sleep(2 * time.Second)
	return len(text)
}

func (c slowCounter) CountContext(ctx context.Context, text string) (int, error) {
	select {
	case c.started <- struct{}{}:
	default:
	}
	select {
	case <-ctx.Done():
		return 0, ctx.Err()
	case <-time.After(10 * time.Second):
		return len(text), nil
	}
}

// TestCountUnderTimeout: counting the output's tokens is part of the
// request: --timeout ends a count that would outlast it (as a timeout),
// and cancelling the request (an interrupt's grace ending) ends it as
// cancelled. Before, a count of a huge one-word answer ran on for minutes
// past both.
func TestCountUnderTimeout(t *testing.T) {
	content := strings.Repeat("a", 2*countCheckBytes)
	body := `{"choices":[{"index":0,"finish_reason":"length","message":{"content":"` + content + `"}}]}`
	sse := "data: " + `{"choices":[{"index":0,"delta":{"content":"` + content + `"},"finish_reason":"length"}]}` + "\n\ndata: [DONE]\n\n"
	for _, c := range []struct {
		name   string
		stream bool
		cancel bool
		want   record.ErrorKind
	}{
		{"timeout", false, false, record.ErrTimeout},
		{"timeout/stream", true, false, record.ErrTimeout},
		{"cancelled", false, true, record.ErrCancelled},
	} {
		t.Run(c.name, func(t *testing.T) {
			srv := startScript(t, func(int) (string, bool) {
				if c.stream {
					return "HTTP/1.1 200 OK\r\nContent-Type: text/event-stream\r\n\r\n" + sse, true
				}
				return fmt.Sprintf("HTTP/1.1 200 OK\r\nContent-Type: application/json\r\nContent-Length: %d\r\n\r\n%s", len(body), body), false
			})
			counter := slowCounter{started: make(chan struct{}, 1)}
			e := configured(t, srv.url(), func(cfg *Config) {
				cfg.AdapterConfig = adapter.Config{Model: "m", Stream: c.stream}
				cfg.Counter = counter
				cfg.Timeout = time.Second
				if c.cancel {
					cfg.Timeout = 0
				}
			})
			s, _ := e.NewSender()
			ctx, cancel := context.WithCancelCause(context.Background())
			defer cancel(nil)
			if c.cancel {
				go func() {
					<-counter.started
					cancel(errors.New("interrupted; grace period over"))
				}()
			}
			var r record.Request
			s.Do(ctx, prepared(t, e, c.stream), &r)
			if r.ErrorKind != c.want {
				t.Fatalf("kind %q (%s), want %q", r.ErrorKind, r.ErrorMessage, c.want)
			}
			if c.want == record.ErrTimeout && !strings.Contains(r.ErrorMessage, "--timeout") {
				t.Errorf("message %q does not name --timeout", r.ErrorMessage)
			}
		})
	}
}

// TestResponseCapsHTTP2: the caps hold over HTTP/2 too, and the stream
// is reset (the handler sees its request end) while the connection stays.
func TestResponseCapsHTTP2(t *testing.T) {
	for _, c := range []struct {
		name   string
		stream bool
		length bool // declare a Content-Length over the cap
	}{{"endless stream", true, false}, {"endless body", false, false}, {"length over the cap", false, true}} {
		t.Run(c.name, func(t *testing.T) {
			var ended atomic.Bool
			srv := httptestH2C(t, func(w http.ResponseWriter, r *http.Request) {
				io.Copy(io.Discard, r.Body)
				chunk := strings.Repeat(`{"x":"aaaaaaaa"}`, 1024)
				if c.stream {
					w.Header().Set("Content-Type", "text/event-stream")
					chunk = strings.Repeat(sseContent, 64)
				}
				if c.length {
					w.Header().Set("Content-Length", "1099511627776")
				}
				for wrote := 0; wrote < endlessBound; wrote += len(chunk) {
					if _, err := io.WriteString(w, chunk); err != nil {
						break
					}
				}
				<-r.Context().Done()
				ended.Store(true)
			})
			e := configured(t, srv, func(cfg *Config) {
				cfg.HTTP2 = true
				cfg.AdapterConfig = adapter.Config{Model: "m", Stream: c.stream}
				cfg.MaxResponseEvents, cfg.MaxResponseBytes = 1000, 1<<20
			})
			s, _ := e.NewSender()
			var r record.Request
			s.Do(context.Background(), prepared(t, e, c.stream), &r)
			if r.ErrorKind != record.ErrTooLarge {
				t.Fatalf("kind %q (%s), want too_large; read %d bytes", r.ErrorKind, r.ErrorMessage, r.BytesReceived)
			}
			if r.BytesReceived > 1<<20+64<<10 {
				t.Errorf("read %d bytes", r.BytesReceived)
			}
			for i := 0; !ended.Load() && i < 1000; i++ {
				time.Sleep(10 * time.Millisecond)
			}
			if !ended.Load() {
				t.Error("the handler's request did not end: the stream was not reset")
			}
		})
	}
}

// TestResponseCapsNDJSON: the caps hold for an NDJSON stream (a Wasm
// adapter's framing), parsed live or deferred to the end (which keeps
// every event's bytes until then): an endless line, endless events.
func TestResponseCapsNDJSON(t *testing.T) {
	const head = "HTTP/1.1 200 OK\r\nContent-Type: application/x-ndjson\r\n\r\n"
	for _, c := range []struct {
		name, head, body string
	}{{"endless line", head + `{"t":"`, "a"}, {"endless events", head, `{"t":"a"}` + "\n"}} {
		for _, deferred := range []bool{false, true} {
			t.Run(fmt.Sprintf("%s/deferred=%v", c.name, deferred), func(t *testing.T) {
				srv := startEndless(t, c.head, c.body)
				e := configured(t, srv.url(), func(cfg *Config) {
					cfg.Adapter = ndjsonAdapter{deferred: deferred}
					cfg.MaxResponseEvents, cfg.MaxEventBytes, cfg.MaxResponseBytes = 1000, 64<<10, 1<<20
				})
				b, _ := e.NewBuilder()
				defer b.Close()
				var p Prepared
				if err := b.Build(&adapter.BuildInput{Flags: adapter.BuildStream, PromptText: "x"}, &p); err != nil {
					t.Fatal(err)
				}
				s, _ := e.NewSender()
				var r record.Request
				s.Do(context.Background(), &p, &r)
				if r.ErrorKind != record.ErrTooLarge {
					t.Fatalf("kind %q (%s), want too_large; read %d bytes, %d events", r.ErrorKind, r.ErrorMessage, r.BytesReceived, r.Events)
				}
				if r.BytesReceived > 64<<10+2*DefaultReadBuffer+1000*10 || r.Events > 1000 || len(s.defRefs) > 1000 {
					t.Errorf("read %d bytes, %d events, kept %d deferred", r.BytesReceived, r.Events, len(s.defRefs))
				}
			})
		}
	}
}
