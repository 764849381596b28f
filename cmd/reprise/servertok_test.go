package main

import (
	"net/http"
	"net/http/httptest"
	"net/http/httputil"
	"net/url"
	"path/filepath"
	"strings"
	"testing"
)

// TestServerTokenizerFallback: --tokenizer server against a server whose
// /tokenize is missing, or gives no tokens for text, runs with the
// builtin tokenizer and says why and what that costs.
func TestServerTokenizerFallback(t *testing.T) {
	srv := startMockServer(t, nil)
	up, err := url.Parse(srv.URL())
	if err != nil {
		t.Fatal(err)
	}
	proxy := httputil.NewSingleHostReverseProxy(up)
	for name, tokenize := range map[string]http.HandlerFunc{
		"missing":     http.NotFound,
		"placeholder": func(w http.ResponseWriter, r *http.Request) { w.Write([]byte(`{"count":0,"tokens":[]}`)) },
	} {
		t.Run(name, func(t *testing.T) {
			front := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
				if r.URL.Path == "/tokenize" {
					tokenize(w, r)
					return
				}
				proxy.ServeHTTP(w, r)
			}))
			defer front.Close()
			t.Setenv("XDG_CACHE_HOME", t.TempDir())
			out := filepath.Join(t.TempDir(), "run")
			code, _, stderr := runCLI(t, "", "replay", "--model", "reprise-mock", "--url", front.URL, "--isl", "16", "--osl", "4",
				"--request-count", "2", "--concurrency", "1", "--tokenizer", "server", "--out", out)
			if code != 0 {
				t.Fatalf("exit %d:\n%s", code, stderr)
			}
			want := map[string]string{"missing": "has no /tokenize endpoint", "placeholder": "returns no tokens for text"}[name]
			if !strings.Contains(stderr, "counting with the builtin tokenizer") || !strings.Contains(stderr, want) {
				t.Errorf("no fallback message saying %q:\n%s", want, stderr)
			}
			if got := manifestTokenizer(t, out); got != "o200k_base" && got != "builtin" {
				t.Errorf("tokenizer %q, want the builtin", got)
			}
		})
	}
}
