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
	"sync/atomic"
	"testing"
)

// TestReplayResponseCaps: --max-response-events (and the others, from
// their flags or REPRISE_ variables) reach the engine: a server that
// streams without end to every other request gets those requests recorded
// as too_large while the run goes on, and the manifest holds the caps.
func TestReplayResponseCaps(t *testing.T) {
	var n atomic.Int32
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		if r.Method == http.MethodGet {
			http.NotFound(w, r) // no /v1/models for the preflight: it passes on any answer
			return
		}
		io.Copy(io.Discard, r.Body)
		w.Header().Set("Content-Type", "text/event-stream")
		event := `data: {"choices":[{"index":0,"delta":{"content":"a"},"finish_reason":null}]}` + "\n\n"
		if n.Add(1)%2 == 1 {
			for range 1 << 20 { // endless, as far as the client can tell
				if _, err := io.WriteString(w, event); err != nil {
					return
				}
			}
			return
		}
		for range 3 {
			io.WriteString(w, event)
		}
		io.WriteString(w, `data: {"choices":[{"index":0,"delta":{},"finish_reason":"length"}]}`+"\n\ndata: [DONE]\n\n")
	}))
	defer srv.Close()
	t.Setenv("REPRISE_MAX_EVENT_BYTES", "4096")
	out := t.TempDir()
	code, _, stderr := runCLI(t, "", "replay", "--url", srv.URL, "--model", "m", "--isl", "20", "--osl", "4",
		"--concurrency", "1", "--request-count", "4", "--quiet", "--format", "jsonl", "--out", out,
		"--max-error-rate", "1", "--max-response-events", "50", "--max-response-bytes", "1000000")
	if code != 0 {
		t.Fatalf("exit %d: %s", code, stderr)
	}
	kinds := map[string]int{}
	for _, r := range readRecords(t, out) {
		k, _ := r["error_kind"].(string)
		kinds[k]++
	}
	if kinds["too_large"] != 2 || kinds[""] != 2 {
		t.Errorf("error kinds %v, want 2 too_large and 2 successes", kinds)
	}
	b, err := os.ReadFile(filepath.Join(out, "manifest.json"))
	if err != nil {
		t.Fatal(err)
	}
	var m map[string]any
	if err := json.Unmarshal(b, &m); err != nil {
		t.Fatal(err)
	}
	for k, want := range map[string]float64{"max_response_events": 50, "max_event_bytes": 4096, "max_response_bytes": 1000000} {
		if m[k] != want {
			t.Errorf("manifest %s = %v, want %v", k, m[k], want)
		}
	}
}

// TestReplayResponseCapsValidation: a negative cap is a usage error.
func TestReplayResponseCapsValidation(t *testing.T) {
	for _, flag := range []string{"--max-response-events", "--max-event-bytes", "--max-response-bytes"} {
		code, _, stderr := runCLI(t, "", "replay", "--model", "m", "--isl", "10", "--osl", "4", flag, "-1")
		if code != 2 || !strings.Contains(stderr, fmt.Sprintf("%s -1", flag)) {
			t.Errorf("%s -1: exit %d: %s", flag, code, stderr)
		}
	}
}
