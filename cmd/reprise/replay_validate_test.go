package main

import (
	"net/http"
	"net/http/httptest"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/reprise-bench/reprise/internal/runout"
)

// A trace whose rows were all skipped says so, instead of falling back to
// the synthetic-load checks.
func TestReplayAllRowsSkipped(t *testing.T) {
	p := filepath.Join(t.TempDir(), "bad.jsonl")
	if err := os.WriteFile(p, []byte(`{"timestamp": 5, "input_length": -4, "output_length": 3}`+"\n"), 0o644); err != nil {
		t.Fatal(err)
	}
	code, _, stderr := runCLI(t, "", "replay", p, "--url", "http://127.0.0.1:9", "--model", "m", "--skip-invalid")
	if code != 2 || !strings.Contains(stderr, "no rows to replay (read 1: 1 invalid") {
		t.Fatalf("exit %d, stderr:\n%s", code, stderr)
	}
}

// A base URL that ends where the endpoint path begins (an OpenAI client's
// base URL, .../v1) gets a note naming the URL the requests go to.
func TestURLNote(t *testing.T) {
	const chat = "/v1/chat/completions"
	tests := []struct {
		base, path string
		want       string // substring; "" = no note
	}{
		{"http://127.0.0.1:8000", chat, ""},
		{"http://127.0.0.1:8000/", chat, ""},
		{"http://127.0.0.1:8000/v1", chat, "requests go to http://127.0.0.1:8000/v1/v1/chat/completions; --url is the server's base URL (http://127.0.0.1:8000)"},
		{"http://gw/tenant/v1/", chat, "(http://gw/tenant)"},
		{"http://gw/tenant", chat, ""},                                    // a gateway prefix
		{"http://gw/v1", "/generate_stream", ""},                          // an adapter with another path
		{"http://gw/v2", "/v2/models/m/generate_stream", "/v2/v2/models"}, // KServe
	}
	for _, tt := range tests {
		got := runout.URLNote(tt.base, tt.path)
		if tt.want == "" && got != "" || !strings.Contains(got, tt.want) {
			t.Errorf("runout.URLNote(%q, %q) = %q, want %q", tt.base, tt.path, got, tt.want)
		}
	}
}

// The start line names the URL requests go to, and standard input as such.
func TestReplayStartLine(t *testing.T) {
	srv := httptest.NewServer(http.NotFoundHandler())
	defer srv.Close()
	trace := `{"timestamp": 0, "input_length": 10, "output_length": 3}` + "\n"
	_, _, stderr := runCLI(t, trace, "replay", "-", "--url", srv.URL+"/v1", "--model", "m",
		"--no-server-metrics", "--out", t.TempDir())
	for _, want := range []string{
		"reprise: note: --url " + srv.URL + "/v1 ends in /v1",
		"replaying standard input against " + srv.URL + "/v1/v1/chat/completions (",
	} {
		if !strings.Contains(stderr, want) {
			t.Errorf("stderr lacks %q:\n%s", want, stderr)
		}
	}
}
