package main

import (
	"io"
	"net/http"
	"net/http/httptest"
	"strconv"
	"strings"
	"sync/atomic"
	"testing"
)

// dyingServer answers the first ok chat requests and then fails every
// later one with HTTP 503, as a server that died mid-run would (through
// a proxy that stays up).
func dyingServer(t *testing.T, ok int64) *httptest.Server {
	t.Helper()
	var n atomic.Int64
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		if !strings.HasPrefix(r.URL.Path, "/v1/") || r.Method == http.MethodGet { // no metrics, no /v1/models (the preflight passes on a 404)
			http.NotFound(w, r) // no metrics page
			return
		}
		io.Copy(io.Discard, r.Body)
		if n.Add(1) > ok {
			http.Error(w, `{"error":{"message":"upstream gone"}}`, http.StatusServiceUnavailable)
			return
		}
		w.Header().Set("Content-Type", "application/json")
		io.WriteString(w, `{"id":"x","object":"chat.completion","model":"m","choices":[{"index":0,`+
			`"message":{"role":"assistant","content":"ok"},"finish_reason":"length"}],`+
			`"usage":{"prompt_tokens":1,"completion_tokens":1,"total_tokens":2}}`)
	}))
	t.Cleanup(srv.Close)
	return srv
}

// TestReplayDefaultMaxErrorRate: without --max-error-rate, a run in which
// most requests failed (the server died) fails with exit 3, a run with an
// occasional error passes, and the flag loosens the verdict.
func TestReplayDefaultMaxErrorRate(t *testing.T) {
	tests := []struct {
		name     string
		requests int
		ok       int64
		flags    []string
		want     int
	}{
		{"server died: 17 of 20 failed", 20, 3, nil, 3},
		{"server died, loosened with --max-error-rate 1", 20, 3, []string{"--max-error-rate", "1"}, 0},
		{"one of 40 failed (2.5 %)", 40, 39, nil, 0},
		{"none failed", 10, 10, nil, 0},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			srv := dyingServer(t, tt.ok)
			args := append([]string{"replay", "--url", srv.URL, "--model", "m", "--isl", "8", "--osl", "2", "--no-streaming",
				"--concurrency", "1", "--request-count", strconv.Itoa(tt.requests), "--quiet", "--format", "jsonl",
				"--out", t.TempDir()}, tt.flags...)
			code, _, stderr := runCLI(t, "", args...)
			if code != tt.want {
				t.Fatalf("exit %d, want %d: %s", code, tt.want, stderr)
			}
			if tt.want == 3 && !strings.Contains(stderr, "error rate 0.8500 > --max-error-rate 0.05 (17 of 20 requests failed)") {
				t.Errorf("stderr does not explain the verdict: %s", stderr)
			}
		})
	}
}

// TestReplayAllFailedExit1: a run in which every request failed exits 1
// (nothing was measured) whatever --max-error-rate says.
func TestReplayAllFailedExit1(t *testing.T) {
	for _, rate := range []string{"", "0", "0.5", "1"} {
		t.Run("max-error-rate="+rate, func(t *testing.T) {
			srv := dyingServer(t, 0)
			args := []string{"replay", "--url", srv.URL, "--model", "m", "--isl", "8", "--osl", "2", "--no-streaming",
				"--concurrency", "2", "--request-count", "6", "--quiet", "--format", "jsonl", "--out", t.TempDir()}
			if rate != "" {
				args = append(args, "--max-error-rate", rate)
			}
			code, _, stderr := runCLI(t, "", args...)
			if code != 1 || !strings.Contains(stderr, "no request succeeded (6 failed; e.g. http_status") {
				t.Errorf("exit %d, want 1 and 'no request succeeded': %s", code, stderr)
			}
		})
	}
}
