package tokenizer

import (
	"bytes"
	"errors"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"testing"

	"github.com/reprise-bench/reprise/internal/tokenizer/tokenizertest"
)

// TestGGUFMatchesTokenizerJSON checks that a GGUF file carrying a model's
// tokenizer, as llama.cpp's converter writes it, loads into a tokenizer
// that encodes exactly like the model's tokenizer.json.
func TestGGUFMatchesTokenizerJSON(t *testing.T) {
	js, err := tokenizertest.Llama3Style(4096)
	if err != nil {
		t.Fatal(err)
	}
	gg, err := tokenizertest.GGUF(js, "llama-bpe")
	if err != nil {
		t.Fatal(err)
	}
	dir := t.TempDir()
	jsPath, ggPath := filepath.Join(dir, "tokenizer.json"), filepath.Join(dir, "model-Q4_K_M.gguf")
	if err := os.WriteFile(jsPath, js, 0o644); err != nil {
		t.Fatal(err)
	}
	// Tensor data follows the metadata in a real file; the reader must
	// not read it.
	if err := os.WriteFile(ggPath, append(gg, bytes.Repeat([]byte{0xff}, 1<<20)...), 0o644); err != nil {
		t.Fatal(err)
	}
	want, err := Load(jsPath)
	if err != nil {
		t.Fatal(err)
	}
	got, err := Load(ggPath)
	if err != nil {
		t.Fatal(err)
	}
	texts := append(slices.Clone(oracleSamples), "The quick brown fox jumps over the lazy dog 12345 times!\n\n  indented\tcode()",
		strings.Repeat("tokenization ", 50), "naïve café — ünïcödé 😀", "<|begin_of_text|>hello")
	for _, s := range texts {
		if g, w := got.Encode(s), want.Encode(s); !slices.Equal(g, w) {
			t.Errorf("Encode(%q): GGUF %v, tokenizer.json %v", s, g, w)
		}
	}
	v := got.(Vocabulary)
	if v.VocabSize() != want.(Vocabulary).VocabSize() {
		t.Errorf("VocabSize: GGUF %d, tokenizer.json %d", v.VocabSize(), want.(Vocabulary).VocabSize())
	}
}

// TestGGUFErrors checks that a file that is not a usable GGUF tokenizer
// says which file, where and what to do instead.
func TestGGUFErrors(t *testing.T) {
	js, err := tokenizertest.Llama3Style(512)
	if err != nil {
		t.Fatal(err)
	}
	good, err := tokenizertest.GGUF(js, "llama-bpe")
	if err != nil {
		t.Fatal(err)
	}
	odd, err := tokenizertest.GGUF(js, "chatglm-bpe")
	if err != nil {
		t.Fatal(err)
	}
	spm := bytes.Replace(good, []byte("\x04\x00\x00\x00\x00\x00\x00\x00gpt2"), []byte("\x04\x00\x00\x00\x00\x00\x00\x00t5xx"), 1)
	for name, tc := range map[string]struct {
		data []byte
		want []string
	}{
		"truncated":   {good[:len(good)/2], []string{"m.gguf", "byte", "truncated"}},
		"version":     {append([]byte("GGUF\x01\x00\x00\x00"), good[8:]...), []string{"version 1"}},
		"pre":         {odd, []string{`"chatglm-bpe"`, "--tokenizer server"}},
		"model":       {spm, []string{`"t5xx"`, "tokenizer.json"}},
		"huge string": {append(slices.Clone(good[:24]), 0xff, 0xff, 0xff, 0xff, 0xff, 0xff, 0, 0), []string{"corrupt file"}},
	} {
		t.Run(name, func(t *testing.T) {
			path := filepath.Join(t.TempDir(), "m.gguf")
			if err := os.WriteFile(path, tc.data, 0o644); err != nil {
				t.Fatal(err)
			}
			_, err := Load(path)
			if err == nil {
				t.Fatal("loaded")
			}
			for _, w := range tc.want {
				if !strings.Contains(err.Error(), w) {
					t.Errorf("error %q lacks %q", err, w)
				}
			}
			if name == "pre" || name == "model" {
				if !errors.Is(err, ErrUnsupported) {
					t.Errorf("error %v is not ErrUnsupported", err)
				}
			}
		})
	}
}

func FuzzGGUF(f *testing.F) {
	js, err := tokenizertest.Llama3Style(300)
	if err != nil {
		f.Fatal(err)
	}
	good, err := tokenizertest.GGUF(js, "llama-bpe")
	if err != nil {
		f.Fatal(err)
	}
	f.Add(good)
	f.Add(good[:40])
	chat, err := tokenizertest.GGUFChat(js, "llama-bpe", "{{ bos_token }}{% for m in messages %}{{ m.content }}{% endfor %}", 300, 0)
	if err != nil {
		f.Fatal(err)
	}
	f.Add(chat)
	f.Add([]byte("GGUF\x03\x00\x00\x00"))
	// The metadata reader is what reads untrusted bytes; building a
	// tokenizer from what it returns is parseHF's, fuzzed by FuzzParseHF.
	f.Fuzz(func(t *testing.T, data []byte) {
		m, err := readGGUFMeta("fuzz", bytes.NewReader(data))
		if err != nil {
			if !strings.Contains(err.Error(), "tokenizer fuzz: GGUF at byte ") {
				t.Fatalf("error %q does not say where", err)
			}
			return
		}
		if len(m.tokens) > len(data) || len(m.merges) > len(data) || 4*len(m.types) > len(data) || len(m.chatTemplate) > len(data) {
			t.Fatalf("%d tokens, %d merges, %d token types and a %d-byte template from %d bytes", len(m.tokens), len(m.merges), len(m.types), len(m.chatTemplate), len(data))
		}
	})
}
