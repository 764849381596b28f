package tokenizer

import (
	"bytes"
	"encoding/json"
	"errors"
	"flag"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/dlclark/regexp2/v2"
	"github.com/google/go-cmp/cmp"
	"github.com/reprise-bench/reprise/internal/tokenizer/tokenizertest"
)

var update = flag.Bool("update", false, "rewrite testdata files")

// testdataFiles are the tokenizer.json files in testdata and how they are
// generated (go test -run TestTestdataUpToDate -update rewrites them).
var testdataFiles = map[string]func() ([]byte, error){
	"llama3-style":     func() ([]byte, error) { return tokenizertest.Llama3Style(1000) },
	"llama2-style":     func() ([]byte, error) { return tokenizertest.SentencePieceStyle(400, false) },
	"llama2-metaspace": func() ([]byte, error) { return tokenizertest.SentencePieceStyle(400, true) },
}

func TestTestdataUpToDate(t *testing.T) {
	for dir, gen := range testdataFiles {
		want, err := gen()
		if err != nil {
			t.Fatal(err)
		}
		path := filepath.Join("testdata", dir, "tokenizer.json")
		if *update {
			if err := os.MkdirAll(filepath.Dir(path), 0o755); err != nil {
				t.Fatal(err)
			}
			if err := os.WriteFile(path, want, 0o644); err != nil {
				t.Fatal(err)
			}
			continue
		}
		got, err := os.ReadFile(path)
		if err != nil {
			t.Fatalf("%v (run go test -run TestTestdataUpToDate -update)", err)
		}
		if !bytes.Equal(got, want) {
			t.Errorf("%s is stale: run go test -run TestTestdataUpToDate -update", path)
		}
	}
}

func mustLoad(t testing.TB, spec string) Tokenizer {
	t.Helper()
	tok, err := Load(spec)
	if err != nil {
		t.Fatal(err)
	}
	return tok
}

// naiveHF is an independent, slow implementation of the Hugging Face BPE
// model for the test files: parse the JSON again, then merge the
// lowest-ranked pair (leftmost first) until no pair is in the merge list.
type naiveHF struct {
	vocab  map[string]int
	ranks  map[[2]string]int
	split  *regexp2.Regexp // nil: whole text is one word
	level  bool            // byte-level
	ignore bool
}

func newNaiveHF(t *testing.T, path string) *naiveHF {
	t.Helper()
	data, err := os.ReadFile(path)
	if err != nil {
		t.Fatal(err)
	}
	var f struct {
		PreTokenizer struct {
			Pretokenizers []struct {
				Pattern struct{ Regex string }
			}
		} `json:"pre_tokenizer"`
		Model struct {
			Vocab        map[string]int
			Merges       []string
			IgnoreMerges bool `json:"ignore_merges"`
		}
	}
	if err := json.Unmarshal(data, &f); err != nil {
		t.Fatal(err)
	}
	n := &naiveHF{vocab: f.Model.Vocab, ranks: map[[2]string]int{}, ignore: f.Model.IgnoreMerges}
	for i, m := range f.Model.Merges {
		a, b, _ := strings.Cut(m, " ")
		if _, dup := n.ranks[[2]string{a, b}]; !dup {
			n.ranks[[2]string{a, b}] = i
		}
	}
	if ps := f.PreTokenizer.Pretokenizers; len(ps) > 0 && ps[0].Pattern.Regex != "" {
		n.split = regexp2.MustCompile("(?:"+ps[0].Pattern.Regex+")", regexp2.None)
		n.level = true
	}
	return n
}

func (n *naiveHF) encode(t *testing.T, text string) []int {
	var words []string
	if n.split == nil {
		if text == "" {
			return nil
		}
		words = []string{"▁" + strings.ReplaceAll(text, " ", "▁")}
	} else {
		m, err := n.split.FindStringMatch(text)
		for ; m != nil && err == nil; m, err = n.split.FindNextMatch(m) {
			words = append(words, tokenizertest.ByteLevel(m.String()))
		}
		if err != nil {
			t.Fatal(err)
		}
	}
	var ids []int
	for _, w := range words {
		if id, ok := n.vocab[w]; ok && n.ignore {
			ids = append(ids, id)
			continue
		}
		var syms []string
		for _, r := range w {
			c := string(r)
			if _, ok := n.vocab[c]; ok || n.level {
				syms = append(syms, c)
				continue
			}
			for _, b := range []byte(c) { // byte fallback
				syms = append(syms, "<0x"+strings.ToUpper(hex2(b))+">")
			}
		}
		for {
			best, bestRank := -1, 0
			for i := 0; i+1 < len(syms); i++ {
				if r, ok := n.ranks[[2]string{syms[i], syms[i+1]}]; ok && (best < 0 || r < bestRank) {
					best, bestRank = i, r
				}
			}
			if best < 0 {
				break
			}
			syms = append(syms[:best], append([]string{syms[best] + syms[best+1]}, syms[best+2:]...)...)
		}
		for _, s := range syms {
			ids = append(ids, n.vocab[s])
		}
	}
	return ids
}

func hex2(b byte) string {
	const digits = "0123456789ABCDEF"
	return string([]byte{digits[b>>4], digits[b&15]})
}

func TestHFMatchesNaive(t *testing.T) {
	for _, dir := range []string{"llama3-style", "llama2-style"} {
		t.Run(dir, func(t *testing.T) {
			path := filepath.Join("testdata", dir, "tokenizer.json")
			tok := mustLoad(t, path)
			oracle := newNaiveHF(t, path)
			samples := randomSamples(300, 40)
			samples = append(samples, tokenizertest.Corpus, strings.Repeat("the best of times ", 50))
			for _, s := range samples {
				if dir == "llama2-style" && strings.Contains(s, "▁") {
					continue
				}
				want := oracle.encode(t, s)
				got := tok.Encode(s)
				if len(want) == 0 && len(got) == 0 {
					continue
				}
				if d := cmp.Diff(want, got); d != "" {
					t.Errorf("Encode(%q) (-naive +got):\n%s", s, d)
				}
				if n := tok.Count(s); n != len(want) {
					t.Errorf("Count(%q) = %d, want %d", s, n, len(want))
				}
				if got := tok.Decode(got); got != s {
					t.Errorf("Decode(Encode(%q)) = %q", s, got)
				}
			}
		})
	}
}

// TestSentencePieceForms checks that the older (Prepend + Replace) and the
// newer (Metaspace) spelling of the same SentencePiece tokenizer agree on
// text that does not start with a space (where Metaspace, like the Rust
// library, does not prepend a second mark).
func TestSentencePieceForms(t *testing.T) {
	a := mustLoad(t, "testdata/llama2-style/tokenizer.json")
	b := mustLoad(t, "testdata/llama2-metaspace")
	for _, s := range append(randomSamples(200, 30), tokenizertest.Corpus) {
		if strings.HasPrefix(s, " ") {
			continue
		}
		if d := cmp.Diff(a.Encode(s), b.Encode(s)); d != "" {
			t.Errorf("Encode(%q) (-normalizer form +metaspace form):\n%s", s, d)
		}
	}
	// The Llama 2 conventions: a prepended "▁", byte fallback for
	// characters outside the vocabulary.
	ids := a.Encode("the best\n")
	if got := a.Decode(ids); got != "the best\n" {
		t.Errorf("Decode = %q", got)
	}
	if want := mustID(t, a, "<0x0A>"); ids[len(ids)-1] != want {
		t.Errorf("newline encodes as %d, want byte-fallback id %d", ids[len(ids)-1], want)
	}
}

func mustID(t *testing.T, tok Tokenizer, piece string) int {
	t.Helper()
	id, ok := tok.(*bpe).vocab[piece]
	if !ok {
		t.Fatalf("no token %q", piece)
	}
	return int(id)
}

// TestWholeTextSentencePiece covers a SentencePiece vocabulary with a token
// that has a mark after another character ("e▁"), which forbids splitting
// the text into words: the whole text must be merged at once.
func TestWholeTextSentencePiece(t *testing.T) {
	data, err := tokenizertest.SentencePieceStyle(100, false)
	if err != nil {
		t.Fatal(err)
	}
	var f map[string]any
	if err := json.Unmarshal(data, &f); err != nil {
		t.Fatal(err)
	}
	model := f["model"].(map[string]any)
	vocab := model["vocab"].(map[string]any)
	vocab["e▁"] = float64(len(vocab))
	model["merges"] = append([]any{"e ▁"}, model["merges"].([]any)...)
	data, err = json.Marshal(f)
	if err != nil {
		t.Fatal(err)
	}
	path, err := tokenizertest.Write(t.TempDir(), data)
	if err != nil {
		t.Fatal(err)
	}
	tok := mustLoad(t, path)
	if _, ok := tok.(*bpe).fast.(wholeSplitter); !ok {
		t.Fatalf("splitter %T, want wholeSplitter", tok.(*bpe).fast)
	}
	oracle := newNaiveHF(t, path)
	for _, s := range []string{"the best of the age", "we were there", tokenizertest.Corpus} {
		if d := cmp.Diff(oracle.encode(t, s), tok.Encode(s)); d != "" {
			t.Errorf("Encode(%q) (-naive +got):\n%s", s, d)
		}
	}
	if ids := tok.Encode("the best"); !containsID(ids, mustID(t, tok, "e▁")) {
		t.Errorf("Encode(%q) = %v does not use the cross-word token e▁", "the best", ids)
	}
}

func containsID(ids []int, id int) bool {
	for _, x := range ids {
		if x == id {
			return true
		}
	}
	return false
}

func TestLoadResolution(t *testing.T) {
	hub := t.TempDir()
	t.Setenv("HF_HUB_CACHE", "")
	t.Setenv("HUGGINGFACE_HUB_CACHE", "")
	t.Setenv("XDG_CACHE_HOME", "")
	t.Setenv("HOME", t.TempDir())
	t.Setenv("HF_HOME", hub)
	data, err := os.ReadFile("testdata/llama3-style/tokenizer.json")
	if err != nil {
		t.Fatal(err)
	}
	repo := filepath.Join(hub, "hub", "models--acme--tiny-llama")
	for _, snap := range []string{"aaaa", "bbbb"} {
		if err := os.MkdirAll(filepath.Join(repo, "snapshots", snap), 0o755); err != nil {
			t.Fatal(err)
		}
	}
	if _, err := tokenizertest.Write(filepath.Join(repo, "snapshots", "bbbb"), data); err != nil {
		t.Fatal(err)
	}
	if err := os.MkdirAll(filepath.Join(repo, "refs"), 0o755); err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(filepath.Join(repo, "refs", "main"), []byte("bbbb\n"), 0o644); err != nil {
		t.Fatal(err)
	}

	byID := mustLoad(t, "acme/tiny-llama")
	byDir := mustLoad(t, "testdata/llama3-style")
	const text = "Hello, world! It's 2024."
	if d := cmp.Diff(byDir.Encode(text), byID.Encode(text)); d != "" {
		t.Errorf("model id and directory disagree:\n%s", d)
	}
	if byID.Name() != "acme/tiny-llama" {
		t.Errorf("Name() = %q", byID.Name())
	}
	if b, _ := Load("builtin"); b.Name() != BuiltinName {
		t.Errorf("builtin Name() = %q", b.Name())
	}

	_, err = Load("acme/missing-model")
	if !errors.Is(err, ErrNotFound) {
		t.Fatalf("missing model: err = %v, want ErrNotFound", err)
	}
	want := filepath.Join(hub, "hub", "models--acme--missing-model", "snapshots", "*", "tokenizer.json")
	if !strings.Contains(err.Error(), want) {
		t.Errorf("error %q does not say it looked in %s", err, want)
	}
	if _, err := Load(t.TempDir()); !errors.Is(err, ErrNotFound) {
		t.Errorf("empty directory: err = %v, want ErrNotFound", err)
	}
}

func TestLoadUnsupported(t *testing.T) {
	tests := map[string]string{
		"unigram":    `{"model":{"type":"Unigram","vocab":[["a",0]]}}`,
		"wordpiece":  `{"model":{"type":"WordPiece","vocab":{"a":0}}}`,
		"lowercase":  `{"normalizer":{"type":"Lowercase"},"model":{"type":"BPE","vocab":{"a":0},"merges":[]}}`,
		"lookbehind": `{"pre_tokenizer":{"type":"Split","pattern":{"Regex":"(?<=a)b"},"behavior":"Isolated"},"model":{"type":"BPE","vocab":{"a":0},"merges":[]}}`,
		"dropout":    `{"model":{"type":"BPE","dropout":0.1,"vocab":{"a":0},"merges":[]}}`,
	}
	for name, js := range tests {
		t.Run(name, func(t *testing.T) {
			path, err := tokenizertest.Write(t.TempDir(), []byte(js))
			if err != nil {
				t.Fatal(err)
			}
			if _, err := Load(path); !errors.Is(err, ErrUnsupported) {
				t.Errorf("err = %v, want ErrUnsupported", err)
			}
		})
	}
}

func FuzzParseHF(f *testing.F) {
	f.Add([]byte(`{"model":{"type":"BPE","vocab":{"a":0,"b":1,"ab":2},"merges":["a b"]}}`))
	f.Add([]byte(`{"normalizer":{"type":"Sequence","normalizers":[{"type":"Prepend","prepend":"▁"},{"type":"Replace","pattern":{"String":" "},"content":"▁"}]},"model":{"type":"BPE","byte_fallback":true,"unk_token":"<unk>","vocab":{"<unk>":0,"<0x41>":1,"▁":2,"b":3,"▁b":4},"merges":[["▁","b"]]}}`))
	f.Add([]byte(`{"pre_tokenizer":{"type":"Metaspace","replacement":"▁","prepend_scheme":"first","split":true},"model":{"vocab":{"▁":0,"a":1},"merges":[]}}`))
	f.Fuzz(func(t *testing.T, data []byte) {
		tok, err := parseHF("fuzz", data)
		if err != nil {
			return
		}
		for _, s := range []string{"ab ab", "▁b a", "", "é\n"} {
			ids := tok.Encode(s)
			if n := tok.Count(s); n != len(ids) {
				t.Fatalf("Count(%q) = %d, len(Encode) = %d", s, n, len(ids))
			}
			_ = tok.Decode(ids)
		}
	})
}

func FuzzEncode(f *testing.F) {
	for _, s := range oracleSamples {
		f.Add(s)
	}
	toks := []Tokenizer{mustLoad(f, "builtin"), mustLoad(f, "testdata/llama3-style"), mustLoad(f, "testdata/llama2-style")}
	f.Fuzz(func(t *testing.T, s string) {
		for i, tok := range toks {
			ids := tok.Encode(s)
			if n := tok.Count(s); n != len(ids) {
				t.Fatalf("%s: Count(%q) = %d, len(Encode) = %d", tok.Name(), s, n, len(ids))
			}
			if d := tok.Decode(ids); d != s && (i < 2 || !strings.Contains(s, "▁")) {
				t.Fatalf("%s: Decode(Encode(%q)) = %q", tok.Name(), s, d)
			}
		}
	})
}
