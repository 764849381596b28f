package main

import (
	"bytes"
	"context"
	"net/http"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/reprise-bench/reprise/internal/mockserver"
)

// TestRecordCommand: `reprise record` proxies a chat request to the mock
// server, and on cancellation (Ctrl-C) writes its row and says so.
func TestRecordCommand(t *testing.T) {
	mcfg := mockserver.NewConfig()
	mcfg.Addr, mcfg.TTFT, mcfg.ITL = "127.0.0.1:0", time.Millisecond, 0
	mock, err := mockserver.Start(context.Background(), mcfg)
	if err != nil {
		t.Fatal(err)
	}
	defer mock.Close()
	addr := freeAddr(t)
	out := filepath.Join(t.TempDir(), "trace.jsonl")
	ctx, cancel := context.WithCancel(context.Background())
	defer cancel()
	var stdout, stderr bytes.Buffer
	done := make(chan int, 1)
	go func() {
		done <- run(ctx, []string{"reprise", "record", "--listen", addr, "--upstream", mock.URL(), "-o", out},
			strings.NewReader(""), &stdout, &stderr)
	}()
	body := `{"model": "` + mockserver.DefaultModel + `", "max_tokens": 4, "messages": [{"role": "user", "content": "hello there"}]}`
	var resp *http.Response
	for deadline := time.Now().Add(10 * time.Second); time.Now().Before(deadline); time.Sleep(10 * time.Millisecond) {
		if resp, err = http.Post("http://"+addr+"/v1/chat/completions", "application/json", strings.NewReader(body)); err == nil {
			break
		}
	}
	if err != nil {
		t.Fatalf("the proxy never answered: %v", err)
	}
	resp.Body.Close()
	if resp.StatusCode != 200 {
		t.Fatalf("status %d", resp.StatusCode)
	}
	cancel()
	if code := <-done; code != 0 {
		t.Fatalf("exit %d: %s", code, stderr.String())
	}
	data, _ := os.ReadFile(out)
	if !strings.Contains(string(data), `"input_length": 2, "output_length": 4, "hash_ids": [0], "request_id": 0`) ||
		!strings.Contains(stderr.String(), "1 recorded to "+out) {
		t.Errorf("trace:\n%s\nstderr:\n%s", data, stderr.String())
	}
	// Usage errors name the flag. (localhost:8000 is http://localhost:8000.)
	var eb bytes.Buffer
	if code := run(context.Background(), []string{"reprise", "record", "--upstream", "ftp://localhost:8000"}, strings.NewReader(""), &stdout, &eb); code != 2 ||
		!strings.Contains(eb.String(), `--upstream "ftp://localhost:8000": want an http:// or https:// URL`) {
		t.Errorf("exit %d: %s", code, eb.String())
	}
}
