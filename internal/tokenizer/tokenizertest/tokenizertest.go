// Package tokenizertest builds Hugging Face tokenizer.json files for tests:
// a Llama-3-style byte-level BPE derived from the embedded cl100k_base
// vocabulary, and a Llama-2-style SentencePiece BPE trained on a small
// built-in corpus. Both are deterministic.
package tokenizertest

import (
	"bytes"
	"encoding/base64"
	"encoding/binary"
	"encoding/json"
	"fmt"
	"os"
	"path/filepath"
	"sort"
	"strconv"
	"strings"

	"github.com/pkoukk/tiktoken-go-loader/assets"
)

// PatLlama3 is the pre-tokenizer pattern of Llama 3 (and cl100k_base).
const PatLlama3 = `(?i:'s|'t|'re|'ve|'m|'ll|'d)|[^\r\n\p{L}\p{N}]?\p{L}+|\p{N}{1,3}| ?[^\s\p{L}\p{N}]+[\r\n]*|\s*[\r\n]+|\s+(?!\S)|\s+`

// Llama3Style returns a tokenizer.json holding the n lowest-ranked tokens
// of cl100k_base (n ≥ 256), with the merge list the transformers
// TikTokenConverter generates, the Llama 3 pre-tokenizer and
// "ignore_merges": true, plus one added token, <|begin_of_text|>, with
// id n.
func Llama3Style(n int) ([]byte, error) {
	if n < 256 {
		return nil, fmt.Errorf("tokenizertest: n = %d < 256", n)
	}
	data, err := assets.Assets.ReadFile("cl100k_base.tiktoken")
	if err != nil {
		return nil, err
	}
	type tok struct {
		raw  string
		rank int
	}
	var toks []tok
	ranks := map[string]int{}
	for _, line := range strings.Split(string(data), "\n") {
		b64, r, ok := strings.Cut(line, " ")
		if !ok {
			continue
		}
		raw, err := base64.StdEncoding.DecodeString(b64)
		if err != nil {
			return nil, err
		}
		rank, err := strconv.Atoi(r)
		if err != nil {
			return nil, err
		}
		if rank < n {
			toks = append(toks, tok{string(raw), rank})
			ranks[string(raw)] = rank
		}
	}
	sort.Slice(toks, func(i, j int) bool { return toks[i].rank < toks[j].rank })
	vocab := make([]kv, 0, len(toks))
	type mergeEntry struct {
		l, r string
		rank int
	}
	var merges []mergeEntry
	for _, t := range toks {
		vocab = append(vocab, kv{ByteLevel(t.raw), t.rank})
		var local []mergeEntry
		for i := 1; i < len(t.raw); i++ {
			l, r := t.raw[:i], t.raw[i:]
			if _, ok := ranks[l]; !ok {
				continue
			}
			if _, ok := ranks[r]; !ok {
				continue
			}
			local = append(local, mergeEntry{l, r, t.rank})
		}
		sort.SliceStable(local, func(i, j int) bool {
			if ranks[local[i].l] != ranks[local[j].l] {
				return ranks[local[i].l] < ranks[local[j].l]
			}
			return ranks[local[i].r] < ranks[local[j].r]
		})
		merges = append(merges, local...)
	}
	sort.SliceStable(merges, func(i, j int) bool {
		a, b := merges[i], merges[j]
		if a.rank != b.rank {
			return a.rank < b.rank
		}
		if len(a.l) != len(b.l) {
			return len(a.l) < len(b.l)
		}
		return len(a.r) < len(b.r)
	})
	mergeStrs := make([]string, len(merges))
	for i, m := range merges {
		mergeStrs[i] = ByteLevel(m.l) + " " + ByteLevel(m.r)
	}
	return marshal(map[string]any{
		"version":      "1.0",
		"added_tokens": []any{map[string]any{"id": n, "content": "<|begin_of_text|>", "special": true}},
		"normalizer":   nil,
		"pre_tokenizer": map[string]any{"type": "Sequence", "pretokenizers": []any{
			map[string]any{"type": "Split", "pattern": map[string]any{"Regex": PatLlama3}, "behavior": "Isolated", "invert": false},
			map[string]any{"type": "ByteLevel", "add_prefix_space": false, "trim_offsets": true, "use_regex": false},
		}},
		"decoder": map[string]any{"type": "ByteLevel", "add_prefix_space": true, "trim_offsets": true, "use_regex": true},
		"model": map[string]any{
			"type": "BPE", "dropout": nil, "unk_token": nil, "continuing_subword_prefix": nil,
			"end_of_word_suffix": nil, "fuse_unk": false, "byte_fallback": false, "ignore_merges": true,
			"vocab": orderedMap(vocab), "merges": mergeStrs,
		},
	})
}

// ByteLevel maps raw bytes to GPT-2's printable byte-level alphabet
// (bytes_to_unicode), as tokenizer.json stores byte-level tokens.
func ByteLevel(raw string) string {
	var b strings.Builder
	for i := 0; i < len(raw); i++ {
		b.WriteRune(byteRune(raw[i]))
	}
	return b.String()
}

func byteRune(c byte) rune {
	n := 0
	for b := 0; b < 256; b++ {
		printable := ('!' <= b && b <= '~') || (0xA1 <= b && b <= 0xAC) || (0xAE <= b && b <= 0xFF)
		if b == int(c) {
			if printable {
				return rune(b)
			}
			return rune(256 + n)
		}
		if !printable {
			n++
		}
	}
	panic("BUG: unreachable")
}

// Corpus is the text SentencePieceStyle trains on.
const Corpus = `It was the best of times, it was the worst of times, it was the age of wisdom, it was the age
of foolishness, it was the epoch of belief, it was the epoch of incredulity, it was the season of Light,
it was the season of Darkness, it was the spring of hope, it was the winter of despair, we had everything
before us, we had nothing before us, we were all going direct to Heaven, we were all going direct the other
way. There were a king with a large jaw and a queen with a plain face, on the throne of England; there were
a king with a large jaw and a queen with a fair face, on the throne of France. In both countries it was
clearer than crystal to the lords of the State preserves of loaves and fishes, that things in general were
settled for ever. The quick brown fox jumps over the lazy dog while the patient server answers every request
with streaming tokens, and the benchmark measures time to first token, inter token latency and throughput.`

// SentencePieceStyle returns a Llama-2-style tokenizer.json: BPE with
// "▁" for spaces, byte fallback (<0x00>…<0xFF>), <unk>/<s>/</s>, and
// `merges` merges trained on [Corpus]. With metaspace false the file uses
// the older normalizer form (Prepend "▁" + Replace " " → "▁", no
// pre-tokenizer); with true, the newer Metaspace pre-tokenizer
// (prepend_scheme "first", split false). Both encode identically.
func SentencePieceStyle(merges int, metaspace bool) ([]byte, error) {
	var vocab []kv
	add := func(s string) {
		vocab = append(vocab, kv{s, len(vocab)})
	}
	add("<unk>")
	add("<s>")
	add("</s>")
	for b := range 256 {
		add(fmt.Sprintf("<0x%02X>", b))
	}
	// Words as SentencePiece sees them: "▁" + word, split on whitespace.
	words := map[string]int{}
	for _, w := range strings.Fields(Corpus) {
		words["▁"+w]++
	}
	type word struct {
		syms  []string
		count int
	}
	var ws []word
	chars := map[string]bool{}
	for w, c := range words {
		var syms []string
		for _, r := range w {
			syms = append(syms, string(r))
			chars[string(r)] = true
		}
		ws = append(ws, word{syms, c})
	}
	sort.Slice(ws, func(i, j int) bool { return strings.Join(ws[i].syms, "") < strings.Join(ws[j].syms, "") })
	charList := make([]string, 0, len(chars))
	for c := range chars {
		charList = append(charList, c)
	}
	sort.Strings(charList)
	for _, c := range charList {
		add(c)
	}
	var mergeStrs []string
	for range merges {
		counts := map[[2]string]int{}
		for _, w := range ws {
			for i := 0; i+1 < len(w.syms); i++ {
				counts[[2]string{w.syms[i], w.syms[i+1]}] += w.count
			}
		}
		var best [2]string
		bestN := 0
		for p, c := range counts {
			if c > bestN || (c == bestN && p[0]+" "+p[1] < best[0]+" "+best[1]) {
				best, bestN = p, c
			}
		}
		if bestN == 0 {
			break
		}
		merged := best[0] + best[1]
		add(merged)
		mergeStrs = append(mergeStrs, best[0]+" "+best[1])
		for wi := range ws {
			s := ws[wi].syms
			out := s[:0:0]
			for i := 0; i < len(s); i++ {
				if i+1 < len(s) && s[i] == best[0] && s[i+1] == best[1] {
					out = append(out, merged)
					i++
				} else {
					out = append(out, s[i])
				}
			}
			ws[wi].syms = out
		}
	}
	f := map[string]any{
		"version": "1.0",
		"added_tokens": []any{
			map[string]any{"id": 0, "content": "<unk>", "special": true},
			map[string]any{"id": 1, "content": "<s>", "special": true},
			map[string]any{"id": 2, "content": "</s>", "special": true},
		},
		"model": map[string]any{
			"type": "BPE", "dropout": nil, "unk_token": "<unk>", "continuing_subword_prefix": nil,
			"end_of_word_suffix": nil, "fuse_unk": true, "byte_fallback": true, "ignore_merges": false,
			"vocab": orderedMap(vocab), "merges": mergeStrs,
		},
	}
	if metaspace {
		f["normalizer"] = nil
		f["pre_tokenizer"] = map[string]any{"type": "Metaspace", "replacement": "▁", "prepend_scheme": "first", "split": false}
	} else {
		f["normalizer"] = map[string]any{"type": "Sequence", "normalizers": []any{
			map[string]any{"type": "Prepend", "prepend": "▁"},
			map[string]any{"type": "Replace", "pattern": map[string]any{"String": " "}, "content": "▁"},
		}}
		f["pre_tokenizer"] = nil
	}
	return marshal(f)
}

// Write writes data to dir/tokenizer.json and returns its path.
func Write(dir string, data []byte) (string, error) {
	p := filepath.Join(dir, "tokenizer.json")
	return p, os.WriteFile(p, data, 0o644)
}

type kv struct {
	k string
	v int
}

// orderedMap is a JSON object that keeps insertion order (like the files
// the tokenizers library writes).
type orderedMap []kv

func (m orderedMap) MarshalJSON() ([]byte, error) {
	var b bytes.Buffer
	b.WriteByte('{')
	for i, e := range m {
		if i > 0 {
			b.WriteByte(',')
		}
		k, err := json.Marshal(e.k)
		if err != nil {
			return nil, err
		}
		b.Write(k)
		b.WriteByte(':')
		b.WriteString(strconv.Itoa(e.v))
	}
	b.WriteByte('}')
	return b.Bytes(), nil
}

func marshal(v any) ([]byte, error) {
	var b bytes.Buffer
	enc := json.NewEncoder(&b)
	enc.SetEscapeHTML(false)
	enc.SetIndent("", " ")
	if err := enc.Encode(v); err != nil {
		return nil, err
	}
	return b.Bytes(), nil
}

// GGUF returns a GGUF model file (version 3, no tensors) whose metadata
// carries the byte-level BPE of a tokenizer.json as llama.cpp's converter
// writes it: general.architecture, tokenizer.ggml.model "gpt2",
// tokenizer.ggml.pre, the tokens in id order (added tokens included),
// token types, and the merges. pre is llama.cpp's pre-tokenizer name, e.g.
// "llama-bpe".
func GGUF(tokenizerJSON []byte, pre string) ([]byte, error) {
	return GGUFChat(tokenizerJSON, pre, "", -1, -1)
}

// GGUFChat is [GGUF] with a chat template: tokenizer.chat_template, and
// tokenizer.ggml.bos_token_id and eos_token_id when bos and eos are ≥ 0
// (the ids of tokenizer.json's added tokens, which become control
// tokens). An empty template writes none.
func GGUFChat(tokenizerJSON []byte, pre, template string, bos, eos int) ([]byte, error) {
	var f struct {
		AddedTokens []struct {
			ID      int    `json:"id"`
			Content string `json:"content"`
		} `json:"added_tokens"`
		Model struct {
			Vocab  map[string]int `json:"vocab"`
			Merges []string       `json:"merges"`
		} `json:"model"`
	}
	if err := json.Unmarshal(tokenizerJSON, &f); err != nil {
		return nil, err
	}
	n := 0
	for _, id := range f.Model.Vocab {
		n = max(n, id+1)
	}
	for _, a := range f.AddedTokens {
		n = max(n, a.ID+1)
	}
	tokens := make([]string, n)
	types := make([]int32, n)
	for t, id := range f.Model.Vocab {
		tokens[id], types[id] = t, 1 // normal
	}
	for _, a := range f.AddedTokens {
		tokens[a.ID], types[a.ID] = a.Content, 3 // control
	}
	for i, t := range tokens {
		if t == "" {
			tokens[i], types[i] = fmt.Sprintf("[PAD%d]", i), 5 // unused
		}
	}
	var b bytes.Buffer
	le := func(v any) { _ = binaryWrite(&b, v) }
	str := func(s string) { le(uint64(len(s))); b.WriteString(s) }
	b.WriteString("GGUF")
	le(uint32(3))
	le(uint64(0)) // tensors
	entries := 6
	if template != "" {
		entries++
	}
	if bos >= 0 {
		entries++
	}
	if eos >= 0 {
		entries++
	}
	le(uint64(entries)) // metadata entries
	kvString := func(k, v string) { str(k); le(uint32(8)); str(v) }
	kvStrings := func(k string, v []string) {
		str(k)
		le(uint32(9))
		le(uint32(8))
		le(uint64(len(v)))
		for _, s := range v {
			str(s)
		}
	}
	kvString("general.architecture", "llama")
	kvString("tokenizer.ggml.model", "gpt2")
	kvString("tokenizer.ggml.pre", pre)
	kvStrings("tokenizer.ggml.tokens", tokens)
	str("tokenizer.ggml.token_type")
	le(uint32(9))
	le(uint32(5)) // int32
	le(uint64(len(types)))
	for _, t := range types {
		le(t)
	}
	kvStrings("tokenizer.ggml.merges", f.Model.Merges)
	if template != "" {
		kvString("tokenizer.chat_template", template)
	}
	for _, kv := range []struct {
		k  string
		id int
	}{{"tokenizer.ggml.bos_token_id", bos}, {"tokenizer.ggml.eos_token_id", eos}} {
		if kv.id >= 0 {
			str(kv.k)
			le(uint32(4)) // u32
			le(uint32(kv.id))
		}
	}
	return b.Bytes(), nil
}

func binaryWrite(b *bytes.Buffer, v any) error { return binary.Write(b, binary.LittleEndian, v) }
