package chattmpl

import (
	"encoding/json"
	"os"
	"testing"

	"github.com/reprise-bench/reprise/internal/tokenizer"
)

// TestLlamaCppApplyTemplate checks the template against a real server:
// what llama.cpp's llama-server answered (testdata/llamacpp, recorded
// from a tiny random-weight model with GPT-2's vocabulary; README.md) to
// /apply-template and to a chat request of the same messages. The
// rendering is byte for byte the server's, and its count with the
// model's tokenizer (GPT-2's, r50k_base) is the server's prompt_tokens.
func TestLlamaCppApplyTemplate(t *testing.T) {
	b, err := os.ReadFile("testdata/llamacpp/apply-template.json")
	if err != nil {
		t.Fatal(err)
	}
	var f struct {
		ChatTemplate string `json:"chat_template"`
		Cases        []struct {
			Messages      []Message `json:"messages"`
			ApplyTemplate struct {
				Prompt string `json:"prompt"`
			} `json:"apply_template"`
			UsagePromptTokens int `json:"usage_prompt_tokens"`
		} `json:"cases"`
	}
	if err := json.Unmarshal(b, &f); err != nil {
		t.Fatal(err)
	}
	tmpl, err := Parse("tiny.gguf", f.ChatTemplate, "<|endoftext|>", "<|endoftext|>", nil)
	if err != nil {
		t.Fatal(err)
	}
	tok, err := tokenizer.Load("r50k_base")
	if err != nil {
		t.Fatal(err)
	}
	if len(f.Cases) == 0 {
		t.Fatal("no cases in the fixture")
	}
	for i, c := range f.Cases {
		got, err := tmpl.Render(c.Messages)
		if err != nil {
			t.Fatalf("case %d: %v", i, err)
		}
		if got != c.ApplyTemplate.Prompt {
			t.Errorf("case %d: rendered %q; llama.cpp's /apply-template gave %q", i, got, c.ApplyTemplate.Prompt)
		}
		if n := tmpl.Count(tok.Count, got); n != c.UsagePromptTokens {
			t.Errorf("case %d: %d tokens; llama.cpp counted %d", i, n, c.UsagePromptTokens)
		}
	}
}
