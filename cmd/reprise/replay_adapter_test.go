package main

import (
	"os"
	"path/filepath"
	"strings"
	"testing"
)

// TestReplayAdapterErrors: every way a Wasm --endpoint can fail before a
// run is a configuration error (exit 2) that says what failed, once, and
// leaves no run directory; only a name that is neither a file nor a
// shipped adapter lists the kinds --endpoint wants. An adapter that
// rejects its configuration in rp_configure is one of them.
func TestReplayAdapterErrors(t *testing.T) {
	hostile := func(name string) string {
		return filepath.Join("..", "..", "wasm", "testdata", "hostile", name+".wasm")
	}
	notWasm := writeFile(t, t.TempDir(), "text.wasm", "data: not a module\n")
	for _, tt := range []struct {
		name, endpoint string
		extra          []string
		want           string // the first line of stderr
	}{
		{"unknown name", "nope", nil,
			`reprise: --endpoint "nope": want a native endpoint (chat, completions, responses, sglang, tgi, embeddings, chat-embeddings, nim-embeddings, rerank-tei, rerank-cohere, ranking-nim, rerank-vllm, score-vllm, image_generation, video_generation, transcription, speech-sse, speech), a .wasm file or a shipped Wasm adapter (anthropic-messages, kserve-generate, openai-chat, tgi-generate)`},
		{"missing file", "no-such-dir/x.wasm", nil,
			`reprise: --endpoint "no-such-dir/x.wasm": no such file`},
		{"not a module", notWasm, nil,
			`reprise: --endpoint "` + notWasm + `": not a WebAssembly module (the file does not start with "\0asm")`},
		{"no marker", hostile("no-marker"), nil,
			`reprise: --endpoint "` + hostile("no-marker") + `": not a reprise adapter (no reprise_abi_v1 export)`},
		{"missing export", hostile("missing-exports"), nil,
			`reprise: --endpoint "` + hostile("missing-exports") + `": missing required exports: rp_configure`},
		{"ABI version", hostile("abi-v2"), nil,
			`reprise: --endpoint "` + hostile("abi-v2") + `": ABI version mismatch: the adapter speaks ABI v2, this reprise speaks ABI v1; upgrade reprise`},
		{"bad describe", hostile("bad-describe"), nil,
			`reprise: --endpoint "` + hostile("bad-describe") + `": rp_describe output is not a JSON object: unexpected end of JSON input`},
		{"configuration rejected", hostile("reject-config"), nil,
			`reprise: --endpoint "` + hostile("reject-config") + `": adapter evil rejected its configuration (rp_configure): GUEST_ERROR: unsupported option "mode"`},
		{"memory budget", "openai-chat", []string{"--adapter-memory-mib", "32"},
			`reprise: --adapter-memory-mib 32: want at least 64 (one adapter instance's memory limit, MiB)`},
	} {
		t.Run(tt.name, func(t *testing.T) {
			out := filepath.Join(t.TempDir(), "run")
			args := append([]string{"replay", "--url", "http://127.0.0.1:9", "--model", "m", "--endpoint", tt.endpoint,
				"--isl", "16", "--osl", "4", "--concurrency", "1", "--request-count", "1", "--out", out, "--quiet"}, tt.extra...)
			code, _, stderr := runCLI(t, "", args...)
			if code != 2 {
				t.Errorf("exit %d, want 2 (a configuration error)", code)
			}
			if first, _, _ := strings.Cut(stderr, "\n"); first != tt.want {
				t.Errorf("stderr:\n%s\nwant the first line:\n%s", stderr, tt.want)
			}
			if _, err := os.Stat(out); !os.IsNotExist(err) {
				t.Errorf("run directory %s created (stat: %v)", out, err)
			}
		})
	}
}
