package main

import (
	"encoding/json"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/reprise-bench/reprise/internal/hfhub/hfhubtest"
	"github.com/reprise-bench/reprise/internal/mockserver"
	"github.com/reprise-bench/reprise/internal/tokenizer/tokenizertest"
)

// manifestTokenizer returns the tokenizer a run directory's manifest names.
func manifestTokenizer(t *testing.T, dir string) string {
	t.Helper()
	b, err := os.ReadFile(filepath.Join(dir, "manifest.json"))
	if err != nil {
		t.Fatal(err)
	}
	var m any
	if err := json.Unmarshal(b, &m); err != nil {
		t.Fatal(err)
	}
	var walk func(v any) string
	walk = func(v any) string {
		switch o := v.(type) {
		case map[string]any:
			if s, ok := o["tokenizer"].(string); ok {
				return s
			}
			for _, x := range o {
				if s := walk(x); s != "" {
					return s
				}
			}
		case []any:
			for _, x := range o {
				if s := walk(x); s != "" {
					return s
				}
			}
		}
		return ""
	}
	return walk(m)
}

// fakeHubEnv starts a fake Hugging Face Hub serving a tokenizer.json for
// org/model (main and tag v1) and points the HF_* environment at it and
// at an empty cache, which it returns.
func fakeHubEnv(t *testing.T) (*hfhubtest.Server, string) {
	t.Helper()
	data, err := tokenizertest.Llama3Style(4096)
	if err != nil {
		t.Fatal(err)
	}
	hub := hfhubtest.New()
	t.Cleanup(hub.Close)
	hub.AddFile("org/model", "tokenizer.json", string(data))
	hub.AddFileAt("org/model", "v1", "1111111111111111111111111111111111111111", "tokenizer.json", string(data))
	cache := filepath.Join(t.TempDir(), "hub")
	for k, v := range map[string]string{"HF_ENDPOINT": hub.URL, "HF_HUB_CACHE": cache, "HF_HOME": t.TempDir(), "HF_TOKEN": "",
		"HF_HUB_OFFLINE": "", "HUGGINGFACE_HUB_CACHE": "", "XDG_CACHE_HOME": t.TempDir()} {
		t.Setenv(k, v)
	}
	return hub, cache
}

// TestProfileTokenizerFromHub: profile takes the model id as tokenizer
// (AIPerf's default) and downloads it from HF_ENDPOINT; replay downloads
// --tokenizer ORG/NAME at --tokenizer-revision; a second run asks the Hub
// nothing.
func TestProfileTokenizerFromHub(t *testing.T) {
	hub, cache := fakeHubEnv(t)
	srv := startMockServer(t, func(c *mockserver.Config) { c.Models = []string{"org/model", "other", "other/none"} })
	out := filepath.Join(t.TempDir(), "run")
	code, _, stderr := runCLI(t, "", "profile", "-m", "org/model", "--url", srv.URL(), "--isl", "16", "--osl", "4", "--request-count", "2",
		"--artifact-dir", out, "--export", "none")
	if code != 0 {
		t.Fatalf("exit %d: %s", code, stderr)
	}
	if got := manifestTokenizer(t, out); got != "org/model" {
		t.Errorf("profile's tokenizer %q, want the model's", got)
	}
	if !strings.Contains(stderr, "downloaded from the Hugging Face Hub") {
		t.Errorf("no download logged:\n%s", stderr)
	}
	// tokenizer.json: a HEAD and a GET; tokenizer_config.json: a HEAD
	// answering 404 (remembered in the cache's .no_exist).
	if reqs := hub.Requests(); strings.Join(reqs, ",") != "HEAD /org/model/resolve/main/tokenizer.json,GET /org/model/resolve/main/tokenizer.json,HEAD /org/model/resolve/main/tokenizer_config.json" {
		t.Errorf("requests %q", reqs)
	}
	if _, err := os.Stat(filepath.Join(cache, "models--org--model", "refs", "main")); err != nil {
		t.Errorf("not cached: %v", err)
	}
	// Again: from the cache.
	out2 := filepath.Join(t.TempDir(), "run")
	if code, _, stderr := runCLI(t, "", "profile", "-m", "org/model", "--url", srv.URL(), "--isl", "16", "--osl", "4", "--request-count", "2",
		"--artifact-dir", out2, "--export", "none", "--quiet"); code != 0 {
		t.Fatalf("second run: exit %d: %s", code, stderr)
	}
	if reqs := hub.Requests(); len(reqs) != 0 {
		t.Errorf("the second run asked the Hub %q", reqs)
	}
	// replay: --tokenizer with a revision.
	out3 := filepath.Join(t.TempDir(), "run")
	if code, _, stderr := runCLI(t, "", "replay", "--model", "other", "--url", srv.URL(), "--isl", "16", "--osl", "4", "--request-count", "2", "--concurrency", "1",
		"--tokenizer", "org/model", "--tokenizer-revision", "v1", "--out", out3, "--quiet"); code != 0 {
		t.Fatalf("replay: exit %d: %s", code, stderr)
	}
	if b, err := os.ReadFile(filepath.Join(cache, "models--org--model", "refs", "v1")); err != nil || string(b) != "1111111111111111111111111111111111111111" {
		t.Errorf("refs/v1: %q %v", b, err)
	}
	// A model the Hub does not have: profile warns and counts with the
	// builtin tokenizer; replay's --tokenizer names it and exits 2.
	out4 := filepath.Join(t.TempDir(), "run")
	code, _, stderr = runCLI(t, "", "profile", "-m", "other/none", "--url", srv.URL(), "--isl", "16", "--osl", "4", "--request-count", "2",
		"--artifact-dir", out4, "--export", "none")
	if code != 0 {
		t.Fatalf("profile of an unknown model id: exit %d: %s", code, stderr)
	}
	if !strings.Contains(stderr, "the model's tokenizer cannot be loaded") || !strings.Contains(stderr, "check the name other/none") {
		t.Errorf("no warning for a model id the Hub lacks:\n%s", stderr)
	}
	code, _, stderr = runCLI(t, "", "replay", "--model", "other", "--url", srv.URL(), "--isl", "16", "--osl", "4", "--request-count", "2", "--concurrency", "1",
		"--tokenizer", "other/none", "--out", filepath.Join(t.TempDir(), "run"), "--quiet")
	if code != 2 || !strings.Contains(stderr, "/other/none/resolve/main/") || !strings.Contains(stderr, "HF_TOKEN") {
		t.Errorf("replay --tokenizer other/none: exit %d:\n%s", code, stderr)
	}
	// --tokenizer-trust-remote-code is refused with its reason.
	code, _, stderr = runCLI(t, "", "profile", "-m", "org/model", "--tokenizer-trust-remote-code")
	if code != 2 || !strings.Contains(stderr, "reprise runs no Python") {
		t.Errorf("--tokenizer-trust-remote-code: exit %d:\n%s", code, stderr)
	}
}

// TestProfilePublicDataset: --public-dataset sharegpt downloads AIPerf's
// ShareGPT file from HF_ENDPOINT into the Hugging Face cache (a dataset
// repository) and sends its conversations turn by turn; a second run
// asks the Hub nothing.
func TestProfilePublicDataset(t *testing.T) {
	hub, cache := fakeHubEnv(t)
	hub.AddFile("datasets/anon8231489123/ShareGPT_Vicuna_unfiltered", "ShareGPT_V3_unfiltered_cleaned_split.json", `[
 {"id": "a", "conversations": [{"from": "human", "value": "Explain paged attention in one line."}, {"from": "gpt", "value": "KV blocks in pages."},
                               {"from": "human", "value": "And prefix caching?"}, {"from": "gpt", "value": "Shared blocks are reused."}]},
 {"id": "b", "conversations": [{"from": "human", "value": "What is TTFT?"}, {"from": "gpt", "value": "Time to first token."}]}
]`)
	srv := startMockServer(t, nil)
	for i := range 2 {
		out := filepath.Join(t.TempDir(), "run")
		code, _, stderr := runCLI(t, "", "profile", "-m", "reprise-mock", "--url", srv.URL(), "--public-dataset", "sharegpt",
			"--streaming", "--artifact-dir", out, "--export", "none", "--format", "jsonl")
		if code != 0 {
			t.Fatalf("run %d: exit %d: %s", i, code, stderr)
		}
		reqs := hub.Requests()
		if i == 0 && (len(reqs) != 2 || !strings.HasPrefix(reqs[0], "HEAD /datasets/anon8231489123/ShareGPT_Vicuna_unfiltered/resolve/main/")) {
			t.Errorf("first run asked %q", reqs)
		}
		if i == 1 && len(reqs) != 0 {
			t.Errorf("second run asked %q", reqs)
		}
		if n := len(readRecords(t, out)); n != 3 {
			t.Errorf("run %d: %d records, want 3 (every turn of both conversations)", i, n)
		}
	}
	if _, err := os.Stat(filepath.Join(cache, "datasets--anon8231489123--ShareGPT_Vicuna_unfiltered", "refs", "main")); err != nil {
		t.Errorf("not in the cache: %v", err)
	}
	code, _, stderr := runCLI(t, "", "profile", "-m", "reprise-mock", "--url", srv.URL(), "--public-dataset", "mmstar")
	if code != 2 || !strings.Contains(stderr, "reprise reads aimo, ") || !strings.Contains(stderr, " sharegpt, ") {
		t.Errorf("an unknown public dataset: exit %d:\n%s", code, stderr)
	}
}
