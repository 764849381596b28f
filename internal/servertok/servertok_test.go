package servertok

import (
	"context"
	"errors"
	"net/http"
	"path/filepath"
	"slices"
	"strings"
	"sync/atomic"
	"testing"

	"github.com/reprise-bench/reprise/internal/mockserver"
	"github.com/reprise-bench/reprise/internal/tokenizer"
	"github.com/reprise-bench/reprise/internal/tokenizer/tokenizertest"
)

// serverTokenizer is a Llama-3-style byte-level BPE that the client does
// not have: the first n tokens of cl100k_base, so many of the builtin
// o200k words are several tokens there.
func serverTokenizer(t *testing.T, n int) tokenizer.Tokenizer {
	t.Helper()
	data, err := tokenizertest.Llama3Style(n)
	if err != nil {
		t.Fatal(err)
	}
	return loadTokenizer(t, data)
}

// loadTokenizer writes a tokenizer.json of data and loads it.
func loadTokenizer(t *testing.T, data []byte) tokenizer.Tokenizer {
	t.Helper()
	path, err := tokenizertest.Write(t.TempDir(), data)
	if err != nil {
		t.Fatal(err)
	}
	tok, err := tokenizer.Load(path)
	if err != nil {
		t.Fatal(err)
	}
	return tok
}

// startMock serves tok on /tokenize in flavor's shapes.
func startMock(t *testing.T, tok tokenizer.Tokenizer, flavor mockserver.Flavor) *mockserver.Server {
	t.Helper()
	cfg := mockserver.NewConfig()
	cfg.Addr, cfg.Tokenizer, cfg.Flavor = "127.0.0.1:0", tok, flavor
	s, err := mockserver.Start(t.Context(), cfg)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { s.Close() })
	return s
}

// countingClient counts the requests it sends.
type countingClient struct {
	n  atomic.Int64
	rt http.RoundTripper
}

func (c *countingClient) RoundTrip(r *http.Request) (*http.Response, error) {
	c.n.Add(1)
	return c.rt.RoundTrip(r)
}

func TestLearnFromServer(t *testing.T) {
	for _, flavor := range []mockserver.Flavor{mockserver.FlavorVLLM, mockserver.FlavorLlamaCPP} {
		t.Run(string(flavor), func(t *testing.T) {
			tok := serverTokenizer(t, 20000)
			s := startMock(t, tok, flavor)
			rt := &countingClient{rt: http.DefaultTransport}
			cfg := Config{BaseURL: s.URL(), Model: mockModel, Client: &http.Client{Transport: rt}, CacheDir: t.TempDir(), Words: 2048}
			st, info, err := Load(context.Background(), cfg)
			if err != nil {
				t.Fatal(err)
			}
			wantShape := map[mockserver.Flavor]string{mockserver.FlavorVLLM: "vllm", mockserver.FlavorLlamaCPP: "llamacpp"}[flavor]
			if info.Shape != wantShape || info.Cached || info.Requests == 0 {
				t.Fatalf("info %+v, want shape %s, asked", info, wantShape)
			}
			if st.Words() < 1000 {
				t.Fatalf("learned %d words, want most of 2048", st.Words())
			}
			// Every learned word is one token of the server's tokenizer,
			// with the learned id, and a sentence of them is one token
			// per word there and here.
			var words []string
			for id := range st.VocabSize() {
				w, ok := st.Piece(id)
				if !ok {
					continue
				}
				if got := tok.Encode(w); len(got) != 1 || got[0] != id {
					t.Fatalf("learned %q as id %d; the server encodes it %v", w, id, got)
				}
				words = append(words, w)
			}
			text := strings.Join(words[:300], "") + strings.Join(words[:300], "")
			if got, want := st.Encode(text), tok.Encode(text); !slices.Equal(got, want) || len(got) != 600 {
				t.Fatalf("a sentence of 600 learned words: client %d tokens, server %d", len(got), len(want))
			}
			asked := rt.n.Load()

			// A second load asks nothing and learns the same.
			st2, info2, err := Load(context.Background(), cfg)
			if err != nil {
				t.Fatal(err)
			}
			n, ok := st.ChatTemplateTokens()
			if want := flavor == mockserver.FlavorVLLM; ok != want || (ok && n != mockserver.NewConfig().ChatTemplateTokens) {
				t.Errorf("chat template tokens %d, %v; want known (the mock's %d) for vLLM's shape only", n, ok, mockserver.NewConfig().ChatTemplateTokens)
			}
			if n2, ok2 := st2.ChatTemplateTokens(); n2 != n || ok2 != ok {
				t.Errorf("cached chat template tokens %d, %v; learned %d, %v", n2, ok2, n, ok)
			}
			if !info2.Cached || info2.Requests != 0 || rt.n.Load() != asked || st2.Identity() != st.Identity() {
				t.Fatalf("second load: %+v, %d requests after %d; identity %s vs %s", info2, rt.n.Load(), asked, st2.Identity(), st.Identity())
			}
			if filepath.Dir(info2.CachePath) != cfg.CacheDir {
				t.Errorf("cache at %s, want under %s", info2.CachePath, cfg.CacheDir)
			}
		})
	}
}

// TestLearnSentencePiece checks servers whose tokenizer is SentencePiece
// style. With the older normalizer (a "▁" always prepended) a prompt's
// leading space would be a token of its own, so prompts drop it; with the
// Metaspace pre-tokenizer (prepend_scheme "first") either form works. In
// both, the learned tokenizer encodes a prompt exactly as the server does.
func TestLearnSentencePiece(t *testing.T) {
	for _, metaspace := range []bool{false, true} {
		data, err := tokenizertest.SentencePieceStyle(3000, metaspace)
		if err != nil {
			t.Fatal(err)
		}
		tok := loadTokenizer(t, data)
		s := startMock(t, tok, mockserver.FlavorVLLM)
		st, _, err := Load(context.Background(), Config{BaseURL: s.URL(), Model: mockModel, CacheDir: "-"})
		if err != nil {
			t.Fatal(err)
		}
		if !metaspace && !st.stripFirst {
			t.Fatal("a server that always prepends a space: prompts must drop their first space")
		}
		var words []string
		for id := range st.VocabSize() {
			if w, ok := st.Piece(id); ok {
				words = append(words, w)
			}
		}
		text := strings.Join(words, "")
		if st.stripFirst {
			text = text[1:]
		}
		if got, want := st.Encode(text), tok.Encode(text); !slices.Equal(got, want) || len(got) != len(words) {
			t.Fatalf("metaspace %v: %d learned words joined: client %d tokens, server %d", metaspace, len(words), len(got), len(want))
		}
	}
}

// TestLearnErrors checks what a server without a usable /tokenize gets.
func TestLearnErrors(t *testing.T) {
	s := startMock(t, serverTokenizer(t, 300), mockserver.FlavorVLLM)
	// 300 tokens: hardly any word is one token.
	_, _, err := Load(context.Background(), Config{BaseURL: s.URL(), Model: mockModel, CacheDir: "-"})
	if err == nil || !strings.Contains(err.Error(), "single tokens") || !strings.Contains(err.Error(), "--tokenizer FILE") {
		t.Fatalf("a tiny vocabulary: %v", err)
	}
	_, _, err = Load(context.Background(), Config{BaseURL: s.URL() + "/nothing", Model: mockModel, CacheDir: "-"})
	if !errors.Is(err, ErrNoEndpoint) {
		t.Fatalf("no /tokenize: %v", err)
	}
}

// mockModel is the mock server's default model name.
var mockModel = mockserver.NewConfig().Models[0]

// FuzzParseTokens feeds arbitrary /tokenize answers to every dialect's
// decoder: an answer is ids or an error that quotes it, never a panic.
func FuzzParseTokens(f *testing.F) {
	for _, s := range []string{`{"count":2,"tokens":[1,2],"max_model_len":8}`, `{"tokens":[{"id":5,"piece":"a"}]}`,
		`[{"id":1,"text":"a","start":0,"stop":1}]`, `{"tokens":null}`, `[]`, `{"tokens":[1.5]}`} {
		f.Add(s)
	}
	f.Fuzz(func(t *testing.T, body string) {
		for _, shape := range shapes {
			ids, err := parseTokens(shape, []byte(body))
			if err != nil {
				if ids != nil {
					t.Fatalf("%s: ids %v with error %v", shape, ids, err)
				}
				continue
			}
			if len(ids) > len(body) {
				t.Fatalf("%s: %d ids from %d bytes", shape, len(ids), len(body))
			}
		}
	})
}
