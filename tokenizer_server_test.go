package reprise_test

import (
	"context"
	"encoding/json"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/reprise-bench/reprise"
	"github.com/reprise-bench/reprise/arrowio"
	"github.com/reprise-bench/reprise/internal/mockserver"
	"github.com/reprise-bench/reprise/internal/tokenizer"
	"github.com/reprise-bench/reprise/internal/tokenizer/tokenizertest"
)

// TestExactLengthsWithoutTheTokenizer replays against a mock server whose
// tokenizer the client does not have (a Llama-3-style BPE served from a
// tokenizer.json on the server side only). Asking the server
// (--tokenizer server) or reading the model's GGUF file, the client builds
// prompts that the server counts at exactly the asked input length, every
// request; with the builtin tokenizer it does not. The server's chat
// template adds 5 tokens: --tokenizer server measures them and takes them
// off the prompts itself; with the GGUF they are given (--isl-correction).
// The manifest names the tokenizer's identity, equal for the GGUF and the
// tokenizer.json, and the correction applied.
func TestExactLengthsWithoutTheTokenizer(t *testing.T) {
	data, err := tokenizertest.Llama3Style(30000)
	if err != nil {
		t.Fatal(err)
	}
	dir := t.TempDir()
	jsPath, err := tokenizertest.Write(dir, data)
	if err != nil {
		t.Fatal(err)
	}
	gguf, err := tokenizertest.GGUF(data, "llama-bpe")
	if err != nil {
		t.Fatal(err)
	}
	ggPath := filepath.Join(dir, "model.gguf")
	if err := os.WriteFile(ggPath, gguf, 0o644); err != nil {
		t.Fatal(err)
	}
	serverTok, err := tokenizer.Load(jsPath)
	if err != nil {
		t.Fatal(err)
	}
	mcfg := mockserver.NewConfig()
	mcfg.Addr, mcfg.TTFT, mcfg.ITL, mcfg.Tokenizer = "127.0.0.1:0", 0, 0, serverTok
	mcfg.ChatTemplateTokens = 5
	srv, err := mockserver.Start(t.Context(), mcfg)
	if err != nil {
		t.Fatal(err)
	}
	defer srv.Close()
	t.Setenv("XDG_CACHE_HOME", filepath.Join(dir, "cache"))

	identity := map[string]string{}
	for _, spec := range []string{"builtin", "server", ggPath, "server"} {
		o := reprise.NewOptions()
		o.URL, o.Model, o.Tokenizer = srv.URL(), mockserver.DefaultModel, spec
		o.Synthetic = reprise.SyntheticLoad{ISL: 300, ISLStdDev: 120, OSL: 2}
		o.Replay.Concurrency, o.Replay.RequestCount = 4, 24
		o.Output.Dir = filepath.Join(dir, "run-"+strings.ReplaceAll(filepath.Base(spec), ".", "-"))
		o.Output.Overwrite = true
		if spec == ggPath {
			o.Prompts.ISLCorrection = 5
		}
		ctx, cancel := context.WithTimeout(t.Context(), time.Minute)
		res, err := reprise.Run(ctx, o)
		cancel()
		if err != nil {
			t.Fatalf("%s: %v", spec, err)
		}
		rd, err := arrowio.Open(res.Dir)
		if err != nil {
			t.Fatal(err)
		}
		n, off := 0, 0
		for r, err := range rd.Requests() {
			if err != nil {
				t.Fatal(err)
			}
			if !r.OK() {
				t.Fatalf("%s: request %d failed: %s", spec, r.RequestID, r.ErrorMessage)
			}
			n++
			// The client sent the asked length less the template's 5
			// tokens (InputTokens counts what it sent); the server counts
			// them back.
			asked := int(r.InputTokens) + 5
			if spec == "builtin" {
				asked = int(r.InputTokens)
			}
			if int(r.ServerPromptTokens) != asked {
				off++
				if spec != "builtin" {
					t.Errorf("%s: request %d asked %d input tokens, the server counted %d", spec, r.RequestID, asked, r.ServerPromptTokens)
				}
			}
		}
		if n != 24 {
			t.Fatalf("%s: %d requests, want 24", spec, n)
		}
		if spec == "builtin" && off == 0 {
			t.Fatal("the builtin tokenizer matched the server's on every request: the test proves nothing")
		}
		var table strings.Builder
		if err := res.Summary.WriteTable(&table); err != nil {
			t.Fatal(err)
		}
		if says := strings.Contains(table.String(), "Server minus asked prompt tokens"); says != (off > 0) {
			t.Errorf("%s: %d of %d prompts off, yet the summary table says so: %v\n%s", spec, off, n, says, table.String())
		}
		var m map[string]any
		raw, err := os.ReadFile(filepath.Join(res.Dir, "manifest.json"))
		if err != nil || json.Unmarshal(raw, &m) != nil {
			t.Fatalf("manifest: %v", err)
		}
		settings, _ := m["settings"].(map[string]any)
		if settings == nil {
			settings = m
		}
		id, _ := settings["tokenizer_sha256"].(string)
		if !strings.HasPrefix(id, "sha256:") {
			t.Fatalf("%s: manifest tokenizer_sha256 = %v", spec, settings["tokenizer_sha256"])
		}
		identity[spec] = id
		prompts, _ := settings["prompts"].(map[string]any)
		if spec != "builtin" && (prompts == nil || prompts["isl_correction"] != float64(5)) {
			t.Errorf("%s: manifest prompts = %v, want isl_correction 5", spec, settings["prompts"])
		}
	}
	if identity[ggPath] != tokenizer.Identity(serverTok) {
		t.Errorf("GGUF identity %s, tokenizer.json %s", identity[ggPath], tokenizer.Identity(serverTok))
	}
	if identity["builtin"] == identity[ggPath] {
		t.Error("builtin and GGUF tokenizers have one identity")
	}
}
