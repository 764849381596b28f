package engine

import (
	"bufio"
	"context"
	"fmt"
	"io"
	"net"
	"net/http"
	"strconv"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/reprise-bench/reprise/engine/adapter"
	"github.com/reprise-bench/reprise/engine/record"
)

// preparedPrompt is prepared with a prompt of the given text.
func preparedPrompt(t testing.TB, e *Engine, stream bool, prompt string) *Prepared {
	t.Helper()
	b, err := e.NewBuilder()
	if err != nil {
		t.Fatal(err)
	}
	defer b.Close()
	var p Prepared
	in := adapter.BuildInput{PromptText: prompt, MaxTokens: 16}
	if stream {
		in.Flags |= adapter.BuildStream
	}
	if err := b.Build(&in, &p); err != nil {
		t.Fatal(err)
	}
	return &p
}

// earlyServer answers every request with its response as soon as the
// request's headers arrived, without reading the body, then closes the
// connection: at once (a reset, as the body is unread) or, with halfClose,
// after a FIN and a pause (as net/http's server does).
func earlyServer(t *testing.T, response string, halfClose bool) string {
	t.Helper()
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	var wg sync.WaitGroup
	wg.Go(func() {
		for {
			c, err := ln.Accept()
			if err != nil {
				return
			}
			wg.Go(func() {
				defer c.Close()
				if _, err := http.ReadRequest(bufio.NewReader(c)); err != nil {
					return
				}
				if _, err := io.WriteString(c, response); err != nil {
					return
				}
				if halfClose {
					_ = c.(*net.TCPConn).CloseWrite()
					time.Sleep(50 * time.Millisecond)
				}
			})
		}
	})
	t.Cleanup(func() { ln.Close(); wg.Wait() })
	return "http://" + ln.Addr().String()
}

// TestEarlyAnswerWhileWriting: a server that rejects a request while its
// body is still being written (413) and closes the connection makes the
// write fail; the client still reads and records the server's answer.
func TestEarlyAnswerWhileWriting(t *testing.T) {
	body := `{"error":{"message":"prompt is too large for this server","type":"invalid_request_error","code":413}}`
	resp := fmt.Sprintf("HTTP/1.1 413 Request Entity Too Large\r\nContent-Type: application/json\r\nContent-Length: %d\r\nConnection: close\r\n\r\n%s", len(body), body)
	// Far more than the socket buffers hold, so the write is still going
	// when the server answers.
	prompt := strings.Repeat("hello ", 2<<20)
	for _, half := range []bool{false, true} {
		for _, reactor := range []bool{true, false} {
			t.Run(fmt.Sprintf("halfclose=%v/reactor=%v", half, reactor), func(t *testing.T) {
				url := earlyServer(t, resp, half)
				e := configured(t, url, func(cfg *Config) {
					cfg.AdapterConfig = adapter.Config{Model: "m", Stream: true}
					cfg.Timeout = 10 * time.Second
					cfg.NoReactor = !reactor
				})
				s, _ := e.NewSender()
				var r record.Request
				s.Do(context.Background(), preparedPrompt(t, e, true, prompt), &r)
				if r.ErrorKind != record.ErrHTTPStatus || r.StatusCode != 413 ||
					!strings.Contains(r.ErrorMessage, "HTTP 413") || !strings.Contains(r.ErrorMessage, "prompt is too large") {
					t.Errorf("status %d kind %q message %q, want the server's 413 and its message", r.StatusCode, r.ErrorKind, r.ErrorMessage)
				}
				if r.WroteNS != 0 {
					t.Errorf("wrote_ns %d for a request whose body was not all written", r.WroteNS)
				}
				if r.Retries != 0 {
					t.Errorf("%d retries", r.Retries)
				}
			})
		}
	}
}

// TestStatusMessage: a non-2xx response is one line: the adapter's
// message when it parsed one, else the body's first bytes, and for a body
// that is neither JSON nor plain text its type, size and what was wanted.
func TestStatusMessage(t *testing.T) {
	// 120 bytes end inside the 12th é: the cut backs off to the rune.
	long := "xxxxxx" + strings.Repeat("<p>é</p>\n", 40)
	for _, c := range []struct {
		name, ctype, body, parsed, want string
	}{
		{"parsed", "application/json", `{"error":{"message":"x"}}`, "context\ntoo long", "HTTP 400 Bad Request: context too long"},
		{"json not parsed", "application/problem+json", `{"detail": "Not Found"}`, "", `HTTP 400 Bad Request: {"detail": "Not Found"}`},
		{"plain", "text/plain; charset=utf-8", "model not loaded\n", "", "HTTP 400 Bad Request: model not loaded"},
		{"html", "text/html", long, "", "HTTP 400 Bad Request (text/html, " + strconv.Itoa(len(long)) + " bytes): " +
			"xxxxxx" + strings.Repeat("<p>é</p> ", 11) + "<p>…; expected an inference server's JSON: check the URL and the endpoint"},
		{"empty", "", "", "", "HTTP 400 Bad Request (empty body)"},
	} {
		t.Run(c.name, func(t *testing.T) {
			got := statusMessage(400, c.ctype, []byte(c.body), c.parsed)
			if got != c.want {
				t.Errorf("got  %q\nwant %q", got, c.want)
			}
			if strings.Contains(got, "\n") {
				t.Errorf("%q has a line break", got)
			}
		})
	}
}
