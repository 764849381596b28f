package main

import (
	"encoding/json"
	"fmt"
	"io"
	"net/http"
	"net/http/httptest"
	"os"
	"path/filepath"
	"strings"
	"sync"
	"testing"

	"github.com/reprise-bench/reprise/arrowio"
)

// Secrets planted by TestReplaySecretsNeverWritten; none may reach a file
// of the run or a log line.
var plantedSecrets = []string{
	"url-user-5ec",        // --url user name
	"sk-url-pass-7c2",     // --url password
	"sk-apikey-91d",       // --api-key
	"xauth-secret-3e8",    // --header X-Auth (not a name on a fixed list)
	"sk-extra-body-4a1",   // --extra-body api_key
	"nested-secret-b07",   // --extra-body {"auth":{"Password":…}}
	"scrape-pass-e44",     // --server-metrics URL password
	"query-token-aa9",     // --server-metrics query value
	"sk-bearer-header-f0", // --header Authorization
}

// TestReplaySecretsNeverWritten plants secrets in the URL's user info,
// --api-key, an unlisted header, an Authorization header, nested
// --extra-body keys and a --server-metrics URL (user info, query), runs replays at debug
// level with text and JSON logs in every record format with every export,
// and looks for each secret in every file of each run directory, in the
// tables read back (Parquet pages are compressed) and in the logs.
func TestReplaySecretsNeverWritten(t *testing.T) {
	srv := startMockServer(t, nil)
	host := strings.TrimPrefix(srv.URL(), "http://")
	url := "http://url-user-5ec:sk-url-pass-7c2@" + host
	extra := `{"temperature":0,"api_key":"sk-extra-body-4a1","auth":{"Password":"nested-secret-b07"},"list":[{"Secret_Token":"nested-secret-b07"}]}`
	for _, tt := range []struct{ format, logFormat string }{
		{"parquet", "text"},
		{"arrow", "json"},
		{"jsonl", "text"},
	} {
		t.Run(tt.format+"/"+tt.logFormat, func(t *testing.T) {
			out := t.TempDir()
			args := []string{"--log-level", "debug", "--log-format", tt.logFormat, "replay", "--url", url, "--model", "reprise-mock",
				"--isl", "8", "--osl", "2", "--request-count", "4", "--concurrency", "2", "--out", out, "--format", tt.format,
				"--export-level", "events", "--api-key", "sk-apikey-91d", "-H", "X-Auth: xauth-secret-3e8",
				"-H", "Authorization: Bearer sk-bearer-header-f0", "-H", "Content-Type: application/json",
				"--extra-body", extra, "--server-metrics", "http://scrape:scrape-pass-e44@" + host + "/metrics?token=query-token-aa9"}
			if tt.format != "jsonl" {
				args = append(args, "--export", "aiperf")
			}
			code, stdout, stderr := runCLI(t, "", args...)
			if code != 0 {
				t.Fatalf("exit %d: %s", code, stderr)
			}
			if !strings.Contains(stderr, "level=DEBUG") && !strings.Contains(stderr, `"level":"DEBUG"`) {
				t.Errorf("no debug line in the log:\n%s", stderr)
			}
			texts := map[string]string{"stderr": stderr, "stdout": stdout}
			n := 0
			err := filepath.Walk(out, func(p string, fi os.FileInfo, err error) error {
				if err != nil || fi.IsDir() {
					return err
				}
				b, err := os.ReadFile(p)
				texts[p] = string(b)
				n++
				return err
			})
			if err != nil {
				t.Fatal(err)
			}
			if n < 4 {
				t.Fatalf("only %d files in the run directory", n)
			}
			if tt.format != "jsonl" {
				reqs, err := arrowio.ReadRequests(out)
				if err != nil {
					t.Fatal(err)
				}
				evs, err := arrowio.ReadEvents(out)
				if err != nil {
					t.Fatal(err)
				}
				ms, err := arrowio.ReadMetricSamples(out)
				if err != nil {
					t.Fatal(err)
				}
				for name, v := range map[string]any{"records": reqs, "events": evs, "server_metrics": ms} {
					texts[name+" table"] = fmt.Sprintf("%+v", v)
				}
				if !strings.Contains(texts["server_metrics table"], host+"/metrics") {
					t.Errorf("the server_metrics table does not name the scraped host")
				}
			}
			for where, text := range texts {
				for _, s := range plantedSecrets {
					if strings.Contains(text, s) {
						t.Errorf("%s contains the secret %q", where, s)
					}
				}
			}
			var m struct {
				URL       string   `json:"url"`
				Headers   []string `json:"headers"`
				ExtraBody string   `json:"extra_body"`
			}
			if err := json.Unmarshal([]byte(texts[filepath.Join(out, "manifest.json")]), &m); err != nil {
				t.Fatal(err)
			}
			// What is not secret stays: the host, the allowed header, the
			// other body keys.
			if !strings.Contains(m.URL, host) || !strings.Contains(strings.Join(m.Headers, "\n"), "Content-Type: application/json") ||
				!strings.Contains(m.ExtraBody, `"temperature":0`) {
				t.Errorf("the manifest lost what is not secret: url %q, headers %q, extra_body %v", m.URL, m.Headers, m.ExtraBody)
			}
		})
	}
}

// TestReplayURLUserInfoSent: the user info of --url is sent as HTTP Basic
// authorization (the URL the server sees has none), unless a header
// already authorizes.
func TestReplayURLUserInfoSent(t *testing.T) {
	var mu sync.Mutex
	var got []string
	srv := httptest.NewUnstartedServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		if !strings.HasPrefix(r.URL.Path, "/v1/") || r.Method == http.MethodGet { // no metrics, no /v1/models (the preflight passes on a 404)
			http.NotFound(w, r)
			return
		}
		io.Copy(io.Discard, r.Body)
		mu.Lock()
		got = append(got, r.Header.Get("Authorization"))
		mu.Unlock()
		w.Header().Set("Content-Type", "application/json")
		io.WriteString(w, `{"choices":[{"index":0,"message":{"role":"assistant","content":"ok"},"finish_reason":"length"}],`+
			`"usage":{"prompt_tokens":1,"completion_tokens":1,"total_tokens":2}}`)
	}))
	srv.Config.Protocols = new(http.Protocols)
	srv.Config.Protocols.SetHTTP1(true)
	srv.Config.Protocols.SetUnencryptedHTTP2(true) // --http2 over http:// is h2c
	srv.Start()
	defer srv.Close()
	base := strings.Replace(srv.URL, "http://", "http://alice:s3cret@", 1)
	for _, tt := range []struct {
		extra []string
		want  string
	}{
		{nil, "Basic YWxpY2U6czNjcmV0"}, // base64("alice:s3cret")
		{[]string{"--api-key", "k"}, "Bearer k"},
		{[]string{"-H", "authorization: Token t"}, "Token t"},
	} {
		mu.Lock()
		got = nil
		mu.Unlock()
		for _, h2 := range []string{"--http2=false", "--http2"} {
			args := append([]string{"replay", "--url", base, "--model", "m", "--isl", "4", "--osl", "1", "--no-streaming", "--request-count", "1", "--concurrency", "1",
				"--quiet", "--format", "jsonl", "--out", t.TempDir(), "--no-server-metrics", h2}, tt.extra...)
			if code, _, stderr := runCLI(t, "", args...); code != 0 {
				t.Fatalf("%v: exit %d: %s", args, code, stderr)
			}
		}
		mu.Lock()
		if len(got) != 2 || got[0] != tt.want || got[1] != tt.want {
			t.Errorf("%v: server saw Authorization %q, want %q over HTTP/1.1 and HTTP/2", tt.extra, got, tt.want)
		}
		mu.Unlock()
	}
}

// TestReplayURLQueryRejected: a query in --url would never reach the
// server (the endpoint path is appended after it); it is a usage error
// that does not repeat the query.
func TestReplayURLQueryRejected(t *testing.T) {
	code, _, stderr := runCLI(t, "", "replay", "--url", "http://127.0.0.1:9/?api_key=sk-query-1f3", "--model", "m",
		"--isl", "4", "--osl", "1", "--concurrency", "1", "--out", t.TempDir())
	if code != 2 || !strings.Contains(stderr, "--url http://127.0.0.1:9/?…: a query or fragment cannot be sent") ||
		strings.Contains(stderr, "sk-query-1f3") {
		t.Errorf("exit %d, want 2 and the query left out: %s", code, stderr)
	}
}
