package engine

import (
	"bufio"
	"bytes"
	"context"
	"io"
	"net/http"
	"net/http/httptest"
	"net/textproto"
	"strings"
	"sync"
	"testing"

	"github.com/reprise-bench/reprise/engine/adapter"
	"github.com/reprise-bench/reprise/engine/adapter/openai"
	"github.com/reprise-bench/reprise/engine/record"
)

// injectTemplate sends the session id and the prompt in headers, as a
// template may ({{session_id}} and {{prompt}} are string placeholders).
const injectTemplate = `{"name":"inject","path":"/v1/chat/completions",
 "headers":{"X-Session":"{{session_id}}","X-Prompt":"{{prompt}}"},
 "body":{"model":"{{model}}","messages":"{{messages}}","max_tokens":"{{max_tokens}}","stream":"{{stream}}"},
 "response":{"text":"choices.0.message.content"}}`

// pathAdapter is an adapter whose requests go to path: what a Wasm adapter
// may return.
type pathAdapter struct {
	adapter.Adapter
	path string
}

func (a pathAdapter) NewInstance(c *adapter.Config) (adapter.Instance, error) {
	in, err := a.Adapter.NewInstance(c)
	return pathInst{in, a.path}, err
}

type pathInst struct {
	adapter.Instance
	path string
}

func (in pathInst) Build(b *adapter.BuildInput, out *adapter.HTTPRequest) error {
	err := in.Instance.Build(b, out)
	out.Path = in.path
	return err
}

// injectCase is one request built from hostile data.
type injectCase struct {
	session, prompt, rowValue, path string
}

// buildInject builds c's request for an engine on baseURL (HTTP/1.1
// unless http2).
func buildInject(t testing.TB, baseURL string, http2 bool, c injectCase) (*Engine, *Prepared) {
	t.Helper()
	tpl, err := openai.ParseTemplate("inject.json", []byte(injectTemplate))
	if err != nil {
		t.Fatal(err)
	}
	cfg := NewConfig()
	cfg.BaseURL, cfg.HTTP2 = baseURL, http2
	cfg.AdapterConfig = adapter.Config{Model: "m"}
	cfg.Adapter = tpl
	if c.path != "" {
		cfg.Adapter = pathAdapter{tpl, c.path}
	}
	e, err := New(cfg)
	if err != nil {
		t.Fatal(err)
	}
	b, err := e.NewBuilder()
	if err != nil {
		t.Fatal(err)
	}
	defer b.Close()
	p := &Prepared{RowHeader: []adapter.Header{{Name: "X-Session-Id", Value: c.session}, {Name: "X-Row", Value: c.rowValue}}}
	b.Build(&adapter.BuildInput{SessionID: c.session, PromptText: c.prompt, MaxTokens: 4, TraceRow: -1}, p)
	return e, p
}

// TestDataNeverInjectsHeaders: a session id, a prompt or a row header
// holding CR, LF or NUL, and an adapter's path holding them or a space,
// fail the request as data (error kind build) without a byte sent, over
// HTTP/1.1 and HTTP/2: the server sees no injected header and no
// smuggled request. Before, `a\r\nX-Injected: yes` reached the server as
// a header of its own and a `Content-Length: 0` smuggled a second
// request.
func TestDataNeverInjectsHeaders(t *testing.T) {
	var mu sync.Mutex
	var seen []string // method, path and headers of every request
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		io.Copy(io.Discard, r.Body)
		mu.Lock()
		seen = append(seen, r.Method+" "+r.URL.Path+" "+strings.Join(sortedKeys(r.Header), ","))
		mu.Unlock()
		w.Header().Set("Content-Type", "application/json")
		io.WriteString(w, `{"choices":[{"index":0,"message":{"content":"ok"}}],"usage":{"prompt_tokens":1,"completion_tokens":1}}`)
	}))
	defer srv.Close()
	smuggle := "b\r\nContent-Length: 0\r\n\r\nGET /smuggled HTTP/1.1\r\nHost: x\r\nX-Injected: yes\r\n\r\n"
	for _, tt := range []struct {
		name string
		c    injectCase
		want string
	}{
		{"session CRLF", injectCase{session: "a\r\nX-Injected: yes"}, "header X-Session"},
		{"session smuggles", injectCase{session: smuggle}, "header X-Session"},
		{"prompt LF", injectCase{session: "s", prompt: "hi\nX-Injected: yes"}, "header X-Prompt"},
		{"row header NUL", injectCase{session: "s", rowValue: "v\x00"}, "header X-Row"},
		{"row header smuggles", injectCase{session: "s", rowValue: smuggle}, "header X-Row"},
		{"path CRLF", injectCase{session: "s", path: "/x\r\nX-Injected: 1"}, "path"},
		{"path space", injectCase{session: "s", path: "/x y"}, "path"},
	} {
		for _, h2 := range []bool{false, true} {
			e, p := buildInject(t, srv.URL, h2, tt.c)
			s, err := e.NewSender()
			if err != nil {
				t.Fatal(err)
			}
			var r record.Request
			s.Do(context.Background(), p, &r)
			s.Close()
			e.Close()
			if r.ErrorKind != record.ErrBuild || !strings.Contains(r.ErrorMessage, tt.want) {
				t.Errorf("%s (http2 %v): recorded %q %q, want kind build naming %s", tt.name, h2, r.ErrorKind, r.ErrorMessage, tt.want)
			}
		}
	}
	// The same engine sends a clean request: the server is reachable.
	e, p := buildInject(t, srv.URL, false, injectCase{session: "s", prompt: "hi", rowValue: "1, 2"})
	s, _ := e.NewSender()
	var r record.Request
	s.Do(context.Background(), p, &r)
	s.Close()
	e.Close()
	if !r.OK() {
		t.Fatalf("a clean request failed: %s %s", r.ErrorKind, r.ErrorMessage)
	}
	mu.Lock()
	defer mu.Unlock()
	if len(seen) != 1 || strings.Contains(seen[0], "X-Injected") {
		t.Errorf("the server saw %q, want the one clean request", seen)
	}
}

func sortedKeys(h http.Header) []string {
	var ks []string
	for k := range h {
		ks = append(ks, k)
	}
	return ks
}

// FuzzBuildHead: whatever a trace row's session id, prompt and header
// value and an adapter's path hold, a request that builds has exactly one
// request line and one header line per header it sends, each as given:
// no data adds a header or a request.
func FuzzBuildHead(f *testing.F) {
	for _, c := range []injectCase{
		{"s1", "hi", "v", ""},
		{"a\r\nX-Injected: yes", "p", "v", ""},
		{"s", "x\ny", "v\x00", "/x y"},
		{"s", "p", "b\r\nContent-Length: 0\r\n\r\nGET /smuggled HTTP/1.1\r\n", "/x\r\nX-Inj: 1"},
		{"s\t2 é", "p", "1, 2", "/v1/chat/completions?a=1"},
	} {
		f.Add(c.session, c.prompt, c.rowValue, c.path)
	}
	f.Fuzz(func(t *testing.T, session, prompt, rowValue, path string) {
		if path != "" && path[0] != '/' {
			path = "/" + path
		}
		e, p := buildInject(t, "http://127.0.0.1:1", false, injectCase{session, prompt, rowValue, path})
		defer e.Close()
		if p.Err != nil {
			if p.ErrKind != record.ErrBuild {
				t.Fatalf("refused as %q, want build: %v", p.ErrKind, p.Err)
			}
			return
		}
		head := append(bytes.Clone(p.Head), "X-Request-Id: 1\r\n\r\n"...)
		tp := textproto.NewReader(bufio.NewReader(bytes.NewReader(head)))
		line, err := tp.ReadLine()
		if err != nil || len(strings.Split(line, " ")) != 3 {
			t.Fatalf("request line %q (%v) of %q", line, err, head)
		}
		h, err := tp.ReadMIMEHeader()
		if err != nil {
			t.Fatalf("headers of %q: %v", head, err)
		}
		if rest, _ := io.ReadAll(tp.R); len(rest) > 0 {
			t.Fatalf("%q follows the head %q: a second request", rest, head)
		}
		// Host, Content-Type, X-Session, X-Prompt, X-Session-Id, X-Row,
		// User-Agent, Content-Length, X-Request-Id: nothing more.
		n := 0
		for _, vs := range h {
			n += len(vs)
		}
		if n != 9 {
			t.Fatalf("%d header lines, want 9: %q", n, head)
		}
		if got := h.Get("X-Session-Id"); got != strings.Trim(session, " \t") {
			t.Fatalf("X-Session-Id %q, want %q", got, session)
		}
	})
}
