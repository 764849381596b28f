package mockserver

import (
	"bufio"
	"encoding/json"
	"fmt"
	"io"
	"net"
	"net/http"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"
)

// safety bounds how long a test waits for the server to act: far longer
// than the timeouts under test, so only a server that never acts fails.
const safety = 20 * time.Second

// rawConn dials s and writes raw.
func rawConn(t *testing.T, s *Server, raw string) net.Conn {
	t.Helper()
	c, err := net.Dial("tcp", s.Addr())
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { c.Close() })
	if _, err := io.WriteString(c, raw); err != nil {
		t.Fatal(err)
	}
	_ = c.SetReadDeadline(time.Now().Add(safety))
	return c
}

// readUntilClosed reads c until the server closes it and returns what
// came; it fails the test when the safety deadline hits first.
func readUntilClosed(t *testing.T, c net.Conn) string {
	t.Helper()
	b, err := io.ReadAll(c)
	if err != nil && !strings.Contains(err.Error(), "reset") {
		t.Fatalf("the server did not close the connection: %v (got %q)", err, b)
	}
	return string(b)
}

// TestBodyTimeout: a client that sends part of a body and stalls gets a
// 408 and its connection closed after the body timeout, on a generation
// and on a pooling endpoint.
func TestBodyTimeout(t *testing.T) {
	for _, path := range []string{"/v1/completions", "/v1/embeddings"} {
		t.Run(path, func(t *testing.T) {
			s := startServer(t, func(c *Config) { c.BodyTimeout = 200 * time.Millisecond })
			c := rawConn(t, s, "POST "+path+" HTTP/1.1\r\nHost: x\r\nContent-Type: application/json\r\nContent-Length: 100000\r\n\r\n{\"input\":\"")
			got := readUntilClosed(t, c)
			if !strings.HasPrefix(got, "HTTP/1.1 408 ") || !strings.Contains(got, "body-timeout") {
				t.Errorf("stalled body: %.300q", got)
			}
			if l := lastLog(t, s); l.Status != 408 {
				t.Errorf("log status %d, want 408", l.Status)
			}
		})
	}
}

// TestBodyTooLargeAtOnce: a Content-Length over the limit is answered 413
// before any body byte is read, with a client-error type.
func TestBodyTooLargeAtOnce(t *testing.T) {
	for _, flavor := range []Flavor{FlavorVLLM, FlavorLlamaCPP} {
		t.Run(string(flavor), func(t *testing.T) {
			s := startServer(t, func(c *Config) { c.Flavor = flavor })
			c := rawConn(t, s, fmt.Sprintf("POST /v1/completions HTTP/1.1\r\nHost: x\r\nContent-Type: application/json\r\nContent-Length: %d\r\n\r\n{", 100<<20))
			resp, err := http.ReadResponse(bufio.NewReader(c), nil)
			if err != nil {
				t.Fatal(err)
			}
			defer resp.Body.Close()
			var body struct {
				Error struct {
					Message string `json:"message"`
					Type    string `json:"type"`
					Code    int    `json:"code"`
				} `json:"error"`
			}
			if err := json.NewDecoder(resp.Body).Decode(&body); err != nil {
				t.Fatal(err)
			}
			e := body.Error
			if resp.StatusCode != 413 || e.Code != 413 || !strings.Contains(e.Message, "request body over") ||
				e.Type == "InternalServerError" || e.Type == "server_error" {
				t.Errorf("status %d, error %+v", resp.StatusCode, e)
			}
		})
	}
}

// TestIdleTimeout: an idle keep-alive connection is closed after the idle
// timeout, in every flavor.
func TestIdleTimeout(t *testing.T) {
	for _, flavor := range []Flavor{FlavorVLLM, FlavorLlamaCPP} {
		t.Run(string(flavor), func(t *testing.T) {
			s := startServer(t, func(c *Config) { c.Flavor = flavor; c.IdleTimeout = 200 * time.Millisecond })
			c := rawConn(t, s, "GET /health HTTP/1.1\r\nHost: x\r\n\r\n")
			br := bufio.NewReader(c)
			resp, err := http.ReadResponse(br, nil)
			if err != nil {
				t.Fatal(err)
			}
			io.Copy(io.Discard, resp.Body)
			resp.Body.Close()
			if resp.Close {
				t.Fatal("the server closed after the response: nothing idle to test")
			}
			if rest, err := io.ReadAll(br); err != nil || len(rest) != 0 {
				t.Errorf("idle connection not closed: %v (got %q)", err, rest)
			}
		})
	}
}

// TestEventLogPerRequest: a request's line is in the event log file as
// soon as the request is done, while the server runs (tail -f works).
func TestEventLogPerRequest(t *testing.T) {
	f, err := os.Create(filepath.Join(t.TempDir(), "events.jsonl"))
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { f.Close() }) // after the server's Close (cleanups run last first)
	s := startServer(t, func(c *Config) { c.EventLog = f })
	for i := range 2 {
		id := fmt.Sprintf("req-%d", i)
		mustDo(t, s, "POST", "/v1/completions", `{"prompt":"hi","max_tokens":2}`, RequestIDHeader, id)
		if err := s.WaitIdle(t.Context()); err != nil {
			t.Fatal(err)
		}
		b, err := os.ReadFile(f.Name())
		if err != nil {
			t.Fatal(err)
		}
		if !strings.Contains(string(b), `"request_id":"`+id+`"`) {
			t.Errorf("request %s done, the event log holds %q", id, b)
		}
	}
}
