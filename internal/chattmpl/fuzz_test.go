package chattmpl

import (
	"os"
	"path/filepath"
	"strings"
	"testing"
)

// FuzzParseTokenizerConfig reads arbitrary tokenizer_config.json bytes:
// no panic, and a template that parses counts any text without losing
// or inventing characters (each added token is one token, the rest is
// counted by bytes here).
func FuzzParseTokenizerConfig(f *testing.F) {
	for _, name := range fixtures {
		data, err := os.ReadFile(filepath.Join("testdata", name, "tokenizer_config.json"))
		if err != nil {
			f.Fatal(err)
		}
		f.Add(data, "<|im_start|>user\nhi<|im_end|>")
	}
	f.Add([]byte(`{"chat_template": [{"name": "default", "template": "{{ x"}], "bos_token": {"content": 1}}`), "")
	f.Add([]byte(`{"chat_template": "{% for m in messages %}{{ m.content }}{% endfor %}", "added_tokens_decoder": {"1": {"content": "ab"}, "2": {"content": "a"}}}`), "aab")
	f.Fuzz(func(t *testing.T, data []byte, text string) {
		tmpl, err := ParseTokenizerConfig("tokenizer_config.json", data, "")
		if err != nil {
			if !strings.Contains(err.Error(), "tokenizer_config.json") && !strings.Contains(err.Error(), "no chat template") {
				t.Fatalf("error names no file: %v", err)
			}
			return
		}
		n := tmpl.Count(func(s string) int { return len(s) }, text)
		if n > len(text) || (text != "" && n < 1) {
			t.Fatalf("Count(%q) = %d", text, n)
		}
	})
}
