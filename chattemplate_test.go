package reprise_test

import (
	"context"
	"encoding/json"
	"errors"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/reprise-bench/reprise"
	"github.com/reprise-bench/reprise/arrowio"
	"github.com/reprise-bench/reprise/internal/chattmpl"
	"github.com/reprise-bench/reprise/internal/mockserver"
	"github.com/reprise-bench/reprise/internal/tokenizer"
	"github.com/reprise-bench/reprise/internal/tokenizer/tokenizertest"
)

// TestApplyChatTemplate replays a synthetic load with --apply-chat-template
// against a mock server that renders the model's real chat template
// around every chat request (and counts each added token as one, as
// vLLM does). For each template the server's prompt_tokens equals the
// asked input length on every request, and the client sent the asked
// length less the template's tokens.
func TestApplyChatTemplate(t *testing.T) {
	data, err := tokenizertest.Llama3Style(30000)
	if err != nil {
		t.Fatal(err)
	}
	for _, model := range []string{"gemma2", "llama3.2", "mistral-nemo", "qwen2.5"} {
		t.Run(model, func(t *testing.T) {
			dir := t.TempDir()
			jsPath, err := tokenizertest.Write(dir, data)
			if err != nil {
				t.Fatal(err)
			}
			conf, err := os.ReadFile(filepath.Join("internal", "chattmpl", "testdata", model, "tokenizer_config.json"))
			if err != nil {
				t.Fatal(err)
			}
			if err := os.WriteFile(filepath.Join(dir, "tokenizer_config.json"), conf, 0o644); err != nil {
				t.Fatal(err)
			}
			tok, err := tokenizer.Load(jsPath)
			if err != nil {
				t.Fatal(err)
			}
			tmpl, err := chattmpl.ReadDir(dir)
			if err != nil {
				t.Fatal(err)
			}
			fitThroughTemplate(t, model, jsPath, func(c *mockserver.Config) { c.Tokenizer, c.ChatTemplate = tok, tmpl })
		})
	}
	// A GGUF file carries its template in its metadata.
	t.Run("gguf", func(t *testing.T) {
		dir := t.TempDir()
		raw, err := os.ReadFile(filepath.Join("internal", "chattmpl", "testdata", "llama3.2", "tokenizer_config.json"))
		if err != nil {
			t.Fatal(err)
		}
		var conf struct {
			ChatTemplate string `json:"chat_template"`
		}
		if err := json.Unmarshal(raw, &conf); err != nil {
			t.Fatal(err)
		}
		// 30000 is the tokenizer's <|begin_of_text|>.
		gguf, err := tokenizertest.GGUFChat(data, "llama-bpe", conf.ChatTemplate, 30000, -1)
		if err != nil {
			t.Fatal(err)
		}
		path := filepath.Join(dir, "model.gguf")
		if err := os.WriteFile(path, gguf, 0o644); err != nil {
			t.Fatal(err)
		}
		tok, err := tokenizer.Load(path)
		if err != nil {
			t.Fatal(err)
		}
		tmpl, err := chattmpl.ForTokenizer(path)
		if err != nil {
			t.Fatal(err)
		}
		fitThroughTemplate(t, "gguf llama3.2", path, func(c *mockserver.Config) { c.Tokenizer, c.ChatTemplate = tok, tmpl })
	})
	// --tokenizer server: vLLM's /tokenize of messages says what the
	// template adds (5 tokens a message here).
	t.Run("server", func(t *testing.T) {
		t.Setenv("XDG_CACHE_HOME", t.TempDir()) // the learned tokenizer's cache
		tok, err := tokenizer.Load(jsPath(t, data))
		if err != nil {
			t.Fatal(err)
		}
		fitThroughTemplate(t, "server", "server", func(c *mockserver.Config) { c.Tokenizer, c.ChatTemplateTokens = tok, 5 })
	})
}

func jsPath(t *testing.T, data []byte) string {
	t.Helper()
	p, err := tokenizertest.Write(t.TempDir(), data)
	if err != nil {
		t.Fatal(err)
	}
	return p
}

// fitThroughTemplate runs 16 requests of 300±120 tokens with
// --apply-chat-template and --tokenizer tokPath against a mock set up by
// mut, and checks every prompt's count.
func fitThroughTemplate(t *testing.T, model, tokPath string, mut func(*mockserver.Config)) {
	t.Helper()
	dir := t.TempDir()
	mcfg := mockserver.NewConfig()
	mcfg.Addr, mcfg.TTFT, mcfg.ITL = "127.0.0.1:0", 0, 0
	mut(mcfg)
	srv, err := mockserver.Start(t.Context(), mcfg)
	if err != nil {
		t.Fatal(err)
	}
	defer srv.Close()

	o := reprise.NewOptions()
	o.URL, o.Model, o.Tokenizer = srv.URL(), mockserver.DefaultModel, tokPath
	o.Prompts.ApplyChatTemplate = true
	o.Synthetic = reprise.SyntheticLoad{ISL: 300, ISLStdDev: 120, OSL: 2}
	o.Replay.Concurrency, o.Replay.RequestCount = 4, 16
	o.Output.Dir, o.Output.Overwrite = filepath.Join(dir, "run"), true
	ctx, cancel := context.WithTimeout(t.Context(), time.Minute)
	res, err := reprise.Run(ctx, o)
	cancel()
	if err != nil {
		t.Fatal(err)
	}
	rd, err := arrowio.Open(res.Dir)
	if err != nil {
		t.Fatal(err)
	}
	n := 0
	for r, err := range rd.Requests() {
		if err != nil {
			t.Fatal(err)
		}
		if !r.OK() {
			t.Fatalf("request %d failed: %s", r.RequestID, r.ErrorMessage)
		}
		n++
		if r.ServerPromptTokens != r.TraceInputTokens || r.InputTokens >= r.TraceInputTokens {
			t.Errorf("request %d: asked %d input tokens, sent %d, the server counted %d through the template", r.RequestID, r.TraceInputTokens, r.InputTokens, r.ServerPromptTokens)
		}
		if n == 1 {
			t.Logf("%s: asked %d tokens, sent a prompt of %d, the server counted %d", model, r.TraceInputTokens, r.InputTokens, r.ServerPromptTokens)
		}
	}
	if n != 16 {
		t.Fatalf("%d requests, want 16", n)
	}
}

// TestApplyChatTemplateErrors: without a template, or with
// --isl-correction too, the run stops before sending and says where it
// looked and what to do.
func TestApplyChatTemplateErrors(t *testing.T) {
	data, err := tokenizertest.Llama3Style(30000)
	if err != nil {
		t.Fatal(err)
	}
	dir := t.TempDir()
	jsPath, err := tokenizertest.Write(dir, data)
	if err != nil {
		t.Fatal(err)
	}
	mcfg := mockserver.NewConfig()
	mcfg.Addr = "127.0.0.1:0"
	srv, err := mockserver.Start(t.Context(), mcfg)
	if err != nil {
		t.Fatal(err)
	}
	defer srv.Close()
	for _, c := range []struct {
		name, tokenizer, endpoint string
		correction                int
		want                      []string
	}{
		{"builtin", "builtin", "", 0, []string{"carries no chat template", "--isl-correction"}},
		{"bare tokenizer.json", jsPath, "", 0, []string{filepath.Join(dir, "tokenizer_config.json"), "chat_template.jinja", "--isl-correction"}},
		{"both", jsPath, "", 5, []string{"ISLCorrection 5", "give one"}},
		{"completions", jsPath, "completions", 0, []string{"endpoint completions sends no chat messages"}},
	} {
		t.Run(c.name, func(t *testing.T) {
			o := reprise.NewOptions()
			o.URL, o.Model, o.Tokenizer = srv.URL(), mockserver.DefaultModel, c.tokenizer
			o.Prompts.ApplyChatTemplate, o.Prompts.ISLCorrection, o.Endpoint = true, c.correction, c.endpoint
			o.Synthetic = reprise.SyntheticLoad{ISL: 100, OSL: 2}
			o.Replay.Concurrency, o.Replay.RequestCount = 1, 1
			o.Output.Dir, o.Output.Overwrite = filepath.Join(t.TempDir(), "run"), true
			_, err := reprise.Run(t.Context(), o)
			var ce *reprise.ConfigError
			if !errors.As(err, &ce) {
				t.Fatalf("err = %v, want a ConfigError", err)
			}
			for _, w := range c.want {
				if !strings.Contains(err.Error(), w) {
					t.Errorf("error %q lacks %q", err, w)
				}
			}
		})
	}
}
