package servertok

import (
	"bufio"
	"compress/gzip"
	"encoding/json"
	"errors"
	"io"
	"net/http"
	"net/http/httptest"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/reprise-bench/reprise/internal/prompt"
	"github.com/reprise-bench/reprise/internal/tokenizer"
)

// exchange is one recorded /tokenize request and answer (testdata/README.md).
type exchange struct {
	Note        string `json:"note"`
	Method      string `json:"method"`
	Path        string `json:"path"`
	Body        string `json:"body"`
	Status      int    `json:"status"`
	ContentType string `json:"content_type"`
	Response    string `json:"response"`
}

func readFixture(t *testing.T, name string) []exchange {
	t.Helper()
	f, err := os.Open(filepath.Join("testdata", name))
	if err != nil {
		t.Fatal(err)
	}
	defer f.Close()
	zr, err := gzip.NewReader(f)
	if err != nil {
		t.Fatal(err)
	}
	var out []exchange
	sc := bufio.NewScanner(zr)
	sc.Buffer(nil, 16<<20)
	for sc.Scan() {
		var x exchange
		if err := json.Unmarshal(sc.Bytes(), &x); err != nil {
			t.Fatalf("%s: %v", name, err)
		}
		out = append(out, x)
	}
	if err := sc.Err(); err != nil {
		t.Fatal(err)
	}
	return out
}

// replayServer answers each request with the recorded answer to the same
// method, path and body; a request the recording lacks fails the test.
func replayServer(t *testing.T, xs []exchange) *httptest.Server {
	t.Helper()
	byReq := map[string]exchange{}
	for _, x := range xs {
		k := x.Method + " " + x.Path + " " + x.Body
		if _, ok := byReq[k]; !ok {
			byReq[k] = x
		}
	}
	s := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		body, _ := io.ReadAll(r.Body)
		x, ok := byReq[r.Method+" "+r.URL.Path+" "+string(body)]
		if !ok {
			t.Errorf("request not in the recording (record it again, testdata/README.md): %s %s %.200s", r.Method, r.URL.Path, body)
			http.Error(w, "not recorded", http.StatusTeapot)
			return
		}
		w.Header().Set("Content-Type", x.ContentType)
		w.WriteHeader(x.Status)
		io.WriteString(w, x.Response)
	}))
	t.Cleanup(s.Close)
	return s
}

// probe returns the recorded answer of a shape probe with this body.
func probe(t *testing.T, xs []exchange, path string, body map[string]any) exchange {
	t.Helper()
	b, _ := json.Marshal(body)
	for _, x := range xs {
		if x.Note == "shape probe" && x.Path == path && x.Body == string(b) {
			return x
		}
	}
	t.Fatalf("no probe %s %s in the recording", path, b)
	return exchange{}
}

func tokensOf(t *testing.T, x exchange) []int {
	t.Helper()
	ids, err := parseTokens("vllm", []byte(x.Response))
	if err != nil {
		t.Fatalf("%s: %v", x.Body, err)
	}
	return ids
}

// TestLlamaCppFixture: llama.cpp answers vLLM's {"prompt"} with 200 and no
// tokens, its own {"content"} with tokens; Load finds its shape and
// learns words whose ids are GPT-2's (the model's vocabulary), exactly.
func TestLlamaCppFixture(t *testing.T) {
	xs := readFixture(t, "llamacpp-tokenize.jsonl.gz")
	if got := tokensOf(t, probe(t, xs, "/tokenize", map[string]any{"prompt": "\n"})); len(got) != 0 {
		t.Errorf(`{"prompt":"\n"}: %v, want the empty answer llama.cpp gives a body of another shape`, got)
	}
	if got := tokensOf(t, probe(t, xs, "/tokenize", map[string]any{"content": "\n"})); len(got) != 1 || got[0] != 198 {
		t.Errorf(`{"content":"\n"}: %v, want [198]`, got)
	}
	if x := probe(t, xs, "/no-such-endpoint", map[string]any{"prompt": "x"}); x.Status != http.StatusNotFound {
		t.Errorf("a missing path answered %d", x.Status)
	}
	s := replayServer(t, xs)
	tok, info, err := Load(t.Context(), Config{BaseURL: s.URL, Model: "tiny", CacheDir: "-"})
	if err != nil {
		t.Fatal(err)
	}
	if info.Shape != "llamacpp" || info.CountOnly || tok.Words() != 4096 {
		t.Errorf("shape %s, count only %v, %d words; want llamacpp, ids, 4096", info.Shape, info.CountOnly, tok.Words())
	}
	gpt2, err := tokenizer.Load("r50k_base")
	if err != nil {
		t.Fatal(err)
	}
	bad := 0
	for id := range tok.VocabSize() {
		w, ok := tok.Piece(id)
		if !ok {
			continue
		}
		if got := gpt2.Encode(w); len(got) != 1 || got[0] != id {
			bad++
			if bad < 5 {
				t.Errorf("learned %q as %d; GPT-2 has %v", w, id, got)
			}
		}
	}
	if bad > 0 {
		t.Errorf("%d learned words differ from GPT-2's vocabulary", bad)
	}
	// The ChatML template of tiny.gguf adds 27 tokens to a chat request
	// (its usage.prompt_tokens, 31, for four words), learned from
	// /apply-template.
	if n, ok := tok.ChatTemplateTokens(); !ok || n != 27 {
		t.Errorf("chat template tokens %d %v, want 27", n, ok)
	}
}

// TestInferenceSimFixture: the simulator's placeholder tokenizer gives no
// token for a newline in any shape; Load does not stop there, learns the
// words by counts, and says so.
func TestInferenceSimFixture(t *testing.T) {
	xs := readFixture(t, "llm-d-inference-sim-tokenize.jsonl.gz")
	for _, body := range []map[string]any{{"prompt": "\n"}, {"content": "\n"}, {"inputs": "\n", "parameters": map[string]any{}}} {
		if got := tokensOf(t, probe(t, xs, "/tokenize", body)); len(got) != 0 {
			t.Errorf("%v: %v, want no token", body, got)
		}
	}
	if got := tokensOf(t, probe(t, xs, "/tokenize", map[string]any{"prompt": " the quick brown fox"})); len(got) != 4 {
		t.Errorf("four words: %v", got)
	}
	s := replayServer(t, xs)
	tok, info, err := Load(t.Context(), Config{BaseURL: s.URL, Model: "tiny", CacheDir: "-"})
	if err != nil {
		t.Fatal(err)
	}
	if info.Shape != "vllm" || !info.CountOnly || tok.Words() != 4096 {
		t.Errorf("shape %s, count only %v, %d words; want vllm, counts, 4096", info.Shape, info.CountOnly, tok.Words())
	}
	// The simulator's chat template adds 5 words to a one-message chat.
	if n, ok := tok.ChatTemplateTokens(); !ok || n != 5 {
		t.Errorf("chat template tokens %d %v, want 5", n, ok)
	}
	// Its ids (32-bit hashes, unstable) are renumbered: a vocabulary of
	// the learned words' size.
	if tok.VocabSize() != tok.Words() {
		t.Errorf("vocabulary size %d for %d words", tok.VocabSize(), tok.Words())
	}
	// Prompt synthesis takes them (its word ids are int32: the server's
	// hashes overflowed them).
	if _, err := prompt.New(tok, prompt.NewConfig()); err != nil {
		t.Errorf("prompt synthesis: %v", err)
	}
}

// TestUnusableAndMissing tells a /tokenize that gives no tokens for text
// from a server without /tokenize.
func TestUnusableAndMissing(t *testing.T) {
	empty := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		io.WriteString(w, `{"tokens":[],"count":0}`)
	}))
	defer empty.Close()
	_, _, err := Load(t.Context(), Config{BaseURL: empty.URL, Model: "m", CacheDir: "-"})
	if !errors.Is(err, ErrUnusable) || !strings.Contains(err.Error(), "vllm: 200 with no tokens") || !strings.Contains(err.Error(), "tgi:") {
		t.Errorf("no tokens for text: %v", err)
	}
	missing := httptest.NewServer(http.NotFoundHandler())
	defer missing.Close()
	_, _, err = Load(t.Context(), Config{BaseURL: missing.URL, Model: "m", CacheDir: "-"})
	if !errors.Is(err, ErrNoEndpoint) || errors.Is(err, ErrUnusable) {
		t.Errorf("no /tokenize: %v", err)
	}
	odd := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) { io.WriteString(w, `{"ids":[1]}`) }))
	defer odd.Close()
	_, _, err = Load(t.Context(), Config{BaseURL: odd.URL, Model: "m", CacheDir: "-"})
	if !errors.Is(err, ErrNoShape) {
		t.Errorf("another shape: %v", err)
	}
}
