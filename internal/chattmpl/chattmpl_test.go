package chattmpl

import (
	"encoding/json"
	"errors"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/google/go-cmp/cmp"

	"github.com/reprise-bench/reprise/internal/tokenizer"
	"github.com/reprise-bench/reprise/internal/tokenizer/tokenizertest"
)

// fixtures are the real chat templates in testdata (see its README).
var fixtures = []string{"gemma2", "llama3.2", "mistral-nemo", "qwen2.5"}

// conversations are render.py's.
var conversations = map[string][]Message{
	"user":   {{Role: "user", Content: "Hello there"}},
	"system": {{Role: "system", Content: "Be brief."}, {Role: "user", Content: "Hello there"}},
}

// fixtureClock is render.py's strftime_now.
func fixtureClock() time.Time { return time.Date(2026, 12, 4, 18, 30, 0, 0, time.UTC) }

func loadFixture(t *testing.T, name string) *Template {
	t.Helper()
	tmpl, err := ReadDir(filepath.Join("testdata", name))
	if err != nil {
		t.Fatal(err)
	}
	return tmpl.WithClock(fixtureClock)
}

// TestFixtures renders the real templates of four model families and
// compares with what Python's Jinja2 renders, as transformers sets it up
// (testdata/render.py wrote the golden files).
func TestFixtures(t *testing.T) {
	for _, name := range fixtures {
		tmpl := loadFixture(t, name)
		for conv, msgs := range conversations {
			t.Run(name+"/"+conv, func(t *testing.T) {
				want, err := os.ReadFile(filepath.Join("testdata", name, conv+".golden"))
				if err != nil {
					t.Fatal(err)
				}
				got, err := tmpl.Render(msgs)
				if err != nil {
					got = "error: " + err.Error() + "\n"
					want = []byte("error: chat template " + tmpl.Source + ": " + strings.TrimPrefix(string(want), "error: "))
				}
				if diff := cmp.Diff(string(want), got); diff != "" {
					t.Errorf("render (-Jinja2 +ours):\n%s", diff)
				}
			})
		}
	}
}

// TestCount: added tokens are one token each, the text between them is
// counted by the tokenizer.
func TestCount(t *testing.T) {
	tmpl := loadFixture(t, "qwen2.5")
	words := func(s string) int { return len(strings.Fields(s)) }
	for _, c := range []struct {
		text string
		want int
	}{
		{"", 0},
		{"a b", 2},
		{"<|im_start|>", 1},
		{"<|im_start|>user\nHello there<|im_end|>\n", 1 + 3 + 1},
		{"<|im_start|><|im_end|><|endoftext|>", 3},
		{"<|im_start", 1}, // not an added token: plain text
		{"x<|im_end|>y", 3},
	} {
		if got := tmpl.Count(words, c.text); got != c.want {
			t.Errorf("Count(%q) = %d, want %d", c.text, got, c.want)
		}
	}
}

// TestOverheadExact checks, for every fixture and prompts of many
// lengths made of the builtin tokenizer's words, that the templated
// conversation counts exactly the overhead plus the prompt: the
// correction --apply-chat-template takes off makes the server's count
// the asked length.
func TestOverheadExact(t *testing.T) {
	tok, err := tokenizer.Builtin()
	if err != nil {
		t.Fatal(err)
	}
	words := strings.Fields("the quick brown fox jumps over a lazy dog while seven tired engineers count tokens")
	for _, name := range fixtures {
		tmpl := loadFixture(t, name)
		msgs := []Message{{Role: "user", Content: "probe"}}
		over, err := tmpl.Overhead(tok.Count, msgs)
		if err != nil {
			t.Fatal(err)
		}
		t.Logf("%s: %d template tokens around one user message (o200k_base)", name, over)
		var b strings.Builder
		for n := range 300 {
			if n > 0 {
				b.WriteByte(' ')
			}
			b.WriteString(words[n%len(words)])
			p := b.String()
			text, err := tmpl.Render([]Message{{Role: "user", Content: p}})
			if err != nil {
				t.Fatal(err)
			}
			if got, want := tmpl.Count(tok.Count, text), over+tok.Count(p); got != want {
				t.Fatalf("%s, prompt of %d tokens: templated %d tokens, want %d", name, tok.Count(p), got, want)
			}
		}
	}
}

func TestReadDirErrors(t *testing.T) {
	dir := t.TempDir()
	_, err := ReadDir(dir)
	if !errors.Is(err, ErrNoTemplate) || !strings.Contains(err.Error(), "chat_template.jinja") {
		t.Errorf("empty dir: %v, want ErrNoTemplate naming the files looked at", err)
	}
	write := func(name, text string) {
		if err := os.WriteFile(filepath.Join(dir, name), []byte(text), 0o644); err != nil {
			t.Fatal(err)
		}
	}
	write("tokenizer_config.json", `{"bos_token": "<s>"}`)
	if _, err := ReadDir(dir); !errors.Is(err, ErrNoTemplate) {
		t.Errorf("config without chat_template: %v, want ErrNoTemplate", err)
	}
	write("chat_template.jinja", "{{ bos_token }}{% for m in messages %}[{{ m.content }}]{% endfor %}")
	tmpl, err := ReadDir(dir)
	if err != nil {
		t.Fatal(err)
	}
	if got, _ := tmpl.Render(conversations["user"]); got != "<s>[Hello there]" {
		t.Errorf("chat_template.jinja renders %q", got)
	}
	write("tokenizer_config.json", `{"chat_template": [{"name": "tool_use", "template": "t"}, {"name": "default", "template": "d{{ eos_token }}"}], "eos_token": {"content": "</s>"}}`)
	if tmpl, err = ReadDir(dir); err != nil {
		t.Fatal(err)
	}
	if got, _ := tmpl.Render(nil); got != "d</s>" {
		t.Errorf("named templates: %q, want the default one", got)
	}
	write("tokenizer_config.json", `{"chat_template": "{% for %}"}`)
	if _, err := ReadDir(dir); err == nil || !strings.Contains(err.Error(), "tokenizer_config.json") {
		t.Errorf("bad template: %v, want an error naming the file", err)
	}
}

// TestForTokenizerGGUF: a GGUF file's tokenizer.chat_template renders as
// the same template from tokenizer_config.json does, with the bos token
// named by its id and the control tokens as added tokens.
func TestForTokenizerGGUF(t *testing.T) {
	data, err := tokenizertest.Llama3Style(300)
	if err != nil {
		t.Fatal(err)
	}
	conf := loadFixture(t, "llama3.2")
	raw, err := os.ReadFile(filepath.Join("testdata", "llama3.2", "tokenizer_config.json"))
	if err != nil {
		t.Fatal(err)
	}
	var c struct {
		ChatTemplate string `json:"chat_template"`
	}
	if err := json.Unmarshal(raw, &c); err != nil {
		t.Fatal(err)
	}
	dir := t.TempDir()
	write := func(name, template string, bos int) string {
		gguf, err := tokenizertest.GGUFChat(data, "llama-bpe", template, bos, -1)
		if err != nil {
			t.Fatal(err)
		}
		p := filepath.Join(dir, name)
		if err := os.WriteFile(p, gguf, 0o644); err != nil {
			t.Fatal(err)
		}
		return p
	}
	// 300 is Llama3Style(300)'s <|begin_of_text|>, its one added token.
	tmpl, err := ForTokenizer(write("chat.gguf", c.ChatTemplate, 300))
	if err != nil {
		t.Fatal(err)
	}
	tmpl = tmpl.WithClock(fixtureClock)
	for conv, msgs := range conversations {
		want, _ := conf.Render(msgs)
		got, err := tmpl.Render(msgs)
		if err != nil || got != want {
			t.Errorf("%s: GGUF template renders %q, %v; tokenizer_config.json's %q", conv, got, err, want)
		}
	}
	if n := tmpl.Count(func(string) int { return 0 }, "<|begin_of_text|><|eot_id|>"); n != 1 {
		t.Errorf("added tokens: %d, want 1 (<|begin_of_text|> is the file's one control token)", n)
	}
	_, err = ForTokenizer(write("plain.gguf", "", -1))
	if !errors.Is(err, ErrNoTemplate) || !strings.Contains(err.Error(), "tokenizer.chat_template") {
		t.Errorf("GGUF without a template: %v, want ErrNoTemplate naming the key", err)
	}
}
