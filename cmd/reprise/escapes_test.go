package main

import (
	"io"
	"net/http"
	"net/http/httptest"
	"path/filepath"
	"strings"
	"testing"
)

// TestServerTextEscapedOnTerminal: a server's error message holding
// terminal escapes (clear screen, OSC 52, which writes the clipboard in
// many terminals, a BEL) is printed escaped by replay, in its summary and
// in its final error, and by summarize: no control character of the
// server's reaches stderr or stdout.
func TestServerTextEscapedOnTerminal(t *testing.T) {
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		io.Copy(io.Discard, r.Body)
		w.Header().Set("Content-Type", "application/json")
		w.WriteHeader(http.StatusInternalServerError)
		io.WriteString(w, `{"error":{"message":"boom \u001b[2J\u001b]52;c;SGVsbG8=\u0007 \u009b31m end","code":500}}`)
	}))
	defer srv.Close()
	run := filepath.Join(t.TempDir(), "run")
	code, stdout, stderr := runCLI(t, "", "replay", "--url", srv.URL, "--model", "m", "--isl", "4", "--osl", "1", "--no-streaming",
		"--request-count", "2", "--concurrency", "1", "--format", "jsonl", "--out", run, "--no-server-metrics")
	if code != 1 {
		t.Fatalf("exit %d, want 1 (no request succeeded): %s", code, stderr)
	}
	check := func(what, out string) {
		t.Helper()
		if strings.ContainsAny(out, "\x1b\a\u009b") {
			t.Errorf("%s holds a raw control character of the server's: %q", what, out)
		}
		if !strings.Contains(out, `boom \x1b[2J\x1b]52;c;SGVsbG8=\a \u009b31m end`) {
			t.Errorf("%s does not show the message escaped: %q", what, out)
		}
	}
	check("replay's stderr", stdout+stderr)
	if n := strings.Count(stderr, `boom \x1b[2J`); n < 2 {
		t.Errorf("the escaped message is on stderr %d times, want the summary's error row and the final error", n)
	}
	code, stdout, stderr = runCLI(t, "", "summarize", run)
	if code != 0 {
		t.Fatalf("summarize: exit %d: %s", code, stderr)
	}
	check("summarize's output", stdout+stderr)
}
