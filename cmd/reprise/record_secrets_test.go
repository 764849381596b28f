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

// TestRecordKeepsSecretsOut: `reprise record` names its --upstream
// without user info in its log, and --keep-text writes request bodies with
// the value of every secret-looking key redacted, as replay's inputs.json
// does.
func TestRecordKeepsSecretsOut(t *testing.T) {
	mcfg := mockserver.NewConfig()
	mcfg.Addr, mcfg.TTFT, mcfg.ITL = "127.0.0.1:0", time.Millisecond, 0
	mock, err := mockserver.Start(context.Background(), mcfg)
	if err != nil {
		t.Fatal(err)
	}
	defer mock.Close()
	addr := freeAddr(t)
	out := filepath.Join(t.TempDir(), "trace.jsonl")
	upstream := strings.Replace(mock.URL(), "http://", "http://alice:s3cret-pass@", 1)
	ctx, cancel := context.WithCancel(context.Background())
	defer cancel()
	var stdout, stderr bytes.Buffer
	done := make(chan int, 1)
	go func() {
		done <- run(ctx, []string{"reprise", "--log-level", "info", "record", "--listen", addr, "--upstream", upstream, "-o", out, "--keep-text"},
			strings.NewReader(""), &stdout, &stderr)
	}()
	body := `{"model": "` + mockserver.DefaultModel + `", "max_tokens": 4, "api_key": "sk-planted-1", "extra": {"hf_token": "hf-planted-2"}, "messages": [{"role": "user", "content": "hello there"}]}`
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
	cancel()
	if code := <-done; code != 0 {
		t.Fatalf("exit %d: %s", code, stderr.String())
	}
	if s := stderr.String(); strings.Contains(s, "s3cret-pass") || !strings.Contains(s, "upstream="+mock.URL()) {
		t.Errorf("the log names the upstream with its credentials, or not at all:\n%s", s)
	}
	text, err := os.ReadFile(out + ".text.jsonl")
	if err != nil {
		t.Fatal(err)
	}
	if strings.Contains(string(text), "planted") || !strings.Contains(string(text), `"api_key":"\u003credacted\u003e"`) ||
		!strings.Contains(string(text), "hello there") {
		t.Errorf("--keep-text wrote:\n%s", text)
	}
}
