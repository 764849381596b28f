package main

import (
	"bytes"
	"context"
	"encoding/json"
	"fmt"
	"io"
	"net/http"
	"os"
	"path/filepath"
	"slices"
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
	if !strings.Contains(string(data), `"input_length": 2, "output_length": 4, "hash_ids": [0], "block_size": 16, "endpoint": "chat", "request_id": 0`) ||
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

// TestRecordReplayRoundTrip: traffic recorded through `reprise record`
// (chat, streamed or not, and completions, as text and as token ids)
// replays with the prompt token counts the server saw: the trace declares
// its 16-token blocks (a 300-token prompt would need 1 id at Mooncake's
// 512), each chat row says how many tokens the server's chat template added so
// that the replay does not add them twice, and each row says which
// endpoint it went to (completions are replayed as completions).
func TestRecordReplayRoundTrip(t *testing.T) {
	mcfg := mockserver.NewConfig()
	mcfg.Addr, mcfg.TTFT, mcfg.ITL = "127.0.0.1:0", time.Millisecond, 0
	mcfg.ChatTemplateTokens = 5 // per message, as a chat template adds
	mock, err := mockserver.Start(context.Background(), mcfg)
	if err != nil {
		t.Fatal(err)
	}
	defer mock.Close()
	addr := freeAddr(t)
	out := filepath.Join(t.TempDir(), "trace.jsonl")
	ctx, cancel := context.WithCancel(context.Background())
	defer cancel()
	var stderr bytes.Buffer
	done := make(chan int, 1)
	go func() {
		done <- run(ctx, []string{"reprise", "record", "--listen", addr, "--upstream", mock.URL(), "-o", out},
			strings.NewReader(""), io.Discard, &stderr)
	}()
	words := func(n int, w string) string { return strings.TrimSpace(strings.Repeat(w+" ", n)) }
	post := func(path, body string) {
		t.Helper()
		var resp *http.Response
		var err error
		for deadline := time.Now().Add(10 * time.Second); time.Now().Before(deadline); time.Sleep(10 * time.Millisecond) {
			if resp, err = http.Post("http://"+addr+path, "application/json", strings.NewReader(body)); err == nil {
				break
			}
		}
		if err != nil {
			t.Fatalf("the proxy never answered: %v", err)
		}
		io.Copy(io.Discard, resp.Body)
		resp.Body.Close()
		if resp.StatusCode != 200 {
			t.Fatalf("%s: status %d", path, resp.StatusCode)
		}
	}
	model := `"model": "` + mockserver.DefaultModel + `"`
	chatBody := func(content string, stream bool, maxTokens int) string {
		return fmt.Sprintf(`{%s, "max_tokens": %d, "stream": %t, "stream_options": {"include_usage": true}, "messages": [{"role": "user", "content": %q}]}`,
			model, maxTokens, stream, content)
	}
	post("/v1/chat/completions", chatBody(words(300, "alpha"), false, 3))
	post("/v1/chat/completions", chatBody(words(40, "beta"), true, 5))
	post("/v1/chat/completions", chatBody(words(7, "gamma"), false, 2))
	post("/v1/completions", fmt.Sprintf(`{%s, "max_tokens": 4, "prompt": %q}`, model, words(25, "delta")))
	post("/v1/completions", fmt.Sprintf(`{%s, "max_tokens": 4, "prompt": [1, 2, 3, 4, 5, 6, 7, 8, 9, 10, 11]}`, model))
	post("/v1/chat/completions", chatBody(words(90, "epsilon"), true, 3))
	recorded := map[string][]int{}
	for _, l := range mock.Log() {
		recorded[l.Endpoint] = append(recorded[l.Endpoint], l.PromptTokens)
	}
	cancel()
	if code := <-done; code != 0 {
		t.Fatalf("record exit %d: %s", code, stderr.String())
	}
	data, err := os.ReadFile(out)
	if err != nil {
		t.Fatal(err)
	}
	// The trace's own lengths are what the server counted.
	var inTrace []int
	for line := range strings.Lines(string(data)) {
		var row struct {
			InputLength int `json:"input_length"`
		}
		if err := json.Unmarshal([]byte(line), &row); err != nil {
			t.Fatal(err)
		}
		inTrace = append(inTrace, row.InputLength)
	}
	all := append(append([]int(nil), recorded["/v1/chat/completions"][:3]...), recorded["/v1/completions"]...)
	all = append(all, recorded["/v1/chat/completions"][3:]...)
	if !slices.Equal(inTrace, all) {
		t.Fatalf("trace input lengths %v, want the server's %v in arrival order\n%s", inTrace, all, data)
	}

	for _, tc := range []struct {
		path string
		args []string
	}{
		{"/v1/chat/completions", nil},                              // the trace's first row names chat
		{"/v1/completions", []string{"--endpoint", "completions"}}, // the chat rows are left out
	} {
		mock.ResetLog()
		var eb bytes.Buffer
		args := append([]string{"reprise", "replay", out, "--url", mock.URL(), "--model", mockserver.DefaultModel,
			"--speedup", "100", "--skip-invalid", "-q", "-o", filepath.Join(t.TempDir(), "run")}, tc.args...)
		if code := run(context.Background(), args, strings.NewReader(""), io.Discard, &eb); code != 0 {
			t.Fatalf("replay %v: exit %d: %s", tc.args, code, eb.String())
		}
		if strings.Contains(eb.String(), "out of order") {
			t.Errorf("replay %v warns of rows out of order:\n%s", tc.args, eb.String())
		}
		var replayed []int
		for _, l := range mock.Log() {
			if l.Endpoint != tc.path {
				t.Errorf("replay %v sent %s, want %s", tc.args, l.Endpoint, tc.path)
			}
			replayed = append(replayed, l.PromptTokens)
		}
		// Every length is distinct, so equal sorted lists pair each
		// request with its replay.
		want := slices.Clone(recorded[tc.path])
		slices.Sort(want)
		slices.Sort(replayed)
		if !slices.Equal(replayed, want) {
			t.Errorf("%s: the server counted %v prompt tokens on replay, %v when recorded", tc.path, replayed, want)
		}
	}
}

// TestRecordRefusesExistingOutput: record does not truncate an existing
// trace (or its --keep-text file) unless --overwrite (issue 37, item 7).
func TestRecordRefusesExistingOutput(t *testing.T) {
	dir := t.TempDir()
	out := filepath.Join(dir, "trace.jsonl")
	old := `{"timestamp": 0, "input_length": 5}` + "\n"
	if err := os.WriteFile(out, []byte(old), 0o644); err != nil {
		t.Fatal(err)
	}
	// A stopped context: a record that starts stops at once.
	stopped, cancel := context.WithCancel(context.Background())
	cancel()
	base := []string{"reprise", "record", "--listen", freeAddr(t), "--upstream", "http://127.0.0.1:1", "-o", out}
	var eb bytes.Buffer
	if code := run(stopped, base, strings.NewReader(""), io.Discard, &eb); code != 2 ||
		!strings.Contains(eb.String(), "--output "+out+": the file exists") || !strings.Contains(eb.String(), "--overwrite") {
		t.Errorf("exit %d: %s", code, eb.String())
	}
	if data, _ := os.ReadFile(out); string(data) != old {
		t.Errorf("the trace was changed: %q", data)
	}
	// The text file is checked too, before anything is written.
	if err := os.Remove(out); err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(out+".text.jsonl", []byte("mine\n"), 0o644); err != nil {
		t.Fatal(err)
	}
	eb.Reset()
	if code := run(stopped, append(base, "--keep-text"), strings.NewReader(""), io.Discard, &eb); code != 2 ||
		!strings.Contains(eb.String(), "--keep-text "+out+".text.jsonl: the file exists") {
		t.Errorf("--keep-text: exit %d: %s", code, eb.String())
	}
	if _, err := os.Stat(out); !os.IsNotExist(err) {
		t.Errorf("the trace was created though the text file was refused: %v", err)
	}
	// --overwrite replaces them.
	eb.Reset()
	if code := run(stopped, append(base, "--keep-text", "--overwrite"), strings.NewReader(""), io.Discard, &eb); code != 0 {
		t.Errorf("--overwrite: exit %d: %s", code, eb.String())
	}
	if data, _ := os.ReadFile(out + ".text.jsonl"); len(data) != 0 {
		t.Errorf("--overwrite kept the old text file: %q", data)
	}
}
