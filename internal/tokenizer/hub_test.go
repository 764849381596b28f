package tokenizer_test

import (
	"errors"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/reprise-bench/reprise/internal/hfhub"
	"github.com/reprise-bench/reprise/internal/hfhub/hfhubtest"
	"github.com/reprise-bench/reprise/internal/tokenizer"
	"github.com/reprise-bench/reprise/internal/tokenizer/tokenizertest"
)

// isolateHF points every Hugging Face location at empty folders, so no
// test reads the user's cache.
func isolateHF(t *testing.T) string {
	t.Helper()
	root := t.TempDir()
	for k, v := range map[string]string{"HF_HUB_CACHE": filepath.Join(root, "hub"), "HF_HOME": filepath.Join(root, "home"),
		"XDG_CACHE_HOME": filepath.Join(root, "xdg"), "HOME": filepath.Join(root, "user"), "HUGGINGFACE_HUB_CACHE": "",
		"HF_ENDPOINT": "http://127.0.0.1:1", "HF_TOKEN": "", "HF_HUB_OFFLINE": ""} {
		t.Setenv(k, v)
	}
	return filepath.Join(root, "hub")
}

func TestLoadContextDownloads(t *testing.T) {
	cache := isolateHF(t)
	data, err := tokenizertest.Llama3Style(2000)
	if err != nil {
		t.Fatal(err)
	}
	hub := hfhubtest.New()
	defer hub.Close()
	hub.AddFile("org/model", "tokenizer.json", string(data))
	hub.AddFile("org/model", "tokenizer_config.json", `{"bos_token":"<|begin_of_text|>"}`)
	hub.AddFileAt("org/model", "old", "1111111111111111111111111111111111111111", "tokenizer.json", string(data))
	cfg := hfhub.FromEnv()
	cfg.Endpoint, cfg.Client = hub.URL, hub.Client()
	var downloaded []string
	lc := tokenizer.LoadConfig{Hub: &cfg, Downloaded: func(f hfhub.File) { downloaded = append(downloaded, filepath.Base(f.Path)) }}
	tok, err := tokenizer.LoadContext(t.Context(), "org/model", lc)
	if err != nil {
		t.Fatal(err)
	}
	want, err := tokenizer.Load(writeTemp(t, data))
	if err != nil {
		t.Fatal(err)
	}
	const text = " the quick brown fox jumps over the lazy dog"
	if got, w := tok.Encode(text), want.Encode(text); len(got) != len(w) || len(got) == 0 {
		t.Errorf("downloaded tokenizer counts %d, the file %d", len(got), len(w))
	}
	if strings.Join(downloaded, ",") != "tokenizer_config.json,tokenizer.json" && strings.Join(downloaded, ",") != "tokenizer.json,tokenizer_config.json" {
		t.Errorf("downloaded %q", downloaded)
	}
	if _, err := os.Stat(filepath.Join(cache, "models--org--model", "snapshots", hfhubtest.Commit, "tokenizer_config.json")); err != nil {
		t.Errorf("tokenizer_config.json not cached: %v", err)
	}
	hub.Requests()
	// Cached: no request, also offline, also through Load.
	if _, err := tokenizer.LoadContext(t.Context(), "org/model", lc); err != nil {
		t.Fatal(err)
	}
	if r := hub.Requests(); len(r) != 0 {
		t.Errorf("second load asked %q", r)
	}
	if _, err := tokenizer.Load("org/model"); err != nil {
		t.Errorf("Load of the downloaded id: %v", err)
	}
	// A revision is one more download, of that commit.
	lc.Revision = "old"
	if _, err := tokenizer.LoadContext(t.Context(), "org/model", lc); err != nil {
		t.Fatal(err)
	}
	if _, err := os.Stat(filepath.Join(cache, "models--org--model", "snapshots", "1111111111111111111111111111111111111111", "tokenizer.json")); err != nil {
		t.Errorf("revision old: %v", err)
	}
	// Offline, a revision not cached is an error that says so.
	lc.Revision = "v9"
	off := cfg
	off.Offline = true
	lc.Hub = &off
	_, err = tokenizer.LoadContext(t.Context(), "org/model", lc)
	if !errors.Is(err, tokenizer.ErrNotFound) || !errors.Is(err, hfhub.ErrOffline) {
		t.Errorf("offline, revision v9: %v", err)
	}
	// A revision is for model ids only.
	if _, err := tokenizer.LoadContext(t.Context(), "builtin", tokenizer.LoadConfig{Revision: "main"}); err == nil {
		t.Error("builtin with a revision loaded")
	}
}

func TestLoadContextRefusals(t *testing.T) {
	isolateHF(t)
	hub := hfhubtest.New()
	defer hub.Close()
	hub.AddFile("org/remote", "tokenizer_config.json", `{"auto_map":{"AutoTokenizer":["tokenization_x.XTokenizer",null]}}`)
	hub.AddFile("org/slow", "tokenizer_config.json", `{"tokenizer_class":"LlamaTokenizer"}`)
	cfg := hfhub.FromEnv()
	cfg.Endpoint, cfg.Client = hub.URL, hub.Client()
	for id, says := range map[string][]string{
		"org/remote":  {"tokenization_x.XTokenizer", "trust_remote_code", "reprise runs no Python", "no tokenizer.json"},
		"org/slow":    {"LlamaTokenizer", "no tokenizer.json"},
		"org/missing": {"model org/missing", "HTTP 401", "/org/missing/resolve/main/tokenizer.json", "check the name", "HF_TOKEN"},
	} {
		_, err := tokenizer.LoadContext(t.Context(), id, tokenizer.LoadConfig{Hub: &cfg})
		if err == nil {
			t.Errorf("%s loaded", id)
			continue
		}
		for _, s := range says {
			if !strings.Contains(err.Error(), s) {
				t.Errorf("%s: %q does not say %q", id, err, s)
			}
		}
	}
}

func writeTemp(t *testing.T, data []byte) string {
	t.Helper()
	p, err := tokenizertest.Write(t.TempDir(), data)
	if err != nil {
		t.Fatal(err)
	}
	return p
}

func TestIsModelID(t *testing.T) {
	for spec, want := range map[string]bool{
		"Qwen/Qwen3-0.6B": true, "meta-llama/Llama-3.1-8B-Instruct": true, "org/model.v2": true,
		"gpt2": false, "models/tokenizer.json": false, "models/tiny.GGUF": false, "/abs/x": false, "a/b/c": false, "./x": false,
	} {
		if got := tokenizer.IsModelID(spec); got != want {
			t.Errorf("IsModelID(%q) = %v", spec, got)
		}
	}
}
