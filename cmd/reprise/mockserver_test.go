package main

import (
	"bytes"
	"context"
	"io"
	"net"
	"net/http"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"
)

func TestMockServerUsageErrors(t *testing.T) {
	tests := []struct {
		args []string
		want []string // every problem is reported at once
	}{
		{[]string{"--flavor", "tgi", "--max-num-seqs", "0"}, []string{`flavor "tgi"`, "max-num-seqs 0"}},
		{[]string{"--fault", "429"}, []string{"KIND[=PARAM]@RATE"}},
		{[]string{"--fault", "teapot@0.1", "--ttft", "-1s"}, []string{`unknown fault "teapot"`, "ttft -1s"}},
		{[]string{"--jitter-dist", "cauchy"}, []string{`jitter-dist "cauchy"`}},
		{[]string{"--nice", "20", "--itl", "-1ms"}, []string{"--nice: nice 20 is out of range", "itl -1ms"}},
		{[]string{"--tokenizer", "/no/such/tokenizer.json"}, []string{"--tokenizer"}},
		// A directory without a template, named with the files looked at.
		{[]string{"--chat-template", "testdata"}, []string{"no chat template", "tokenizer_config.json", "chat_template.jinja"}},
		{[]string{"--chat-template", "../../internal/chattmpl/testdata/qwen2.5", "--chat-template-tokens", "3"}, []string{"chat-template and chat-template-tokens 3: give one"}},
		{[]string{"--addr", "256.0.0.1:bad"}, []string{"listen"}},
	}
	for _, tt := range tests {
		code, _, errOut := runCLI(t, "", append([]string{"mock-server"}, tt.args...)...)
		wantCode := 2
		if tt.args[0] == "--addr" {
			wantCode = 1 // a listen failure is a run error
		}
		if code != wantCode {
			t.Errorf("%v: exit %d, want %d (stderr %q)", tt.args, code, wantCode, errOut)
		}
		for _, w := range tt.want {
			if !strings.Contains(errOut, w) {
				t.Errorf("%v: stderr %q lacks %q", tt.args, errOut, w)
			}
		}
	}
}

// TestMockServerEnvVars: mock-server reads REPRISE_MOCK_<FLAG>, not the
// REPRISE_<FLAG> a replay in the same shell is configured with.
func TestMockServerEnvVars(t *testing.T) {
	t.Setenv("REPRISE_MOCK_MAX_NUM_SEQS", "0")
	t.Setenv("REPRISE_FLAVOR", "tgi")
	code, _, errOut := runCLI(t, "", "mock-server")
	if code != 2 || !strings.Contains(errOut, "max-num-seqs 0") || strings.Contains(errOut, "tgi") {
		t.Errorf("exit %d, stderr %q: want 2 for REPRISE_MOCK_MAX_NUM_SEQS=0 alone", code, errOut)
	}
}

func TestMockServerHelp(t *testing.T) {
	code, out, _ := runCLI(t, "", "mock-server", "--help")
	if code != 0 {
		t.Fatalf("exit %d", code)
	}
	for _, flag := range []string{"--addr", "--flavor", "--ttft", "--itl", "--prefill-per-token", "--itl-per-running", "--jitter",
		"--max-num-seqs", "--max-model-len", "--block-size", "--prefix-cache-tokens", "--reasoning-tokens", "--fault",
		"--event-log", "--coalesce", "--chat-template-tokens", "--seed", "--tokenizer"} {
		if !strings.Contains(out, flag) {
			t.Errorf("help lacks %s", flag)
		}
	}
}

// freeAddr returns a 127.0.0.1 address no one listens on just now.
func freeAddr(t *testing.T) string {
	t.Helper()
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	defer ln.Close()
	return ln.Addr().String()
}

// TestMockServerServes runs the command in-process, sends one request and
// stops it by cancelling the context; the event log must hold the request.
func TestMockServerServes(t *testing.T) {
	addr := freeAddr(t)
	logPath := filepath.Join(t.TempDir(), "events.jsonl")
	ctx, cancel := context.WithCancel(t.Context())
	done := make(chan int)
	var stderr bytes.Buffer
	go func() {
		done <- run(ctx, []string{"reprise", "mock-server", "--addr", addr, "--ttft", "1ms", "--itl", "1ms",
			"--event-log", logPath}, strings.NewReader(""), io.Discard, &stderr)
	}()
	var resp *http.Response
	var err error
	for deadline := time.Now().Add(10 * time.Second); ; time.Sleep(10 * time.Millisecond) {
		req, _ := http.NewRequestWithContext(t.Context(), "POST", "http://"+addr+"/v1/chat/completions",
			strings.NewReader(`{"messages":[{"role":"user","content":"hi"}],"max_tokens":3,"ignore_eos":true}`))
		req.Header.Set("X-Request-Id", "cli-1")
		if resp, err = http.DefaultClient.Do(req); err == nil || time.Now().After(deadline) {
			break
		}
	}
	if err != nil {
		cancel()
		t.Fatalf("server never answered: %v", err)
	}
	body, _ := io.ReadAll(resp.Body)
	resp.Body.Close()
	if resp.StatusCode != 200 || !strings.Contains(string(body), `"completion_tokens":3`) {
		t.Errorf("response %d %s", resp.StatusCode, body)
	}
	cancel()
	if code := <-done; code != 0 {
		t.Errorf("exit %d, stderr %s", code, stderr.String())
	}
	log, err := os.ReadFile(logPath)
	if err != nil || !strings.Contains(string(log), `"request_id":"cli-1"`) || !strings.HasPrefix(string(log), `{"v":1,`) {
		t.Errorf("event log %q (%v)", log, err)
	}
}
