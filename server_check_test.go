package reprise

import (
	"bytes"
	"context"
	"errors"
	"io"
	"log/slog"
	"net"
	"net/http"
	"net/http/httptest"
	"os"
	"path/filepath"
	"strings"
	"sync/atomic"
	"testing"
	"time"
)

// preflightOptions is a one-request synthetic run against url with the
// server check on.
func preflightOptions(t *testing.T, url string) Options {
	o := NewOptions()
	o.URL, o.Model, o.Synthetic = url, "m", SyntheticLoad{ISL: 8, OSL: 2}
	o.Replay.Concurrency, o.Replay.RequestCount = 1, 1
	o.Telemetry.EndpointMetrics = false
	o.Output.Dir = filepath.Join(t.TempDir(), "run")
	return o
}

// TestServerCheck: the check before the first request passes on any HTTP
// answer (a server without /v1/models too) and warns when the model list
// lacks the model; it fails with an *UnreachableError, creating nothing,
// for a closed port, a server that is not HTTP, and one that does not
// answer within Preflight.Timeout; Preflight.Skip sends without it.
func TestServerCheck(t *testing.T) {
	chat := func(w http.ResponseWriter) {
		w.Header().Set("Content-Type", "application/json")
		io.WriteString(w, `{"id":"x","object":"chat.completion","model":"m","choices":[{"index":0,`+
			`"message":{"role":"assistant","content":"ok"},"finish_reason":"length"}],"usage":{"prompt_tokens":1,"completion_tokens":1}}`)
	}
	// server answers GET /v1/models with models (a JSON list; nil: 404)
	// and counts the chat requests it answers.
	server := func(t *testing.T, models string, auth *atomic.Value, chats *atomic.Int64) string {
		srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
			if r.Method == http.MethodGet {
				auth.Store(r.Header.Get("Authorization"))
				if models == "" {
					http.NotFound(w, r)
					return
				}
				io.WriteString(w, models)
				return
			}
			io.Copy(io.Discard, r.Body)
			chats.Add(1)
			chat(w)
		}))
		t.Cleanup(srv.Close)
		return srv.URL
	}
	for _, tt := range []struct {
		name, models, warn string
	}{
		{"no /v1/models", "", ""},
		{"model listed", `{"object":"list","data":[{"id":"other"},{"id":"m"}]}`, ""},
		{"model not listed", `{"object":"list","data":[{"id":"other"}]}`, "does not list the model"},
	} {
		t.Run(tt.name, func(t *testing.T) {
			var auth atomic.Value
			var chats atomic.Int64
			o := preflightOptions(t, server(t, tt.models, &auth, &chats))
			o.APIKey = "sk-test"
			var logs bytes.Buffer
			o.Log = slog.New(slog.NewTextHandler(&logs, nil))
			if _, err := Run(context.Background(), o); err != nil {
				t.Fatal(err)
			}
			if chats.Load() != 1 {
				t.Errorf("%d chat requests answered, want 1", chats.Load())
			}
			if a, _ := auth.Load().(string); a != "Bearer sk-test" {
				t.Errorf("the check sent Authorization %q, want the API key's", a)
			}
			if got := strings.Contains(logs.String(), "does not list the model"); got != (tt.warn != "") {
				t.Errorf("warning logged %v, want %v:\n%s", got, tt.warn != "", logs.String())
			}
		})
	}

	closed := func(t *testing.T) string {
		l, err := net.Listen("tcp", "127.0.0.1:0")
		if err != nil {
			t.Fatal(err)
		}
		l.Close()
		return "http://" + l.Addr().String()
	}
	// listener accepts connections and hands each to serve.
	listener := func(t *testing.T, serve func(net.Conn)) string {
		l, err := net.Listen("tcp", "127.0.0.1:0")
		if err != nil {
			t.Fatal(err)
		}
		t.Cleanup(func() { l.Close() })
		go func() {
			for {
				c, err := l.Accept()
				if err != nil {
					return
				}
				go serve(c)
			}
		}()
		return "http://" + l.Addr().String()
	}
	hold := make(chan struct{})
	t.Cleanup(func() { close(hold) })
	for _, tt := range []struct {
		name string
		url  func(t *testing.T) string
		want string
	}{
		{"closed port", closed, "connect: connection refused"},
		{"not HTTP", func(t *testing.T) string {
			return listener(t, func(c net.Conn) {
				defer c.Close()
				c.Read(make([]byte, 4096)) // the request, then a reply in another protocol
				io.WriteString(c, "-ERR unknown command 'GET'\r\n")
			})
		}, "malformed HTTP"},
		{"no answer", func(t *testing.T) string {
			return listener(t, func(c net.Conn) {
				defer c.Close()
				<-hold
			})
		}, "no answer to GET /v1/models within 200ms (Preflight.Timeout)"},
	} {
		t.Run(tt.name, func(t *testing.T) {
			u := tt.url(t)
			o := preflightOptions(t, u)
			o.Preflight.Timeout = 200 * time.Millisecond
			res, err := Run(context.Background(), o)
			ue, ok := errors.AsType[*UnreachableError](err)
			if !ok || res != nil {
				t.Fatalf("Run: %v, %v; want an *UnreachableError and no result", res, err)
			}
			if ue.URL != u || ue.Requests != 0 || !strings.Contains(err.Error(), tt.want) ||
				!strings.HasPrefix(err.Error(), "server check: "+u+" does not answer: ") {
				t.Errorf("error %q (URL %q, requests %d): want %s's, 0 requests, %q", err, ue.URL, ue.Requests, u, tt.want)
			}
			if _, err := os.Stat(o.Output.Dir); !errors.Is(err, os.ErrNotExist) {
				t.Errorf("the run directory was created: %v", err)
			}
		})
	}

	t.Run("skipped", func(t *testing.T) {
		o := preflightOptions(t, closed(t))
		o.Preflight.Skip, o.AbortAfterConnectFailures = true, 0
		res, err := Run(context.Background(), o)
		if err != nil || res == nil {
			t.Fatalf("Run: %v", err)
		}
		if res.Summary.ErrorRequestCount != 1 || res.Summary.Errors[0].Kind != "connect" {
			t.Errorf("without the check the request was sent and failed to connect: %+v", res.Summary.Errors)
		}
	})
}
