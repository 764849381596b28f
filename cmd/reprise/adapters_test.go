package main

import (
	"os"
	"path/filepath"
	"strings"
	"testing"
)

func TestAdaptersCLI(t *testing.T) {
	rec := filepath.Join("..", "..", "wasm", "testdata", "recordings")
	dir := t.TempDir()
	tests := []struct {
		name string
		args []string
		code int
		want []string // in stdout
	}{
		{"list", []string{"adapters", "list"}, 0, []string{"openai-chat", "Go", "anthropic-messages", "Rust", "tgi-generate", "C", "kserve-generate", "AssemblyScript",
			"native", "/v1/responses", "OpenAI Responses API"}},
		{"test native responses", []string{"adapters", "test", "responses", "--build", "--fixture",
			filepath.Join("..", "..", "engine", "adapter", "openai", "testdata", "responses", "stream-summary-incomplete.http")},
			0, []string{"POST /v1/responses", `"max_output_tokens":16`, "-> reasoning text_bytes=12 [captured]", "-> content text_bytes=3 [captured]",
				"final: prompt_tokens=40 completion_tokens=16 reasoning_tokens=12 cached_tokens=0 finish=length choices=1"}},
		{"native bad config", []string{"adapters", "test", "responses", "--build", "--adapter-config", `{"max_tokens_field":1}`}, 2, nil},
		{"inspect", []string{"adapters", "inspect", "tgi-generate"}, 0, []string{"name:           tgi-generate", "sha256:", "abi:            v1", "imports:        (none)"}},
		{"test", []string{"adapters", "test", "anthropic-messages", "--fixture", filepath.Join(rec, "anthropic-stream-thinking.http"), "--build"},
			0, []string{"-> reasoning text_bytes=22 [captured]", "finish=stop", "POST /v1/messages", "«prompt hole kind 1»"}},
		{"test raw SSE body", []string{"adapters", "test", "openai-chat", "--fixture", writeFile(t, dir, "raw.sse", "data: {\"choices\":[{\"index\":0,\"delta\":{\"content\":\"hi\"}}]}\n\n")},
			0, []string{"-> content text_bytes=2 [captured]", `text: "hi"`}},
		{"adapter fails", []string{"adapters", "test", filepath.Join("..", "..", "wasm", "testdata", "hostile", "trap.wasm"), "--fixture", writeFile(t, dir, "bang.sse", "data: !\n\n")},
			1, []string{"adapter error:", "unreachable"}},
		{"missing fixture", []string{"adapters", "test", "openai-chat", "--fixture", "/no/such/file"}, 2, nil},
		{"nothing to do", []string{"adapters", "test", "openai-chat"}, 2, nil},
		{"unknown adapter", []string{"adapters", "inspect", "nope"}, 2, nil},
		{"new", []string{"adapters", "new", "--lang", "c", "--dir", filepath.Join(dir, "acme"), "acme"}, 0, []string{"adapter.c", "reprise_adapter.h", "Makefile", "sample.http"}},
		{"new without lang", []string{"adapters", "new", "acme"}, 2, nil},
		{"new bad lang", []string{"adapters", "new", "--lang", "cobol", "--dir", filepath.Join(dir, "x"), "x"}, 2, nil},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			code, out, errOut := runCLI(t, "", tc.args...)
			if code != tc.code {
				t.Fatalf("exit %d, want %d\nstdout:\n%s\nstderr:\n%s", code, tc.code, out, errOut)
			}
			for _, w := range tc.want {
				if !strings.Contains(out, w) {
					t.Errorf("stdout lacks %q:\n%s", w, out)
				}
			}
		})
	}
}

func writeFile(t *testing.T, dir, name, body string) string {
	t.Helper()
	p := filepath.Join(dir, name)
	if err := os.WriteFile(p, []byte(body), 0o644); err != nil {
		t.Fatal(err)
	}
	return p
}
