package main

import (
	"encoding/json"
	"io"
	"net/http"
	"net/http/httptest"
	"os"
	"path/filepath"
	"strings"
	"sync"
	"testing"
)

// headerServer is an OpenAI chat server that keeps the headers and the
// body of every request.
type headerServer struct {
	*httptest.Server
	mu      sync.Mutex
	headers []http.Header
	bodies  []map[string]any
}

func startHeaderServer(t *testing.T) *headerServer {
	t.Helper()
	s := &headerServer{}
	s.Server = httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		// The server check before a run GETs /v1/models: not a request
		// of the run.
		if !strings.HasPrefix(r.URL.Path, "/v1/") || r.Method != http.MethodPost {
			http.NotFound(w, r)
			return
		}
		b, _ := io.ReadAll(r.Body)
		var body map[string]any
		json.Unmarshal(b, &body)
		s.mu.Lock()
		s.headers = append(s.headers, r.Header.Clone())
		s.bodies = append(s.bodies, body)
		s.mu.Unlock()
		w.Header().Set("Content-Type", "application/json")
		io.WriteString(w, `{"choices":[{"index":0,"message":{"role":"assistant","content":"ok"},"finish_reason":"length"}],`+
			`"usage":{"prompt_tokens":1,"completion_tokens":1,"total_tokens":2}}`)
	}))
	t.Cleanup(s.Close)
	return s
}

// TestRepeatableFlagsKeepCommas: a repeatable flag's value reaches the run
// whole, commas and all, from the command line and from its environment
// variable (a header value, a JSON object, a label); the flags documented
// as comma-separated (REPRISE_URL, --fail-on) still split.
func TestRepeatableFlagsKeepCommas(t *testing.T) {
	srv := startHeaderServer(t)
	t.Setenv("REPRISE_HEADER", "X-A: 1, 2")
	run := filepath.Join(t.TempDir(), "run")
	code, _, stderr := runCLI(t, "", "replay", "--url", srv.URL, "--model", "m", "--isl", "4", "--osl", "1", "--no-streaming",
		"--request-count", "1", "--concurrency", "1", "--quiet", "--format", "jsonl", "--out", run, "--no-server-metrics")
	if code != 0 {
		t.Fatalf("REPRISE_HEADER=\"X-A: 1, 2\": exit %d: %s", code, stderr)
	}
	code, _, stderr = runCLI(t, "", "replay", "--url", srv.URL, "--model", "m", "--isl", "4", "--osl", "1", "--no-streaming",
		"--request-count", "1", "--concurrency", "1", "--quiet", "--format", "jsonl", "--out", t.TempDir(), "--no-server-metrics",
		"-H", "Accept: text/event-stream, application/json")
	if code != 0 {
		t.Fatalf("-H with a comma: exit %d: %s", code, stderr)
	}
	t.Setenv("REPRISE_HEADER", "")
	code, _, stderr = runCLI(t, "", "profile", "-m", "m", "--url", srv.URL, "--concurrency", "1", "--request-count", "1",
		"--isl", "4", "--osl", "1", "--artifact-dir", filepath.Join(t.TempDir(), "p"), "--format", "jsonl", "--quiet",
		"--export", "none", "--no-server-metrics", "--extra-inputs", `{"temperature":0,"top_p":1}`)
	if code != 0 {
		t.Fatalf("--extra-inputs JSON object: exit %d: %s", code, stderr)
	}
	srv.mu.Lock()
	if len(srv.headers) != 3 {
		t.Fatalf("%d requests, want 3", len(srv.headers))
	}
	if got := srv.headers[0].Values("X-A"); len(got) != 1 || got[0] != "1, 2" {
		t.Errorf("REPRISE_HEADER=\"X-A: 1, 2\": the server saw X-A %q, want [\"1, 2\"]", got)
	}
	if got := srv.headers[1].Values("Accept"); len(got) != 1 || got[0] != "text/event-stream, application/json" {
		t.Errorf("-H \"Accept: text/event-stream, application/json\": the server saw Accept %q", got)
	}
	if b := srv.bodies[2]; b["temperature"] != 0.0 || b["top_p"] != 1.0 {
		t.Errorf("--extra-inputs '{\"temperature\":0,\"top_p\":1}': body %v", b)
	}
	srv.mu.Unlock()

	out := filepath.Join(t.TempDir(), "r.html")
	if code, _, stderr := runCLI(t, "", "report", "-o", out, "--label", "a,b", run); code != 0 {
		t.Fatalf("--label a,b: exit %d: %s", code, stderr)
	}
	if b, _ := os.ReadFile(out); !strings.Contains(string(b), "<b>a,b</b>") {
		t.Errorf("the report does not name the run a,b")
	}

	// REPRISE_URL lists several targets, comma-separated.
	t.Setenv("REPRISE_URL", srv.URL+","+srv.URL)
	run2 := filepath.Join(t.TempDir(), "run2")
	code, _, stderr = runCLI(t, "", "replay", "--model", "m", "--isl", "4", "--osl", "1", "--no-streaming",
		"--request-count", "2", "--concurrency", "1", "--quiet", "--format", "jsonl", "--out", run2, "--no-server-metrics")
	if code != 0 {
		t.Fatalf("REPRISE_URL with two targets: exit %d: %s", code, stderr)
	}
	targets := map[float64]bool{}
	for _, r := range readRecords(t, run2) {
		targets[r["target"].(float64)] = true
	}
	if len(targets) != 2 {
		t.Errorf("REPRISE_URL=A,B: requests went to targets %v, want 0 and 1", targets)
	}
}
